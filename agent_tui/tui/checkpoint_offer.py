"""After a move in the tree: offer to restore the files as the node left them (issue 28).

The files that would change are listed first (at most :data:`SHOWN` lines at 80x24, then a
count); a file changed outside the agent since the latest checkpoint needs a second yes. The
rules (what a node's files are, conflicts, the undo point, the entries) are the agent layer's
(:mod:`agent_tui.agent.checkpointing`); this only asks.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

from agent_tui.agent.checkpointing import RestoreConflict, RestorePlan, plan_restore, restore
from agent_tui.agent.checkpoints import CheckpointError, CheckpointStore, checkpoints_enabled
from agent_tui.store.errors import StoreError
from agent_tui.store.session import Session
from agent_tui.tui.host import Host
from agent_tui.tui.screens.choice import ChoiceScreen

if TYPE_CHECKING:
    from agent_tui.tui.widgets.composer import Composer


class Actions(Protocol):
    """What of the app's controller (``tui.session_actions.SessionActions``) the offer uses."""

    @property
    def app(self) -> Host: ...

    def notify(self, message: str, **kwargs: object) -> None: ...

    async def append(self, fn: Callable[[Session], object], cursor: str | None = None) -> bool: ...

    def target(self, entry_id: str | None = None) -> str | None: ...


#: Lines of the file list the question shows (the rest is a count).
SHOWN = 8


class RestoreQuestion(ChoiceScreen):
    """The offer, unasked after a move: guarded (no key typed for the composer answers it, see
    ``screens.dialog``), its choices numbered and a digit answers once the guard lets keys through."""

    ANSWER_KEYS = frozenset("123456789")

    def __init__(self, title: str, choices: list[tuple[str, str]], current: str, composer: Composer) -> None:
        numbered = [(value, f"{n}  {label}") for n, (value, label) in enumerate(choices, 1)]
        super().__init__(
            title,
            numbered,
            current,
            guarded=True,
            typed_at=composer.typed_at,
            on_text=composer.insert,
        )

    def on_key(self, event: Any) -> None:
        taken = self.answerable and not self.typing(self.clock())
        super().on_key(event)
        key = event.character if event.is_printable else None
        if taken and key is not None and key in self.ANSWER_KEYS and int(key) <= len(self.choices):
            event.stop()
            event.prevent_default()
            self.dismiss(self.choices[int(key) - 1][0])


def question(plan: RestorePlan) -> str:
    lines = plan.lines()
    shown = lines[:SHOWN]
    if len(lines) > SHOWN:
        shown.append(f"… and {len(lines) - SHOWN} more")
    return "Restore the files as this node left them?\n" + "\n".join(f"  {line}" for line in shown)


async def offer_after(actions: Actions, events: AsyncIterator[Any], target: str) -> AsyncIterator[Any]:
    """``events`` (a branch summary's run, which moves to ``target`` at its end), then the offer
    for ``target``'s files, once the move happened (an aborted summary does not move)."""
    app = actions.app
    leaf = app.index.leaf_id
    async for event in events:
        yield event
    session = app.session
    if (
        app.index.leaf_id != leaf
        and session is not None
        and any(e.id == target for e in session.index.active_path())
    ):
        app.call_later(offer_restore, actions, target)


async def restore_command(actions: Actions, entry_id: str | None) -> None:
    """``/restore [ID]`` (as in every face: the files, not an entry's content): the offer for the
    entry named or selected, saying why when there is nothing to offer."""
    target = actions.target(entry_id)
    if target is not None:
        await offer_restore(actions, target, quiet=False)


async def offer_restore(actions: Actions, target: str, *, quiet: bool = True) -> None:
    """Ask whether to restore the files as ``target`` left them (nothing when they already are;
    not ``quiet``: a notice says why nothing is asked)."""
    app = actions.app
    session = app.session

    def nothing(why: str) -> None:
        if not quiet:
            actions.notify(why)

    if session is None or not checkpoints_enabled():
        return nothing("File checkpoints are off (AGENT_TUI_CHECKPOINTS).")
    store = CheckpointStore()
    cwd = str(app.config.cwd)
    if os.path.realpath(session.cwd) != os.path.realpath(cwd):
        # another folder's session (a resume): its snapshots are not this folder's files
        return nothing("The session's folder is not this one: nothing is restored here.")
    try:
        plan = await asyncio.to_thread(plan_restore, store, session, cwd, target)
    except (CheckpointError, StoreError, OSError) as e:
        return nothing(f"Files not restored: {e}")
    if plan.mark is None:
        return nothing(f"No file checkpoint at or before entry {target}.")
    if plan.empty:
        return nothing("Nothing to restore: the files are as that entry left them.")
    count = len(plan.changes)

    async def done(force: bool) -> None:
        def write(s: Session) -> None:
            result = restore(store, session, cwd, target, force=force, expected=plan)
            refused = f"; {len(result.refused)} not written" if result.refused else ""
            undo = f" (branch to {result.undo_id} to bring them back)" if result.undo_id else ""
            actions.notify(f"Restored {count - len(result.refused)} file(s){refused}{undo}")

        try:
            await actions.append(write)
        except RestoreConflict as e:
            actions.notify(str(e), severity="warning")
        except CheckpointError as e:
            actions.notify(f"Files not restored: {e}", severity="error")

    async def confirm_conflicts(value: str | None) -> None:
        if value == "overwrite":
            await done(force=True)
        else:
            actions.notify("Files kept as they are.")

    async def chosen(value: str | None) -> None:
        if value != "restore":
            return
        if not plan.conflicts:
            await done(force=False)
            return
        names = ", ".join(p for p, _ in plan.conflicts[:3]) + ("…" if len(plan.conflicts) > 3 else "")
        app.push_screen(
            RestoreQuestion(
                f"{len(plan.conflicts)} file(s) changed outside the agent since the last checkpoint: {names}",
                [
                    ("overwrite", "Overwrite them too (the current files are snapshotted first)"),
                    ("keep", "Keep all files"),
                ],
                "keep",
                app.composer,
            ),
            confirm_conflicts,
        )

    app.push_screen(
        RestoreQuestion(
            question(plan),
            [("restore", f"Restore {count} file(s)"), ("keep", "Keep the files as they are")],
            "restore",
            app.composer,
        ),
        chosen,
    )


def preview_lines(app: Host, entry_id: str, limit: int = 12) -> list[str]:
    """For a checkpoint or restore row: the diff from the checkpoint before it (its first lines)."""
    from agent_tui.agent.checkpointing import latest_mark, mark_of, skipped_line
    from agent_tui.terminal_text import visible_line

    session = app.session
    if session is None or entry_id not in session.index:
        return []
    entry = session.index.get(entry_id)
    mark = mark_of(entry)
    if mark is None:
        return []
    payload = entry.data.get("data")
    skipped = payload.get("skipped") if isinstance(payload, dict) else None
    left_out = [skipped_line(skipped), ""] if skipped else []  # FIFOs, big files: said, not stored
    before = latest_mark(session.index.path_to(entry.parent_id)) if entry.parent_id else None
    if before is None or before.snapshot == mark.snapshot:
        return left_out
    try:
        patch = CheckpointStore().patch(before.snapshot, mark.snapshot).splitlines()
    except (CheckpointError, OSError):
        return left_out
    compact = []  # each file's name, then its added and removed lines (no headers, no hunk lines)
    for line in patch:
        if line.startswith("diff --git a/"):
            compact.append("▸ " + line[len("diff --git a/") :].split(" b/", 1)[0])
        elif line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            compact.append("  " + line)
    shown = [visible_line(line) for line in compact[:limit]]
    if len(compact) > limit:
        shown.append(
            f"… {len(compact) - limit} more lines (agent-tui diff FILE {before.entry.id} {entry_id})"
        )
    return ["Files since the checkpoint before:", *shown, "", *left_out]


__all__ = ["RestoreQuestion", "offer_after", "offer_restore", "preview_lines", "question", "restore_command"]

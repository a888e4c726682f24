"""The app's context surgery: ``/prune``, ``/undo``, a span marked in the tree hidden or restored,
and a compaction's summary edited (``e`` on a compaction). Plans come from
``projection.surgery``; each action appends through :meth:`SessionActions.append`, so it is
refused while a reply streams and the views redraw after it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_tui.projection.context import project
from agent_tui.projection.describe import plural
from agent_tui.projection.surgery import (
    DEFAULT_KEEP_LAST,
    DEFAULT_MIN_TOKENS,
    Surgery,
    SurgeryError,
    apply,
    plan_prune,
    plan_range,
    plan_span,
    plan_summary_edit,
    plan_undo,
    records,
)
from agent_tui.projection.tokens import estimate_text
from agent_tui.store.errors import StoreError
from agent_tui.store.session import Session
from agent_tui.tui.compaction_review import CANCELLED, SUMMARY_GROUP, hooks_allow, summarizing_agent
from agent_tui.tui.screens.editor import EditorScreen
from agent_tui.tui.screens.prompt import PromptScreen

if TYPE_CHECKING:
    from agent_tui.agent.compaction import Summarizer
    from agent_tui.tui.compaction_review import PreCompact
    from agent_tui.tui.host import Actions, Host


def prune_arguments(arg: str) -> tuple[int, int, bool]:
    """``/prune [preview] [KEEP_LAST [MIN_TOKENS]]`` -> (keep_last, min_tokens, preview)."""
    words = arg.split()
    preview = any(w in ("preview", "--preview") for w in words)
    numbers = [int(w.replace(",", "")) for w in words if w.replace(",", "").isdigit()]
    keep_last = numbers[0] if numbers else DEFAULT_KEEP_LAST
    min_tokens = numbers[1] if len(numbers) > 1 else DEFAULT_MIN_TOKENS
    return keep_last, min_tokens, preview


async def _apply(actions: Actions, make: Callable[[Session], Surgery]) -> Surgery | None:
    """Plan on the session as it is when appending, apply; None (and a notice) if refused."""
    done: list[Surgery] = []

    def run(session: Session) -> None:
        try:
            surgery = make(session)
            apply(session, surgery)
        except SurgeryError as e:
            raise StoreError(str(e)) from e
        done.append(surgery)

    if await actions.append(run):
        return done[0]
    return None


async def prune(actions: Actions, arg: str = "") -> None:
    keep_last, min_tokens, preview = prune_arguments(arg)
    app = actions.app
    if app.session is None:
        actions.notify("Nothing to prune yet.")
        return
    plan = plan_prune(app.projection, keep_last=keep_last, min_tokens=min_tokens)
    if not plan.edits:
        actions.notify(
            f"Nothing to prune: no tool output over {min_tokens:,} tokens before the last {keep_last}."
        )
        return
    if preview:
        actions.notify(f"Would {plan.summary_line()}. /prune applies it.", timeout=10)
        return
    done = await _apply(
        actions, lambda s: plan_prune(project(s.index), keep_last=keep_last, min_tokens=min_tokens)
    )
    if done is not None:
        actions.notify(f"{done.summary_line().capitalize()}. /undo puts them back.", timeout=10)


def latest_undoable(session: Session) -> str | None:
    """The latest surgery on the branch that is not an undo and was not undone."""
    path = session.index.active_path()
    found = records(path)
    undone = {r.data["data"].get("undoes") for r in found if isinstance(r.data.get("data"), dict)}
    for record in reversed(found):
        data = record.data.get("data")
        if (
            isinstance(data, dict)
            and "undoes" not in data
            and data.get("action") != "undo"
            and record.id not in undone
        ):
            return record.id
    return None


async def undo(actions: Actions, entry_id: str | None = None) -> None:
    session = actions.app.session
    target = entry_id or (latest_undoable(session) if session is not None else None)
    if target is None:
        actions.notify("Nothing to undo: no surgery (span, prune, range) on this branch.")
        return
    done = await _apply(actions, lambda s: plan_undo(project(s.index), target))
    if done is not None:
        actions.notify(f"Undid surgery {target}: {done.summary_line()}.", timeout=8)


async def span(actions: Actions, first: str, last: str, *, restore: bool) -> None:
    done = await _apply(actions, lambda s: plan_span(project(s.index), first, last, restore=restore))
    if done is not None:
        actions.app.session_tree.clear_mark()
        notes = "; ".join(done.notes)
        actions.notify(
            f"{done.summary_line().capitalize()}{'; ' + notes if notes else ''}. /undo puts it back.",
            timeout=10,
        )


def edit_summary(actions: Actions, compaction_id: str) -> None:
    """An editor on the compaction's summary; saving appends a compaction with the edited text."""
    app = actions.app
    entry = app.index.get(compaction_id)
    current = str(entry.data.get("summary") or "")

    async def done(value: str | None) -> None:
        if value is None or value == current:
            return

        done_ = await _apply(actions, lambda s: plan_summary_edit(project(s.index), compaction_id, value))
        if done_ is not None:
            actions.notify(f"Edited the summary of {compaction_id}: a new compaction entry holds it (/undo).")

    app.push_screen(
        EditorScreen(
            f"Edit the summary of compaction {compaction_id}",
            current,
            counter=lambda value: (
                f"{plural(estimate_text(value), 'token')} (the summary was {estimate_text(current):,})"
            ),
        ),
        done,
    )


def compact_span(actions: Actions, first: str, last: str, focus: str | None = None) -> None:
    """Ctrl+G (or /compact) with a span marked in the tree: the model summarizes just that span.

    First a prompt for the focus text shows what will be summarized (widened to whole turns);
    then the summarization runs in a worker and the span is applied as one surgery."""
    app = actions.app
    if not actions.can_append():
        return
    try:
        plan = plan_range(app.projection, first, last)
    except SurgeryError as e:
        actions.notify(str(e), title="cannot compact the span", severity="warning", timeout=10)
        return
    if focus is None:
        notes = "".join(f"{note}\n" for note in plan.notes)

        def done(value: str | None) -> None:
            if value is not None:
                compact_span(actions, first, last, value)

        app.push_screen(
            PromptScreen(
                f"Compact {plan.first_id}..{plan.last_id}",
                "",
                "optional focus, e.g. keep the error messages",
                hint=f"{notes}The model summarizes {len(plan.hidden_ids) + 1} entries; the summary replaces "
                f"{plan.carrier_id} and the rest is hidden (/undo puts it back).\n"
                "Enter compacts (with the focus text, if any) · Escape cancels",
            ),
            done,
        )
        return
    turns = summarizing_agent(actions)
    if turns is None:
        return
    app.run_worker(
        _summarize_span(actions, turns.summarizer(), first, last, focus.strip() or None, turns.pre_compact),
        exit_on_error=False,
        group=SUMMARY_GROUP,
    )


async def _summarize_span(
    actions: Actions,
    summarizer: Summarizer,
    first: str,
    last: str,
    focus: str | None,
    pre_compact: PreCompact,
) -> None:
    """The agent's PreCompact hooks first (they may block it, as for any manual compaction), then
    the model's summary of the span, applied as one surgery."""
    from agent_tui.agent.compaction import CompactionError
    from agent_tui.agent.range_compaction import compact_range

    app = actions.app
    app.busy = True
    try:
        if not await hooks_allow(actions, pre_compact, focus):
            return
        outcome = await compact_range(app.ensure_session(), summarizer, first, last, focus=focus)
    except (CompactionError, SurgeryError, StoreError) as e:
        actions.notify(f"compacting {first}..{last} failed: {e}", severity="error", timeout=10)
        return
    except asyncio.CancelledError:  # Escape: the summary's call is closed, nothing appended
        actions.notify(CANCELLED, title="compact")
        raise
    finally:
        app.busy = False
    app.session_tree.clear_mark()
    await app.refresh_views()
    actions.notify(f"{outcome.surgery.summary_line().capitalize()}. /undo puts it back.", timeout=10)


def span_preview_lines(app: Host, first: str, last: str) -> list[str]:
    """What h, u and Ctrl+G (or the keys the keymap gives them) would do to a marked span, with the
    figures the result will have."""
    from agent_tui.tui.keymap import key_name

    projection = app.projection
    lines: list[str] = []
    compact = key_name(app.keymap, "compact", "ctrl+g")
    hide, restore_key = key_name(app.keymap, "tree.hide", "h"), key_name(app.keymap, "tree.restore", "u")
    for key, restore in ((hide, False), (restore_key, True)):
        try:
            plan = plan_span(projection, first, last, restore=restore)
        except SurgeryError as e:
            lines.append(f"{key}: {e}")
            continue
        lines.append(f"{key}: {plan.summary_line()}")
        lines.extend(f"   {note}" for note in plan.notes)
    try:
        span = plan_range(projection, first, last)
    except SurgeryError as e:
        lines.append(f"{compact}: {e}")
    else:
        widened = f" (widened to whole turns: {span.first_id}..{span.last_id})" if span.notes else ""
        lines.append(
            f"{compact}: the model summarizes {len(span.hidden_ids) + 1} entries{widened}; the summary replaces "
            f"{span.carrier_id}"
        )
    return lines

"""A compaction reviewed before it applies: the model writes the summary (nothing is appended), an
editor shows it with a live token count, and saving appends the ``compaction`` entry with the
edited text (the plan's ``firstKeptEntryId``, ``tokensBefore`` and details, as the unreviewed
one would have). What the summary leaves out is shown under it: Ctrl+L appends it to the summary,
Ctrl+N pins the entries that hold it (ordinary ``pin`` entries: the compaction keeps them verbatim,
so they are no longer lost) and the review is counted again. Escape appends nothing, and Escape
while the summary is being written stops the model's call (:func:`stop_summary`)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agent_tui.agent.compaction import (
    CompactionError,
    CompactionOutcome,
    DraftCompaction,
    NothingToCompact,
    Summarizer,
    append_compaction,
    draft_compaction,
)
from agent_tui.projection.compaction import CompactionSettings, tokens_after_compaction
from agent_tui.projection.describe import plural
from agent_tui.projection.summary_loss import losses_text, missing, span_candidates
from agent_tui.projection.tokens import estimate_text
from agent_tui.store.errors import StoreError
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import AgentUnavailable
from agent_tui.tui.screens.editor import EditorScreen

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from agent_tui.tui.agent_bridge import Turns
    from agent_tui.tui.host import Actions

CANCELLED = "Compaction cancelled: nothing was appended."
#: The worker group of a summary the face asks for itself (a reviewed or a span compaction): the
#: agent's turn is not running, so its abort would not reach the call; Escape cancels the group.
SUMMARY_GROUP = "summary"


def stop_summary(app: DOMNode) -> bool:
    """Escape (or Ctrl+C) while the model writes a reviewed or span compaction's summary: cancel
    the worker, which closes the model's request; nothing is appended. False when none runs."""
    running = [w for w in app.workers if w.group == SUMMARY_GROUP and w.node is app and not w.is_finished]
    for worker in running:
        worker.cancel()
    return bool(running)


#: The agent's PreCompact hooks for a compaction the face makes itself: focus -> (why they block
#: it, or None; their notices) (``AgentLoop.pre_compact``).
PreCompact = Callable[[str | None], Awaitable[tuple[str | None, list[str]]]]


def summarizing_agent(actions: Actions) -> Turns | None:
    """The session's agent (it writes the summary), or None once the user was told why not."""
    try:
        return actions.app.turns_for_session()
    except AgentUnavailable as e:
        actions.notify(str(e), title="cannot compact", severity="warning", timeout=10)
        return None


async def hooks_allow(actions: Actions, pre_compact: PreCompact, focus: str | None) -> bool:
    """Run the agent's PreCompact hooks, as for any manual compaction: their notices shown; False
    (and the user told why) when one blocks it."""
    blocked, notices = await pre_compact(focus)
    for line in notices:
        actions.notify(line, title="agent-tui", severity="warning", timeout=8, markup=False)
    if blocked is None:
        return True
    actions.notify(
        f"compaction blocked by a PreCompact hook: {blocked}",
        title="compact",
        severity="warning",
        timeout=10,
        markup=False,
    )
    return False


def review(actions: Actions, focus: str | None) -> None:
    """Have the model write the summary (in a worker), then open the editor on it."""
    app = actions.app
    if not actions.can_append():
        return
    turns = summarizing_agent(actions)
    if turns is None:
        return
    app.run_worker(
        _draft(actions, turns.summarizer(), turns.compaction_settings(), focus, turns.pre_compact),
        exit_on_error=False,
        group=SUMMARY_GROUP,
    )


async def _draft(
    actions: Actions,
    summarizer: Summarizer,
    settings: CompactionSettings,
    focus: str | None,
    pre_compact: PreCompact,
) -> None:
    """The agent's PreCompact hooks first (they may block it, as for any manual compaction), then
    the model's summary, then the editor."""
    app = actions.app
    app.busy = True
    app.set_notice("Writing the summary to review…")
    try:
        if not await hooks_allow(actions, pre_compact, focus):
            return
        draft = await draft_compaction(app.ensure_session(), summarizer, settings, focus=focus)
    except NothingToCompact as e:
        actions.notify(str(e), title="compact", markup=False)
        return
    except CompactionError as e:
        actions.notify(f"compacting failed: {e}", severity="error", timeout=10, markup=False)
        return
    except asyncio.CancelledError:  # Escape: the summary's call is closed, nothing appended
        actions.notify(CANCELLED, title="compact")
        raise
    finally:
        app.busy = False
        app.set_notice("")
    open_editor(actions, draft)


def open_editor(actions: Actions, draft: DraftCompaction) -> None:
    """The editor on the draft's summary; Ctrl+S appends the compaction, Escape appends nothing."""
    app = actions.app
    after = tokens_after_compaction(app.projection, draft.plan, draft.summary)
    written = estimate_text(draft.summary)

    # the span's candidates once (again after Ctrl+N pins); each edit is checked against them
    wanted = span_candidates(app.projection, draft.plan.summarized_entry_ids)

    def count(value: str) -> str:
        tokens = estimate_text(value.strip())
        then = after - written + tokens
        figures = (
            f"{plural(tokens, 'token')} (the model wrote {written:,}) · context "
            f"≈{draft.plan.estimated_before:,} → ≈{then:,}"
        )
        if then >= draft.plan.estimated_before:  # refused unreviewed; saving it here applies it anyway
            figures += " · GROWS the context"
        lost = missing(wanted, value)
        if not lost:
            return figures
        return f"{figures}\nleaves out {len(lost)}: " + ", ".join(x.text for x in lost)[:300]

    def add_lost(value: str) -> str:
        """The summary with what it left out appended, for the user to keep or trim."""
        lost = missing(wanted, value)
        if not lost:
            return value
        return (
            value.rstrip()
            + "\n\n## Also from the summarized part\n"
            + "".join(f"\n- {line}" for line in losses_text(lost))
        )

    async def pin_lost(value: str) -> None:
        """Pin the entries that hold what ``value`` leaves out, then review again: pinned entries
        are kept verbatim, so they leave the losses and the context figure counts them."""
        nonlocal after, wanted, draft
        targets = list(dict.fromkeys(x.entry_id for x in missing(wanted, value) if x.entry_id is not None))
        if not targets:
            actions.notify("The summary leaves nothing out: nothing to pin.", title="compact")
            return
        if not await actions.append(lambda session: [session.pin(t) for t in targets]):
            return
        # the pins moved the branch tip: the draft is of the same span, now at the new tip
        draft = dataclasses.replace(draft, leaf_id=app.ensure_session().index.leaf_id)
        wanted = span_candidates(app.projection, draft.plan.summarized_entry_ids)
        after = tokens_after_compaction(app.projection, draft.plan, draft.summary)
        actions.notify(
            f"Pinned {', '.join(targets)}: kept verbatim after the summary.", title="compact", markup=False
        )

    async def done(value: str | None) -> None:
        if value is None:
            actions.notify(CANCELLED, title="compact")
            return
        outcome: list[CompactionOutcome] = []
        final = draft

        def run(session: Session) -> None:
            try:
                outcome.append(append_compaction(session, final, value))
            except CompactionError as e:
                raise StoreError(str(e)) from e

        if await actions.append(run):
            edited = " (edited)" if value.strip() != draft.summary else ""
            actions.notify(
                f"Compacted with the reviewed summary{edited}: context ≈{draft.plan.estimated_before:,} → "
                f"{outcome[0].tokens_after:,} tokens (/uncompact undoes it).",
                title="compact",
            )

    app.push_screen(
        EditorScreen(
            f"Review the summary: folds {plural(len(draft.plan.summarized_entry_ids), 'entry', 'entries')}, "
            f"keeps {len(draft.plan.kept_entry_ids)}",
            draft.summary,
            counter=count,
            addition=("add lost", add_lost),
            second=("pin lost", pin_lost),
            # shown when the summary arrives, unasked: keys typed meanwhile edit and save nothing
            guarded=True,
            typed_at=app.composer.typed_at,
            on_text=app.composer.insert,
        ),
        done,
    )

"""Compaction as a run makes it: the ``PreCompact`` hooks first, then the summary, told through events.

Every compaction the agent makes, at the threshold, after an overflow or because the user asked,
goes through :func:`run_compaction`: a hook that blocks it leaves the session as it is
(``CompactionFailed(blocked=True)``); otherwise ``CompactionStarted``, the model's summary, the
``compaction`` entry, ``CompactionFinished`` (or ``CompactionFailed`` saying why not). Also when
the threshold asks for one (:func:`compact_at_threshold`), and a branch summary
(:func:`run_branch_summary`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent_tui.agent.auto_prune import prune_for_threshold
from agent_tui.agent.compaction import (
    CompactionError,
    CompactionGrew,
    NothingToCompact,
    Summarizer,
    compact,
    summarize_branch,
)
from agent_tui.agent.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    Emit,
    EntryAppended,
)
from agent_tui.agent.server_count import near_threshold
from agent_tui.agent.turn_io import Aborted, TurnIO
from agent_tui.projection.compaction import (
    CompactionSettings,
    compaction_threshold,
    context_tokens,
    should_compact,
    unmeasured_since_compaction,
)
from agent_tui.projection.context import Projection
from agent_tui.providers.events import StopReason

#: The PreCompact hooks of one compaction: (trigger, focus, emit) -> why they block it, or None.
Gate = Callable[[str, str | None, Emit], Awaitable[str | None]]


async def run_compaction(
    io: TurnIO,
    summarizer: Summarizer,
    settings: CompactionSettings,
    *,
    reason: str,
    tokens_before: int,
    gate: Gate,
    focus: str | None = None,
    everything: bool = True,
) -> str:
    """Compact now (``reason``: manual, threshold or overflow); report through events. Returns "done"
    (a compaction entry was appended), "nothing" (nothing before the latest turn), "grew" (the
    summary would have made the context larger: not applied), "blocked" (by a PreCompact hook),
    "aborted" or the reason it failed."""
    trigger = "manual" if reason == "manual" else "auto"
    blocked = await gate(trigger, focus, io.emit)
    if blocked is not None:
        io.emit(CompactionFailed(f"compaction blocked by a PreCompact hook: {blocked}", blocked=True))
        return "blocked"
    io.emit(CompactionStarted(reason, tokens_before))
    try:
        outcome = await io.abortable(
            # a compaction that would grow the context is not applied (CompactionGrew), manual too
            compact(io.session, summarizer, settings, focus=focus, everything=everything)
        )
    except Aborted:
        io.emit(CompactionFailed("compaction aborted; nothing was saved"))
        return "aborted"
    except NothingToCompact as e:
        io.emit(CompactionFailed(str(e), nothing_to_do=True))
        return "nothing"
    except CompactionGrew as e:
        io.emit(CompactionFailed(str(e)))
        return "grew"
    except CompactionError as e:
        io.emit(CompactionFailed(str(e)))
        return str(e)
    io.emit(EntryAppended(outcome.entry.id, outcome.entry.type))
    io.emit(
        CompactionFinished(
            outcome.entry.id, tokens_before, outcome.tokens_after, outcome.plan.estimated_before
        )
    )
    return "done"


async def compact_at_threshold(
    io: TurnIO,
    settings: CompactionSettings,
    usage: Callable[[], tuple[int, int]],
    projection: Projection,
    compact_now: Callable[[], Awaitable[str]],
    counted: Callable[[], Awaitable[int | None]] | None = None,
) -> str | None:
    """Compact when the next request (``usage()``: its tokens, the window) passes the threshold and
    was measured since the latest compaction: old tool results pruned first when so configured (a
    summary only when that was not enough). Near the threshold or past it, the server's count of the
    request (``counted()``, :mod:`~agent_tui.agent.server_count`) decides instead of the figure, and
    is a measure (a compaction needs no reply after it). What ``compact_now`` returned, or None
    when none was made."""
    tokens, window = usage()
    tokens, exact = await _server_figure(tokens, window, settings, counted)
    if not should_compact(tokens, window, settings) or (
        not exact and unmeasured_since_compaction(projection)
    ):
        return None
    if settings.prune_before_summarizing:
        for entry in prune_for_threshold(io.session):
            io.emit(EntryAppended(entry.id, entry.type))
        tokens, window = usage()
        tokens, _ = await _server_figure(tokens, window, settings, counted)
        if not should_compact(tokens, window, settings):
            return None  # pruning was enough: no summary
    return await compact_now()


async def _server_figure(
    tokens: int,
    window: int,
    settings: CompactionSettings,
    counted: Callable[[], Awaitable[int | None]] | None,
) -> tuple[int, bool]:
    """(the figure the threshold decides on, whether the server counted it): the server's count
    when ``tokens`` is near the threshold and the server answers, else ``tokens``."""
    if (
        counted is None
        or not settings.enabled
        or not near_threshold(tokens, compaction_threshold(window, settings))
    ):
        return tokens, False
    count = await counted()
    return (tokens, False) if count is None else (count, True)


async def run_branch_summary(
    io: TurnIO,
    summarizer: Summarizer,
    target_id: str,
    focus: str | None,
    projection: Callable[[], Projection],
) -> StopReason:
    """Move to ``target_id``, leaving a summary of the abandoned branch there (pi's branch summary)."""
    try:
        entry = await io.abortable(summarize_branch(io.session, summarizer, target_id, focus=focus))
    except Aborted:
        return "aborted"
    except CompactionError as e:
        io.emit(CompactionFailed(f"branch summary: {e}"))
        return "error"
    if entry is not None:
        io.emit(EntryAppended(entry.id, entry.type))
        io.emit(CompactionFinished(entry.id, 0, context_tokens(projection()).tokens))
    elif io.session.index.leaf_id is not None:
        io.emit(EntryAppended(io.session.index.leaf_id, "custom"))
    return "stop"


__all__ = ["Gate", "compact_at_threshold", "run_branch_summary", "run_compaction"]

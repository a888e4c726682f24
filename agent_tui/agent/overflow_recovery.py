"""After a context overflow: learn the server's window, compact until the request fits, or say why not.

The refused attempt leaves the model's view (a ``context_edit``); the window the error reported
(or, from Ollama's excess, implied) is recorded in the session (an ``agent-tui.window`` entry) and
in the data dir's cache; then the session is compacted, the keep budget halved each round, until
the next request fits. When nothing more can be compacted the one line says what cannot fit (the
system prompt and tools, or one entry) and the way out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from agent_tui.agent.model_call import CallOutcome
from agent_tui.agent.turn_io import TurnIO
from agent_tui.agent.window import WindowCache
from agent_tui.projection.compaction import (
    CompactionSettings,
    compaction_threshold,
    context_tokens,
    fixed_tokens,
    latest_question,
)
from agent_tui.projection.context import Projection
from agent_tui.projection.models import lookup
from agent_tui.projection.tokens import estimate_message, image_rule
from agent_tui.projection.window import learned_window, window_entry
from agent_tui.providers.overflow import Overflow

#: Context overflows a turn recovers from (each compacted until the request fits, then retried).
MAX_OVERFLOW_RETRIES = 3
#: Compactions one recovery makes, the keep budget halved each time, before it says what cannot fit.
MAX_FIT_ROUNDS = 3


@dataclass(frozen=True, slots=True)
class OverflowSetup:
    """What a recovery works with: the server and model, the window cache, and the loop's own
    projection, settings fitted to a window, and compaction (``compact(settings, window)`` returns
    what :meth:`AgentLoop._compact` does: "done", "nothing", "blocked", "aborted" or the failure)."""

    provider: str
    base_url: str | None
    model: str
    cache: WindowCache | None
    projection: Callable[[], Projection]
    fitted: Callable[[int], CompactionSettings]
    compact: Callable[[CompactionSettings, int], Awaitable[str]]


async def learn_window(
    overflow: Overflow, refused_tokens: int, setup: OverflowSetup, io: TurnIO
) -> int | None:
    """Record the window an overflow reported (or, from Ollama's excess, implied) in the session and
    the cache. Returns it, or None when the error said nothing of it."""
    window = overflow.window
    if window is None and overflow.excess is not None and refused_tokens > overflow.excess:
        window = refused_tokens - overflow.excess
    if window is None:
        return None
    if setup.cache is not None:
        setup.cache.put(setup.provider, setup.base_url, setup.model, window)
    if learned_window(io.session.index.active_path(), setup.provider, setup.model) != window:
        nominal = lookup(setup.model).context_window
        await io.append(
            window_entry(
                setup.provider,
                setup.model,
                window,
                prompt_tokens=overflow.prompt_tokens,
                nominal=nominal,
            )
        )
    return window


async def recover(outcome: CallOutcome, setup: OverflowSetup, io: TurnIO, *, last_try: bool) -> str | None:
    """After a context overflow: hide the refused attempt, learn the window, and compact until the
    next request fits. None when it fits now (the caller retries), else the one line to show."""
    overflow = outcome.overflow or Overflow()
    refused = context_tokens(setup.projection()).tokens
    if outcome.entry_id is not None:  # the refused attempt leaves the model's view
        await io.append({"type": "context_edit", "targetId": outcome.entry_id, "replacement": None})
    window = await learn_window(overflow, refused, setup, io)
    settings = setup.fitted(window or refused)
    limit = compaction_threshold(window, settings) if window else int(refused * 0.8)
    error = outcome.error or "the request is too long for the model"
    if last_try:
        return f"{error}; still too long after compacting {MAX_OVERFLOW_RETRIES - 1} times"
    if window is not None and overflow.prompt_tokens is not None and overflow.prompt_tokens <= limit:
        return None  # the prompt fits: the completion did not (vLLM, OpenAI); now it is fitted too
    # nothing is appended between here and the compaction: one projection answers both checks
    current = setup.projection()
    fixed = fixed_tokens(current)
    if window is not None and fixed > window:
        # nothing compacted can make room: one line, with no compaction attempted (and failed) first
        return cannot_fit(error, window, context_tokens(current).tokens, current, str(io.session.path))
    question = latest_question(current)
    if window is not None and question is not None:
        room = window - fixed - settings.reserve_tokens  # (a system prompt too big is said above)
        if 0 < room < question[1]:
            # summarizing the question would have the model answer a summary of it: say so instead
            return (
                f"cannot fit the server's window of {window:,} tokens: your message {question[0]} is "
                f"≈{question[1]:,} tokens, with ≈{fixed:,} of system prompt and tools and "
                f"{settings.reserve_tokens:,} kept for the answer; nothing was sent. Shorten it, or "
                "start the server with a larger context"
            )
    keep = settings.keep_recent_tokens
    for round_ in range(MAX_FIT_ROUNDS):
        tokens = context_tokens(setup.projection()).tokens
        if round_ and tokens <= limit:
            return None
        round_settings = replace(settings, keep_recent_tokens=max(1, keep >> round_))
        # without a figure, the window is at least smaller than what was refused
        result = await setup.compact(round_settings, window or int(refused * 0.8))
        if result == "aborted":
            return "compaction aborted; nothing was saved"
        if result == "blocked":  # as Claude Code: the overflow stands, the request fails
            return f"{error}; a PreCompact hook blocked the compaction that would make it fit"
        if result in ("nothing", "grew"):  # no smaller summary to be had: say what cannot fit
            break
        if result != "done":
            return f"{error}; compacting failed: {result}"
    tokens = context_tokens(setup.projection()).tokens
    if tokens <= limit:
        return None
    return cannot_fit(error, window, tokens, setup.projection(), str(io.session.path))


def cannot_fit(error: str, window: int | None, tokens: int, projection: Projection, session_path: str) -> str:
    """One line: why the request cannot fit however much is compacted, and the way out."""
    images = image_rule(projection.model)
    sizes = [
        (sum(estimate_message(m.message, images) for m in ce.messages if m.role != "system"), ce)
        for ce in projection.entries
        if ce.entry.type != "compaction"
    ]
    fixed = tokens - sum(size for size, _ in sizes)
    room = f"the server's window of {window:,} tokens" if window else "the server's window"
    if window is not None and fixed > window:
        return (
            f"cannot fit {room}: the system prompt and tool definitions alone are ≈{fixed:,} tokens; "
            "start the server with a larger context"
        )
    biggest = max(sizes, key=lambda pair: pair[0], default=None)
    if biggest is not None and window is not None and biggest[0] > 0 and biggest[0] + fixed > window:
        size, ce = biggest
        what = {"toolResult": "a tool result", "user": "a user message", "assistant": "a reply"}.get(
            ce.entry.role or "", f"a {ce.entry.type} entry"
        )
        return (
            f"cannot fit {room}: entry {ce.entry.id} ({what}) alone is ≈{size:,} tokens; hide or replace "
            f"it (agent-tui edit {session_path} {ce.entry.id} --hide, or in the tree) and send again"
        )
    return f"{error}; still ≈{tokens:,} tokens after compacting, nothing more to compact"


__all__ = ["MAX_FIT_ROUNDS", "MAX_OVERFLOW_RETRIES", "OverflowSetup", "cannot_fit", "learn_window", "recover"]

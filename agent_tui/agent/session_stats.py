"""What a session holds and what its model calls cost (:class:`SessionStats`, pi's
``getSessionStats``), worked out once for every face: the session core's
:meth:`~agent_tui.agent.agent_session.AgentSession.stats` (print and JSON mode's ``/session``, RPC's
``get_session_stats``, the SDK) and the app's ``/session``, which has no agent before the first
send, call :func:`session_stats` on the same entries; :func:`stats_lines` is the text both show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_tui.projection.figures import usage_lines
from agent_tui.projection.pricing import UsageTotals, session_usage
from agent_tui.store.record import Entry


@dataclass(frozen=True, slots=True)
class SessionStats:
    """What a session holds and what its model calls cost (pi's ``getSessionStats``): the messages
    of the whole file (every branch), the tokens and dollars of every model call in it (``totals``:
    what was paid for) and of the path to the leaf (``branch``), and the next request's tokens
    against the window. The app's ``/session`` and RPC's ``get_session_stats`` read this."""

    user_messages: int
    assistant_messages: int
    tool_calls: int  # toolCall blocks of the assistant messages
    tool_results: int
    total_messages: int
    totals: UsageTotals
    branch: UsageTotals
    context_tokens: int
    context_window: int

    @property
    def cost(self) -> float:
        """Dollars of every priced call (0 when none has a price: pi's number, never null)."""
        return self.totals.cost


def session_stats(
    entries: Sequence[Entry], branch: Sequence[Entry], context_tokens: int, context_window: int
) -> SessionStats:
    """The stats of a session file's ``entries`` with ``branch`` the path to its leaf, and the next
    request's ``context_tokens`` of ``context_window``."""
    roles = [e.role for e in entries if e.type == "message"]
    calls = sum(
        1
        for e in entries
        if e.type == "message" and e.role == "assistant"
        for b in (e.message or {}).get("content") or []
        if isinstance(b, dict) and b.get("type") == "toolCall"
    )
    return SessionStats(
        user_messages=roles.count("user"),
        assistant_messages=roles.count("assistant"),
        tool_calls=calls,
        tool_results=roles.count("toolResult"),
        total_messages=len(roles),
        totals=session_usage(entries),
        branch=session_usage(branch),
        context_tokens=context_tokens,
        context_window=context_window,
    )


def stats_lines(stats: SessionStats) -> list[str]:
    """``/session``'s figures, the same in every face: the messages, the context, the cost."""
    return [
        f"Messages: {stats.user_messages:,} user, {stats.assistant_messages:,} assistant, "
        f"{stats.tool_calls:,} tool calls",
        f"Context: {stats.context_tokens:,} of {stats.context_window:,} tokens",
        *usage_lines(stats.totals, stats.branch),
    ]


__all__ = ["SessionStats", "session_stats", "stats_lines"]

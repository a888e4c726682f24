"""What :meth:`agent_tui.agent.loop.AgentLoop.run` yields, for the TUI and print mode.

A run yields deltas while the model streams, tool events while tools run,
``EntryAppended`` for every entry it writes (so a view can re-project), and ends
with exactly one ``TurnDone``; a ``TurnError`` comes right before it when the
turn failed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_tui.providers.events import StopReason


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    index: int = 0  # the content block's index within the assistant message
    #: The timestamp (ms) the assistant message being streamed has (0: not said): a face that
    #: announces the message at its first delta (pi's message_start) gives it this one.
    timestamp: int = 0


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str
    index: int = 0
    timestamp: int = 0  # as TextDelta's


@dataclass(frozen=True, slots=True)
class ToolCallStreaming:
    """The model is writing a tool call (its arguments still arriving)."""

    call_id: str
    name: str
    index: int = 0
    timestamp: int = 0  # as TextDelta's


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a streaming tool call's JSON arguments (after its ToolCallStreaming)."""

    call_id: str
    index: int
    delta: str


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A tool call is about to run: after its ``PreToolUse`` hooks, before the permission question
    (if any), with the arguments it runs with (a hook's ``updatedInput`` included). A call refused
    or failed before it ran gets one too, with the model's arguments, before its ``ToolFinished``."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolUpdate:
    """A running tool's partial result, pi's ``onUpdate`` (``{content, details}``): for ``bash``,
    an empty one as it starts, then the tail of its output so far, at most every 100 ms, and once
    more when it ends. Only when the loop's ``tool_updates`` is on. Untrusted text."""

    call_id: str
    name: str
    partial: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call_id: str
    name: str
    entry_id: str  # the toolResult entry
    is_error: bool


@dataclass(frozen=True, slots=True)
class EntryAppended:
    entry_id: str
    type: str  # the entry type: message, model_change, thinking_level_change, ...
    role: str | None = None  # for messages: user, assistant, toolResult, system


@dataclass(frozen=True, slots=True)
class Retrying:
    attempt: int  # 1 for the first retry
    delay: float  # seconds until it is sent
    reason: str
    of: int = 0  # retries allowed in all (the config's max_retries; 0: not said)


@dataclass(frozen=True, slots=True)
class TurnError:
    message: str


@dataclass(frozen=True, slots=True)
class Notice:
    """One line for the user that changes nothing the model sees (an MCP server failed, a hook's
    message or failure, what an untrusted folder did not load). Untrusted text: show it inert."""

    text: str


@dataclass(frozen=True, slots=True)
class TurnDone:
    stop_reason: StopReason


@dataclass(frozen=True, slots=True)
class CompactionStarted:
    reason: str  # "manual", "threshold" (context near the window) or "overflow" (the provider refused)
    tokens_before: int


@dataclass(frozen=True, slots=True)
class CompactionFinished:
    entry_id: str  # the compaction (or branch_summary) entry
    tokens_before: int  # what the entry records (pi's tokensBefore: the server's count when known)
    tokens_after: int  # estimated context after it
    #: the context before, estimated as ``tokens_after`` is (None: a branch summary, no "before")
    estimated_before: int | None = None

    def change(self) -> str:
        """The figures a face shows, on one basis (both estimated: the server's count before beside
        an estimate after read as a compaction that grew the context): ``≈B → ≈A tokens``, or
        ``≈A tokens`` after a branch summary."""
        if self.estimated_before is None:
            return f"≈{self.tokens_after:,} tokens"
        return f"≈{self.estimated_before:,} → ≈{self.tokens_after:,} tokens"


@dataclass(frozen=True, slots=True)
class CompactionFailed:
    message: str
    nothing_to_do: bool = False  # the branch had nothing to summarize: a notice, not a failure
    blocked: bool = False  # a PreCompact hook blocked it (the message says why): a warning


@dataclass(frozen=True, slots=True)
class SubagentEvent:
    """An event of a subagent a ``task`` call runs (its own loop on its own session file, linked
    from the parent: agent.subagents), tagged with the call. ``event`` is the subagent's own event
    (a ``TurnDone`` ends it); ``tokens`` and ``cost`` are what its model calls used so far. Its
    text is untrusted and, unlike the parent's deltas, not redacted yet: a face that shows it
    redacts it."""

    call_id: str  # the parent's task call
    description: str  # the call's short description
    agent_type: str
    file: str  # the subagent's session file (absolute)
    event: AgentEvent
    tokens: int = 0  # input + output tokens of its model calls so far
    cost: float = 0.0


AgentEvent = (
    TextDelta
    | ThinkingDelta
    | ToolCallStreaming
    | ToolCallDelta
    | ToolStarted
    | ToolUpdate
    | ToolFinished
    | EntryAppended
    | Retrying
    | TurnError
    | Notice
    | TurnDone
    | CompactionStarted
    | CompactionFinished
    | CompactionFailed
    | SubagentEvent
)

#: Where a run's events go (None: the run is over).
Emit = Callable[[AgentEvent | None], None]

__all__ = [
    "AgentEvent",
    "CompactionFailed",
    "CompactionFinished",
    "CompactionStarted",
    "Emit",
    "EntryAppended",
    "Notice",
    "Retrying",
    "SubagentEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallStreaming",
    "ToolFinished",
    "ToolStarted",
    "ToolUpdate",
    "TurnDone",
    "TurnError",
]

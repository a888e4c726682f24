"""The agent loop's events in pi 1.6's JSON event schema (pi's ``docs/json.md``), so a tool written
for ``pi --mode json`` or ``pi --mode rpc`` reads agent-tui's.

:class:`PiEventStream` turns the typed events of one run (:mod:`agent_tui.agent.events`) into pi's
records: ``agent_start``, ``turn_start``, ``message_start`` / ``message_update`` (delta-only:
``assistantMessageEvent`` of type ``text_*``, ``thinking_*``, ``toolcall_*``, never the cumulative
message) / ``message_end``, ``tool_execution_start`` / ``tool_execution_update`` (a running tool's
partial result, when the loop's ``tool_updates`` is on) / ``tool_execution_end``, ``compaction_start`` /
``compaction_end``, ``auto_retry_start`` / ``auto_retry_end``, ``turn_end``, ``agent_end``,
``agent_settled``, and ``entry_appended`` for the run's entries that are not messages
(``model_change``, a permission decision, a ``context_edit``...).

Messages are read back from the session once appended, so ``message_end`` carries exactly what the
file holds (redacted as everything appended is). Streamed deltas are redacted as print mode's output
is (:class:`~agent_tui.store.redact.StreamRedactor`, one per content block: of a delta only what may
still be a secret waits, as a rule the word under way; nothing is dropped), and each ``*_end``
carries the block's authoritative content from the appended message.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Literal, assert_never

from agent_tui.agent.events import (
    AgentEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EntryAppended,
    Notice,
    Retrying,
    SubagentEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStreaming,
    ToolFinished,
    ToolStarted,
    ToolUpdate,
    TurnDone,
    TurnError,
)
from agent_tui.providers.events import Usage
from agent_tui.store.clock import now_ms
from agent_tui.store.index import SessionIndex
from agent_tui.store.record import JSONObject
from agent_tui.store.redact import StreamRedactor, redact_text, redact_value, redaction_enabled

RunKind = Literal["prompt", "compact"]

_BLOCK_EVENTS = {"text": "text", "thinking": "thinking", "toolCall": "toolcall"}


@dataclass(slots=True)
class _Block:
    kind: str  # text, thinking, toolCall
    redactor: StreamRedactor


@dataclass(slots=True)
class _Turn:
    assistant: JSONObject | None = None
    calls: list[str] = field(default_factory=list)  # tool call ids still without a result
    results: list[JSONObject] = field(default_factory=list)


class PiEventStream:
    """Translates one run's agent events into pi's JSON records.

    ``index`` is the session's index (messages are read from it once appended); ``model`` gives the
    ``api``, ``provider`` and ``model`` fields of the assistant message being streamed (for its
    ``message_start``). ``kind="compact"`` is a compaction the user asked for: it yields only
    ``compaction_*`` and ``entry_appended`` records, as pi's ``compact`` command does.

    Call :meth:`feed` with each event in order; it returns the records to write (possibly none).
    A run ends with the loop's ``TurnDone``, after which :meth:`feed` returns ``turn_end`` (when a
    turn is open), ``agent_end`` and ``agent_settled``.
    """

    def __init__(
        self,
        index: SessionIndex,
        model: Callable[[], JSONObject] | None = None,
        *,
        kind: RunKind = "prompt",
    ) -> None:
        self.index = index
        self.model = model or (lambda: {})
        self.kind = kind
        self._agent_open = False
        self._turn: _Turn | None = None
        self._streaming = False  # an assistant message_start was sent, its message_end not yet
        self._blocks: dict[int, _Block] = {}
        self._held_results: dict[str, JSONObject] = {}  # tool call id -> its toolResult message
        self._started: dict[str, float] = {}  # tool call id -> monotonic start
        self._args: dict[str, JSONObject] = {}  # tool call id -> its arguments, as announced
        self._run_messages: list[JSONObject] = []
        self._retry_attempt = 0
        self._compaction_reason = "manual"
        self._error: str | None = None
        self.aborted = False

    # -- the records -------------------------------------------------------------------------

    def feed(self, event: AgentEvent) -> list[JSONObject]:
        out: list[JSONObject] = []
        if isinstance(event, TextDelta | ThinkingDelta):
            kind = "text" if isinstance(event, TextDelta) else "thinking"
            self._delta(out, kind, event.index, event.text, event.timestamp)
        elif isinstance(event, ToolCallStreaming):
            self._assistant_started(out, event.timestamp)
            block = self._block(out, event.index, "toolCall", announce=False)
            if block is not None:
                out.append(
                    self._update(
                        {
                            "type": "toolcall_start",
                            "contentIndex": event.index,
                            "id": event.call_id,
                            "toolName": event.name,
                        }
                    )
                )
        elif isinstance(event, ToolCallDelta):
            self._delta(out, "toolCall", event.index, event.delta)
        elif isinstance(event, EntryAppended):
            self._entry(out, event)
        elif isinstance(event, ToolStarted):
            self._turn_started(out)
            self._started[event.call_id] = time.monotonic()
            args = redact_value(event.arguments) if redaction_enabled() else event.arguments
            self._args[event.call_id] = args
            out.append(
                {
                    "type": "tool_execution_start",
                    "toolCallId": event.call_id,
                    "toolName": event.name,
                    "args": args,
                }
            )
        elif isinstance(event, ToolUpdate):
            out.append(
                {
                    "type": "tool_execution_update",
                    "toolCallId": event.call_id,
                    "toolName": event.name,
                    "args": self._args.get(event.call_id, {}),
                    "partialResult": _partial(event.partial),
                }
            )
        elif isinstance(event, ToolFinished):
            self._tool_finished(out, event)
        elif isinstance(event, Retrying):
            self._turn_ended(out)
            if self._agent_open:
                out.append({"type": "agent_end", "messages": self._run_messages, "willRetry": True})
                self._agent_open = False
                self._run_messages = []
            self._retry_attempt = event.attempt
            out.append(
                {
                    "type": "auto_retry_start",
                    "attempt": event.attempt,
                    "maxAttempts": event.of,
                    "delayMs": round(event.delay * 1000),
                    "errorMessage": _redact(event.reason),
                }
            )
        elif isinstance(event, CompactionStarted):
            self._compaction_reason = event.reason
            out.append({"type": "compaction_start", "reason": event.reason})
        elif isinstance(event, CompactionFinished):
            self._compaction_finished(out, event)
        elif isinstance(event, CompactionFailed):
            aborted = event.message.startswith("compaction aborted")
            record: JSONObject = {
                "type": "compaction_end",
                "reason": self._compaction_reason,
                "aborted": aborted,
                "willRetry": False,
            }
            if not aborted:
                record["errorMessage"] = _redact(event.message)
            out.append(record)
        elif isinstance(event, TurnError):
            self._error = event.message
        elif isinstance(event, TurnDone):
            self._done(out, event.stop_reason)
        elif isinstance(event, Notice):
            pass  # no pi record: each face says it where its user reads (stderr for JSON and RPC)
        elif isinstance(event, SubagentEvent):  # agent-tui's: a task call's subagent, tagged
            tagged = subagent_record(event)
            if tagged is not None:
                out.append(tagged)
        else:
            assert_never(event)  # a new event type must be mapped here (mypy checks)
        return out

    def start(self) -> list[JSONObject]:
        """The records that open a run (``agent_start``, ``turn_start``), before its first event."""
        out: list[JSONObject] = []
        self._turn_started(out)
        return out

    # -- agent and turns ---------------------------------------------------------------------

    def _agent_started(self, out: list[JSONObject]) -> None:
        if self.kind == "prompt" and not self._agent_open:
            self._agent_open = True
            out.append({"type": "agent_start"})

    def _turn_started(self, out: list[JSONObject]) -> None:
        if self.kind != "prompt":
            return
        self._agent_started(out)
        if self._turn is None:
            self._turn = _Turn()
            out.append({"type": "turn_start"})

    def _turn_ended(self, out: list[JSONObject]) -> None:
        turn, self._turn = self._turn, None
        if turn is not None:
            out.append({"type": "turn_end", "message": turn.assistant, "toolResults": turn.results})

    def _done(self, out: list[JSONObject], stop_reason: str) -> None:
        self.aborted = stop_reason == "aborted"
        if self._streaming:  # nothing was appended for it (the loop always appends; defensive)
            self._streaming = False
            self._blocks.clear()
        if self._retry_attempt and stop_reason != "stop" and stop_reason != "toolUse":
            final = self._error or ("aborted" if self.aborted else stop_reason)
            out.append(
                {
                    "type": "auto_retry_end",
                    "success": False,
                    "attempt": self._retry_attempt,
                    "finalError": _redact(final),
                }
            )
            self._retry_attempt = 0
        if self.kind != "prompt":
            return
        self._turn_ended(out)
        self._agent_started(out)  # a run that failed before anything happened still opens and closes
        out.append({"type": "agent_end", "messages": self._run_messages, "willRetry": False})
        self._agent_open = False
        self._run_messages = []
        out.append({"type": "agent_settled", "aborted": self.aborted})

    # -- messages -----------------------------------------------------------------------------

    def _update(self, assistant_event: JSONObject) -> JSONObject:
        return {
            "type": "message_update",
            "usage": Usage().to_json(),
            "assistantMessageEvent": assistant_event,
        }

    def _assistant_started(self, out: list[JSONObject], timestamp: int = 0) -> None:
        """``message_start`` of the assistant message being streamed (at its first event, as pi's),
        with the timestamp the message has (``timestamp``; 0: now)."""
        self._turn_started(out)
        if not self._streaming:
            self._streaming = True
            self._blocks = {}
            partial: JSONObject = {"role": "assistant", "content": [], **self.model()}
            stamp = timestamp or now_ms()
            partial.update({"usage": Usage().to_json(), "stopReason": "pending", "timestamp": stamp})
            out.append({"type": "message_start", "message": partial})

    def _block(self, out: list[JSONObject], index: int, kind: str, *, announce: bool = True) -> _Block | None:
        """The block at ``index``, started (``*_start``) when new; None when it is of another kind."""
        block = self._blocks.get(index)
        if block is None:
            block = self._blocks[index] = _Block(kind, StreamRedactor())
            if announce and kind != "toolCall":
                out.append(self._update({"type": f"{_BLOCK_EVENTS[kind]}_start", "contentIndex": index}))
            return block
        return block if block.kind == kind else None

    def _delta(self, out: list[JSONObject], kind: str, index: int, text: str, timestamp: int = 0) -> None:
        self._assistant_started(out, timestamp)
        block = self._block(out, index, kind)
        if block is None:
            return
        safe = block.redactor.feed(text)
        if safe:
            out.append(
                self._update({"type": f"{_BLOCK_EVENTS[kind]}_delta", "contentIndex": index, "delta": safe})
            )

    def _assistant_ended(self, out: list[JSONObject], message: JSONObject) -> None:
        """Close every block with its authoritative content, then ``message_end``."""
        stamp = message.get("timestamp")
        self._assistant_started(out, stamp if isinstance(stamp, int) and not isinstance(stamp, bool) else 0)
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        # The providers number blocks 0, 1, 2... and the message lists them in that order, so a
        # streamed block's index is its position in the appended message.
        for position, final in enumerate(blocks):
            kind = str(final.get("type"))
            if kind not in _BLOCK_EVENTS:
                continue
            block = self._blocks.get(position)
            if block is not None and block.kind != kind:
                block = None
            name = _BLOCK_EVENTS[kind]
            if block is None:
                if kind == "toolCall":
                    out.append(
                        self._update(
                            {
                                "type": "toolcall_start",
                                "contentIndex": position,
                                "id": final.get("id"),
                                "toolName": final.get("name"),
                            }
                        )
                    )
                else:
                    out.append(self._update({"type": f"{name}_start", "contentIndex": position}))
            else:
                rest = block.redactor.flush()
                if rest:
                    out.append(
                        self._update({"type": f"{name}_delta", "contentIndex": position, "delta": rest})
                    )
            end: JSONObject = {"type": f"{name}_end", "contentIndex": position}
            if kind == "toolCall":
                end["toolCall"] = final
            else:
                end["content"] = final.get("text" if kind == "text" else "thinking", "")
            out.append(self._update(end))
        self._streaming = False
        self._blocks = {}
        out.append({"type": "message_end", "message": message})

    def _entry(self, out: list[JSONObject], event: EntryAppended) -> None:
        entry = self.index.by_id.get(event.entry_id)
        if entry is None:
            return
        if entry.type != "message":
            out.append({"type": "entry_appended", "entry": entry.data})
            return
        message = entry.message or {}
        role = message.get("role")
        if role == "toolResult":  # announced after its tool_execution_end, as pi does
            self._held_results[str(message.get("toolCallId"))] = message
            return
        if self.kind != "prompt":
            out.append({"type": "entry_appended", "entry": entry.data})
            return
        self._run_messages.append(message)
        if role == "assistant":
            self._assistant_ended(out, message)
            turn = self._turn
            if self._retry_attempt and message.get("stopReason") not in ("error", "aborted"):
                out.append({"type": "auto_retry_end", "success": True, "attempt": self._retry_attempt})
                self._retry_attempt = 0
            calls = [
                b for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            if turn is not None:
                turn.assistant = message
                turn.calls = [str(c.get("id")) for c in calls]
                if not turn.calls:
                    self._turn_ended(out)
            return
        self._turn_started(out)
        out.append({"type": "message_start", "message": message})
        out.append({"type": "message_end", "message": message})

    # -- tools and compaction ------------------------------------------------------------------

    def _tool_finished(self, out: list[JSONObject], event: ToolFinished) -> None:
        entry = self.index.by_id.get(event.entry_id)
        message = (
            (entry.message if entry is not None else None) or self._held_results.get(event.call_id) or {}
        )
        self._held_results.pop(event.call_id, None)
        result: JSONObject = {"content": message.get("content", [])}
        result["details"] = message.get("details", {})
        record: JSONObject = {
            "type": "tool_execution_end",
            "toolCallId": event.call_id,
            "toolName": event.name,
            "result": result,
            "isError": event.is_error,
        }
        self._args.pop(event.call_id, None)
        started = self._started.pop(event.call_id, None)
        if started is not None:
            record["durationMs"] = round((time.monotonic() - started) * 1000)
        out.append(record)
        if message:
            self._run_messages.append(message)
            out.append({"type": "message_start", "message": message})
            out.append({"type": "message_end", "message": message})
        turn = self._turn
        if turn is not None:
            turn.results.append(message)
            if event.call_id in turn.calls:
                turn.calls.remove(event.call_id)
            if not turn.calls:
                self._turn_ended(out)

    def _compaction_finished(self, out: list[JSONObject], event: CompactionFinished) -> None:
        entry = self.index.by_id.get(event.entry_id)
        if entry is None or entry.type != "compaction":
            return  # a branch summary: its entry_appended said it
        data = entry.data
        result: JSONObject = {
            "summary": data.get("summary", ""),
            "firstKeptEntryId": data.get("firstKeptEntryId"),
            "tokensBefore": event.tokens_before,
            "estimatedTokensAfter": event.tokens_after,
            "details": data.get("details") or {},
        }
        out.append(
            {
                "type": "compaction_end",
                "reason": self._compaction_reason,
                "result": result,
                "aborted": False,
                "willRetry": self._compaction_reason == "overflow",
            }
        )


def _partial(partial: JSONObject) -> JSONObject:
    """A tool's partial result, redacted; with redaction on, each text ends at its last line end (a
    secret still being written is not cut in two: the rest comes with the next update or the end)."""
    if not redaction_enabled():
        return partial
    content = []
    for block in partial.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            block = {**block, "text": text[: text.rfind("\n") + 1]}
        content.append(block)
    safe = redact_value({**partial, "content": content})
    return safe if isinstance(safe, dict) else partial


def _redact(text: str) -> str:
    return redact_text(text)[0] if redaction_enabled() else text


async def pi_events(
    events: AsyncIterator[AgentEvent],
    index: SessionIndex,
    model: Callable[[], JSONObject] | None = None,
    *,
    kind: RunKind = "prompt",
) -> AsyncIterator[JSONObject]:
    """``events`` (one run of the loop) as pi's JSON records, in order."""
    stream = PiEventStream(index, model, kind=kind)
    for record in stream.start():
        yield record
    async for event in events:
        for record in stream.feed(event):
            yield record


#: A subagent's events left out of its ``subagent_event`` records: its streamed pieces (its reply
#: is the task call's result; its messages are in its own file).
_SUBAGENT_QUIET = (TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStreaming, ToolUpdate)


def subagent_record(event: SubagentEvent) -> JSONObject | None:
    """agent-tui's ``subagent_event`` record: the task call, the subagent's file and usage, and its
    event (``{"type": <snake_case name>, ...its fields}``, redacted; a nested subagent's nested)."""
    inner = event.event
    if isinstance(inner, _SUBAGENT_QUIET):
        return None
    if isinstance(inner, SubagentEvent):
        nested = subagent_record(inner)
        if nested is None:
            return None
        payload: JSONObject = nested
    else:
        name = type(inner).__name__
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")
        # an EntryAppended's own ``type`` (the entry's) is ``entryType``: ``type`` names the event
        fields = {"entryType" if f == "type" else f: getattr(inner, f) for f in inner.__slots__}
        payload = {"type": snake, **(redact_value(fields) if redaction_enabled() else fields)}
    return {
        "type": "subagent_event",
        "toolCallId": event.call_id,
        "description": event.description,
        "agentType": event.agent_type,
        "file": event.file,
        "tokens": event.tokens,
        "cost": event.cost,
        "event": payload,
    }


__all__ = ["PiEventStream", "RunKind", "pi_events", "subagent_record"]

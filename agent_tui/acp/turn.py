"""One run of the agent loop as the editor sees it: :func:`pump` sends its events as
``session/update`` notifications and returns the prompt's response.

Message and thought chunks go through a :class:`~agent_tui.store.redact.StreamRedactor` each; a
tool call is announced when the model starts writing it, running with its arguments, and finished
with its output read back from the ``toolResult`` entry (:mod:`agent_tui.acp.updates` makes each
notification); retries and compaction are thoughts or lines, a notice (an MCP server failed or
is still starting, a hook spoke) a thought and a stderr line; the context use is sent at the end. The loop's stop
reason becomes ACP's (``end_turn``, ``max_tokens``, ``cancelled``); an error turn is an error.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any, assert_never, cast

from acp import RequestError, update_agent_message_text, update_agent_thought_text
from acp.interfaces import Client
from acp.schema import PromptResponse, UsageUpdate

from agent_tui.acp import updates
from agent_tui.acp.live import Live
from agent_tui.agent.subagents import progress_line
from agent_tui.sdk import (
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
from agent_tui.store.redact import StreamRedactor, redact_text
from agent_tui.terminal_text import visible_line

STOP_REASONS = {"stop": "end_turn", "toolUse": "end_turn", "length": "max_tokens", "aborted": "cancelled"}


async def pump(
    conn: Client, session_id: str, live: Live, events: AsyncIterator[AgentEvent]
) -> PromptResponse:
    """Stream one run's events to the editor; the response's stop reason, or an error."""
    send = conn.session_update
    text, thought = StreamRedactor(), StreamRedactor()
    announced: set[str] = set()
    error: str | None = None
    stop = "stop"

    async def flush() -> None:
        for redactor, make in ((text, update_agent_message_text), (thought, update_agent_thought_text)):
            rest = redactor.flush()
            if rest:
                await send(session_id, make(rest))

    async for event in events:
        if isinstance(event, TextDelta):
            chunk = text.feed(event.text)
            if chunk:
                await send(session_id, update_agent_message_text(chunk))
        elif isinstance(event, ThinkingDelta):
            chunk = thought.feed(event.text)
            if chunk:
                await send(session_id, update_agent_thought_text(chunk))
        elif isinstance(event, ToolCallStreaming):
            await flush()
            announced.add(event.call_id)
            await send(session_id, updates.call_started(event.call_id, event.name, None, live.cwd))
        elif isinstance(event, ToolStarted):
            await flush()
            live.calls[event.call_id] = (event.name, event.arguments)
            if event.call_id not in announced:
                announced.add(event.call_id)
                await send(
                    session_id, updates.call_started(event.call_id, event.name, event.arguments, live.cwd)
                )
            await send(session_id, updates.call_running(event.call_id, event.name, event.arguments, live.cwd))
        elif isinstance(event, ToolUpdate):  # a running bash's output so far
            progress = updates.call_output(event.call_id, event.partial)
            if progress is not None:
                await send(session_id, progress)
        elif isinstance(event, ToolFinished):
            _, arguments = live.calls.pop(event.call_id, (event.name, {}))
            result = live.session.entry(event.entry_id).get("message")
            await send(
                session_id, updates.call_finished(event.call_id, event.name, arguments, result, live.cwd)
            )
            plan = updates.plan_of(live.session.store.index.by_id.get(event.entry_id))
            if plan is not None:  # todo_write: the editor's plan view
                await send(session_id, plan)
        elif isinstance(event, Retrying):
            of = f" of {event.of}" if event.of else ""
            note = f"retrying in {event.delay:.1f}s (attempt {event.attempt}{of}): {event.reason}\n"
            await send(session_id, update_agent_thought_text(redact_text(note)[0]))
        elif isinstance(event, CompactionStarted):
            note = f"compacting the context ({event.reason}, {event.tokens_before:,} tokens)\n"
            await send(session_id, update_agent_thought_text(note))
        elif isinstance(event, CompactionFinished):
            note = f"Compacted: {event.change()}"
            await send(session_id, update_agent_message_text(note))
        elif isinstance(event, CompactionFailed):
            await send(session_id, update_agent_message_text(redact_text(event.message)[0]))
        elif isinstance(event, Notice):  # an MCP server failed, a hook spoke, what was not loaded
            line = visible_line(redact_text(event.text)[0])
            print(f"agent-tui: {line}", file=sys.stderr)
            await send(session_id, update_agent_thought_text(f"agent-tui: {line}\n"))
        elif isinstance(event, TurnError):
            error = event.message
        elif isinstance(event, TurnDone):
            stop = event.stop_reason
        elif isinstance(event, SubagentEvent):  # a task call's subagent: its steps as thoughts
            said = progress_line(event)
            if said is not None:
                await flush()
                await send(session_id, update_agent_thought_text(f"{said}\n"))
        elif isinstance(event, ToolCallDelta | EntryAppended):
            pass  # a call's arguments go whole with it running; entries are read back when needed
        else:
            assert_never(event)  # a new event type must be mapped here (mypy checks)
    await flush()
    with contextlib.suppress(Exception):  # a figure for the editor's status, never a reason to fail
        used, window = live.agent.loop.context_usage()
        await send(session_id, UsageUpdate(session_update="usage_update", used=used, size=window))
    if stop == "error":
        raise RequestError.internal_error({"message": redact_text(error or "the turn failed")[0]})
    return PromptResponse(stop_reason=cast(Any, STOP_REASONS.get(stop, "end_turn")))


__all__ = ["STOP_REASONS", "pump"]

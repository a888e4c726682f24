"""A turn's (or a compaction's) agent events, shown as they come: one ``match`` per event type.

The store already holds the entries; the events only drive what is on screen
meanwhile: the streaming reply, the notices, and a redraw after each appended
entry. :func:`show_events` is run by the app's ``run_events`` worker.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, assert_never

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
from agent_tui.projection.todos import TODO_TOOL, latest_todos
from agent_tui.providers.events import StopReason
from agent_tui.store.redact import StreamRedactor

if TYPE_CHECKING:
    from agent_tui.store.record import Entry
    from agent_tui.tui.host import Host
    from agent_tui.tui.widgets.streaming_reply import StreamingReply


class EventView:
    """Applies events to the app; holds the reply being streamed, if any. Its text and thinking go
    through a :class:`~agent_tui.store.redact.StreamRedactor` each, as in every face: the reply on
    screen holds no secret its stored message will not."""

    def __init__(self, app: Host) -> None:
        self.app = app
        self.reply: StreamingReply | None = None
        self.stop_reason: StopReason | None = None  # the TurnDone's, once it came
        self._text = StreamRedactor()
        self._thinking = StreamRedactor()

    async def _reply(self) -> StreamingReply:
        if self.reply is None:
            composer = self.app.composer
            self.reply = await self.app.chat.start_reply(lambda: composer.typed_at)
        return self.reply

    async def _held_out(self) -> StreamingReply:
        """The reply, with the text and thinking held back so far in it (a tool call follows)."""
        reply = await self._reply()
        if text := self._text.flush():
            reply.add_text(text)
        if thinking := self._thinking.flush():
            reply.add_thinking(thinking)
        return reply

    async def finish_reply(self) -> None:
        text, thinking = self._text.flush(), self._thinking.flush()
        self._text, self._thinking = StreamRedactor(), StreamRedactor()
        if self.reply is not None:
            reply, self.reply = self.reply, None
            if text:
                reply.add_text(text)
            if thinking:
                reply.add_thinking(thinking)
            await reply.finish()

    def error(self, message: str, title: str = "error", notice: str = "error") -> None:
        app = self.app
        app.last_error = message
        app.notify(message, title=title, severity="error", timeout=10)
        app.set_notice(f"{notice}: {message}")

    async def show(self, event: AgentEvent) -> None:
        app = self.app
        if not isinstance(event, Retrying | EntryAppended):
            app.main_screen.status_line.retried()  # the retry is under way: back to the elapsed time
        match event:
            case TextDelta(text=text):
                reply = await self._reply()
                if safe := self._text.feed(text):
                    reply.add_text(safe)
            case ThinkingDelta(text=text):
                reply = await self._reply()
                if safe := self._thinking.feed(text):
                    reply.add_thinking(safe)
            case ToolCallStreaming(call_id=call_id, name=name):
                (await self._held_out()).tool_streaming(call_id, name)
            case ToolStarted(call_id=call_id, name=name, arguments=arguments):
                (await self._held_out()).tool_started(call_id, name, arguments)
            case ToolFinished(call_id=call_id, name=name, is_error=is_error):
                (await self._reply()).tool_finished(call_id, name, is_error)
            case EntryAppended(entry_id=entry_id, role=role):
                await self.finish_reply()
                await app.refresh_views(app.index.leaf_id)
                if role == "toolResult":
                    show_todos_of(app, entry_id)
            case Retrying(attempt=attempt, delay=delay, reason=reason, of=of):
                # one updating line, not a toast per attempt; the failed attempts are in the chat,
                # folded (they open on a click)
                app.main_screen.status_line.retrying(delay, attempt, of, reason)
            case CompactionStarted(reason=reason, tokens_before=before):
                app.main_screen.status_line.start("compacting…")
                app.set_notice(f"Compacting ({reason}, {before:,} tokens)…")
            case CompactionFinished() as finished:
                app.main_screen.status_line.start("streaming…")
                app.set_notice("")
                # after: the figure the panel now shows for the next request (the preview's estimate)
                if finished.estimated_before is None:
                    line = f"Branch summary written; the next request: {finished.change()}."
                    app.notify(line, title="branch summary")
                else:
                    app.notify(f"Compacted: context {finished.change()}.", title="compact")
            case CompactionFailed(message=message, nothing_to_do=True):
                app.main_screen.status_line.start("streaming…")
                app.set_notice("")
                app.notify(message, title="compact", markup=False)
            case CompactionFailed(message=message, blocked=True):  # before it started: nothing to reset
                app.notify(message, title="compact", severity="warning", timeout=10, markup=False)
            case CompactionFailed(message=message):
                self.error(message, "compaction failed", "compaction failed")
            case Notice(text=text):
                show_notice(app, text)
            case TurnError(message=message):
                self.error(message)
            case TurnDone(stop_reason=stop_reason):
                self.stop_reason = stop_reason
                app.main_screen.agent_work.clear_subagents()  # none outlives its turn
            case SubagentEvent(call_id=call_id, agent_type=kind, description=about, tokens=tokens):
                done = isinstance(event.event, TurnDone)
                app.main_screen.agent_work.subagent(call_id, kind, about, tokens, done=done)
            case ToolCallDelta() | ToolUpdate():
                pass  # the chat shows a call once its arguments are whole, its output when it ends
            case _:
                assert_never(event)  # a new event type must be shown here (mypy checks)


def show_todos_of(app: Host, entry_id: str) -> None:
    """A ``todo_write`` result just appended: its list above the composer."""
    entry = app.index.by_id.get(entry_id)
    if entry is not None and (entry.message or {}).get("toolName") == TODO_TOOL:
        app.main_screen.agent_work.show_todos(latest_todos([entry]))


def show_branch_todos(app: Host, path: Sequence[Entry] | None = None) -> None:
    """The plan of the open session's branch above the composer (a session opened or switched to);
    none running there yet. ``path``: the branch's entries when the caller has them (a projection's
    path: 20,000 entries cost 8 ms to walk again)."""
    work = app.main_screen.agent_work
    work.clear_subagents()
    work.show_todos(latest_todos(app.index.active_path() if path is None else path))


def show_notice(app: Host, text: str) -> None:
    """One line from the agent (a Notice event, or an MCP server that died between turns); its text
    quotes hooks and servers, so it is never markup."""
    app.notify(text, title="agent-tui", severity="warning", timeout=8, markup=False)
    app.set_notice(text)


async def show_events(app: Host, events: AsyncIterator[AgentEvent]) -> StopReason | None:
    """Show ``events`` until they end; an exception is shown as an error, never lost. Returns the
    turn's stop reason (None when it never said)."""
    view = EventView(app)
    try:
        async for event in events:
            await view.show(event)
    except Exception as e:
        view.error(f"{type(e).__name__}: {e}")
    finally:
        await view.finish_reply()
        app.busy = False
        changed = app.refreshed != (len(app.index), app.index.leaf_id)
        if changed or app.chat.streaming is not None:
            await app.refresh_views(app.index.leaf_id)
        else:
            app.update_status()
    return view.stop_reason

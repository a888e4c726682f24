"""The agent loop: project, call the model, append, run tools, append, until the model stops.

Every model call builds a fresh projection of the session (``project`` -> ``prepare`` -> the
provider's request body), so what is sent is by construction what ``agent-tui context --format
anthropic|openai`` shows at that moment. Entries are appended as they happen: the user message
before the call, the assistant message when its stream ends, each tool result when it (and every
call before it) has finished.

This module is the turn (pi's runLoop) and the loop's state. Each step is a module handed plain
data and the run's :class:`~agent_tui.agent.turn_io.TurnIO` (events, appends, abort): what a turn
settles first (:mod:`~agent_tui.agent.turn_prepare`), the model call with its retries and what
each attempt records (:mod:`~agent_tui.agent.model_call`), the tool calls' prepare / permit /
execute / finalize (:mod:`~agent_tui.agent.tool_calls`), a compaction with its PreCompact hooks
(:mod:`~agent_tui.agent.compaction_run`), the recovery from a context overflow
(:mod:`~agent_tui.agent.overflow_recovery`), what each hook answer does
(:mod:`~agent_tui.agent.loop_hooks`).

Messages the user types while a turn runs wait in :attr:`AgentLoop.queue` (pi's steering and
follow-up queues, :mod:`agent_tui.agent.queue`): steering messages are appended as user messages
once every tool call of the current assistant message has its result (or when the model stops),
before the next model call; follow-ups when the agent would stop, continuing the turn. The loop
never takes a queued message back: what an abort or an error leaves queued is the face's to return.

Abort (``abort()``, mapped to Esc / Ctrl+C) keeps the partial assistant message with stopReason
``aborted`` and gives every pending tool call an aborted error result, so the next request is valid.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import Future
from pathlib import Path

from agent_tui.agent import loop_hooks, turn_prepare
from agent_tui.agent.checkpointing import TurnCheckpoints
from agent_tui.agent.compaction import Summarizer
from agent_tui.agent.compaction_run import compact_at_threshold, run_branch_summary, run_compaction
from agent_tui.agent.deferred_calls import deferred_call
from agent_tui.agent.events import (
    AgentEvent,
    Emit,
    Notice,
    TurnDone,
    TurnError,
)
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.model_call import call_model
from agent_tui.agent.model_call import request_body as model_request_body
from agent_tui.agent.model_stream import ModelStream
from agent_tui.agent.overflow_recovery import MAX_OVERFLOW_RETRIES, OverflowSetup, recover
from agent_tui.agent.permissions import Permissions
from agent_tui.agent.queue import MessageQueue, QueuedMessage
from agent_tui.agent.resources import Resources
from agent_tui.agent.server_count import ServerCounts
from agent_tui.agent.tool_calls import ToolSetup, run_tool_calls
from agent_tui.agent.tools.base import Tool
from agent_tui.agent.turn_io import TurnIO
from agent_tui.agent.window import WindowCache, known_window
from agent_tui.agent.window_probe import learn_context_window, probe_context_window
from agent_tui.config import Config
from agent_tui.projection.compaction import (
    CompactionSettings,
    context_tokens,
    fit_to_window,
)
from agent_tui.projection.context import Projection, Projector
from agent_tui.projection.models import lookup
from agent_tui.projection.request import prepare
from agent_tui.projection.tokens import estimate_request
from agent_tui.providers.base import Provider
from agent_tui.providers.events import StopReason
from agent_tui.store.clock import now_ms
from agent_tui.store.errors import StoreError
from agent_tui.store.record import JSONObject
from agent_tui.store.session import Session

#: One piece of work a run does (a turn, a compaction, a branch summary): its stop reason.
Work = Callable[[TurnIO], Awaitable[StopReason]]


class AgentLoop:
    """Runs turns on one session. ``run`` is an async iterator of :mod:`agent_tui.agent.events`."""

    def __init__(
        self,
        session: Session,
        provider: Provider,
        tools: Sequence[Tool],
        *,
        config: Config,
        model: str | None = None,
        global_context_dir: str | Path | None = None,
        permissions: Permissions | None = None,
        cwd: str | None = None,
        resources: Resources | None = None,
        window_cache: WindowCache | None = None,
        extensions: Extensions | None = None,
        window_probe: Future[int | None] | None = None,
    ) -> None:
        self.session = session
        #: The server's answer about an unknown model's window, still coming (probe_context_window):
        #: the first turn waits for it, so its figures and compaction use the real window.
        self.window_probe = window_probe
        #: The user's system prompt files and flags and the skills (None: the default prompt only).
        self.resources = resources
        #: Where learned context windows are remembered across sessions (None: only in the session).
        self.window_cache = window_cache
        #: Where tools run and what "inside" means for writes: the folder agent-tui was started in,
        #: never the session header's cwd (a session file must not choose it).
        self.cwd = cwd if cwd is not None else os.getcwd()
        self.provider = provider
        self.tools = list(tools)
        self.config = config
        self.model = model or config.model
        self.thinking = config.thinking  # None keeps the session's level
        self.global_context_dir = (
            global_context_dir
            if global_context_dir is not None
            else (config.config_path.parent if config.config_path is not None else None)
        )
        self.tool_grace = 2.0  # seconds tools get to stop by themselves after an abort
        self._abort = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self.running = False
        #: Tool permissions (agent.permissions); None runs every tool without recording anything.
        self.permissions = permissions
        self._projector = Projector(session.index)
        #: Messages typed while a turn runs (steering, follow-ups); the loop delivers them.
        self.queue = MessageQueue(config.steering_mode, config.follow_up_mode)
        #: MCP servers and hooks (agent.extensions); None: the built-in tools only, no hooks.
        self.extensions = extensions
        self._model_call: ModelStream | None = None  # the model call in progress (or the last one)
        #: emit ToolUpdate events (a running tool's partial output): the JSON, RPC and ACP faces
        #: show them; off by default, so the app's event loop is not woken for them
        self.tool_updates = False
        self.stop_hook_limit = 5  # continuations a Stop hook may ask for in one turn
        #: hand a call a PreToolUse hook deferred back (print mode: agent.deferred_calls); off in the
        #: app, where a deferral is ignored with a warning, as in Claude Code's interactive sessions
        self.defer_tool_calls = False
        self._threshold_blocked = False  # a PreCompact hook blocked this turn's threshold compaction
        #: File checkpoints (agent.checkpointing): a snapshot before a turn's first file-changing
        #: tool and at the end of a turn that ran one; None takes none.
        self.checkpoints: TurnCheckpoints | None = None
        #: The server's counts of requests near the threshold (agent.server_count), by request.
        self.server_counts = ServerCounts()

    def projection(self) -> Projection:
        """The session's projection now: extended in place after appends, rebuilt after anything else."""
        return self._projector.project()

    # -- control ---------------------------------------------------------------------------

    def abort_retry(self) -> bool:
        """Call off the retry the running turn waits for (on the loop's thread): the turn ends with
        the failed attempt's error. False when no retry is being waited for."""
        call = self._model_call
        return call is not None and self.running and call.skip_retry()

    def abort(self) -> None:
        """Stop the running turn (safe from any thread and from a signal handler)."""
        loop = self._loop
        if loop is None or not self.running:
            return
        if threading.get_ident() == self._thread:
            self._abort.set()
        else:
            loop.call_soon_threadsafe(self._abort.set)

    @property
    def aborted(self) -> bool:
        return self._abort.is_set()

    async def run(self, prompt: str | list[JSONObject] | None) -> AsyncIterator[AgentEvent]:
        """One turn: ``prompt`` (text, or the user message's content blocks) as a new user message
        (None continues the session, or delivers what is queued), to the model's final stop."""
        async for event in self._drive(lambda io: self._checkpointed_turn(prompt, io)):
            yield event

    async def _checkpointed_turn(self, prompt: str | list[JSONObject] | None, io: TurnIO) -> StopReason:
        checkpoints = self.checkpoints
        if checkpoints is None:
            return await self._turn(prompt, io)
        checkpoints.start_turn()
        try:
            return await self._turn(prompt, io)
        finally:
            await checkpoints.end_turn(io)

    async def compact(self, focus: str | None = None) -> AsyncIterator[AgentEvent]:
        """Compact the session now (the user asked), optionally focused; ends with TurnDone."""

        async def work(io: TurnIO) -> StopReason:
            result = await self._compact("manual", io, focus=focus)
            if result == "aborted":
                return "aborted"
            return "stop" if result in ("done", "nothing") else "error"

        async for event in self._drive(work):
            yield event

    async def branch_with_summary(
        self, target_id: str, focus: str | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Move to ``target_id``, leaving a summary of the abandoned branch there (pi's branch summary)."""

        async def work(io: TurnIO) -> StopReason:
            return await run_branch_summary(io, self.summarizer(), target_id, focus, self.projection)

        async for event in self._drive(work):
            yield event

    async def _drive(self, work: Work) -> AsyncIterator[AgentEvent]:
        if self.running:
            raise RuntimeError("the agent is already running")
        if self.session.read_only:
            raise RuntimeError(self.session.read_only_reason or "the session is read-only")
        self.running = True
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._abort = asyncio.Event()
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        worker = asyncio.create_task(self._work(work, TurnIO(self.session, queue.put_nowait, self._abort)))
        try:
            while True:
                event = await queue.get()
                if event is None:
                    break
                yield event
        finally:
            if not worker.done():
                self._abort.set()  # the consumer went away: stop cleanly
            try:
                await worker
            finally:
                self.running = False

    async def _work(self, work: Work, io: TurnIO) -> None:
        emit = io.emit
        try:
            stop = await work(io)
            emit(TurnDone(stop))
        except StoreError as e:  # the session cannot be written (disk full, ...): the turn stops, said once
            emit(TurnError(str(e)))
            emit(TurnDone("error"))
        except Exception as e:
            emit(TurnError(f"internal error: {type(e).__name__}: {e}"))
            emit(TurnDone("error"))
            raise
        finally:
            emit(None)

    # -- the turn ----------------------------------------------------------------------------

    async def _turn(self, prompt: str | list[JSONObject] | None, io: TurnIO) -> StopReason:
        self._threshold_blocked = False
        # a call a PreToolUse hook deferred, run first when the session is continued without a prompt
        resumed = deferred_call(self.session.index.active_path()) if prompt is None else None
        await self._prepare_settings(io)
        start_context: list[str] = []  # what SessionStart hooks add (after a resumed call's result)
        if self.extensions is not None:
            found = await turn_prepare.prepare_extensions(
                self.extensions, self.permissions, self.projection(), io
            )
            if found is None:
                return "aborted"
            start_context = found
        if resumed is None:
            await turn_prepare.add_context(start_context, "SessionStart", io)
            start_context = []
        await turn_prepare.prepare_system(
            io, self.projection(), self.cwd, self.active_tools(), self.resources, self.global_context_dir
        )
        if prompt is not None:
            content = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
            allowed, context = await self._prompt_hooks(content, io.emit)
            if not allowed:
                return "error"
            await io.append_message({"role": "user", "content": content, "timestamp": now_ms()})
            await turn_prepare.add_context(context, "UserPromptSubmit", io)
        # pi polls the steering queue once before the first call (typed while the turn was starting)
        pending = self.queue.drain("steer")
        if prompt is None and not pending and resumed is None:
            pending = self.queue.drain("follow_up")
        if prompt is None and not pending and resumed is None:
            last = prepare(self.projection().messages).messages
            if not last or last[-1].role == "assistant":
                io.emit(TurnError("nothing to continue: the last message is the model's (send a prompt)"))
                return "error"
        calls, reason = ([resumed[0]], resumed[1]) if resumed is not None else ([], "stop")
        overflows = 0  # context overflows this turn: each is compacted until the request fits, then retried
        stop_hooks = 0  # continuations Stop hooks asked for
        while True:
            if calls:
                if self.checkpoints is not None:
                    await self.checkpoints.before_tools(calls, self.active_tools(), io)
                if await run_tool_calls(calls, reason, self._tool_setup(), io) is not None:
                    return "stop"  # a PreToolUse hook deferred the call: handed back, the turn ends
                if io.aborted:
                    return "aborted"
                await turn_prepare.add_context(start_context, "SessionStart", io)
                start_context = []
                # Every call of this message has its result: steering typed meanwhile goes in now.
                pending = [*pending, *self.queue.drain("steer")]
            await self._deliver(pending, io)
            pending = []
            if io.aborted:
                return "aborted"
            await self._compact_if_needed(io)
            call = self._model_call = ModelStream(self.provider, self.model, self.config.retry)
            outcome = await call_model(call, self.config, self.request_body, io)
            reason = outcome.stop_reason
            if reason == "error" and outcome.kind == "context_overflow":
                overflows += 1
                problem = await recover(
                    outcome, self._overflow_setup(io), io, last_try=overflows >= MAX_OVERFLOW_RETRIES
                )
                if problem is None:
                    calls = []
                    continue
                io.emit(TurnError(problem))
                return "aborted" if io.aborted else "error"
            if reason == "error":
                io.emit(TurnError(outcome.error or "the model call failed"))
                return reason
            if reason == "aborted":
                return reason
            calls = [b for b in outcome.message["content"] if b.get("type") == "toolCall"]
            if calls:
                continue  # run at the top, then the next model call
            pending = self.queue.drain("steer")
            if pending:
                continue
            # The agent would stop here: a follow-up continues it (pi's outer loop).
            pending = self.queue.drain("follow_up")
            if pending:
                continue
            if await self._stop_hooks(stop_hooks, io):
                stop_hooks += 1
                continue
            await self._compact_if_needed(io)
            return reason

    async def _deliver(self, messages: list[QueuedMessage], io: TurnIO) -> None:
        """Append queued messages as user messages, in order (each is on disk before the next model call)."""
        for queued in messages:
            await io.append_message(
                {"role": "user", "content": queued.message_content(), "timestamp": now_ms()}
            )

    def _tool_setup(self) -> ToolSetup:
        return ToolSetup(
            self.active_tools(),
            self.cwd,
            self.permissions,
            self.extensions,
            updates=self.tool_updates,
            grace=self.tool_grace,
            defer=self.defer_tool_calls,
        )

    def _overflow_setup(self, io: TurnIO) -> OverflowSetup:
        async def compact(settings: CompactionSettings, window: int) -> str:
            return await self._compact("overflow", io, settings=settings, everything=True, window=window)

        return OverflowSetup(
            self.provider.name,
            self._base_url(),
            self.model,
            self.window_cache,
            self.projection,
            self._fitted,
            compact,
        )

    async def _prepare_settings(self, io: TurnIO) -> None:
        if self.window_probe is not None:  # the first turn: the server's window, before any figure
            probe, self.window_probe = self.window_probe, None
            await turn_prepare.await_probe(probe, io)
        # the window known from the cache only: the session records it too
        window = self.learned_window()
        await turn_prepare.record_settings(
            io, self.projection(), self.provider.name, self.model, window, self.thinking
        )

    def active_tools(self) -> list[Tool]:
        """The built-in tools, then the tools of the MCP servers that are ready; only those the tool
        flags select (``--tools``, ``--exclude-tools``...: agent.tool_selection)."""
        tools = list(self.tools)
        if self.extensions is not None:
            names = {t.name for t in self.tools}
            tools += [t for t in self.extensions.tools() if t.name not in names]
        selection = self.resources.tools if self.resources is not None else None
        return selection.apply(tools) if selection is not None else tools

    # -- extensions: MCP servers and hooks (what each hook answer does: agent.loop_hooks) -------

    async def _prompt_hooks(self, content: list[JSONObject], emit: Emit) -> tuple[bool, list[str]]:
        """``UserPromptSubmit``: (whether the prompt is sent, context the hooks add)."""
        if self.extensions is None:
            return True, []
        blocked, context = await loop_hooks.prompt_submit(self.extensions, content, emit)
        if blocked is not None:
            emit(TurnError(f"the prompt was not sent: a UserPromptSubmit hook blocked it: {blocked}"))
            return False, []
        return True, context

    async def _stop_hooks(self, continued: int, io: TurnIO) -> bool:
        """``Stop``: True when a hook blocks the stop (its reason goes to the model and the turn goes on)."""
        if self.extensions is None or continued >= self.stop_hook_limit:
            return False
        reason = await loop_hooks.stop(self.extensions, continued, io.emit)
        if reason is None:
            return False
        await turn_prepare.add_context([reason], "Stop", io)
        return True

    async def pre_compact(self, focus: str | None = None) -> tuple[str | None, list[str]]:
        """A manual compaction's ``PreCompact`` hooks, for one the face makes itself (the reviewed
        one): (why they block it, or None; their notices)."""
        notices: list[str] = []

        def emit(event: AgentEvent | None) -> None:
            if isinstance(event, Notice):
                notices.append(event.text)

        return await self._pre_compact_blocked("manual", focus, emit), notices

    async def _pre_compact_blocked(self, trigger: str, focus: str | None, emit: Emit) -> str | None:
        if self.extensions is None:
            return None
        return await loop_hooks.compaction_blocked(
            self.extensions, self.session, self.permissions, trigger, focus, emit
        )

    # -- compaction and the context window ---------------------------------------------------

    def summarizer(self, window: int | None = None) -> Summarizer:
        """A summarizer for this model, its requests fitted to ``window`` (default: the known one)."""
        return Summarizer(
            self.provider, self.model, self.config.retry, context_window=window or self.context_window()
        )

    def learned_window(self) -> int | None:
        """The server's real window for this provider and model, when an overflow taught it: the
        session's latest ``agent-tui.window`` entry, else the data dir's cache for this server."""
        return known_window(
            self.session.index.active_path(),
            self.provider.name,
            self._base_url(),
            self.model,
            self.window_cache,
        )

    def context_window(self) -> int:
        """The window requests must fit: the learned one, else the model table's."""
        return self.learned_window() or lookup(self.model).context_window

    def compaction_settings(self) -> CompactionSettings:
        """The configured settings for this model, fitted to its window (keep and reserve capped)."""
        return self._fitted(self.context_window())

    def _fitted(self, window: int) -> CompactionSettings:
        """The configured settings fitted to ``window``, the keep budget a share of what the system
        prompt and tools leave of it."""
        system = [m for m in self.projection().messages if m.role == "system"]
        return fit_to_window(self.config.compaction_settings(self.model), window, estimate_request(system))

    def context_usage(self) -> tuple[int, int]:
        """(tokens of the next request, the window it must fit)."""
        return context_tokens(self.projection()).tokens, self.context_window()

    async def server_count(self) -> int | None:
        """The server's count of the next request's input tokens, when it has a count endpoint
        and answers in time (agent.server_count); None leaves the estimate to decide."""
        return await self.server_counts.count(self.provider, self.request_body())

    def _base_url(self) -> str | None:
        base_url = getattr(self.provider, "base_url", None)
        return base_url if isinstance(base_url, str) else None

    async def _compact_if_needed(self, io: TurnIO) -> None:
        """Compact at the threshold, unless a PreCompact hook blocked it earlier in this turn (a
        blocked threshold compaction is skipped, as Claude Code skips it)."""
        if self._threshold_blocked:
            return
        result = await compact_at_threshold(
            io,
            self.compaction_settings(),
            self.context_usage,
            self.projection(),
            lambda: self._compact("threshold", io, everything=False),
            self.server_count,
        )
        if result == "blocked":
            self._threshold_blocked = True

    async def _compact(
        self,
        reason: str,
        io: TurnIO,
        *,
        focus: str | None = None,
        everything: bool = True,
        settings: CompactionSettings | None = None,
        window: int | None = None,
    ) -> str:
        """Compact now (:func:`~agent_tui.agent.compaction_run.run_compaction`, this loop's hooks)."""
        settings = settings or self.compaction_settings()
        before, _ = self.context_usage()
        return await run_compaction(
            io,
            self.summarizer(window),
            settings,
            reason=reason,
            tokens_before=before,
            gate=self._pre_compact_blocked,
            focus=focus,
            everything=everything,
        )

    # -- the model call ----------------------------------------------------------------------

    def request_body(self, projection: Projection | None = None) -> JSONObject:
        """The body the next model call sends: the session's projection, prepared, for this provider."""
        projection = projection if projection is not None else self.projection()
        return model_request_body(self.provider, self.model, projection)


__all__ = [
    "AgentLoop",
    "learn_context_window",
    "probe_context_window",
]

"""The agent loop: project, call the model, append, run tools, append, until the model stops.

Every model call builds a fresh projection of the session (``project`` ->
``prepare`` -> the provider's request body), so what is sent is by construction
what ``agent-tui context --format anthropic|openai`` shows at that moment.
Entries are appended as they happen: the user message before the call, the
assistant message when its stream ends, each tool result when it (and every
call before it) has finished. Parallel tool calls run concurrently.

Messages the user types while a turn runs wait in :attr:`AgentLoop.queue` (pi's steering and
follow-up queues, :mod:`agent_tui.agent.queue`): steering messages are appended as user messages
once every tool call of the current assistant message has its result (or when the model stops),
before the next model call; follow-ups when the agent would stop, continuing the turn. The loop
never takes a queued message back: what an abort or an error leaves queued is the face's to return.

Abort (``abort()``, mapped to Esc / Ctrl+C) keeps the partial assistant message
with stopReason ``aborted`` and gives every pending tool call an aborted error
result, so the next request is valid. Rate limits, overload, server errors and
dropped streams are retried with backoff (honouring retry-after); each failed
attempt is recorded as an assistant message with stopReason ``error``, which
the projection leaves out of later requests. A rejected key is not retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from agent_tui.agent import loop_hooks
from agent_tui.agent.auto_prune import prune_for_threshold
from agent_tui.agent.compaction import (
    CompactionError,
    NothingToCompact,
    Summarizer,
    compact,
    summarize_branch,
)
from agent_tui.agent.events import (
    AgentEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EntryAppended,
    Notice,
    Retrying,
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
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.model_stream import Failure, ModelStream
from agent_tui.agent.permissions import HookVote, Permissions
from agent_tui.agent.queue import MessageQueue, QueuedMessage
from agent_tui.agent.resources import Resources
from agent_tui.agent.system_prompt import build_sections, context_files, system_update
from agent_tui.agent.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    WriteGuard,
    validate_arguments,
)
from agent_tui.agent.window import WindowCache, known_window
from agent_tui.config import Config, next_model
from agent_tui.projection import registry
from agent_tui.projection.compaction import (
    CompactionSettings,
    compaction_threshold,
    context_tokens,
    fit_to_window,
    should_compact,
    unmeasured_since_compaction,
)
from agent_tui.projection.context import Projection, Projector, project
from agent_tui.projection.models import lookup
from agent_tui.projection.request import prepare
from agent_tui.projection.tokens import estimate_message, estimate_request
from agent_tui.projection.window import fit_output, learned_window, window_entry
from agent_tui.projection.wire import route_for
from agent_tui.providers import events as pe
from agent_tui.providers.base import Provider, adapter_class
from agent_tui.providers.events import StopReason
from agent_tui.providers.overflow import Overflow
from agent_tui.store.clock import now_ms
from agent_tui.store.errors import StoreError
from agent_tui.store.record import Entry, JSONObject
from agent_tui.store.redact import register_secret
from agent_tui.store.session import Session

T = TypeVar("T")

ABORTED_TEXT = "Operation aborted"
TRUNCATED_CALL_TEXT = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments may be '
    "truncated. Re-issue the tool call with complete arguments."
)


#: Context overflows a turn recovers from (each compacted until the request fits, then retried).
MAX_OVERFLOW_RETRIES = 3
#: Compactions one recovery makes, the keep budget halved each time, before it says what cannot fit.
MAX_FIT_ROUNDS = 3


class _Aborted(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _PreparedCall:
    """A tool call ready for the permission check: its tool and validated arguments."""

    tool: Tool
    args: JSONObject
    call_id: str


@dataclass(slots=True)
class _CallOutcome:
    message: JSONObject
    stop_reason: (
        StopReason  # the turn's: the message's, or "aborted" when the wait before a retry was aborted
    )
    error: str | None = None
    kind: str | None = None  # the provider error's kind, e.g. "context_overflow"
    entry_id: str | None = None  # the appended assistant message
    overflow: Overflow | None = None  # what a context overflow said about the server's window


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
        self._threshold_blocked = False  # a PreCompact hook blocked this turn's threshold compaction

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
        async for event in self._drive(lambda emit: self._turn(prompt, emit)):
            yield event

    async def compact(self, focus: str | None = None) -> AsyncIterator[AgentEvent]:
        """Compact the session now (the user asked), optionally focused; ends with TurnDone."""

        async def work(emit: Callable[[AgentEvent | None], None]) -> StopReason:
            result = await self._compact("manual", emit, focus=focus)
            if result == "aborted":
                return "aborted"
            return "stop" if result in ("done", "nothing") else "error"

        async for event in self._drive(work):
            yield event

    async def branch_with_summary(
        self, target_id: str, focus: str | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Move to ``target_id``, leaving a summary of the abandoned branch there (pi's branch summary)."""

        async def work(emit: Callable[[AgentEvent | None], None]) -> StopReason:
            summarizer = self.summarizer()
            try:
                entry = await self._abortable(
                    summarize_branch(self.session, summarizer, target_id, focus=focus)
                )
            except _Aborted:
                return "aborted"
            except CompactionError as e:
                emit(CompactionFailed(f"branch summary: {e}"))
                return "error"
            if entry is not None:
                emit(EntryAppended(entry.id, entry.type))
                emit(CompactionFinished(entry.id, 0, context_tokens(self.projection()).tokens))
            elif self.session.index.leaf_id is not None:
                emit(EntryAppended(self.session.index.leaf_id, "custom"))
            return "stop"

        async for event in self._drive(work):
            yield event

    async def _drive(
        self, work: Callable[[Callable[[AgentEvent | None], None]], Awaitable[StopReason]]
    ) -> AsyncIterator[AgentEvent]:
        if self.running:
            raise RuntimeError("the agent is already running")
        if self.session.read_only:
            raise RuntimeError(self.session.read_only_reason or "the session is read-only")
        self.running = True
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._abort = asyncio.Event()
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        worker = asyncio.create_task(self._work(work, queue.put_nowait))
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

    # -- the turn ----------------------------------------------------------------------------

    async def _work(
        self,
        work: Callable[[Callable[[AgentEvent | None], None]], Awaitable[StopReason]],
        emit: Callable[[AgentEvent | None], None],
    ) -> None:
        try:
            stop = await work(emit)
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

    async def _append(self, fields: JSONObject, emit: Callable[[AgentEvent | None], None]) -> Entry:
        entry = self.session.append(fields, sync=False)
        # The fsync runs in a thread: a slow disk must not freeze the app, whose keys this event
        # loop answers. The entry is acknowledged (the event, the next step) once it is on disk.
        await asyncio.to_thread(self.session.sync)
        role = (fields.get("message") or {}).get("role") if fields.get("type") == "message" else None
        emit(EntryAppended(entry.id, entry.type, role))
        return entry

    async def _append_message(self, message: JSONObject, emit: Callable[[AgentEvent | None], None]) -> Entry:
        return await self._append({"type": "message", "message": message}, emit)

    async def _turn(
        self, prompt: str | list[JSONObject] | None, emit: Callable[[AgentEvent | None], None]
    ) -> StopReason:
        self._threshold_blocked = False
        await self._prepare_settings(emit)
        if not await self._prepare_extensions(emit):
            return "aborted"
        await self._prepare_system(emit)
        if prompt is not None:
            content = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
            allowed, context = await self._prompt_hooks(content, emit)
            if not allowed:
                return "error"
            await self._append_message({"role": "user", "content": content, "timestamp": now_ms()}, emit)
            await self._hook_context(context, "UserPromptSubmit", emit)
        # pi polls the steering queue once before the first call (typed while the turn was starting)
        pending = self.queue.drain("steer")
        if prompt is None and not pending:
            pending = self.queue.drain("follow_up")
        if prompt is None and not pending:
            last = prepare(self.projection().messages).messages
            if not last or last[-1].role == "assistant":
                emit(TurnError("nothing to continue: the last message is the model's (send a prompt)"))
                return "error"
        overflows = 0  # context overflows this turn: each is compacted until the request fits, then retried
        stop_hooks = 0  # continuations Stop hooks asked for
        while True:
            await self._deliver(pending, emit)
            pending = []
            if self._abort.is_set():
                return "aborted"
            await self._compact_if_needed(emit)
            outcome = await self._call_model(emit)
            reason = outcome.stop_reason
            if reason == "error" and outcome.kind == "context_overflow":
                overflows += 1
                problem = await self._recover(outcome, emit, last_try=overflows >= MAX_OVERFLOW_RETRIES)
                if problem is None:
                    continue
                emit(TurnError(problem))
                return "aborted" if self._abort.is_set() else "error"
            if reason == "error":
                emit(TurnError(outcome.error or "the model call failed"))
                return reason
            if reason == "aborted":
                return reason
            calls = [b for b in outcome.message["content"] if b.get("type") == "toolCall"]
            if calls:
                await self._run_tools(calls, reason, emit)
                if self._abort.is_set():
                    return "aborted"
            # Every call of this message has its result: steering typed meanwhile goes in now.
            pending = self.queue.drain("steer")
            if calls or pending:
                continue
            # The agent would stop here: a follow-up continues it (pi's outer loop).
            pending = self.queue.drain("follow_up")
            if pending:
                continue
            if await self._stop_hooks(stop_hooks, emit):
                stop_hooks += 1
                continue
            await self._compact_if_needed(emit)
            return reason

    async def _deliver(
        self, messages: list[QueuedMessage], emit: Callable[[AgentEvent | None], None]
    ) -> None:
        """Append queued messages as user messages, in order (each is on disk before the next model call)."""
        for queued in messages:
            await self._append_message(
                {"role": "user", "content": queued.message_content(), "timestamp": now_ms()}, emit
            )

    async def _prepare_settings(self, emit: Callable[[AgentEvent | None], None]) -> None:
        if self.window_probe is not None:  # the first turn: the server's window, before any figure
            probe, self.window_probe = self.window_probe, None
            with contextlib.suppress(_Aborted):
                await self._abortable(asyncio.shield(asyncio.wrap_future(probe)))
        projection = self.projection()
        current = projection.model or {}
        if current.get("provider") != self.provider.name or current.get("modelId") != self.model:
            await self._append(
                {"type": "model_change", "provider": self.provider.name, "modelId": self.model}, emit
            )
        window = self.learned_window()  # known from the cache only: the session records it too
        if window is not None and learned_window(projection.path, self.provider.name, self.model) != window:
            await self._append(window_entry(self.provider.name, self.model, window), emit)
        if self.thinking is not None and self.thinking != projection.thinking_level:
            await self._append({"type": "thinking_level_change", "thinkingLevel": self.thinking}, emit)

    def active_tools(self) -> list[Tool]:
        """The built-in tools, then the tools of the MCP servers that are ready."""
        if self.extensions is None:
            return list(self.tools)
        names = {t.name for t in self.tools}
        return self.tools + [t for t in self.extensions.tools() if t.name not in names]

    async def _prepare_system(self, emit: Callable[[AgentEvent | None], None]) -> None:
        projection = self.projection()
        system_messages = [m.message for m in projection.messages if m.role == "system"]
        cwd = self.cwd
        tools = self.active_tools()
        res = self.resources
        if res is None:
            sections = build_sections(cwd, tools, context_files(cwd, self.global_context_dir))
        else:
            files = context_files(cwd, self.global_context_dir) if res.prompt.context_files else []
            sections = build_sections(
                cwd,
                tools,
                files,
                custom=res.prompt.custom,
                append=res.prompt.append_text,
                skills=res.skills_prompt([t.name for t in tools]),
            )
        update = system_update(system_messages, sections, [t.declaration() for t in tools])
        if update is not None:
            await self._append_message(update, emit)

    # -- extensions: MCP servers and hooks (what each hook answer does: agent.loop_hooks) -------

    def _notices(self, lines: Sequence[str], emit: Callable[[AgentEvent | None], None]) -> None:
        loop_hooks.say(lines, emit)

    def _bind_hooks(self, ext: Extensions) -> None:
        """The fields every hook event carries, and the tools ask mode trusts."""
        if self.permissions is not None:
            self.permissions.trusted_tools = ext.auto_allowed()
            ext.hooks.set_permission_mode(self.permissions.mode.value)
        ext.hooks.common.update(session_id=self.session.id, transcript_path=str(self.session.path))

    async def _prepare_extensions(self, emit: Callable[[AgentEvent | None], None]) -> bool:
        """Trust, MCP servers (started, briefly waited for), SessionStart hooks; False when aborted."""
        ext = self.extensions
        if ext is None:
            return True
        try:
            await self._abortable(ext.prepare())
        except _Aborted:
            return False
        self._bind_hooks(ext)
        self._notices(ext.take_notices(), emit)
        spoken = any(m.role in ("user", "assistant") for m in self.projection().messages)
        await self._hook_context(await loop_hooks.session_start(ext, spoken, emit), "SessionStart", emit)
        return True

    async def _hook_context(
        self, texts: Sequence[str], event: str, emit: Callable[[AgentEvent | None], None]
    ) -> None:
        entry = loop_hooks.context_entry(texts, event)
        if entry is not None:
            await self._append(entry, emit)

    async def _prompt_hooks(
        self, content: list[JSONObject], emit: Callable[[AgentEvent | None], None]
    ) -> tuple[bool, list[str]]:
        """``UserPromptSubmit``: (whether the prompt is sent, context the hooks add)."""
        if self.extensions is None:
            return True, []
        blocked, context = await loop_hooks.prompt_submit(self.extensions, content, emit)
        if blocked is not None:
            emit(TurnError(f"the prompt was not sent: a UserPromptSubmit hook blocked it: {blocked}"))
            return False, []
        return True, context

    async def _stop_hooks(self, continued: int, emit: Callable[[AgentEvent | None], None]) -> bool:
        """``Stop``: True when a hook blocks the stop (its reason goes to the model and the turn goes on)."""
        if self.extensions is None or continued >= self.stop_hook_limit:
            return False
        reason = await loop_hooks.stop(self.extensions, continued, emit)
        if reason is None:
            return False
        await self._hook_context([reason], "Stop", emit)
        return True

    async def pre_compact(self, focus: str | None = None) -> tuple[str | None, list[str]]:
        """A manual compaction's ``PreCompact`` hooks, for one the face makes itself (the reviewed
        one): (why they block it, or None; their notices)."""
        notices: list[str] = []

        def emit(event: AgentEvent | None) -> None:
            if isinstance(event, Notice):
                notices.append(event.text)

        return await self._pre_compact_blocked("manual", focus, emit), notices

    async def _pre_compact_blocked(
        self, trigger: str, focus: str | None, emit: Callable[[AgentEvent | None], None]
    ) -> str | None:
        ext = self.extensions
        if ext is None:
            return None
        await ext.load()
        self._bind_hooks(ext)
        return await loop_hooks.pre_compact(ext, trigger, focus, emit)

    # -- compaction ---------------------------------------------------------------------------

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

    def _base_url(self) -> str | None:
        base_url = getattr(self.provider, "base_url", None)
        return base_url if isinstance(base_url, str) else None

    async def _compact_if_needed(self, emit: Callable[[AgentEvent | None], None]) -> None:
        """Compact at the threshold, unless a PreCompact hook blocked it earlier in this turn (a
        blocked threshold compaction is skipped, as Claude Code skips it)."""
        if self._threshold_blocked:
            return
        settings = self.compaction_settings()
        tokens, window = self.context_usage()
        if should_compact(tokens, window, settings) and not unmeasured_since_compaction(self.projection()):
            if settings.prune_before_summarizing:
                for entry in prune_for_threshold(self.session):
                    emit(EntryAppended(entry.id, entry.type))
                tokens, window = self.context_usage()
                if not should_compact(tokens, window, settings):
                    return  # pruning was enough: no summary
            if await self._compact("threshold", emit, everything=False) == "blocked":
                self._threshold_blocked = True

    async def _compact(
        self,
        reason: str,
        emit: Callable[[AgentEvent | None], None],
        *,
        focus: str | None = None,
        everything: bool = True,
        settings: CompactionSettings | None = None,
        window: int | None = None,
    ) -> str:
        """Compact now; report through events. Returns "done" (a compaction entry was appended),
        "nothing" (nothing before the latest turn), "blocked" (by a PreCompact hook), "aborted" or
        the reason it failed."""
        settings = settings or self.compaction_settings()
        before, _ = self.context_usage()
        trigger = "manual" if reason == "manual" else "auto"
        blocked = await self._pre_compact_blocked(trigger, focus, emit)
        if blocked is not None:
            emit(CompactionFailed(f"compaction blocked by a PreCompact hook: {blocked}", blocked=True))
            return "blocked"
        emit(CompactionStarted(reason, before))
        try:
            outcome = await self._abortable(
                compact(self.session, self.summarizer(window), settings, focus=focus, everything=everything)
            )
        except _Aborted:
            emit(CompactionFailed("compaction aborted; nothing was saved"))
            return "aborted"
        except NothingToCompact as e:
            emit(CompactionFailed(str(e), nothing_to_do=True))
            return "nothing"
        except CompactionError as e:
            emit(CompactionFailed(str(e)))
            return str(e)
        emit(EntryAppended(outcome.entry.id, outcome.entry.type))
        emit(CompactionFinished(outcome.entry.id, before, outcome.tokens_after))
        return "done"

    async def _learn_window(
        self, overflow: Overflow, refused_tokens: int, emit: Callable[[AgentEvent | None], None]
    ) -> int | None:
        """Record the window an overflow reported (or, from Ollama's excess, implied) in the session and
        the cache. Returns it, or None when the error said nothing of it."""
        window = overflow.window
        if window is None and overflow.excess is not None and refused_tokens > overflow.excess:
            window = refused_tokens - overflow.excess
        if window is None:
            return None
        if self.window_cache is not None:
            self.window_cache.put(self.provider.name, self._base_url(), self.model, window)
        if learned_window(self.session.index.active_path(), self.provider.name, self.model) != window:
            nominal = lookup(self.model).context_window
            await self._append(
                window_entry(
                    self.provider.name,
                    self.model,
                    window,
                    prompt_tokens=overflow.prompt_tokens,
                    nominal=nominal,
                ),
                emit,
            )
        return window

    async def _recover(
        self, outcome: _CallOutcome, emit: Callable[[AgentEvent | None], None], *, last_try: bool
    ) -> str | None:
        """After a context overflow: hide the refused attempt, learn the window, and compact until the
        next request fits. None when it fits now (the caller retries), else the one line to show."""
        overflow = outcome.overflow or Overflow()
        refused = context_tokens(self.projection()).tokens
        if outcome.entry_id is not None:  # the refused attempt leaves the model's view
            await self._append(
                {"type": "context_edit", "targetId": outcome.entry_id, "replacement": None}, emit
            )
        window = await self._learn_window(overflow, refused, emit)
        settings = self._fitted(window or refused)
        limit = compaction_threshold(window, settings) if window else int(refused * 0.8)
        error = outcome.error or "the request is too long for the model"
        if last_try:
            return f"{error}; still too long after compacting {MAX_OVERFLOW_RETRIES - 1} times"
        if window is not None and overflow.prompt_tokens is not None and overflow.prompt_tokens <= limit:
            return None  # the prompt fits: the completion did not (vLLM, OpenAI); now it is fitted too
        keep = settings.keep_recent_tokens
        for round_ in range(MAX_FIT_ROUNDS):
            tokens = context_tokens(self.projection()).tokens
            if round_ and tokens <= limit:
                return None
            round_settings = replace(settings, keep_recent_tokens=max(1, keep >> round_))
            # without a figure, the window is at least smaller than what was refused
            result = await self._compact(
                "overflow",
                emit,
                settings=round_settings,
                everything=True,
                window=window or int(refused * 0.8),
            )
            if result == "aborted":
                return "compaction aborted; nothing was saved"
            if result == "blocked":  # as Claude Code: the overflow stands, the request fails
                return f"{error}; a PreCompact hook blocked the compaction that would make it fit"
            if result == "nothing":
                break
            if result != "done":
                return f"{error}; compacting failed: {result}"
        tokens = context_tokens(self.projection()).tokens
        if tokens <= limit:
            return None
        return self._cannot_fit(error, window, tokens)

    def _cannot_fit(self, error: str, window: int | None, tokens: int) -> str:
        """One line: why the request cannot fit however much is compacted, and the way out."""
        projection = self.projection()
        sizes = [
            (sum(estimate_message(m.message) for m in ce.messages if m.role != "system"), ce)
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
                f"it (agent-tui edit {self.session.path} {ce.entry.id} --hide, or in the tree) and send again"
            )
        return f"{error}; still ≈{tokens:,} tokens after compacting, nothing more to compact"

    # -- the model call ----------------------------------------------------------------------

    def request_body(self, projection: Projection | None = None) -> JSONObject:
        """The body the next model call sends: the session's projection, prepared, for this provider."""
        projection = projection if projection is not None else self.projection()
        prepared = prepare(projection.messages)
        body = self.provider.request_body(prepared, self.model, thinking_level=projection.thinking_level)
        window = learned_window(projection.path, self.provider.name, self.model)
        if window is not None:  # the completion must fit the server's window too (what `context` prints)
            body = fit_output(body, window, context_tokens(projection).tokens)
        return body

    async def _call_model(self, emit: Callable[[AgentEvent | None], None]) -> _CallOutcome:
        call = self._model_call = ModelStream(self.provider, self.model, self.config.retry)
        failed: list[tuple[JSONObject, str | None]] = []  # the last failed attempt: (message, entry id)

        async def on_failure(failure: Failure) -> None:
            text = self._describe(failure.error, failure.attempt, failure.will_retry)
            message = failure.builder.message("error", text)
            entry = await self._append_message(message, emit)
            failed[:] = [(message, entry.id)]
            if failure.will_retry:
                emit(Retrying(failure.attempt + 1, failure.delay, text, self.config.retry.max_retries))

        try:
            result = await call.run(
                self.request_body,
                on_event=self._announcer(emit),
                on_failure=on_failure,
                guard=self._abortable,
            )
        except _Aborted:
            if call.waiting and failed:  # aborted in the pause before a retry
                return _CallOutcome(failed[0][0], "aborted")
            assert call.builder is not None
            message = call.builder.message("aborted", "Request was aborted")
            await self._append_message(message, emit)
            return _CallOutcome(message, "aborted")
        if result.error is None:
            message = result.builder.message()
            await self._append_message(message, emit)
            return _CallOutcome(message, message["stopReason"], message.get("errorMessage"))
        message, entry_id = failed[0]
        return _CallOutcome(
            message, "error", message.get("errorMessage"), result.error.kind, entry_id, result.error.overflow
        )

    def _describe(self, error: pe.ProviderError, attempts: int, will_retry: bool) -> str:
        text = f"{self.provider.name} ({self.model}): {error.message}"
        if error.kind == "auth":
            return f"{text}; {self.config.auth_hint()}"
        base_url = getattr(self.provider, "base_url", None)
        if error.kind == "connection" and base_url:
            text = f"{text} [{base_url}]"
        if error.retryable and not will_retry and attempts:
            text += f" (gave up after {attempts} {'retry' if attempts == 1 else 'retries'})"
        return text

    @staticmethod
    def _announcer(emit: Callable[[AgentEvent | None], None]) -> Callable[[pe.ProviderEvent], None]:
        """Text and thinking deltas as they stream, each tool call once its name is known, then its
        argument fragments."""
        announced: dict[int, str] = {}  # block index -> call id

        def on_event(event: pe.ProviderEvent) -> None:
            if isinstance(event, pe.TextDelta):
                if event.text:
                    emit(TextDelta(event.text, event.index))
            elif isinstance(event, pe.ThinkingDelta):
                if event.text:
                    emit(ThinkingDelta(event.text, event.index))
            elif isinstance(event, pe.ToolCallDelta):
                if event.index not in announced and event.name:
                    announced[event.index] = event.id
                    emit(ToolCallStreaming(event.id, event.name, event.index))
                if event.index in announced and event.arguments_delta:
                    emit(ToolCallDelta(announced[event.index], event.index, event.arguments_delta))

        return on_event

    async def _abortable(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable`` unless abort() comes first: then cancel it and raise _Aborted."""
        if self._abort.is_set():
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise _Aborted
        task = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self._abort.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            stop.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise _Aborted

    # -- tools ---------------------------------------------------------------------------------

    async def _run_tools(
        self, calls: list[JSONObject], stop_reason: str, emit: Callable[[AgentEvent | None], None]
    ) -> None:
        """pi's executeToolCalls: each call in order is prepared, permitted and started (the started
        calls run concurrently); then each result is finalized in call order once it is in."""
        by_name = {t.name: t for t in self.active_tools()}
        ctx_cwd = self.cwd
        started: list[tuple[JSONObject, asyncio.Task[ToolResult] | ToolResult]] = []
        for call in calls:
            args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
            emit(ToolStarted(str(call.get("id")), str(call.get("name")), dict(args or {})))
            prepared = self._prepare_call(call, stop_reason, by_name)
            item: asyncio.Task[ToolResult] | ToolResult
            vote: HookVote | None = None
            if not isinstance(prepared, ToolResult) and self.extensions is not None:
                gate = await loop_hooks.pre_tool(
                    self.extensions, prepared.tool, prepared.args, prepared.call_id, emit
                )
                prepared, vote = gate.refusal or replace(prepared, args=gate.args), gate.vote
            if isinstance(prepared, ToolResult):
                item = prepared
            else:
                try:
                    refusal, guard = await self._permit(
                        prepared.tool.name, prepared.args, prepared.call_id, emit, vote
                    )
                except BaseException:  # the calls already running must not outlive the turn
                    for _, running in started:
                        if isinstance(running, asyncio.Task):
                            running.cancel()
                    raise
                if refusal is not None:
                    item = ToolResult.text(refusal, is_error=True)
                else:
                    ctx = ToolContext(
                        ctx_cwd, self._abort, prepared.call_id, guard, self._updater(prepared, emit)
                    )
                    item = asyncio.create_task(self._execute(prepared.tool, prepared.args, ctx))
            started.append((call, item))
        try:
            for call, item in started:
                result = item if isinstance(item, ToolResult) else await self._tool_result(item)
                if not isinstance(item, ToolResult) and self.extensions is not None:
                    result = await loop_hooks.post_tool(self.extensions, call, result, emit)
                await self._finalize_call(call, result, emit)
            if self.extensions is not None:
                self._notices(self.extensions.take_notices(), emit)
        finally:
            for _, item in started:
                if isinstance(item, asyncio.Task) and not item.done():
                    item.cancel()

    def _updater(
        self, prepared: _PreparedCall, emit: Callable[[AgentEvent | None], None]
    ) -> Callable[[JSONObject], None] | None:
        """The call's ``on_update``, when partial results are asked for (``tool_updates``)."""
        if not self.tool_updates:
            return None
        call_id, name = prepared.call_id, prepared.tool.name

        def update(partial: JSONObject) -> None:
            emit(ToolUpdate(call_id, name, dict(partial)))

        return update

    def _prepare_call(
        self, call: JSONObject, stop_reason: str, by_name: dict[str, Tool]
    ) -> _PreparedCall | ToolResult:
        """pi's prepareToolCall: look the tool up and validate its arguments, or the immediate
        (error) result when the call must not run (truncated message, abort, unknown tool, bad args)."""
        if stop_reason == "length":
            return ToolResult.text(TRUNCATED_CALL_TEXT.format(name=call.get("name")), is_error=True)
        if self._abort.is_set():
            return ToolResult.text(ABORTED_TEXT, is_error=True)
        tool = by_name.get(str(call.get("name")))
        if tool is None:
            return ToolResult.text(f"Tool {call.get('name')} not found", is_error=True)
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        try:
            prepared = validate_arguments(tool, tool.prepare_arguments(dict(args or {})))
        except ToolError as e:
            return ToolResult.text(str(e), is_error=True)
        return _PreparedCall(tool, prepared, str(call.get("id")))

    async def _finalize_call(
        self, call: JSONObject, result: ToolResult, emit: Callable[[AgentEvent | None], None]
    ) -> None:
        """pi's finalize + emitToolResultMessage: append the call's tool result entry, then announce it."""
        message: JSONObject = {
            "role": "toolResult",
            "toolCallId": call.get("id"),
            "toolName": call.get("name"),
            "content": result.content,
        }
        if result.details is not None:
            message["details"] = result.details
        message["isError"] = result.is_error
        message["timestamp"] = now_ms()
        entry = await self._append_message(message, emit)
        emit(ToolFinished(str(call.get("id")), str(call.get("name")), entry.id, result.is_error))

    async def _permit(
        self,
        name: str,
        args: JSONObject,
        call_id: str,
        emit: Callable[[AgentEvent | None], None],
        vote: HookVote | None = None,
    ) -> tuple[str | None, WriteGuard | None]:
        """Ask the permission policy about one call (with the PreToolUse hooks' ``vote``); record its
        decision. (None: run it, else the refusal; the guard write/edit check the opened file with)."""
        if self.permissions is None:
            if vote is not None and vote.decision == "ask":  # no one to ask: the hook's ask refuses
                return (
                    "Permission denied: a PreToolUse hook asked for the user's confirmation and no one can answer here.",
                    None,
                )
            return None, None
        try:
            verdict = await self._abortable(self.permissions.check(name, args, self.cwd, call_id, vote))
        except _Aborted:
            return ABORTED_TEXT, None
        record = verdict.entry(self.permissions.mode)
        if record is not None:
            await self._append(record, emit)
        if not verdict.allowed:
            return verdict.message or "Permission denied", None
        approved = verdict.request.path if verdict.request is not None else None
        return None, self.permissions.write_guard(self.cwd, approved)

    async def _execute(self, tool: Tool, args: JSONObject, ctx: ToolContext) -> ToolResult:
        try:
            return await tool.execute(args, ctx)
        except ToolError as e:
            return ToolResult.text(str(e), is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a tool's failure is the model's to read, not the loop's
            return ToolResult.text(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__, is_error=True)

    async def _tool_result(self, task: asyncio.Task[ToolResult]) -> ToolResult:
        if not self._abort.is_set():
            stop = asyncio.ensure_future(self._abort.wait())
            try:
                await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
        if not task.done():  # aborted: give the tool a moment to stop by itself (bash kills its group)
            await asyncio.wait({task}, timeout=self.tool_grace)
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return ToolResult.text(ABORTED_TEXT, is_error=True)
        if task.cancelled():
            return ToolResult.text(ABORTED_TEXT, is_error=True)
        return task.result()


def resolve_model(config: Config, projection: Projection, provider_name: str) -> str:
    """The model to use: the configured one when chosen explicitly, else the session's if it is this
    provider's (``config.next_model``, which the app's header uses too)."""
    return next_model(replace(config, provider=provider_name), projection.model)


def make_provider(config: Config, model: str | None = None) -> Provider:
    """The provider for ``config``: its registry entry's adapter for the API ``model`` (the
    configured one by default) is called through (the SDK is imported on first use)."""
    register_secret(config.api_key)  # wherever the key came from, it is redacted from what we write
    route = route_for(config.provider, model or config.model, base_url=config.base_url, api=config.api)
    return adapter_class(config.provider, route)(
        api_key=config.api_key,
        base_url=config.base_url,
        timeout=config.timeout,
        request_log=config.request_log,
        name=config.provider,
        headers=registry.spec(config.provider).headers,
    )


_ASKED: set[tuple[str, str]] = set()
#: The context-window questions under way or answered, one per server and model (see probe_context_window).
_PROBES: dict[tuple[str, str], Future[int | None]] = {}


def learn_context_window(config: Config, model: str) -> int | None:
    """A model the table does not know, at a base URL of one's own: its context window as the
    server reports it (llama.cpp, Ollama, vLLM), registered so every figure and compaction uses
    it instead of the 128,000 guess. None (and nothing registered) when the server does not say."""
    from agent_tui.projection.models import DEFAULT, ModelInfo, is_known, register
    from agent_tui.providers.model_list import context_window

    if not config.base_url or is_known(model) or (config.base_url, model) in _ASKED:
        return None
    _ASKED.add((config.base_url, model))  # once per process: a silent server is not asked again
    # A local server answers at once; the short timeout bounds a remote one that does not.
    window = context_window(
        registry.spec(config.provider), config.base_url, model, config.api_key, timeout=1.0
    )
    if window is None:
        return None
    output = min(DEFAULT.max_output, max(256, window // 4))  # room for the prompt in a small window
    register(ModelInfo(config.provider, model, window, output, images=False))
    return window


def probe_context_window(config: Config, model: str) -> Future[int | None] | None:
    """:func:`learn_context_window` in a thread of its own, so the face's event loop never waits on
    the server (a remote one may take the whole timeout). Asked once per process for each server and
    model (a later loop gets the same future); the loop awaits it before its first request. None
    when there is nothing to ask (no base URL of one's own, or a model the table knows)."""
    from agent_tui.projection.models import is_known

    if not config.base_url or is_known(model):
        return None
    key = (config.base_url, model)
    future = _PROBES.get(key)
    if future is None:
        future = _PROBES[key] = Future()
        probe = future

        def ask() -> None:
            if not probe.set_running_or_notify_cancel():
                return
            try:
                probe.set_result(learn_context_window(config, model))
            except Exception:  # a figure, never a reason to fail: the guess stays
                probe.set_result(None)

        threading.Thread(target=ask, name="context-window", daemon=True).start()
    return future


def build_agent(
    session: Session,
    config: Config,
    tools: Sequence[Tool] | None = None,
    *,
    permissions: Permissions | None = None,
    cwd: str | None = None,
    resources: Resources | None = None,
    extensions: Extensions | None = None,
) -> AgentLoop:
    """An AgentLoop with the configured provider and the default tools, keeping the session's model
    unless one was chosen explicitly. ``permissions`` gates tool calls (None: every tool runs);
    tools run in ``cwd`` (None: the process's); ``extensions`` adds MCP servers and hooks."""
    from agent_tui.agent.tools import default_tools

    model = resolve_model(config, project(session.index), config.provider)
    probe = probe_context_window(config, model)
    provider = make_provider(config, model)
    if tools is None:
        tools = default_tools()
        if config.context_tool:  # [tools] context = true
            from agent_tui.agent.tools.context import ContextTool

            tools.append(ContextTool(session))
    return AgentLoop(
        session,
        provider,
        tools,
        config=config,
        model=model,
        permissions=permissions,
        cwd=cwd,
        resources=resources,
        window_cache=WindowCache.default(),
        extensions=extensions,
        window_probe=probe,
    )


__all__ = [
    "AgentLoop",
    "build_agent",
    "learn_context_window",
    "make_provider",
    "probe_context_window",
    "resolve_model",
]

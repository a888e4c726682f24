"""The session core: the agent loop on one session with the rules every face shares.

pi's ``core/agent-session.ts`` for agent-tui: the app, print and JSON mode, RPC mode, the ACP agent
and the SDK each drive an :class:`AgentSession` and only adapt it (how to ask a permission, how to
show an event). What lives here lives once: the model and its thinking level (clamped to the
levels the model has), the steering and follow-up queues, prompt and abort, compaction (manual;
the threshold's and the overflow's run inside the loop), the user's ``!cmd``, the auto-compaction
and auto-retry switches, the permission policy (a face supplies its ``Approver``), the MCP servers
and hooks (:class:`~agent_tui.agent.extensions.Extensions`, stopped by :meth:`AgentSession.aclose`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from typing import Self

from agent_tui.agent import permission_modes, permission_rules, sandbox_proxy
from agent_tui.agent import sandbox as sandbox_module
from agent_tui.agent.build import build_agent, make_provider
from agent_tui.agent.checkpointing import RestorePlan, RestoreResult, TurnCheckpoints
from agent_tui.agent.checkpoints import CheckpointStore, checkpoints_enabled
from agent_tui.agent.compaction import Summarizer
from agent_tui.agent.events import AgentEvent, Notice
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.permissions import PermissionMode, Permissions, parse_mode
from agent_tui.agent.queue import MessageQueue
from agent_tui.agent.resources import Resources
from agent_tui.agent.sandbox import Sandbox
from agent_tui.agent.session_stats import SessionStats, session_stats
from agent_tui.agent.tools.base import Tool
from agent_tui.agent.user_bash import UserCommand, run_user_command
from agent_tui.config import PROVIDERS, Config, load_config
from agent_tui.projection.compaction import CompactionSettings
from agent_tui.projection.context import project
from agent_tui.projection.models import (
    THINKING_LEVELS,
    clamp_thinking_level,
    lookup,
    selectable_thinking_levels,
)
from agent_tui.providers.base import Provider
from agent_tui.store.record import JSONObject
from agent_tui.store.session import Session


def thinking_levels(model: str, provider: str | None = None) -> list[str]:
    """The levels ``model`` can be given (``projection.models.selectable_thinking_levels``)."""
    return selectable_thinking_levels(lookup(model, provider))


def clamp_level(level: str, model: str, provider: str | None = None) -> str:
    """``level`` as ``model`` takes it: the level if the model has it, else pi's clamp (the next
    one up, else down); "off" is always kept."""
    if level == "off":
        return level
    return clamp_thinking_level(lookup(model, provider), level)


class AgentSession:
    """The agent loop on one session, with the rules every face shares. One run at a time: a second
    ``prompt`` while one runs raises RuntimeError; :meth:`steer` and :meth:`follow_up` queue messages
    for the running one."""

    def __init__(self, store: Session, loop: AgentLoop) -> None:
        #: The session file (its one writer).
        self.store = store
        #: The underlying loop (its events, queue, provider), for what this face does not cover.
        self.loop = loop
        self._retired: list[Provider] = []  # providers replaced by set_model, closed by aclose
        self._auto_compaction: bool | None = None  # set_auto_compaction's choice (None: the config's)
        self._auto_retry: bool | None = None  # set_auto_retry's choice (None: the config's)
        self._retry_policy = loop.config.retry  # the config's, restored when retries are switched on
        self._sandbox_said = False  # the sandbox's start line (take_sandbox_notice) was given
        self._mode_notes: list[JSONObject] = []  # plan mode's notes for the model, for the next run
        if loop.permissions is not None and loop.permissions.mode is PermissionMode.PLAN:
            self._mode_notes.append(permission_modes.started_in_plan())  # --permissions plan: told too

    # -- what it is -----------------------------------------------------------------------------

    @property
    def config(self) -> Config:
        return self.loop.config

    @property
    def provider(self) -> str:
        return self.loop.provider.name

    @property
    def api(self) -> str:
        return self.loop.provider.api

    @property
    def model(self) -> str:
        return self.loop.model

    @property
    def thinking_level(self) -> str:
        """The level the next call uses: the one set here, else the session's, clamped to the
        model's levels as the request clamps it."""
        level = self.loop.thinking or project(self.store.index).thinking_level
        return clamp_level(level, self.model, self.provider)

    @property
    def running(self) -> bool:
        return self.loop.running

    def model_info(self) -> JSONObject:
        """``api``, ``provider`` and ``model`` as an assistant message of this agent carries them."""
        return {"api": self.api, "provider": self.provider, "model": self.model}

    # -- runs -------------------------------------------------------------------------------------

    def prompt(self, prompt: str | list[JSONObject]) -> AsyncIterator[AgentEvent]:
        """One run: ``prompt`` (text, or a user message's content blocks) as a new user message, to
        the model's final stop (tools, steering and follow-ups included). Iterate it to drive it;
        it ends with one ``TurnDone``, a ``TurnError`` right before it when the run failed."""
        self._write_mode_notes()
        return self._noticed(self.loop.run(prompt))

    def run(self, prompt: str | list[JSONObject] | None) -> AsyncIterator[AgentEvent]:
        """:meth:`prompt` with a prompt, :meth:`resume` with None (the app's ``Turns``)."""
        self._write_mode_notes()
        return self._noticed(self.loop.run(prompt))

    def resume(self) -> AsyncIterator[AgentEvent]:
        """A run without a new prompt: delivers what is queued, runs a tool call a PreToolUse hook
        deferred (``agent.deferred_calls``), or continues a session whose last message is not the
        model's."""
        self._write_mode_notes()
        return self._noticed(self.loop.run(None))

    def compact(self, focus: str | None = None) -> AsyncIterator[AgentEvent]:
        """Compact the session now (optionally focused on ``focus``); ends with ``TurnDone``."""
        return self.loop.compact(focus)

    def branch_with_summary(self, target_id: str, focus: str | None = None) -> AsyncIterator[AgentEvent]:
        """Move to ``target_id``, leaving a summary of the branch left there (pi's branch summary);
        ends with ``TurnDone``."""
        return self.loop.branch_with_summary(target_id, focus)

    async def pre_compact(self, focus: str | None = None) -> tuple[str | None, list[str]]:
        """The ``PreCompact`` hooks of a compaction a face makes itself (a reviewed one, a marked
        span's): (why they block it, or None; their notices)."""
        return await self.loop.pre_compact(focus)

    def summarizer(self, window: int | None = None) -> Summarizer:
        """A summarizer on this model, its requests fitted to ``window`` (default: the known one)."""
        return self.loop.summarizer(window)

    def compaction_settings(self) -> CompactionSettings:
        """The compaction settings of this model, fitted to its window."""
        return self.loop.compaction_settings()

    @property
    def queue(self) -> MessageQueue:
        """The steering and follow-up queues (what an abort or an error leaves is the face's)."""
        return self.loop.queue

    @property
    def extensions(self) -> Extensions | None:
        """The MCP servers and hooks (None: none); ``/reload`` replaces them."""
        return self.loop.extensions

    @extensions.setter
    def extensions(self, value: Extensions | None) -> None:
        self.loop.extensions = value

    @property
    def resources(self) -> Resources | None:
        """The user's prompt files, templates and skills; ``/reload`` replaces them."""
        return self.loop.resources

    @resources.setter
    def resources(self, value: Resources | None) -> None:
        self.loop.resources = value

    def steer(self, text: str) -> None:
        """Queue a steering message: delivered after the current tool calls, before the next call."""
        self.loop.queue.steer(text)

    def follow_up(self, text: str) -> None:
        """Queue a follow-up: delivered when the agent would stop."""
        self.loop.queue.follow_up(text)

    def queued(self) -> JSONObject:
        """The queues' texts: ``{"steering": [...], "followUp": [...]}`` (pi's queue_update shape)."""
        items = self.loop.queue.items()
        return {
            "steering": [m.text for m in items if m.kind == "steer"],
            "followUp": [m.text for m in items if m.kind == "follow_up"],
        }

    def abort(self) -> None:
        """Stop the running run (safe from any thread or a signal handler): the partial reply is
        kept with stopReason ``aborted`` and pending tool calls get aborted results."""
        self.loop.abort()

    async def bash(
        self,
        command: str,
        *,
        exclude_from_context: bool = False,
        on_output: Callable[[str], None] | None = None,
        abort: asyncio.Event | None = None,
    ) -> JSONObject:
        """Run the user's shell command in the agent's cwd (pi's ``!cmd``; ``exclude_from_context``:
        ``!!cmd``, kept out of the model's view), in its own process group, killed when ``abort`` is
        set; ``on_output`` gets its output as it comes (not redacted yet). Appends pi's
        ``bashExecution`` message and returns it as written (redacted). Not while a run is in
        progress (RuntimeError): its entries would land inside the turn."""
        if self.running:
            raise RuntimeError("the agent is running: run the command when it stops")
        await self._checkpoint("before")
        message = await run_user_command(
            UserCommand(command, exclude_from_context),
            self.loop.cwd,
            abort or asyncio.Event(),
            on_output,
            sandbox=sandbox_proxy.for_commands(self.loop.permissions),  # with its network rules
        )
        entry = self.store.append({"type": "message", "message": message})
        await self._checkpoint("after")
        return entry.message or message

    # -- file checkpoints (agent.checkpointing) ----------------------------------------------------

    async def _checkpoint(self, when: str) -> None:
        """A snapshot around the user's ``!cmd`` (it may change files), when checkpoints are on."""
        turns = self.loop.checkpoints
        if turns is None or turns.failed is not None:
            return
        from agent_tui.agent.checkpointing import checkpoint_command

        turns.failed = await checkpoint_command(turns.store, self.store, self.loop.cwd, when)

    def checkpoints(self) -> list[JSONObject]:
        """The file checkpoints on the active branch, oldest first (``entryId``, ``snapshot``, ``files``)."""
        from agent_tui.agent.checkpointing import list_checkpoints

        return list_checkpoints(self.store)

    def plan_restore(self, entry_id: str) -> RestorePlan:
        """What restoring the files as ``entry_id`` left them would write (nothing is written)."""
        from agent_tui.agent.checkpointing import plan_restore

        return plan_restore(self._checkpoint_store(), self.store, self.loop.cwd, entry_id)

    def restore_files(
        self, entry_id: str, *, force: bool = False, expected: RestorePlan | None = None
    ) -> RestoreResult:
        """Restore the files as ``entry_id`` left them (the disk snapshotted first, a restore entry
        appended); RestoreConflict when files changed outside the agent are in the way and not
        ``force``. Not while a run is in progress."""
        if self.running:
            raise RuntimeError("the agent is running: restore files when it stops")
        from agent_tui.agent.checkpointing import restore

        return restore(
            self._checkpoint_store(), self.store, self.loop.cwd, entry_id, force=force, expected=expected
        )

    def _checkpoint_store(self) -> CheckpointStore:
        turns = self.loop.checkpoints
        return turns.store if turns is not None else CheckpointStore()

    # -- the sandbox (agent.sandbox) ------------------------------------------------------------

    @property
    def sandbox(self) -> Sandbox | None:
        """Where ``bash``, ``!cmd`` and hooks run (None: no policy, commands run as they are)."""
        permissions = self.loop.permissions
        return permissions.sandbox if permissions is not None else None

    def set_sandbox(self, mode: str | None = None, network: bool | None = None) -> Sandbox:
        """Another sandbox mode or network switch from the next command on (``/sandbox``); raises
        ValueError when no policy gates the tools, SandboxError for a mode that does not exist."""
        permissions = self.loop.permissions
        if permissions is None:
            raise ValueError(
                "this agent runs every tool (no permission policy): there is no sandbox to switch"
            )
        current = permissions.sandbox or sandbox_module.resolve(
            self.config.sandbox_mode, self.config.sandbox_network
        )
        permissions.sandbox = current.with_mode(mode, network)
        return permissions.sandbox

    def take_sandbox_notice(self) -> str | None:
        """The start's line when the wanted sandbox cannot run (every command then asks), once."""
        sandbox = self.sandbox
        if self._sandbox_said or sandbox is None:
            return None
        self._sandbox_said = True
        return sandbox.notice()

    async def _noticed(self, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        """``events``, after the sandbox's start line (the first run of a face that did not say it)."""
        line = self.take_sandbox_notice()
        if line is not None:
            yield Notice(line)
        rules = self.loop.permissions.rules if self.loop.permissions is not None else None
        for warning in rules.take_warnings() if rules is not None else []:
            yield Notice(warning)  # a permission rule that cannot be read, once
        async for event in events:
            yield event

    # -- settings -------------------------------------------------------------------------------

    @property
    def permission_mode(self) -> PermissionMode:
        """The permission mode (``auto`` when no policy gates the tools)."""
        permissions = self.loop.permissions
        return permissions.mode if permissions is not None else PermissionMode.AUTO

    def set_permission_mode(
        self, mode: str | PermissionMode, *, record_later: bool = False
    ) -> PermissionMode:
        """Switch the permission mode from the next tool call on (an allow-for-the-session given
        stays given); returns it. A change is one ``agent-tui.permission-mode`` entry; entering or
        leaving ``plan`` also tells the model (``permission_modes.plan_note``), at once when idle,
        else when the next run starts (``record_later``: both then). Raises PermissionModeError for
        a name that is no mode, ValueError when no policy gates the tools (nothing to switch)."""
        new = mode if isinstance(mode, PermissionMode) else parse_mode(mode)
        if new is None:
            raise ValueError("empty permission mode")
        permissions = self.loop.permissions
        if permissions is None:
            raise ValueError("this agent runs every tool (no permission policy): there is no mode to switch")
        previous = permissions.mode
        if new is previous:
            return new
        permissions.mode = new
        extensions = self.loop.extensions
        if extensions is not None:
            extensions.hooks.set_permission_mode(new.value)
        entries = [permission_modes.mode_entry(new, previous)]
        note = permission_modes.plan_note(new, previous)
        if record_later:
            self._mode_notes += entries + ([note] if note else [])
            return new
        self.store.append(entries[0])
        if note is not None:
            self._mode_notes.append(note)
            self._write_mode_notes()
        return new

    def _write_mode_notes(self) -> None:
        """Append the mode changes and plan-mode notes waiting for a run's end (never inside one)."""
        if self.running or not self._mode_notes:
            return
        notes, self._mode_notes = self._mode_notes, []
        for note in notes:
            self.store.append(note)

    def set_model(self, model: str, provider: str | None = None) -> None:
        """Use ``model`` (of ``provider``, default the current one) from the next call on; the session
        records a ``model_change`` when that call is made. Raises ValueError for an unknown provider."""
        if self.running:
            raise RuntimeError("the agent is running: set the model between runs")
        name = provider or self.provider
        if name not in PROVIDERS:
            raise ValueError(f"unknown provider {name!r}: use one of {', '.join(PROVIDERS)}")
        if not model.strip():
            raise ValueError("empty model id")
        if name != self.provider:
            config = load_config(provider=name, model=model)
            old = self.loop.provider
            self.loop.provider = make_provider(config)
            self.loop.config = replace(config, thinking=self.loop.config.thinking)
            self._retry_policy = config.retry
            self._retired.append(old)
            self._apply_switches()
        self.loop.model = model
        if self.loop.thinking is not None:  # pi re-clamps the level for the new model
            self.loop.thinking = clamp_level(self.loop.thinking, model, name)

    def set_auto_compaction(self, enabled: bool) -> None:
        """Compact automatically near the window's end (the config's ``[compaction] enabled``, every
        model's) or not, for this agent from now on; ``compact`` still works when it is off."""
        self._auto_compaction = enabled
        self._apply_switches()

    def set_auto_retry(self, enabled: bool) -> None:
        """Retry a failed model call (rate limits, overload, server errors) with the config's
        ``[retry]`` policy, or fail at the first error, from the next call on."""
        self._auto_retry = enabled
        self._apply_switches()

    def abort_retry(self) -> bool:
        """Call off the retry the running turn waits for: the turn ends with that error (unlike
        :meth:`abort`, which ends it as aborted). False when no retry is being waited for."""
        return self.loop.abort_retry()

    def carry_switches(self, other: AgentSession) -> None:
        """Take ``other``'s auto-compaction and auto-retry choices (a session switch keeps them)."""
        self._auto_compaction, self._auto_retry = other._auto_compaction, other._auto_retry
        self._apply_switches()

    def _apply_switches(self) -> None:
        config = self.loop.config
        if self._auto_compaction is not None:
            on = self._auto_compaction
            c = config.compaction
            config = replace(
                config,
                compaction=replace(
                    c,
                    default=replace(c.default, enabled=on),
                    per_model={k: replace(v, enabled=on) for k, v in c.per_model.items()},
                ),
            )
        if self._auto_retry is not None:
            policy = self._retry_policy if self._auto_retry else replace(self._retry_policy, max_retries=0)
            config = replace(config, retry=policy)
        self.loop.config = config

    def available_models(self) -> list[tuple[str, str]]:
        """``(provider, model id)`` of every model :meth:`set_model` could switch to now (pi's
        ``getAvailableSnapshot``): the model table's and the config file's ``[models]`` whose
        provider has a key (or needs none), with the current model first when they lack it."""
        from agent_tui.agent.model_sources import local_catalog

        found = [(m.provider, m.id) for m in local_catalog(self.config.config_path) if m.key]
        current = (self.provider, self.model)
        return found if current in found else [current, *found]

    def thinking_levels(self) -> list[str]:
        """The levels the current model can be given ("off" always among them)."""
        return thinking_levels(self.model, self.provider)

    def set_thinking_level(self, level: str) -> str:
        """Use ``level`` (off, minimal, low, medium, high, xhigh) from the next call on, clamped to
        the levels the model has (pi's rule: a model without reasoning gets "off"); returns the
        level set. Raises ValueError for a name that is no level."""
        if level not in THINKING_LEVELS:
            raise ValueError(f"unknown thinking level {level!r}: use one of {', '.join(THINKING_LEVELS)}")
        self.loop.thinking = clamp_level(level, self.model, self.provider)
        return self.loop.thinking

    def cycle_thinking_level(self) -> str | None:
        """Set the model's next level after the current one (pi's ``cycleThinkingLevel``) and return
        it; None when the model has only "off" (nothing to cycle through)."""
        levels = self.thinking_levels()
        if len(levels) < 2:
            return None
        current = self.thinking_level
        at = levels.index(current) if current in levels else -1
        return self.set_thinking_level(levels[(at + 1) % len(levels)])

    # -- what it cost -----------------------------------------------------------------------------

    def stats(self) -> SessionStats:
        """The session's messages, tokens and cost now (:class:`SessionStats`, as the app's too)."""
        tokens, window = self.loop.context_usage()
        return session_stats(self.store.index.entries, self.loop.projection().path, tokens, window)

    # -- the request ----------------------------------------------------------------------------

    def request_body(self) -> JSONObject:
        """The body the next model call would send now (the projection, prepared, for this provider)."""
        return self.loop.request_body()

    # -- closing ---------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the provider's HTTP client (the session stays open: close it yourself)."""
        retired, self._retired = self._retired, []
        for old in retired:
            await old.aclose()
        await self.loop.provider.aclose()
        if self.loop.extensions is not None:
            await self.loop.extensions.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def create_agent_session(
    store: Session,
    config: Config,
    *,
    permissions: Permissions | None = None,
    tools: Sequence[Tool] | None = None,
    cwd: str | None = None,
    resources: Resources | None = None,
    extensions: Extensions | None = None,
) -> AgentSession:
    """The session core on ``store`` with ``config``'s model (the session's own model is kept unless
    one was chosen), ``permissions`` gating tool calls (None: every tool runs), ``tools`` (None: the
    default ones) run in ``cwd`` (None: the process's), ``resources`` shaping the system prompt and
    ``extensions`` adding MCP servers and hooks. Every face builds its agent here. The commands
    of a gated agent run in the sandbox the flags, the environment and ``[sandbox]`` choose
    (``agent.sandbox.resolve``; raises SandboxError, a ConfigError, for a mode that is none)."""
    if permissions is not None and permissions.sandbox is None:
        permissions.sandbox = sandbox_module.resolve(config.sandbox_mode, config.sandbox_network)
    loop = build_agent(
        store, config, tools, permissions=permissions, cwd=cwd, resources=resources, extensions=extensions
    )
    if permissions is not None and permissions.rules is None:  # allow/ask/deny rules of every file
        permissions.rules = permission_rules.for_session(
            loop.cwd, config.config_path, lambda: loop.extensions
        )
    if checkpoints_enabled():  # file checkpoints (AGENT_TUI_CHECKPOINTS=off: none)
        loop.checkpoints = TurnCheckpoints(CheckpointStore(), loop.cwd)
    if loop.thinking is not None:  # --thinking, the config's: clamped as set_thinking_level clamps
        loop.thinking = clamp_level(loop.thinking, loop.model, loop.provider.name)
    return AgentSession(store, loop)


__all__ = ["AgentSession", "SessionStats", "clamp_level", "create_agent_session", "thinking_levels"]

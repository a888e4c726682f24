"""Running turns through the SDK: :func:`create_agent` puts the agent loop on an open session.

:class:`Agent` is a thin face over :class:`agent_tui.agent.loop.AgentLoop` (the one agent loop:
the app, print mode, JSON and RPC modes all run it). A turn is an async iterator of the loop's
typed events (:mod:`agent_tui.agent.events`); :meth:`Agent.pi_events` gives the same run as pi's
JSON records (:mod:`agent_tui.sdk.pi_events`). Every entry a turn writes goes through the
session's one writer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace

from agent_tui.agent.events import AgentEvent
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.loop import AgentLoop, build_agent, make_provider
from agent_tui.agent.permissions import Approver, PermissionMode, Permissions, parse_mode
from agent_tui.agent.resources import Resources
from agent_tui.agent.tools.base import Tool
from agent_tui.agent.user_bash import UserCommand, run_user_command
from agent_tui.config import PROVIDERS, Config, ConfigError, load_config
from agent_tui.projection.models import THINKING_LEVELS
from agent_tui.providers.base import Provider
from agent_tui.sdk.pi_events import RunKind, pi_events
from agent_tui.sdk.session import SessionHandle
from agent_tui.store.record import JSONObject


class Agent:
    """The agent loop on one session. One run at a time: a second ``prompt`` while one runs raises
    RuntimeError; :meth:`steer` and :meth:`follow_up` queue messages for the running one."""

    def __init__(self, session: SessionHandle, loop: AgentLoop) -> None:
        self.session = session
        #: The underlying loop (its events, queue, provider), for what this face does not cover.
        self.loop = loop
        self._retired: list[Provider] = []  # providers replaced by set_model, closed by aclose
        self._auto_compaction: bool | None = None  # set_auto_compaction's choice (None: the config's)
        self._auto_retry: bool | None = None  # set_auto_retry's choice (None: the config's)
        self._retry_policy = loop.config.retry  # the config's, restored when retries are switched on

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
        """The level the next call uses: the one set here, else the session's."""
        return self.loop.thinking or self.session.projection().thinking_level

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
        return self.loop.run(prompt)

    def resume(self) -> AsyncIterator[AgentEvent]:
        """A run without a new prompt: delivers what is queued, runs a tool call a PreToolUse hook
        deferred (``agent.deferred_calls``), or continues a session whose last message is not the
        model's."""
        return self.loop.run(None)

    def compact(self, focus: str | None = None) -> AsyncIterator[AgentEvent]:
        """Compact the session now (optionally focused on ``focus``); ends with ``TurnDone``."""
        return self.loop.compact(focus)

    def pi_events(
        self, events: AsyncIterator[AgentEvent], *, kind: RunKind = "prompt"
    ) -> AsyncIterator[JSONObject]:
        """A run's events as pi 1.6's JSON records (``agent_start`` ... ``agent_settled``); ``kind``
        is "compact" for :meth:`compact`'s run."""
        return pi_events(events, self.session.store.index, self.model_info, kind=kind)

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
        message = await run_user_command(
            UserCommand(command, exclude_from_context), self.loop.cwd, abort or asyncio.Event(), on_output
        )
        entry = self.session.append({"type": "message", "message": message})
        return entry.message or message

    # -- settings -------------------------------------------------------------------------------

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

    def carry_switches(self, other: Agent) -> None:
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

    def set_thinking_level(self, level: str) -> None:
        """Use ``level`` (off, minimal, low, medium, high, xhigh) from the next call on."""
        if level not in THINKING_LEVELS:
            raise ValueError(f"unknown thinking level {level!r}: use one of {', '.join(THINKING_LEVELS)}")
        self.loop.thinking = level

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

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def create_agent(
    session: SessionHandle,
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    thinking: str | None = None,
    config: Config | None = None,
    permissions: Permissions | str = "auto",
    approver: Approver | None = None,
    tools: Sequence[Tool] | None = None,
    cwd: str | None = None,
    resources: Resources | None = None,
    extensions: Extensions | None = None,
) -> Agent:
    """The agent loop on ``session``.

    The model comes from ``config`` when given, else from :func:`agent_tui.config.load_config`
    (flags ``provider``, ``model``, ``base_url``, ``thinking`` first, then the environment, then the
    config file); the session's own model is kept unless one was chosen. ``permissions`` is a
    :class:`~agent_tui.agent.permissions.Permissions` or a mode ("auto", "ask", "read-only"; "ask"
    calls ``approver`` for each gated tool call, and refuses when there is none). ``tools`` replaces
    the default tools; they run in ``cwd`` (default: the process's). ``resources`` (the user's
    system prompt files and flags, skills: :func:`agent_tui.agent.resources.load_resources`)
    shape the system prompt; None keeps the default one. ``extensions`` adds MCP servers and hooks
    (:class:`~agent_tui.agent.extensions.Extensions`; stopped by :meth:`Agent.aclose`). Raises ConfigError (no
    provider, an unknown one) and PermissionModeError.
    """
    if session.read_only:
        raise ConfigError(session.read_only_reason or f"{session.path}: read-only")
    if config is None:
        config = load_config(provider=provider, model=model, base_url=base_url, thinking=thinking)
    if isinstance(permissions, str):
        permissions = Permissions(parse_mode(permissions) or PermissionMode.AUTO, approver)
    loop = build_agent(
        session.store,
        config,
        tools,
        permissions=permissions,
        cwd=cwd,
        resources=resources,
        extensions=extensions,
    )
    return Agent(session, loop)


__all__ = ["Agent", "create_agent"]

"""Running turns through the SDK: :func:`create_agent` puts the session core on an open session.

:class:`Agent` is the session core every face drives
(:class:`agent_tui.agent.agent_session.AgentSession`: the app, print mode, JSON and RPC modes and
the ACP agent all run it) on a :class:`SessionHandle`. A turn is an async iterator of the loop's
typed events (:mod:`agent_tui.agent.events`); :meth:`Agent.pi_events` gives the same run as pi's
JSON records (:mod:`agent_tui.sdk.pi_events`). Every entry a turn writes goes through the
session's one writer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from agent_tui.agent.agent_session import AgentSession, create_agent_session
from agent_tui.agent.events import AgentEvent
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.permissions import Approver, PermissionMode, Permissions, parse_mode
from agent_tui.agent.resources import Resources
from agent_tui.agent.tools.base import Tool
from agent_tui.config import Config, ConfigError, load_config
from agent_tui.sdk.pi_events import RunKind, pi_events
from agent_tui.sdk.session import SessionHandle
from agent_tui.store.record import JSONObject


class Agent(AgentSession):
    """The session core (:class:`~agent_tui.agent.agent_session.AgentSession`) on an SDK session
    handle, with the run's events as pi's JSON records. One run at a time: a second ``prompt`` while
    one runs raises RuntimeError; :meth:`steer` and :meth:`follow_up` queue messages for the running
    one."""

    def __init__(self, session: SessionHandle, loop: AgentLoop) -> None:
        super().__init__(session.store, loop)
        self.session = session

    def pi_events(
        self, events: AsyncIterator[AgentEvent], *, kind: RunKind = "prompt"
    ) -> AsyncIterator[JSONObject]:
        """A run's events as pi 1.6's JSON records (``agent_start`` ... ``agent_settled``); ``kind``
        is "compact" for :meth:`compact`'s run."""
        return pi_events(events, self.session.store.index, self.model_info, kind=kind)


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
    core = create_agent_session(
        session.store,
        config,
        tools=tools,
        permissions=permissions,
        cwd=cwd,
        resources=resources,
        extensions=extensions,
    )
    return Agent(session, core.loop)


__all__ = ["Agent", "create_agent"]

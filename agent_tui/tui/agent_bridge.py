"""How the app reaches the agent loop without depending on its internals.

The app only needs something that runs a turn as a stream of events and can
be aborted. :func:`default_agent_factory` builds the real
``agent_tui.agent.loop.AgentLoop`` when the agent package and a configured
model are there; otherwise it raises :class:`AgentUnavailable` with a message
saying what to configure. Tests inject their own factory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_tui.agent.events import AgentEvent
from agent_tui.agent.permissions import (
    PermissionMode,
    PermissionModeError,
    Permissions,
    mode_from_config,
)
from agent_tui.agent.resources import Loading
from agent_tui.projection import registry
from agent_tui.store.session import Session

if TYPE_CHECKING:
    from agent_tui.config import Config

CONFIGURE_HINT = (
    f"No model configured. Set {' or '.join(s.key_env_name for s in registry.PROVIDERS.values() if not s.gateway)}, "
    f"or start with --provider {registry.fallback().name} --base-url http://localhost:11434/v1 "
    f"--model llama3.1 for a local {registry.fallback().label}-compatible server (Ollama, vLLM, "
    "llama.cpp). You can still browse, branch, edit and export."
)


class AgentUnavailable(Exception):
    """No turn can run: no agent loop, or no model configured. The message says what to do."""


class Turns(Protocol):
    """What the app needs of an agent loop."""

    def run(self, prompt: Any) -> AsyncIterator[AgentEvent]: ...  # text, content blocks, or None

    def abort(self) -> None: ...


@dataclass(slots=True)
class ModelChoice:
    """The flags of the command line: they win over the config file and the environment."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api: str | None = None  # --api: the provider's API (None: the config file's, or the registry's rule)
    config_path: Path | None = None  # the config file (None: the default one)
    thinking: str | None = None  # --thinking: the level the agent sets (None keeps the session's)
    permissions: str | None = None  # --permissions: ask (the app's default), auto, read-only
    #: Asks the user about a gated tool call (the app sets it: a modal); PermissionRequest -> Decision.
    approver: Callable[[Any], Awaitable[Any]] | None = None
    #: --system-prompt and the rest, with the user's files and skills, loading (None: the default prompt).
    resources: Loading | None = None
    #: --models: the provider/id specs Ctrl+P cycles through (empty: the current provider's table)
    scoped: tuple[str, ...] = ()
    trust_project: bool = False  # --trust-project: load this folder's .mcp.json and hooks
    #: Asks once whether to trust a folder's own MCP servers and hooks: (folder, what) -> yes/no.
    trust_asker: Callable[[str, list[str]], Awaitable[bool | None]] | None = None
    #: Shows one line for the user as it happens (the app sets it: an MCP server that died while idle).
    notice: Callable[[str], None] | None = None
    home: Path | None = None  # where ~/.claude.json, ~/.claude/settings.json, ~/.pi are (None: the user's)
    trust_file: Path | None = None  # the remembered answers (None: trust.json in the data dir)


AgentFactory = Callable[[Session, ModelChoice], Turns]


def load_agent_config(choice: ModelChoice) -> Any:
    """The agent's config for ``choice`` (flags over environment over config file).

    Raises AgentUnavailable with the agent's own message when no model is configured.
    """
    from agent_tui.config import ConfigError, load_config

    try:
        return load_config(
            provider=choice.provider,
            model=choice.model,
            base_url=choice.base_url,
            thinking=choice.thinking,
            api=choice.api,
            path=choice.config_path,
        )
    except ConfigError as e:
        raise AgentUnavailable(str(e).removeprefix("agent-tui: ")) from e


def model_problem(choice: ModelChoice) -> str | None:
    """Why no turn could run with ``choice`` (None: a model is configured)."""
    try:
        load_agent_config(choice)
    except AgentUnavailable as e:
        return str(e)
    return None


def default_agent_factory(session: Session, choice: ModelChoice) -> Turns:
    """The session core (``agent.agent_session.AgentSession``, every face's) for ``session``, configured from flags, config file and environment."""
    config = load_agent_config(choice)
    from agent_tui.agent.agent_session import create_agent_session

    resources = choice.resources.get() if choice.resources is not None else None
    return create_agent_session(
        session,
        config,
        permissions=make_permissions(config, choice),
        resources=resources,
        extensions=make_extensions(config, choice),
    )


def make_extensions(config: Config, choice: ModelChoice, cwd: str | None = None) -> Any:
    """The app's MCP servers and hooks (read and started at the first turn; shared by its sessions)."""
    import os

    from agent_tui.agent.extensions import Extensions

    return Extensions.from_config_file(
        config.config_path,
        cwd or os.getcwd(),
        trust_file=choice.trust_file,
        home=choice.home,
        trust_project=choice.trust_project,
        asker=choice.trust_asker,
        shared=True,
        notify=choice.notice,
    )


def start_eager_servers(choice: ModelChoice) -> None:
    """After the first frame: start the MCP servers configured with ``startup = "eager"`` (on the
    running event loop, in the background). Nothing when no model is configured."""
    try:
        config = load_agent_config(choice)
    except AgentUnavailable:
        return
    from agent_tui.config import read_config_file

    data = read_config_file(config.config_path) if config.config_path is not None else {}
    servers = (data.get("mcp") or {}).get("servers") if isinstance(data.get("mcp"), dict) else None
    if isinstance(servers, dict) and any(
        isinstance(s, dict) and s.get("startup") == "eager" for s in servers.values()
    ):
        make_extensions(config, choice).start_eager()


def mcp_servers() -> Any:
    """The app's MCP servers (an ``agent.mcp.manager.McpManager``), None before the first turn."""
    from agent_tui.agent.extensions import shared_manager

    return shared_manager()


def configured_mcp_servers(choice: ModelChoice) -> Any:
    """The app's MCP servers; before the first turn, those configured, read and not started (None
    when no model is configured: nothing is read then)."""
    manager = mcp_servers()
    if manager is not None:
        return manager
    try:
        config = load_agent_config(choice)
    except AgentUnavailable:
        return None
    return make_extensions(config, choice).read_servers()


def make_permissions(config: Config, choice: ModelChoice) -> Permissions:
    """The app's tool policy: ``ask`` unless --permissions, AGENT_TUI_PERMISSIONS or the config
    file (``config.permissions``) say otherwise. "Allow for this session" lasts as long as this process."""
    try:
        mode = mode_from_config(choice.permissions, config, default=PermissionMode.ASK)
    except PermissionModeError as e:
        raise AgentUnavailable(str(e).removeprefix("agent-tui: ")) from e
    return Permissions(mode, choice.approver)

"""How the app reaches the agent loop without depending on its internals.

The app only needs something that runs a turn as a stream of events and can
be aborted. :func:`default_agent_factory` builds the real
``agent_tui.agent.loop.AgentLoop`` when the agent package and a configured
model are there; otherwise it raises :class:`AgentUnavailable` with a message
saying what to configure. Tests inject their own factory.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_tui.agent.events import AgentEvent, EntryAppended
from agent_tui.agent.permissions import (
    Decision,
    PermissionMode,
    PermissionModeError,
    PermissionRequest,
    Permissions,
    mode_from_config,
)
from agent_tui.agent.resources import Loading
from agent_tui.projection import registry
from agent_tui.store.session import Session

if TYPE_CHECKING:
    from agent_tui.agent.agent_session import AgentSession
    from agent_tui.agent.compaction import Summarizer
    from agent_tui.agent.extensions import Extensions
    from agent_tui.agent.queue import MessageQueue
    from agent_tui.agent.resources import Resources
    from agent_tui.config import Config
    from agent_tui.projection.compaction import CompactionSettings
    from agent_tui.store.record import JSONObject

CONFIGURE_HINT = (
    f"No model configured. Set {' or '.join(s.key_env_name for s in registry.PROVIDERS.values() if not s.gateway)}, "
    f"or start with --provider {registry.fallback().name} --base-url http://localhost:11434/v1 "
    f"--model llama3.1 for a local {registry.fallback().label}-compatible server (Ollama, vLLM, "
    "llama.cpp). You can still browse, branch, edit and export."
)


class AgentUnavailable(Exception):
    """No turn can run: no agent loop, or no model configured. The message says what to do."""


class Turns(Protocol):
    """What the app needs of the agent: the part of the session core
    (``agent.agent_session.AgentSession``, which has all of it) that the app's controllers use.
    :class:`BuiltInThread` (the app's own, built in a thread) has it too, and so must a test's
    agent: the controllers call these, they never probe for them."""

    def run(self, prompt: str | list[JSONObject] | None) -> AsyncIterator[AgentEvent]: ...

    def abort(self) -> None: ...

    def compact(self, focus: str | None) -> AsyncIterator[AgentEvent]: ...

    def branch_with_summary(self, target_id: str, focus: str | None = None) -> AsyncIterator[AgentEvent]: ...

    async def pre_compact(self, focus: str | None = None) -> tuple[str | None, list[str]]: ...

    def summarizer(self) -> Summarizer: ...

    def compaction_settings(self) -> CompactionSettings: ...

    @property
    def queue(self) -> MessageQueue | None:
        """The steering and follow-up queue; None while the agent is still being built."""

    @property
    def config(self) -> Config:
        """The agent's config (``/reload`` reads the MCP servers and hooks of its file again)."""

    #: The MCP servers and hooks (None: none); ``/reload`` replaces them.
    extensions: Extensions | None
    #: The prompt files, templates and skills; ``/reload`` replaces them.
    resources: Resources | None


@dataclass(slots=True)
class ModelChoice:
    """The flags of the command line: they win over the config file and the environment."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api: str | None = None  # --api: the provider's API (None: the config file's, or the registry's rule)
    config_path: Path | None = None  # the config file (None: the default one)
    thinking: str | None = None  # --thinking: the level the agent sets (None keeps the session's)
    permissions: str | None = None  # --permissions: ask (the app's default), or another mode
    #: The mode Shift+Tab chose (None: none yet): each session's agent starts in it, recorded.
    switched_mode: str | None = None
    #: Asks the user about a gated tool call (the app sets it: a modal); PermissionRequest -> Decision.
    approver: Callable[[PermissionRequest], Awaitable[Decision]] | None = None
    #: --system-prompt and the rest, with the user's files and skills, loading (None: the default prompt).
    resources: Loading | None = None
    #: --models: the provider/id specs Ctrl+P cycles through (empty: the current provider's table)
    scoped: tuple[str, ...] = ()
    trust_project: bool = False  # --trust-project: load this folder's .mcp.json and hooks
    #: Asks once whether to trust a folder's own MCP servers and hooks: (folder, what) -> yes/no.
    trust_asker: Callable[[str, list[str]], Awaitable[bool | None]] | None = None
    #: Asks about hooks and MCP servers new or changed since accepted: (folder, what) -> yes/no.
    change_asker: Callable[[str, list[str]], Awaitable[bool | None]] | None = None
    #: Shows one line for the user as it happens (the app sets it: an MCP server that died while idle).
    notice: Callable[[str], None] | None = None
    home: Path | None = None  # where ~/.claude.json, ~/.claude/settings.json, ~/.pi are (None: the user's)
    trust_file: Path | None = None  # the remembered answers (None: trust.json in the data dir)
    #: Shows a prompt in the chat until the agent has written it (the app sets it: PendingPrompt).
    echo: Callable[[Any], Echo] | None = None


class Echo(Protocol):
    """A prompt shown before the session holds it (``tui.pending_prompt.PendingPrompt``)."""

    async def show(self) -> None: ...  # shown, last in the chat (again after a rebuild)

    async def painted(self) -> None: ...  # returns once a frame with it was drawn

    async def clear(self) -> None: ...


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


def choice_config(choice: ModelChoice) -> Any:
    """The config the app's agent would have (None when no model is configured)."""
    try:
        return load_agent_config(choice)
    except AgentUnavailable:
        return None


def model_problem(choice: ModelChoice) -> str | None:
    """Why no turn could run with ``choice`` (None: a model is configured)."""
    try:
        load_agent_config(choice)
    except AgentUnavailable as e:
        return str(e)
    return None


def default_agent_factory(session: Session, choice: ModelChoice) -> Turns:
    """The session core (``agent.agent_session.AgentSession``, every face's) for ``session``,
    configured from flags, config file and environment, built in a thread (:class:`BuiltInThread`).
    What is wrong with the configuration (AgentUnavailable) is raised at once."""
    config = load_agent_config(choice)
    permissions = make_permissions(config, choice)

    def build() -> Any:
        from agent_tui.agent.agent_session import create_agent_session

        resources = choice.resources.get() if choice.resources is not None else None
        agent = create_agent_session(
            session,
            config,
            permissions=permissions,
            resources=resources,
            extensions=make_extensions(config, choice),
        )
        if choice.switched_mode is not None:  # the entry is written when the first run starts
            agent.set_permission_mode(choice.switched_mode, record_later=True)
        warm(agent)
        agent.take_sandbox_notice()  # the app said it at start (tui.sandbox_state.start_notice)
        return agent

    return BuiltInThread(build, choice.echo)


def preload_agent() -> None:
    """The session core's modules and tools (0.25 s of imports), for a thread after the first frame:
    the first send's build (:class:`BuiltInThread`) then has only the agent to make."""
    importlib.import_module("agent_tui.agent.agent_session")
    importlib.import_module("agent_tui.agent.tools.builtin")


def warm(agent: Any) -> None:
    """What the first turn would do on the event loop, done now (in the build's thread): the entry
    models (pydantic builds their validators), the provider's SDK client (importing the SDK, its
    HTTP transport, an SSL context: 0.5-1 s here, the spinner frozen meanwhile). Best effort: a
    failure is the first call's to report."""
    importlib.import_module("agent_tui.store.entries")
    try:
        agent.loop.provider.client()
    except Exception:
        return
    with contextlib.suppress(Exception):
        importlib.import_module("anyio._backends._asyncio")  # httpx's first connection imports it


class BuiltInThread:
    """A session core built in a thread, so that the first send's event loop keeps drawing: the
    prompt is shown (``echo``) and the spinner turns while the agent's modules are imported, its
    resources loaded and its provider's client made. The build starts once the prompt is on
    screen (or when something is asked of the agent). ``run`` waits for the build without blocking;
    anything else asked of it (its queue, compaction, the model's settings) waits for the build
    where it is asked, then is the built agent's. A build that failed is tried again at the next
    ``run`` (its error ends the run that waited for it)."""

    def __init__(self, build: Callable[[], Any], echo: Callable[[Any], Echo] | None = None) -> None:
        object.__setattr__(self, "_build", build)
        object.__setattr__(self, "_echo", echo)
        object.__setattr__(self, "_aborted", False)
        object.__setattr__(self, "_starting", False)  # a run waits for the build or its first event
        object.__setattr__(self, "_future", None)

    def _started(self, again: bool = False) -> Future[Any]:
        """The build's future; the build starts at the first call (``again``: a failed one again)."""
        future: Future[Any] | None = self._future
        if future is None or (again and future.done() and future.exception() is not None):
            future = self._start()
            object.__setattr__(self, "_future", future)
        return future

    def _start(self) -> Future[Any]:
        future: Future[Any] = Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(self._build())
            except BaseException as e:
                future.set_exception(e)

        threading.Thread(target=work, name="agent-tui-build", daemon=True).start()
        return future

    @property
    def built(self) -> AgentSession:
        """The agent (waiting for its build); AttributeError when the build failed."""
        try:
            agent: AgentSession = self._started().result()
            return agent
        except Exception as e:
            raise AttributeError(f"the agent could not be built: {type(e).__name__}: {e}") from e

    def __getattr__(self, name: str) -> Any:
        return getattr(self.built, name)  # what the app's Turns does not name (permission modes...)

    # -- Turns: each waits for the build, but the queue --------------------------------------

    @property
    def queue(self) -> MessageQueue | None:
        # nothing can be queued before the agent exists: Esc during the build (which asks for
        # the queue to hand its messages back) must not wait for it
        return self.built.queue if self.ready else None

    @property
    def config(self) -> Config:
        return self.built.config

    @property
    def extensions(self) -> Extensions | None:
        return self.built.extensions

    @extensions.setter
    def extensions(self, value: Extensions | None) -> None:
        self.built.extensions = value

    @property
    def resources(self) -> Resources | None:
        return self.built.resources

    @resources.setter
    def resources(self, value: Resources | None) -> None:
        self.built.resources = value

    def compact(self, focus: str | None) -> AsyncIterator[AgentEvent]:
        return self.built.compact(focus)

    def branch_with_summary(self, target_id: str, focus: str | None = None) -> AsyncIterator[AgentEvent]:
        return self.built.branch_with_summary(target_id, focus)

    async def pre_compact(self, focus: str | None = None) -> tuple[str | None, list[str]]:
        return await self.built.pre_compact(focus)

    def summarizer(self) -> Summarizer:
        return self.built.summarizer()

    def compaction_settings(self) -> CompactionSettings:
        return self.built.compaction_settings()

    @property
    def ready(self) -> bool:
        """Whether the agent is built (False while the build runs, or when it failed)."""
        future: Future[Any] | None = self._future
        return future is not None and future.done() and future.exception() is None

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.built, name, value)

    def abort(self) -> None:
        if self._starting:
            object.__setattr__(self, "_aborted", True)  # the agent's run has not started: once it has
        if self.ready:
            self._future.result().abort()

    async def run(self, prompt: str | list[JSONObject] | None) -> AsyncIterator[AgentEvent]:
        echo = self._echo(prompt) if self._echo is not None and prompt is not None else None
        object.__setattr__(self, "_starting", True)
        try:
            if echo is not None:
                await echo.show()
                await echo.painted()  # (a build under way takes the interpreter from the frame)
            agent = await asyncio.wrap_future(self._started(again=True))
            async for event in agent.run(prompt):
                if self._starting:
                    object.__setattr__(self, "_starting", False)
                    if self._aborted:
                        agent.abort()  # Esc (or a hangup) while the agent was being built
                if echo is not None and isinstance(event, EntryAppended) and event.role == "user":
                    await echo.clear()  # the chat shows the real one now
                    echo = None
                yield event
                if echo is not None and isinstance(event, EntryAppended):
                    await echo.show()  # an entry written before the prompt: the prompt stays last
        finally:
            object.__setattr__(self, "_starting", False)
            object.__setattr__(self, "_aborted", False)
            if echo is not None:
                await echo.clear()


def session_core(turns: Turns | None) -> AgentSession | None:
    """The session core behind ``turns``: the app's :class:`BuiltInThread` once built, or a
    factory's ``AgentSession`` itself. None before the build ends (asking ``built`` would wait for
    it), after a failed one, and for a test's scripted turns."""
    if isinstance(turns, BuiltInThread):
        if not turns.ready:
            return None
        try:
            return turns.built
        except AttributeError:  # the build failed
            return None
    from agent_tui.agent.agent_session import AgentSession  # (imported by then, if one exists)

    return turns if isinstance(turns, AgentSession) else None


def agent_permissions(turns: Turns | None) -> Permissions | None:
    """The built agent's permission policy (None: see :func:`session_core`)."""
    core = session_core(turns)
    loop = getattr(core, "loop", None)  # (a test's factory may build an agent without one)
    return loop.permissions if loop is not None else None


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
        change_asker=choice.change_asker,
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
    from agent_tui.config import ConfigError, read_settings

    try:
        servers = read_settings(config.config_path).settings.mcp.servers if config.config_path else {}
    except ConfigError:
        return
    if any(server.startup == "eager" for server in servers.values()):
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
    from agent_tui.tui.sandbox_state import app_sandbox  # the process's, /sandbox switches it

    return Permissions(mode, choice.approver, sandbox=app_sandbox(config))

"""``agent-tui acp``: an Agent Client Protocol agent on stdin/stdout.

The editor (Zed, Toad, JetBrains...) starts ``agent-tui acp`` and speaks JSON-RPC over its stdio.
Each ACP session is one agent-tui session file, driven through the SDK
(:func:`agent_tui.sdk.open_session`, :func:`agent_tui.sdk.create_agent`: the one agent loop, the
file's only writer) as print mode is: ``session/new`` creates a file in the usual folder for the
editor's cwd, ``session/load`` opens one by its id or its path and replays the active branch as
``session/update`` notifications, ``session/prompt`` runs a turn and streams its events (message
and thought chunks, tool calls with their status, arguments, output and diffs, retries and
compaction as thoughts, the context use at the end), ``session/cancel`` aborts it (the partial
reply is kept, marked aborted, as Esc does). Gated tool calls ask through
``session/request_permission``: the editor's dialog replaces the app's, and the answer is
recorded in the session as the app records it. When the editor offers ``fs/read_text_file`` and
``fs/write_text_file``, ``read``, ``write`` and ``edit`` go through them (unsaved buffers
included). Slash commands are :mod:`agent_tui.agent.slash_commands`, the one mechanism of
the faces without a screen (the app's ``/compact``, ``/rename``, ``/session``, ``/model``,
``/thinking``, then the user's prompt templates and ``/skill:NAME``, expanded as every face
expands them), advertised with ``available_commands_update``. The permission modes are the session's modes
(``session/set_mode``); the model and its thinking level are the session's config options
(``session/set_config_option``, ``model`` and ``thinking``: the session core switches the model
and clamps the level), and ``session/list`` lists what ``agent-tui sessions`` lists.
The ``mcpServers`` of ``session/new`` and ``session/load`` (stdio, streamable HTTP and legacy
SSE, as ``initialize`` advertises: :mod:`agent_tui.acp.mcp_servers`) are connected for that session, with
the config file's servers and hooks as print mode loads them; their tools are gated like any
MCP tool, and a server that fails is one thought line.

This module is the agent (:class:`AgentTuiAcp`, the SDK's ``acp.interfaces.Agent`` methods);
:mod:`agent_tui.acp.turn` streams one run's events to the editor, :mod:`agent_tui.acp.sessions`
finds and lists session files, and :mod:`agent_tui.acp.stdio` is the process (the command line,
the protocol's stdout: nothing else is written there).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    text_block,
    tool_content,
    update_agent_message_text,
)
from acp.helpers import update_available_commands
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    ClientCapabilities,
    ConfigOptionUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    ToolCallUpdate,
)

from agent_tui import __version__
from agent_tui.acp import updates
from agent_tui.acp.client_fs import client_tools
from agent_tui.acp.content import PromptBlock, prompt_text, user_content
from agent_tui.acp.live import Live
from agent_tui.acp.mcp_servers import CAPABILITIES as MCP_CAPABILITIES
from agent_tui.acp.mcp_servers import server_specs
from agent_tui.acp.sessions import find_session, listed_sessions
from agent_tui.acp.turn import pump
from agent_tui.agent import slash_commands
from agent_tui.agent.app_commands import NAMES as APP_COMMANDS
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.permission_modes import CYCLE, DESCRIPTIONS, LABELS
from agent_tui.agent.permissions import PermissionModeError, mode_from_config
from agent_tui.agent.prompt_files import PromptFileError, PromptFlags
from agent_tui.agent.resources import load_resources
from agent_tui.agent.skills import SkillError
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.providers.base import preload_sdk
from agent_tui.sdk import (
    Config,
    ConfigError,
    Decision,
    PermissionMode,
    PermissionRequest,
    Permissions,
    SessionHandle,
    StoreError,
    create_agent,
    load_config,
    open_session,
)
from agent_tui.store.redact import redact_text
from agent_tui.terminal_text import visible_line

PERMISSION_OPTIONS = [
    PermissionOption(option_id=Decision.ALLOW_ONCE.value, name="Allow once", kind="allow_once"),
    PermissionOption(
        option_id=Decision.ALLOW_SESSION.value, name="Allow for this session", kind="allow_always"
    ),
    PermissionOption(option_id=Decision.DENY.value, name="Deny", kind="reject_once"),
]


def permission_options(request: PermissionRequest) -> list[PermissionOption]:
    """The choices of one question: :data:`PERMISSION_OPTIONS`, with "Always allow RULE" second
    when a rule can say the call (the app's "don't ask again": kept in .claude/settings.local.json)."""
    if not request.rule:
        return PERMISSION_OPTIONS
    name = redact_text(visible_line(f"Always allow {request.rule}", strict=True))[0]
    keep = PermissionOption(option_id=Decision.ALLOW_ALWAYS.value, name=name, kind="allow_always")
    return [PERMISSION_OPTIONS[0], keep, *PERMISSION_OPTIONS[1:]]


#: The permission modes, offered as the session's modes (the editor's mode picker switches them), in
#: the order the app's Shift+Tab cycles them.
MODES = [
    SessionMode(id=mode.value, name=LABELS[mode].capitalize(), description=DESCRIPTIONS[mode].capitalize())
    for mode in CYCLE
]
LIST_LIMIT = 200  # sessions per session/list page
MODEL_OPTION, THINKING_OPTION = "model", "thinking"  # the session's config options


@dataclass(slots=True)
class Options:
    """The command line's choices: they win over the environment and the config file."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    thinking: str | None = None
    permissions: str | None = None
    session_dir: str | None = None
    trust_project: bool = False
    prompt_flags: PromptFlags = field(default_factory=PromptFlags)


class AgentTuiAcp:
    """The ACP agent: :class:`acp.interfaces.Agent`'s methods over agent-tui sessions."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.client_capabilities = ClientCapabilities()
        self.sessions: dict[str, Live] = {}
        self._conn: Client | None = None
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def conn(self) -> Client:
        if self._conn is None:
            raise RuntimeError("not connected")
        return self._conn

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    # -- setup ---------------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        if client_capabilities is not None:
            self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=MCP_CAPABILITIES,
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="agent-tui", title="agent-tui", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    def _config(self) -> Config:
        o = self.options
        try:
            return load_config(provider=o.provider, model=o.model, base_url=o.base_url, thinking=o.thinking)
        except ConfigError as e:
            raise RequestError.internal_error({"message": str(e)}) from None

    def _open(self, session_id: str, session: SessionHandle, cwd: str, mcp_servers: Any) -> Live:
        try:
            return self._start(session_id, session, cwd, mcp_servers)
        except BaseException:
            session.close()
            raise

    def _start(self, session_id: str, session: SessionHandle, cwd: str, mcp_servers: Any) -> Live:
        if session.read_only:
            raise RequestError.invalid_params(
                {"message": session.read_only_reason or f"{session.path}: read-only"}
            )
        config = self._config()
        try:
            mode = mode_from_config(self.options.permissions, config, default=PermissionMode.ASK)
            config_dir = config.config_path.parent if config.config_path is not None else None
            resources = load_resources(
                cwd,
                config_dir,
                flags=self.options.prompt_flags,
                reserved=APP_COMMANDS,
                trust_project=self.options.trust_project,
            )
        except (PermissionModeError, PromptFileError, SkillError) as e:
            raise RequestError.invalid_params({"message": str(e)}) from None
        for warning in (*config.warnings, *resources.warnings):  # an unknown config key, a bad file
            print(f"agent-tui: {visible_line(warning)}", file=sys.stderr)
        fs = self.client_capabilities.fs
        tools = client_tools(
            default_tools(),
            self.conn,
            session_id,
            read=bool(fs and fs.read_text_file),
            write=bool(fs and fs.write_text_file),
        )
        specs, skipped = server_specs(mcp_servers)
        extensions = Extensions.from_config_file(
            config.config_path, cwd, trust_project=self.options.trust_project, servers=specs
        )
        for warning in skipped:
            print(f"agent-tui: {warning}", file=sys.stderr)
            extensions.note(warning)
        try:
            agent = create_agent(
                session,
                config=config,
                permissions=Permissions(mode, self._approver(session_id)),
                tools=tools,
                cwd=cwd,
                resources=resources,
                extensions=extensions,
            )
        except ConfigError as e:
            raise RequestError.invalid_params({"message": str(e)}) from None
        extensions.start_eager()  # the editor's servers (and the config's eager ones) start now
        agent.loop.tool_updates = True  # a running bash's output is shown as it comes
        old = self.sessions.pop(session_id, None)
        if old is not None:
            self._close(old)
        live = self.sessions[session_id] = Live(session, agent, cwd, resources)
        # The provider's SDK is imported on its first call (0.4-0.9 s): import it now, in a thread,
        # while the user types the first prompt (the app does the same after its first frame).
        threading.Thread(target=preload_sdk, args=(agent.provider,), name="preload-sdk", daemon=True).start()
        return live

    def _advertise(self, session_id: str, live: Live) -> None:
        """The slash commands (:mod:`agent_tui.agent.slash_commands`: the app's that need no
        screen, then the user's prompt templates and skills), sent just after the response that
        names the session (a task created now runs after the response is queued)."""
        commands = [
            updates.command(c.name, c.description, c.hint) for c in slash_commands.listed(live.resources)
        ]

        async def send() -> None:
            with contextlib.suppress(Exception):
                await self.conn.session_update(session_id, update_available_commands(commands))

        asyncio.get_running_loop().create_task(send())

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        try:
            session = open_session(cwd=cwd, session_dir=self.options.session_dir)
        except StoreError as e:
            raise RequestError.internal_error({"message": str(e)}) from None
        live = self._open(session.id, session, cwd, mcp_servers)
        self._advertise(session.id, live)
        return NewSessionResponse(
            session_id=session.id, modes=self._modes(live), config_options=self._options(live)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> LoadSessionResponse:
        open_now = self.sessions.get(session_id)
        if open_now is not None:  # loaded again (the editor reopened the thread): this file, afresh
            if open_now.agent.running:
                raise RequestError.invalid_request({"message": "a prompt is running in this session"})
            del self.sessions[session_id]
            self._close(open_now)
        path = find_session(session_id, cwd, self.options.session_dir)
        if path is None:
            raise RequestError.invalid_params({"message": f"no session with id or file {session_id!r}"})
        try:
            session = open_session(path, cwd=cwd)
        except StoreError as e:
            raise RequestError.invalid_params({"message": str(e)}) from None
        live = self._open(session_id, session, cwd, mcp_servers)
        for update in updates.replay(session.store.index, cwd):
            await self.conn.session_update(session_id, update)
        self._advertise(session_id, live)
        return LoadSessionResponse(modes=self._modes(live), config_options=self._options(live))

    def _modes(self, live: Live) -> SessionModeState:
        permissions = live.agent.loop.permissions
        mode = permissions.mode if permissions is not None else PermissionMode.AUTO
        return SessionModeState(current_mode_id=mode.value, available_modes=MODES)

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """The editor's mode picker: the permission mode from the next tool call on (an "allow for
        this session" already given stays given)."""
        live = self._live(session_id)
        if live.agent.loop.permissions is None or mode_id not in {m.id for m in MODES}:
            raise RequestError.invalid_params({"message": f"unknown mode {mode_id!r}"})
        # the session core records it (at once, or when the running prompt ends)
        live.agent.set_permission_mode(mode_id, record_later=live.agent.running)
        return SetSessionModeResponse()

    def _options(self, live: Live) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        """The session's config options: the model (those with a key, the core's
        ``available_models``) and its thinking level (the levels this model has)."""
        agent = live.agent
        models = [
            SessionConfigSelectOption(value=f"{p}/{m}", name=m, description=p)
            for p, m in agent.available_models()
        ]
        levels = [SessionConfigSelectOption(value=v, name=v) for v in agent.thinking_levels()]
        return [
            SessionConfigOptionSelect(
                id=MODEL_OPTION,
                name="Model",
                category="model",
                type="select",
                current_value=f"{agent.provider}/{agent.model}",
                options=models,
            ),
            SessionConfigOptionSelect(
                id=THINKING_OPTION,
                name="Thinking",
                category="thought_level",
                type="select",
                current_value=agent.thinking_level,
                options=levels,
            ),
        ]

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """The editor's model and thinking pickers: from the next call on, through the session core
        (the level clamped to what the model has; a new model re-clamps it); the options as they
        are now in the response."""
        live = self._live(session_id)
        agent = live.agent
        if not isinstance(value, str) or config_id not in (MODEL_OPTION, THINKING_OPTION):
            raise RequestError.invalid_params({"message": f"unknown option {config_id!r} = {value!r}"})
        if agent.running:
            raise RequestError.invalid_request({"message": "a prompt is running: change it when it ends"})
        try:
            if config_id == MODEL_OPTION:
                provider, _, model = value.partition("/")
                if not model:
                    raise ValueError(f"not PROVIDER/MODEL: {value!r}")
                agent.set_model(model, provider)
            else:
                agent.set_thinking_level(value)
        except (ValueError, ConfigError) as e:
            raise RequestError.invalid_params({"message": str(e)}) from None
        return SetSessionConfigOptionResponse(config_options=self._options(live))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The sessions of ``cwd`` (every folder's without it), most recent first, as ``sessions`` lists them."""
        try:
            found = await asyncio.to_thread(listed_sessions, cwd, self.options.session_dir)
        except (OSError, sqlite3.Error) as e:
            raise RequestError.internal_error({"message": f"the session index cannot be read: {e}"}) from None
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = found[start : start + LIST_LIMIT]
        more = start + LIST_LIMIT < len(found)
        return ListSessionsResponse(sessions=page, next_cursor=str(start + LIST_LIMIT) if more else None)

    # -- turns ---------------------------------------------------------------------------------

    def _live(self, session_id: str) -> Live:
        live = self.sessions.get(session_id)
        if live is None:
            raise RequestError.invalid_params({"message": f"unknown session {session_id!r}"})
        return live

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **kwargs: Any) -> PromptResponse:
        live = self._live(session_id)
        if live.agent.running:
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        text = prompt_text(prompt).strip()
        try:
            parsed = slash_commands.parse(text, live.resources)
        except SkillError as e:
            raise RequestError.invalid_params({"message": str(e)}) from None
        if isinstance(parsed, slash_commands.Command):
            return await self._command(session_id, live, parsed)
        content = user_content(prompt)
        expanded = parsed
        if expanded is not None:  # a prompt template or a skill: its text replaces what was typed
            content = [{"type": "text", "text": expanded}, *(b for b in content if b.get("type") != "text")]
        return await pump(self.conn, session_id, live, live.agent.prompt(content))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is not None:
            live.agent.abort()

    async def _say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id, update_agent_message_text(text))

    async def _command(self, session_id: str, live: Live, command: slash_commands.Command) -> PromptResponse:
        """A built-in command, run by the one mechanism every face without the app shares."""
        outcome = slash_commands.run(live.agent, command)
        if not isinstance(outcome, slash_commands.Said):  # /compact: a run, streamed as a turn is
            return await pump(self.conn, session_id, live, outcome)
        if outcome.renamed is not None:
            await self.conn.session_update(
                session_id, SessionInfoUpdate(session_update="session_info_update", title=outcome.renamed)
            )
        await self._say(session_id, redact_text(outcome.text)[0])
        if command.name in ("model", "thinking"):  # the editor's pickers follow
            await self.conn.session_update(
                session_id,
                ConfigOptionUpdate(session_update="config_option_update", config_options=self._options(live)),
            )
        return PromptResponse(stop_reason="end_turn")

    # -- permissions ---------------------------------------------------------------------------

    def _approver(self, session_id: str) -> Callable[[PermissionRequest], Any]:
        async def approve(request: PermissionRequest) -> Decision:
            details = request.details()
            call = ToolCallUpdate(
                tool_call_id=request.call_id,
                title=redact_text(f"{request.tool} {request.summary}")[0],
                kind=updates.tool_kind(request.tool),
                status="pending",
                content=[tool_content(text_block(f"{details}\n\n({request.reason})"))],
            )
            # An error answer or a lost connection raises: the core records it as a refusal and the
            # turn goes on (Permissions._ask), the call finishing "failed" with the refusal.
            response = await self.conn.request_permission(
                session_id=session_id, tool_call=call, options=permission_options(request)
            )
            outcome = response.outcome
            if isinstance(outcome, AllowedOutcome) and outcome.option_id in (d.value for d in Decision):
                return Decision(outcome.option_id)
            return Decision.DENY  # cancelled (the prompt was cancelled) or an option we did not offer

        return approve

    # -- the end -------------------------------------------------------------------------------

    def _close(self, live: Live) -> None:
        """A session replaced (loaded again): its turn aborted, its MCP servers stopped, its file closed."""
        live.agent.abort()
        live.session.close()
        task = asyncio.get_running_loop().create_task(live.agent.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def shutdown(self) -> None:
        """stdin closed: abort what runs (the partial reply is written), close every session."""
        for live in self.sessions.values():
            live.agent.abort()
        for _ in range(200):  # the aborted turns write their last entries
            if not any(live.agent.running for live in self.sessions.values()):
                break
            await asyncio.sleep(0.01)
        for live in self.sessions.values():
            with contextlib.suppress(Exception):
                await live.agent.aclose()
            live.session.close()
        self.sessions.clear()
        for task in list(self._closing):
            with contextlib.suppress(Exception):
                await task


__all__ = ["AgentTuiAcp", "Live", "Options"]

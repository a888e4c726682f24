"""A scripted editor (the ``agent-client-protocol`` package's client side) and ``agent-tui acp``
started as a subprocess on print mode's project, home and config, against the fake model server."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.core import ClientSideConnection
from acp.interfaces import Client
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    InitializeResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from tests.support.fake_model_server import FakeModelServer
from tests.support.print_env import Env


class EditorClient:
    """A scripted editor: records every update, answers permission questions from ``answers``
    (an option id, None to cancel, "error" to answer with an error), and serves files from ``buffers`` when it offers fs."""

    def __init__(
        self, answers: list[str | None] | None = None, buffers: dict[str, str] | None = None
    ) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permission_requests: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.answers = list(answers or [])
        self.buffers = buffers
        self.writes: dict[str, str] = {}
        self.reads: list[str] = []
        self.changed = asyncio.Event()
        self.released = asyncio.Event()

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        self.changed.set()
        answer = self.answers.pop(0) if self.answers else None
        if answer == "error":  # the editor cannot show the dialog: it answers with an error
            raise RequestError.internal_error({"message": "no dialog in this editor"})
        if answer == "wait":  # the dialog stays open until the test releases it (as a cancel does)
            await self.released.wait()
            answer = None
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.changed.set()

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if self.buffers is None or path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes[path] = content
        if self.buffers is not None:
            self.buffers[path] = content
        return WriteTextFileResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None

    # -- reading what arrived ------------------------------------------------------------------

    def of(self, kind: type) -> list[Any]:
        return [u for _, u in self.updates if isinstance(u, kind)]

    def message_text(self) -> str:
        return "".join(
            u.content.text for u in self.of(AgentMessageChunk) if isinstance(u.content, TextContentBlock)
        )

    def thought_text(self) -> str:
        return "".join(
            u.content.text for u in self.of(AgentThoughtChunk) if isinstance(u.content, TextContentBlock)
        )

    def tool_updates(self, call_id: str) -> list[ToolCallStart | ToolCallProgress]:
        return [
            u
            for _, u in self.updates
            if isinstance(u, ToolCallStart | ToolCallProgress) and u.tool_call_id == call_id
        ]

    async def wait_for(self, condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        async def loop() -> None:
            while not condition():
                self.changed.clear()
                await self.changed.wait()

        try:
            await asyncio.wait_for(loop(), timeout)
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}; updates: {self.updates!r}") from None


class AcpEnv(Env):
    """print mode's project, home and config, with ``agent-tui acp`` started on them."""

    def __init__(self, tmp: Path, server: FakeModelServer) -> None:
        super().__init__(tmp, server)
        self.stderr_path = tmp / "agent-stderr.txt"
        self.init: InitializeResponse | None = None  # the last initialize's answer

    @asynccontextmanager
    async def agent(
        self, client: EditorClient, *, fs: bool = False, args: tuple[str, ...] = ()
    ) -> AsyncIterator[ClientSideConnection]:
        with open(self.stderr_path, "ab") as stderr:
            async with spawn_agent_process(
                cast(Client, client),  # the protocol's methods an editor without terminals needs
                sys.executable,
                "-m",
                "agent_tui",
                "acp",
                *args,
                env=self.env,
                cwd=self.work,
                transport_kwargs={"stderr": stderr},
            ) as (conn, process):
                caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs))
                init = await asyncio.wait_for(
                    conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps), 60
                )
                assert init.agent_capabilities is not None and init.agent_capabilities.load_session
                self.init = init
                yield conn
                if process.stdin is not None:
                    process.stdin.close()  # EOF: the agent closes its sessions and exits
                code = await asyncio.wait_for(process.wait(), 30)
                assert code == 0, self.stderr_path.read_text()


__all__ = ["AcpEnv", "EditorClient"]

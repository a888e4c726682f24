"""What an RPC command handler may use of the server: :class:`RpcHost`, a Protocol.

The ``rpc_*_commands`` modules take the server as an :class:`RpcHost`, never as
:class:`~agent_tui.cli.rpc_server.RpcServer` (which imports their tables), so the command modules
and the server import one another one way. :class:`~agent_tui.cli.rpc_server.RpcServer` is the
one implementation; a test may hand a handler a fake.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Protocol

from agent_tui.agent.events import AgentEvent
from agent_tui.cli.json_mode import JsonLines
from agent_tui.sdk import Agent, SessionHandle
from agent_tui.sdk.pi_events import RunKind
from agent_tui.store.record import JSONObject


class RpcHost(Protocol):
    """One RPC session as its command handlers see it: the agent, the output, the runs."""

    agent: Agent
    lines: JsonLines
    #: ``--models``: what ``cycle_model`` cycles through (``provider/id``), empty: every model with a key
    scoped_models: list[str]
    run_task: asyncio.Task[None] | None
    bash_task: asyncio.Task[None] | None
    bash_abort: asyncio.Event | None
    compacting: bool

    @property
    def session(self) -> SessionHandle: ...

    @property
    def busy(self) -> bool:
        """Is a run (a prompt, a resumed queue, a compaction) going on?"""
        ...

    def respond(
        self, cmd: JSONObject | None, name: str, data: JSONObject | None = None, *, null: bool = False
    ) -> None: ...

    def respond_encoded(self, cmd: JSONObject | None, name: str, data: bytes) -> None: ...

    def fail(self, cmd: JSONObject | None, name: str, error: str) -> None: ...

    def later(self, work: Awaitable[None]) -> None:
        """Run a command whose response comes when it is done, while other commands are read."""
        ...

    def start_run(
        self, events: AsyncIterator[AgentEvent], kind: RunKind = "prompt"
    ) -> asyncio.Task[None]: ...

    async def stop(self) -> None: ...

    def model_object(self) -> JSONObject:
        """pi's Model object for the current model."""
        ...

    async def switch(self, path: Path | None = None, parent_session: str | None = None) -> None:
        """Continue in another session file (None: a new one beside the current one)."""
        ...

    def idle(self, what: str) -> None:
        """CommandError unless nothing runs (no prompt, no compaction, no bash)."""
        ...


__all__ = ["RpcHost"]

"""The MCP servers of one process: started in the background, their tools, their one-line news.

Nothing here blocks: :meth:`McpManager.start` creates a task per server and returns.
The agent loop calls it at the start of a turn (``startup = "eager"`` servers are started when
the face starts), then waits at most ``wait`` seconds, abortably, for servers still starting;
a server not ready by then joins at a later turn, and says so in one line (once per start). Each
failure (did not start, crashed, died while idle) is one line, said once and when it happens: to
:attr:`McpManager.on_notice` when the face set one (the app's notice, print, JSON and RPC mode's
stderr), else kept for :meth:`take_notices` (the loop's ``Notice``: ACP's thought line).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_tui.agent.mcp.config import ServerSpec
from agent_tui.agent.mcp.server import McpServer
from agent_tui.agent.mcp.tools import McpTool, tool_name

DEFAULT_WAIT = 10.0  # seconds a turn waits for servers still starting (pi waits 10 s too)


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One row of ``/mcp``: untrusted text (names, reasons, tool names) for the face to show inert."""

    name: str
    source: str
    transport: str
    state: str
    reason: str
    tools: tuple[str, ...]
    target: str  # the command line or URL (never env or headers)


class McpManager:
    def __init__(
        self, specs: Sequence[ServerSpec], *, trust_read_only_hints: bool = False, wait: float = DEFAULT_WAIT
    ) -> None:
        self.specs = list(specs)
        self.trust_read_only_hints = trust_read_only_hints
        self.wait = wait
        self.servers: dict[str, McpServer] = {s.name: McpServer(s, self._changed) for s in self.specs}
        self._notices: list[str] = []
        self._ready_once: set[str] = set()
        self._late: set[str] = set()  # servers said to be still starting (said again after a new start)
        self.started = False
        #: Called (on the event loop) whenever a server changes state; the face refreshes ``/mcp``.
        self.listeners: list[object] = []
        #: Where a failure's line goes as it happens (None: kept for take_notices).
        self.on_notice: Callable[[str], None] | None = None

    def key(self) -> tuple[object, ...]:
        return (tuple(s.key() for s in self.specs), self.trust_read_only_hints)

    def _say(self, line: str) -> None:
        if self.on_notice is not None:
            self.on_notice(line)
        else:
            self._notices.append(line)

    def _changed(self, server: McpServer) -> None:
        if server.state != "starting":
            self._late.discard(server.name)
        if server.state == "failed":
            line = f'MCP server "{server.name}" failed: {server.reason}'
            if server.restartable:
                line += " (its next call starts it again)"
            self._say(line)
        for listener in list(self.listeners):
            if callable(listener):
                listener(server)

    def start(self, *, eager_only: bool = False) -> None:
        """Start every enabled server not running yet (only the ``eager`` ones with ``eager_only``)."""
        self.started = self.started or not eager_only
        for server in self.servers.values():
            if eager_only and server.spec.startup != "eager":
                continue
            if server.state in ("stopped", "starting", "ready"):
                server.start()  # a no-op while it runs on this event loop

    async def wait_started(self, timeout: float | None = None) -> None:
        """Until no server is starting, or ``timeout`` (default ``wait``) seconds; each server still
        starting then is one line (its tools join the turn after it is ready)."""
        starting = [s for s in self.servers.values() if s.state == "starting"]
        if not starting:
            return
        seconds = self.wait if timeout is None else timeout
        waits = [asyncio.ensure_future(s.wait_settled()) for s in starting]
        try:
            await asyncio.wait(waits, timeout=seconds)
        finally:
            for w in waits:
                w.cancel()
        for server in starting:
            if server.state == "starting" and server.name not in self._late:
                self._late.add(server.name)
                self._say(
                    f'MCP server "{server.name}" is still starting after {seconds:g} s: '
                    "this turn runs without its tools (they join once it is ready)"
                )

    def tools(self) -> list[McpTool]:
        """The tools of every ready server, in config order; names made unique."""
        found: list[McpTool] = []
        names: set[str] = set()
        for server in self.servers.values():
            for tool in server.offered_tools():
                name = tool_name(server.name, str(tool.name))
                if name in names:
                    continue
                names.add(name)
                found.append(McpTool(server, tool, name))
        return found

    def auto_allowed(self) -> set[str]:
        """Tool names ask mode runs without asking: those marked ``readOnlyHint``, when the config trusts it."""
        if not self.trust_read_only_hints:
            return set()
        return {t.name for t in self.tools() if t.read_only}

    def take_notices(self) -> list[str]:
        notices, self._notices = self._notices, []
        return notices

    def status(self) -> list[ServerStatus]:
        rows = []
        for server in self.servers.values():
            spec = server.spec
            target = " ".join([spec.command or "", *spec.args]).strip() if spec.command else str(spec.url)
            rows.append(
                ServerStatus(
                    spec.name,
                    spec.source,
                    spec.transport,
                    "not started" if server.state == "stopped" else server.state,
                    server.reason,
                    tuple(str(t.name) for t in server.tools),
                    target,
                )
            )
        return rows

    async def restart(self, name: str) -> None:
        server = self.servers[name]
        await server.stop()
        server.start()

    async def disable(self, name: str) -> None:
        """Stop the server for the rest of this process (the config is not changed)."""
        await self.servers[name].stop("disabled")

    async def enable(self, name: str) -> None:
        server = self.servers[name]
        if server.state == "disabled":
            server.state = "stopped"
            server.start()

    async def close(self) -> None:
        """Stop every server (each process terminated)."""
        await asyncio.gather(
            *(s.stop() for s in self.servers.values() if s.state in ("starting", "ready", "failed")),
            return_exceptions=True,
        )


__all__ = ["DEFAULT_WAIT", "McpManager", "ServerStatus"]

"""One MCP server's connection, owned by a background task, through the official ``mcp`` SDK.

:meth:`McpServer.start` spawns the connection task and returns at once: the process starts,
answers ``initialize`` and lists its tools within ``startup_timeout`` seconds, or the server is
``failed`` with one line saying why (the tail of its stderr included, redacted). A stdio
server's stderr goes to a private temporary file, never to the terminal. Tool calls come from
other tasks; a server that dies under a call gives that call one error and turns ``failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import IO, Any

from agent_tui.agent.mcp.config import ServerSpec
from agent_tui.store.redact import redact_text
from agent_tui.terminal_text import visible_line

STATES = ("starting", "ready", "failed", "disabled", "stopped")
STDERR_TAIL = 300  # characters of a failed server's stderr (its last 3 lines) shown in its reason


class McpCallError(Exception):
    """A call that did not get a result: the message is the tool error the model reads."""


class McpServer:
    """A server's state (``starting``, ``ready``, ``failed`` with ``reason``, ``disabled``,
    ``stopped``), its tools once ready, and calls to them."""

    def __init__(self, spec: ServerSpec, on_change: Callable[[McpServer], None] | None = None) -> None:
        self.spec = spec
        self.state = "disabled" if not spec.enabled else "stopped"
        self.reason = ""
        self.tools: list[Any] = []  # mcp_types.Tool, as listed
        self.instructions = ""
        self.on_change = on_change
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()  # set once the state has left "starting"
        self._errlog: IO[str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def _set(self, state: str, reason: str = "") -> None:
        self.state, self.reason = state, reason
        if state != "starting":
            self._settled.set()
        if self.on_change is not None:
            self.on_change(self)

    def start(self) -> None:
        """Start connecting in the background (on the running event loop); a no-op while it runs."""
        loop = asyncio.get_running_loop()
        if self.state == "disabled":
            return
        if self._task is not None and not self._task.done() and self._loop is loop:
            return
        self._loop = loop
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self.tools = []
        self._set("starting")
        self._task = loop.create_task(self._run(), name=f"mcp-{self.name}")

    async def wait_settled(self) -> None:
        """Until the server is ready or failed (returns at once when it is not starting)."""
        if self.state == "starting":
            await self._settled.wait()

    async def stop(self, state: str = "stopped") -> None:
        """Stop the connection (the process is terminated by the SDK's transport) and wait for it."""
        task = self._task
        self._stop.set()
        if task is not None and not task.done() and self._loop is asyncio.get_running_loop():
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._task = None
        self._session = None
        self._close_errlog()
        self.tools = []
        self._set(state, "")

    # -- the connection ----------------------------------------------------------------------

    async def _run(self) -> None:
        import anyio

        try:
            async with AsyncExitStack() as stack:
                session = await self._connect(stack)
                with anyio.fail_after(self.spec.startup_timeout):
                    result = await session.initialize()
                    tools = await _list_tools(session)
                self.instructions = str(getattr(result, "instructions", "") or "")
                self._session = session
                self.tools = tools
                self._set("ready")
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # anything the SDK or the process throws is one line
            if isinstance(_leaf(e), TimeoutError):
                self._fail(f"did not answer initialize within {self.spec.startup_timeout:g} s")
            else:
                self._fail(_describe(e))
        finally:
            self._session = None

    async def _connect(self, stack: AsyncExitStack) -> Any:
        from mcp import ClientSession

        if self.spec.command:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            self._close_errlog()
            self._errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115 - kept open while the server runs
            params = StdioServerParameters(
                command=self.spec.command,
                args=list(self.spec.args),
                env=dict(self.spec.env) or None,
                cwd=self.spec.cwd,
                encoding_error_handler="replace",
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog=self._errlog))
        else:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            client = httpx2.AsyncClient(
                headers=dict(self.spec.headers), timeout=httpx2.Timeout(30.0, read=300.0)
            )
            await stack.enter_async_context(client)
            read, write = await stack.enter_async_context(
                streamable_http_client(str(self.spec.url), http_client=client)
            )
        return await stack.enter_async_context(
            ClientSession(read, write, read_timeout_seconds=self.spec.timeout)
        )

    def _fail(self, reason: str) -> None:
        tail = self.stderr_tail()
        if tail:
            reason = f"{reason}; stderr: {tail}"
        self.tools = []
        self._set("failed", reason)

    def stderr_tail(self) -> str:
        """The end of the server's stderr, on one line, redacted (empty for HTTP servers)."""
        log = self._errlog
        if log is None:
            return ""
        try:
            log.flush()
            size = log.seek(0, os.SEEK_END)
            log.seek(max(0, size - 4 * STDERR_TAIL))
            text = log.read()
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()][-3:]
        text = " ".join(" ".join(lines).split())[-STDERR_TAIL:]
        return visible_line(redact_text(text)[0])

    def _close_errlog(self) -> None:
        if self._errlog is not None:
            with contextlib.suppress(OSError):
                self._errlog.close()
            self._errlog = None

    # -- calls -------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """``tools/call``; McpCallError when there is no result (not running, crashed, timed out)."""
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        session = self._session
        if self.state != "ready" or session is None:
            why = f": {self.reason}" if self.reason else ""
            raise McpCallError(f'MCP server "{self.name}" is {self.state}{why}')
        try:
            return await session.call_tool(tool, arguments)
        except MCPError as e:
            if e.code == CONNECTION_CLOSED:
                self._crashed()
                raise McpCallError(
                    f'MCP server "{self.name}" stopped during the call: {self.reason}'
                ) from None
            if e.code == REQUEST_TIMEOUT:
                raise McpCallError(
                    f'MCP server "{self.name}" did not answer within {self.spec.timeout:g} s'
                ) from None
            raise McpCallError(f'MCP server "{self.name}": {e.error.message}') from None
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a broken pipe, a dead process: the server is gone
            self._crashed(_describe(e))
            raise McpCallError(f'MCP server "{self.name}" stopped during the call: {self.reason}') from None

    def _crashed(self, detail: str = "the connection closed") -> None:
        self._session = None
        self._stop.set()
        self._fail(detail)


async def _list_tools(session: Any) -> list[Any]:
    from mcp.types import PaginatedRequestParams

    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever is cut at 100 pages
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        result = await session.list_tools(params=params)
        tools.extend(result.tools)
        cursor = result.next_cursor
        if not cursor:
            break
    return tools


def _leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _describe(error: BaseException) -> str:
    """One line for an exception (an exception group: its first leaf)."""
    error = _leaf(error)
    text = " ".join(str(error).split())
    if isinstance(error, FileNotFoundError):
        text = f"cannot start the command: {error.strerror}: {error.filename}"
    elif not text:
        text = type(error).__name__
    return visible_line(redact_text(text)[0])


__all__ = ["STATES", "McpCallError", "McpServer"]

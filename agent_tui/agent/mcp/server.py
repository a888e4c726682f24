"""One MCP server's connection, owned by a background task, through the official ``mcp`` SDK.

:meth:`McpServer.start` spawns the connection task and returns at once: the process starts,
answers ``initialize`` and lists its tools within ``startup_timeout`` seconds, or the server is
``failed`` with one line saying why (the tail of its stderr included, redacted). A stdio
server's stderr goes to a private temporary file, never to the terminal. Tool calls come from
other tasks; a server that dies under a call gives that call one error and turns ``failed``.

Three transports: stdio, streamable HTTP and the legacy SSE one (``"type": "sse"``); the HTTP
ones send the configured headers, secrets never shown (the SDK's log goes nowhere unless the face
configured logging, as ``agent-tui acp`` does to its stderr, and it names no header).

A server that dies while idle turns ``failed`` when it happens, not at its next call: the
connection task watches the stream the session reads, which ends when a stdio server's stdout
closes or an SSE server's event stream does; a streamable-HTTP server is seen gone when it
refuses the connection its client reopens for the server's messages (a second after it dropped),
or answers it 404, our session being over (see :class:`GoneWatch`). A server that was ready and
then died is ``restartable``: its tools stay offered, and the next call to one starts it again
(a new session; at most :data:`MAX_RESTARTS` times per process) or fails with one error saying
why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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
SESSION_HEADER = "mcp-session-id"  # streamable HTTP's session id, on every request after initialize
HTTP_TIMEOUT = 30.0  # seconds to connect to (and send to) a streamable-HTTP or SSE server
MAX_RESTARTS = 3  # times a call restarts a server that died after it was ready, per process

# The SDK logs a dropped HTTP connection as an error with its traceback: with no handler of the
# face's, Python's last resort would print it on the terminal (over the TUI's screen).
logging.getLogger("mcp").addHandler(logging.NullHandler())


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
        self._ended = asyncio.Event()  # the stream the session reads has ended (the server is gone)
        self._calls = 0  # calls in flight
        #: It was ready, then died: the next call starts it again (``restarts`` so far).
        self.restartable = False
        self.restarts = 0
        self._offered: list[Any] = []  # the tools it had when it died (still offered while restartable)
        self._restart_lock: asyncio.Lock | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def offered_tools(self) -> list[Any]:
        """The tools the model may call: a ready server's, or those a crashed one had (a call restarts it)."""
        if self.state == "ready":
            return self.tools
        return self._offered if self.state == "failed" and self.restartable else []

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
        self._ended = asyncio.Event()
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
            if self.state == "starting":  # still waiting for initialize: nothing to finish, no 5 s wait
                task.cancel()
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
        self.restartable = False
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
                self.restartable = False
                self._set("ready")
                await _first(self._stop.wait(), self._ended.wait())
                if not self._stop.is_set():  # the server went away by itself: say so now
                    self._crashed("the connection closed" if self._calls else self._idle_death())
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
        elif self.spec.sse:
            from mcp.client.sse import sse_client

            read, write = await stack.enter_async_context(
                sse_client(
                    str(self.spec.url),
                    headers=dict(self.spec.headers),
                    timeout=HTTP_TIMEOUT,
                    httpx_client_factory=self._http_client,
                )
            )
        else:
            from mcp.client.streamable_http import streamable_http_client

            client = self._http_client(dict(self.spec.headers))
            await stack.enter_async_context(client)
            read, write = await stack.enter_async_context(
                streamable_http_client(str(self.spec.url), http_client=client)
            )
        watched = _EndWatch(read, self._ended)
        return await stack.enter_async_context(
            ClientSession(watched, write, read_timeout_seconds=self.spec.timeout)
        )

    def _http_client(
        self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
    ) -> Any:
        """The HTTP client of a streamable-HTTP or SSE connection (the SDK's factory signature):
        no read timeout (an SSE stream is quiet while the server is idle; a call has its own), and
        a server that stops taking connections ends the connection at once (see :class:`GoneWatch`)."""
        import httpx2

        from agent_tui.providers.base import tls_context  # the CA bundle read once a process

        transport: Any = GoneWatch(httpx2.AsyncHTTPTransport(verify=tls_context()), self._ended)
        return httpx2.AsyncClient(
            headers=headers, auth=auth, timeout=httpx2.Timeout(HTTP_TIMEOUT, read=None), transport=transport
        )

    def _idle_death(self) -> str:
        return "the server exited while idle" if self.spec.command else "the server went away while idle"

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

    async def _restart(self) -> None:
        """Start a server that died after it was ready again, for a call (once, however many calls
        wait); McpCallError when it may not or does not come back."""
        if self._restart_lock is None:
            self._restart_lock = asyncio.Lock()
        async with self._restart_lock:
            if self.state != "failed" or not self.restartable:
                return  # another call restarted it meanwhile
            died = self.reason
            if self.restarts >= MAX_RESTARTS:
                self.restartable = False
                raise McpCallError(
                    f'MCP server "{self.name}" stopped {self.restarts + 1} times; not started again '
                    f"(restart it from /mcp): {died}"
                )
            self.restarts += 1
            old = self._task
            if old is not None and not old.done():  # its connection is still winding down
                await asyncio.wait({old}, timeout=5)
            self.start()
            await self.wait_settled()  # bounded: startup_timeout
            if self.state != "ready":
                raise McpCallError(
                    f'MCP server "{self.name}" stopped ({died}) and did not start again: {self.reason}'
                )

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """``tools/call``; McpCallError when there is no result (not running, crashed, timed out).
        A server that died after it was ready is started again first."""
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if self.state == "failed" and self.restartable:
            await self._restart()
        elif self.state == "starting":
            await self.wait_settled()
        session = self._session
        if self.state != "ready" or session is None:
            why = f": {self.reason}" if self.reason else ""
            raise McpCallError(f'MCP server "{self.name}" is {self.state}{why}')
        self._calls += 1
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
        finally:
            self._calls -= 1

    def _crashed(self, detail: str = "the connection closed") -> None:
        """It died after it was ready: failed (said once, by whichever of the call and the watch
        sees it first), and restartable by the next call."""
        self._session = None
        self._stop.set()
        if self.state == "failed":
            return
        self._offered = list(self.tools)
        self.restartable = True
        self._fail(detail)


class GoneWatch:
    """An HTTP transport noting when the server is gone: a connection it refuses (nothing listens
    any more: it exited, was killed), or a 404 to a request naming the session (the spec's "that
    session is over": a server started again at the same address knows only new sessions).

    A streamable-HTTP server that dies while idle is otherwise said nowhere: the SDK reconnects
    its server-to-client stream (the GET) a second later, fails, and gives up silently, so the
    death would show only at the next call, and a server started again meanwhile would answer
    every later call "session terminated". That reconnect is what this sees."""

    def __init__(self, inner: Any, gone: asyncio.Event) -> None:
        self._inner = inner
        self._gone = gone

    async def handle_async_request(self, request: Any) -> Any:
        import httpx2

        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.ConnectError:
            self._gone.set()
            raise
        if response.status_code == 404 and SESSION_HEADER in request.headers:
            self._gone.set()
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> GoneWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._inner.__aexit__(*exc)


class _EndWatch:
    """The transport's read stream as the session reads it, noting when it ends: a stdio server's
    stdout closed (it exited, was killed) or an HTTP connection dropped. Everything else is the
    stream's own."""

    def __init__(self, stream: Any, ended: asyncio.Event) -> None:
        self._stream = stream
        self._ended = ended

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def __aiter__(self) -> _EndWatch:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self._stream.__anext__()
        except (StopAsyncIteration, anyio.EndOfStream, anyio.ClosedResourceError):
            self._ended.set()
            raise

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._ended.set()
            raise

    async def __aenter__(self) -> _EndWatch:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)


async def _first(*waits: Any) -> None:
    """Until the first of ``waits`` (coroutines) is done; the others are cancelled."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


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


__all__ = ["MAX_RESTARTS", "STATES", "GoneWatch", "McpCallError", "McpServer"]

"""``agent-tui --mode rpc [--session FILE | -c]``: drive a live session with JSON lines (pi 1.6's RPC).

Commands arrive on stdin, one JSON object per line (split on LF only; a CR before it is dropped).
Responses (``{"type": "response", "command", "success", "data" | "error", "id"}``, the command's
``id`` repeated) and the session's events (:mod:`agent_tui.sdk.pi_events`, as ``--mode json``
writes them, without the header) go to stdout, one per line; nothing else does: notes and
diagnostics go to stderr. Everything runs on one event loop through the SDK: one agent loop, one
session writer. A prompt's response comes as soon as it is accepted, its events after it, while
further commands (``steer``, ``abort``, ``get_state``...) are read and answered.

A line that is not JSON, not an object, without a known ``type`` or with a missing or wrong field
gets an error response naming the problem; the process keeps running. EOF on stdin (or SIGTERM,
SIGINT, SIGHUP) ends it cleanly: a running turn is aborted (its partial reply recorded, marked
aborted), its last records written, then the process exits 0. See docs/RPC.md.

This module is the process (stdin read in a thread, the signals, the command line); the session's
dispatch, responses and runs are :class:`agent_tui.cli.rpc_server.RpcServer`, the commands the
``rpc_*_commands`` modules (their tables joined in :mod:`agent_tui.cli.rpc_commands`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence

from agent_tui.agent.permissions import (
    PermissionMode,
    PermissionModeError,
    Permissions,
    cwd_notice,
    mode_from_config,
)
from agent_tui.agent.prompt_files import PromptFileError
from agent_tui.agent.skills import SkillError
from agent_tui.cli.json_mode import JsonLines
from agent_tui.cli.print_mode import headless_agent, load_and_expand, load_settings, open_session
from agent_tui.cli.rpc_registry import CommandError
from agent_tui.cli.rpc_server import MAX_COMMAND_BYTES, RpcServer, redacted
from agent_tui.config import ConfigError
from agent_tui.sdk import Agent
from agent_tui.store.errors import StoreError
from agent_tui.terminal_text import for_terminal


def _read_stdin(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes | int | None]) -> None:
    """A daemon thread: each LF-terminated line of stdin (bytes, so U+2028 is not a line end; the
    length alone of one over ``MAX_COMMAND_BYTES``), then None at EOF. It reads the file descriptor itself: a thread blocked inside ``sys.stdin.buffer``
    holds its lock, and the interpreter aborts when it exits on a signal meanwhile."""

    def put(item: bytes | int | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def read() -> None:
        # the pieces of the line still arriving, joined once it ends (adding each chunk to one bytes
        # object and splitting it again made a 50 MB line cost 29 s); a line past the largest
        # command is not kept: its length is put instead, and the server answers it in one line
        pieces: list[bytes] = []
        size = 0

        def end_line(last: bytes) -> None:
            nonlocal pieces, size
            size += len(last)
            put(b"".join([*pieces, last]) if size <= MAX_COMMAND_BYTES else size)
            pieces, size = [], 0

        try:
            while chunk := os.read(0, 65536):
                *ended, rest = chunk.split(b"\n")
                for part in ended:
                    end_line(part)
                size += len(rest)
                if size <= MAX_COMMAND_BYTES:
                    pieces.append(rest)
                else:
                    pieces = []
        except OSError:
            pass
        if size:
            end_line(b"")
        put(None)

    threading.Thread(target=read, name="rpc-stdin", daemon=True).start()


async def serve(agent: Agent, lines: JsonLines, scoped_models: Sequence[str] = ()) -> int:
    server = RpcServer(agent, lines, scoped_models)
    server.watch_queue()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | int | None] = asyncio.Queue()
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            os._exit(130)  # a second signal does not wait: every entry written so far is on disk
        queue.put_nowait(None)

    with contextlib.suppress(NotImplementedError, RuntimeError):
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(number, on_signal)
    _read_stdin(loop, queue)
    try:
        while True:
            raw = await queue.get()
            if raw is None or lines.closed:
                break
            if isinstance(raw, int):
                server.refuse_long_line(raw)
                continue
            await server.handle_line(raw)
        await server.stop()
        for task in list(server.pending):
            with contextlib.suppress(Exception):
                await task
        return 0
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                loop.remove_signal_handler(number)
        await server.agent.aclose()
        if server.agent is not agent:
            await agent.aclose()
        server.agent.session.close()


def run_rpc(args: argparse.Namespace) -> int:
    err = for_terminal(sys.stderr)
    try:
        # print mode's settings, but its permission policy: there nobody can be asked, here the
        # client is (RpcServer puts the questions to it), so its "stdin is not a terminal" is wrong
        config, _ = load_settings(argparse.Namespace(**{**vars(args), "permissions": "auto"}), True)
        mode = mode_from_config(getattr(args, "permissions", None), config, default=PermissionMode.AUTO)
        permissions = Permissions(mode)
    except (ConfigError, PermissionModeError) as e:
        print(redacted(str(e) if str(e).startswith("agent-tui") else f"agent-tui: {e}"), file=err)
        return 1
    cwd = os.getcwd()
    try:
        resources, _ = load_and_expand(args, config, cwd, "")
    except (PromptFileError, SkillError) as e:
        print(redacted(f"agent-tui: {e}"), file=err)
        return 1
    try:
        session = open_session(args, cwd)
    except StoreError as e:
        print(redacted(f"agent-tui: {e}"), file=err)
        return 1
    try:
        if session.note:
            print(f"agent-tui: {session.note}", file=err)
        elsewhere = cwd_notice(session.cwd, cwd)
        if elsewhere:
            print(f"agent-tui: {elsewhere}", file=err)
        if session.read_only:
            print(f"agent-tui: {session.read_only_reason or 'read-only session'}", file=err)
            return 1
        if getattr(args, "leaf", None):
            session.branch(args.leaf)
        agent = headless_agent(args, session, config, permissions, cwd, resources)
        where = (
            "an in-memory session (--no-session)" if session.store.ephemeral else f"session {session.path}"
        )
        print(f"agent-tui: rpc on {where}", file=err, flush=True)
        scoped = getattr(args, "scoped_models", None) or ()
        return asyncio.run(serve(agent, JsonLines(sys.stdout.buffer), scoped))
    except StoreError as e:
        print(redacted(f"agent-tui: {e}"), file=err)
        return 1
    finally:
        session.close()


__all__ = ["CommandError", "RpcServer", "run_rpc", "serve"]

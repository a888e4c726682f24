"""The ``agent-tui acp`` process: its command line, and the protocol on stdin and stdout.

stdout carries only the protocol: file descriptor 1 is pointed at stderr before anything runs,
so nothing a library or a child process prints can corrupt the stream. The agent itself is
:class:`agent_tui.acp.server.AgentTuiAcp`, run by the SDK's ``run_agent`` until stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any, BinaryIO, cast

from acp import run_agent

from agent_tui.acp.server import AgentTuiAcp, Options
from agent_tui.agent.prompt_files import PromptFlags, add_resource_arguments
from agent_tui.terminal_text import visible_line


def protocol_stdout() -> BinaryIO:
    """The real stdout, for the protocol alone; fd 1 becomes a copy of stderr from now on."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


class _WriteProtocol(asyncio.streams.FlowControlMixin):
    pass


async def stdio_streams(out: BinaryIO) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(_WriteProtocol, out)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def serve(options: Options, out: BinaryIO) -> None:
    agent = AgentTuiAcp(options)
    reader, writer = await stdio_streams(out)
    try:
        await run_agent(cast(Any, agent), writer, reader)
    finally:
        await agent.shutdown()


def add_parser(sub: Any) -> None:
    p = sub.add_parser("acp", help="an Agent Client Protocol agent on stdio (Zed, Toad, JetBrains)")
    p.add_argument("--provider", help="the provider (agent-tui --list-models shows them with their models)")
    p.add_argument(
        "--model", help="model: provider/id, an unambiguous part of an id, with :level for thinking"
    )
    p.add_argument("--base-url", help="the API's base URL")
    p.add_argument("--thinking", help="thinking level")
    p.add_argument(
        "--permissions",
        choices=("ask", "accept-edits", "plan", "auto", "read-only"),
        help="ask the editor before commands and file edits (the default), accept-edits, "
        "plan, auto, or read-only",
    )
    p.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "off"),
        help="where bash and hooks run (bubblewrap; default workspace-write: docs/SANDBOX.md)",
    )
    p.add_argument("--sandbox-network", action="store_true", help="let sandboxed commands reach the network")
    p.add_argument("--session-dir", help="where sessions are stored (default: the user data dir)")
    p.add_argument(
        "--trust-project",
        action="store_true",
        help="load this folder's own MCP servers (.mcp.json) and hooks (the editor's servers need no trust)",
    )
    p.add_argument("--system-prompt", metavar="TEXT|@FILE", help="replace the default system prompt")
    p.add_argument(
        "--append-system-prompt",
        metavar="TEXT|@FILE",
        action="append",
        default=[],
        help="add to the system prompt",
    )
    p.add_argument("-nc", "--no-context-files", action="store_true", help="leave AGENTS.md and CLAUDE.md out")
    add_resource_arguments(p)


class OneLineFormatter(logging.Formatter):
    """A log record as one line: the ACP SDK logs each line it cannot parse (``xx``, 100,000 ``[``)
    with its traceback; the editor's log gets the message and the error's kind and text instead."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{record.levelname}:{record.name}:{record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            line += f": {type(error).__name__}: {error}"
        return visible_line(line)[:1000]


def run(args: argparse.Namespace) -> int:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter())
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    options = Options(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        thinking=args.thinking,
        permissions=args.permissions,
        session_dir=args.session_dir,
        trust_project=args.trust_project,
        prompt_flags=PromptFlags.of(args),
    )
    out = protocol_stdout()
    try:
        asyncio.run(serve(options, out))
    except KeyboardInterrupt:
        return 130
    return 0


__all__ = ["add_parser", "protocol_stdout", "run", "serve"]

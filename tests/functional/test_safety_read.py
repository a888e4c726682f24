"""Read (and grep) of special files answer at once, and an aborted tool never keeps
the process alive (a FIFO read used to hang forever, survive Ctrl+C and keep the session's lock)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.agent.tools.base import ToolContext, ToolError
from agent_tui.agent.tools.grep import GrepTool
from agent_tui.agent.tools.read import ReadTool
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.timeout(60)


async def read(path: str, cwd: Path) -> str:
    ctx = ToolContext(str(cwd), asyncio.Event())
    with pytest.raises(ToolError) as caught:
        await asyncio.wait_for(ReadTool().execute({"path": path}, ctx), 5)
    return str(caught.value)


async def test_special_files_are_refused_in_one_line(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    # reading either would never end (the test's timeout says so); refused, they are not opened
    assert await read("/dev/zero", tmp_path) == (
        "Not a regular file: /dev/zero is a character device; read only reads files"
    )
    assert await read("pipe", tmp_path) == (
        f"Not a regular file: {tmp_path / 'pipe'} is a FIFO (named pipe); read only reads files"
    )
    assert await read(".", tmp_path) == f"EISDIR: illegal operation on a directory, read '{tmp_path}'"


async def test_grep_skips_fifos_and_devices(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "a.txt").write_text("needle\n")
    ctx = ToolContext(str(tmp_path), asyncio.Event())
    hits = await asyncio.wait_for(GrepTool().execute({"pattern": "needle"}, ctx), 5)
    assert hits.content[0]["text"] == "a.txt:1: needle"
    direct = await asyncio.wait_for(GrepTool().execute({"pattern": "x", "path": "pipe"}, ctx), 5)
    assert direct.content[0]["text"] == "No matches found"


SLOW_TOOL = r"""
import asyncio, sys, threading
from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.tools.base import Tool, ToolResult
from agent_tui.agent.tools.base import in_thread
from agent_tui.config import Config, RetryPolicy
from agent_tui.store.session import Session

STARTED = asyncio.Event()

class Stuck(Tool):
    name = "stuck"
    parameters = {"type": "object", "properties": {}}
    async def execute(self, args, ctx):
        print("started", flush=True)
        STARTED.set()
        await in_thread(threading.Event().wait)  # blocked for good, as a read stuck in the kernel
        return ToolResult.text("never")

session = Session.create(sys.argv[2], sys.argv[2])
config = Config(provider="anthropic", model="claude-sonnet-5-5", api_key="test-key-0123456789",
                base_url=sys.argv[1], retry=RetryPolicy(0, 0.01, 0.01))
loop = AgentLoop(session, make_provider(config), [Stuck()], config=config, cwd=sys.argv[2])
loop.tool_grace = 0.2

async def main():
    async def abort_soon():
        await STARTED.wait()
        await asyncio.sleep(0.1)
        loop.abort()
    asyncio.ensure_future(abort_soon())
    events = [e async for e in loop.run("go")]
    await loop.provider.aclose()
    print(type(events[-1]).__name__, events[-1].stop_reason, flush=True)

asyncio.run(main())
session.close()
print("exited", flush=True)
"""


@pytest.mark.slow  # another process
def test_an_aborted_tool_stuck_in_a_thread_does_not_keep_the_process(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.push(anthropic_stream(tool_use("toolu_1", "stuck", {})))
    result = subprocess.run(
        [sys.executable, "-c", SLOW_TOOL, server.anthropic_base_url, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=40,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["started", "TurnDone aborted", "exited"]  # it ended, not killed


@pytest.mark.slow  # another process
def test_print_mode_read_of_a_fifo_answers_at_once(server: FakeModelServer, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / "pipe")
    server.push(
        anthropic_stream(tool_use("toolu_1", "read", {"path": "pipe"})),
        anthropic_stream(text("It is a pipe.")),
    )
    config = tmp_path / "config.toml"
    config.write_text("[retry]\nbase_delay = 0.01\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))}
    env.update(
        AGENT_TUI_HOME=str(tmp_path / "home"),
        AGENT_TUI_CONFIG=str(config),
        ANTHROPIC_API_KEY="test-key-0123456789",
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
    )
    result = subprocess.run(
        [sys.executable, "-m", "agent_tui", "-p", "read it", "--permissions", "read-only"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=40,
    )
    assert result.returncode == 0 and result.stdout == "It is a pipe.\n", result.stderr
    refusal = server.requests[1].body["messages"][-1]["content"][0]
    assert refusal["is_error"] and "is a FIFO (named pipe)" in refusal["content"][0]["text"]


async def test_a_line_without_end_costs_its_shown_part_not_its_length(tmp_path: Path) -> None:
    """A file of one 300 MB line (sparse: no disk) read whole held the line in memory (a 3 GB one
    took 2.24 GB); now a line costs what can be shown of it (50 KB) plus one 64 KB piece. 40 MB
    shows it (five times the bound) at an eighth of the 300 MB's scan."""
    import tracemalloc

    big = tmp_path / "one-line.bin"
    with big.open("wb") as f:
        f.truncate(40 * 1024 * 1024)  # NUL bytes, no newline
    (tmp_path / "two.txt").write_bytes(b"x" * (200 * 1024) + b"\nsecond\n")
    ctx = ToolContext(str(tmp_path), asyncio.Event())
    tracemalloc.start()
    try:
        result = await asyncio.wait_for(ReadTool().execute({"path": "one-line.bin"}, ctx), 60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"peak {peak:,} bytes"
    assert result.content[0]["text"].startswith("[Line 1 is 40.0MB, exceeds 50.0KB limit.")
    # a long line followed by others: its length is still counted whole, the next lines read
    second = await ReadTool().execute({"path": "two.txt", "offset": 2}, ctx)
    assert second.content[0]["text"] == "second\n"
    first = await ReadTool().execute({"path": "two.txt"}, ctx)
    assert first.content[0]["text"].startswith("[Line 1 is 200.0KB, exceeds 50.0KB limit.")

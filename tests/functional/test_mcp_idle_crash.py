"""An MCP server that dies while idle (the real mcp-server-time, killed between turns) is one line
when it happens, not at its next call; the next call starts it again, or fails saying why."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.events import Notice
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.trust import TrustStore
from tests.support.agent_support import Harness, until
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.print_env import Env
from tests.support.processes import children

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]  # real servers, started more than once

PY = sys.executable
CALL = "mcp__time__get_current_time"


def time_server(tmp: Path) -> tuple[dict[str, Any], Path]:
    """mcp-server-time behind a small launcher that refuses to start while ``blocked`` exists
    (so a restart can be made to fail). Returns (its config, the blocking file)."""
    blocked = tmp / "time-server-blocked"
    launcher = tmp / "time_server.py"
    launcher.write_text(
        "import os, runpy, sys\n"
        f"if os.path.exists({str(blocked)!r}):\n"
        "    print('time server: not allowed to start', file=sys.stderr); sys.exit(3)\n"
        "runpy.run_module('mcp_server_time', run_name='__main__')\n"
    )
    return {"command": PY, "args": [str(launcher)], "startup_timeout": 60}, blocked


def kill_the_server() -> int:
    (pid,) = children("time_server.py")
    os.kill(pid, signal.SIGKILL)
    return pid


async def test_an_idle_crash_is_said_when_it_happens_and_the_next_call_starts_it_again(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    said: list[str] = []
    spec, blocked = time_server(anthropic_harness.tmp)
    ext = Extensions(
        str(anthropic_harness.workdir),
        {"mcp": {"wait": 60, "servers": {"time": spec}}},
        home=anthropic_harness.tmp / "home",
        trust_store=TrustStore(anthropic_harness.tmp / "trust.json"),
        notify=said.append,
    )
    anthropic_harness.loop.extensions = ext
    server.push(
        anthropic_stream(tool_use("toolu_1", CALL, {"timezone": "UTC"})), anthropic_stream(text("noon"))
    )
    try:
        await anthropic_harness.run("what time is it?")
        assert anthropic_harness.messages("toolResult")[0]["isError"] is False
        first = kill_the_server()
        await until(lambda: said, "the line about the dead server")  # no call, no turn: said anyway
        assert said == [
            'MCP server "time" failed: the server exited while idle (its next call starts it again)'
        ]
        assert ext.mcp is not None and ext.mcp.servers["time"].state == "failed"

        server.push(
            anthropic_stream(tool_use("toolu_2", CALL, {"timezone": "UTC"})),
            anthropic_stream(text("still noon")),
        )
        events = await anthropic_harness.run("and now?")
        again = anthropic_harness.messages("toolResult")[-1]
        assert again["isError"] is False and json.loads(again["content"][0]["text"])["timezone"] == "UTC"
        assert CALL in {t["name"] for t in server.requests[2].body["tools"]}  # still offered while down
        assert ext.mcp.servers["time"].state == "ready" and children("time_server.py") != [first]
        assert not [e for e in events if isinstance(e, Notice)] and len(said) == 1

        # dead again, and this time it cannot start: the call fails with one error saying why
        kill_the_server()
        await until(lambda: len(said) == 2, "the second line")
        blocked.write_text("")
        server.push(
            anthropic_stream(tool_use("toolu_3", CALL, {"timezone": "UTC"})),
            anthropic_stream(text("no time")),
        )
        await anthropic_harness.run("once more?")
        failed = anthropic_harness.messages("toolResult")[-1]
        assert failed["isError"] is True
        error = failed["content"][0]["text"]
        assert error.startswith(
            'MCP server "time" stopped (the server exited while idle) and did not start again:'
        )
        assert "time server: not allowed to start" in error and "\n" not in error
    finally:
        await ext.close()


def test_print_mode_says_it_on_stderr_while_the_model_streams(
    server: FakeModelServer, tmp_path: Path
) -> None:
    """The server dies while print mode waits on the model: the line is on stderr before the reply
    ends (the model's second answer is held until the line is there)."""
    import subprocess
    import threading

    env = Env(tmp_path, server)
    spec, _ = time_server(tmp_path)
    config = Path(env.env["AGENT_TUI_CONFIG"])
    config.write_text(
        config.read_text()
        + f"[mcp]\nwait = 60\n[mcp.servers.time]\ncommand = {json.dumps(PY)}\n"
        + f"args = {json.dumps(spec['args'])}\nstartup_timeout = 60\n"
    )
    gate = threading.Event()
    held = anthropic_stream(text("It is noon."))
    held.gate, held.gate_at = gate, 1
    server.push(anthropic_stream(tool_use("toolu_1", CALL, {"timezone": "UTC"})), held)
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as err:
        process = subprocess.Popen(
            [PY, "-m", "agent_tui", "-p", "what time is it?"],
            cwd=env.work,
            env=env.env,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        try:
            line = 'agent-tui: MCP server "time" failed: the server exited while idle'
            for _ in range(1200):  # the tool call ran; the model's reply is being held
                if len(server.requests) == 2:
                    break
                threading.Event().wait(0.05)
            assert len(server.requests) == 2, stderr.read_text()
            grandchildren = children("time_server.py", process.pid)
            assert len(grandchildren) == 1, grandchildren
            os.kill(grandchildren[0], signal.SIGKILL)
            for _ in range(1200):
                if line in stderr.read_text():
                    break
                threading.Event().wait(0.05)
            assert line in stderr.read_text()  # said while the reply was still held
            gate.set()
            out, _ = process.communicate(timeout=60)
        finally:
            gate.set()
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 0 and out.strip() == "It is noon."
    assert stderr.read_text().count("MCP server") == 1

"""A running bash's output as it comes: pi's ``tool_execution_update`` in ``--mode json`` and
``--mode rpc`` (``partialResult`` = the output's tail so far, as pi's bash tool reports it), and
in-progress tool call updates over ACP; each through the real process, against the fake server."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import ContentToolCallContent, TextContentBlock, ToolCallProgress

from tests.support.acp_editor import AcpEnv, EditorClient
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.pi_stream import check_stream, of_type
from tests.support.print_env import Env
from tests.support.rpc_client import RpcClient

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

# Three lines 0.4 s apart: longer than the 100 ms between two updates, so the first line is
# reported before the command ends, however loaded the machine.
SLOW = "for i in 1 2 3; do echo line$i; sleep 0.4; done"
ALL = "line1\nline2\nline3\n"


def bash_turn(server: FakeModelServer) -> None:
    server.push(
        anthropic_stream(tool_use("toolu_s", "bash", {"command": SLOW})),
        anthropic_stream(text("It counted to three.")),
    )


def texts(updates: list[dict[str, Any]]) -> list[str]:
    return ["".join(b["text"] for b in u["partialResult"]["content"]) for u in updates]


def check_updates(events: list[dict[str, Any]]) -> None:
    """pi's bash updates: an empty one first, then the output so far, growing, ending with all of it."""
    check_stream(events)
    updates = of_type(events, "tool_execution_update")
    assert updates and all(u["toolCallId"] == "toolu_s" and u["toolName"] == "bash" for u in updates)
    assert all(u["args"] == {"command": SLOW} for u in updates)
    assert updates[0]["partialResult"] == {"content": []}
    seen = texts(updates)[1:]
    assert all(b.startswith(a) for a, b in itertools.pairwise(seen)), seen
    assert seen[-1] == ALL and any(t and t != ALL for t in seen), seen  # some came before the end
    (end,) = of_type(events, "tool_execution_end")
    assert end["result"]["content"][0]["text"] == ALL
    assert events.index(updates[-1]) < events.index(end)


def test_json_mode_streams_a_running_bash_output(tmp_path: Path, server: FakeModelServer) -> None:
    env = Env(tmp_path, server)
    bash_turn(server)
    result = env.run("-p", "count to three", "--mode", "json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.split("\n")[1:-1]]
    check_updates(events)


def test_rpc_mode_streams_a_running_bash_output_also_after_a_session_switch(
    tmp_path: Path, server: FakeModelServer
) -> None:
    env = Env(tmp_path, server)
    rpc = RpcClient(["--session", str(tmp_path / "rpc.jsonl")], env.work, env.env)
    try:
        assert rpc.call({"type": "new_session"})["success"]
        bash_turn(server)
        assert rpc.call({"type": "prompt", "message": "count to three"})["success"]
        rpc.wait_for(lambda r: r["type"] == "agent_settled")
        code, err = rpc.finish()
    finally:
        rpc.kill()
    assert code == 0, err
    check_updates([r for r in rpc.records if r["type"] != "response"])


async def test_acp_shows_a_running_bash_output_before_it_completes(
    tmp_path: Path, server: FakeModelServer
) -> None:
    env = AcpEnv(tmp_path, server)
    bash_turn(server)
    client = EditorClient()
    async with env.agent(client, args=("--permissions", "auto")) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("count to three")])
    calls = client.tool_updates("toolu_s")
    running = [
        c.content.text
        for u in calls
        if isinstance(u, ToolCallProgress) and u.status == "in_progress" and u.content
        for c in u.content
        if isinstance(c, ContentToolCallContent) and isinstance(c.content, TextContentBlock)
    ]
    assert running and running[0].startswith("line1\n") and running[-1] == ALL, running
    assert any(t != ALL for t in running), running  # the editor saw output before the end
    assert calls[-1].status == "completed"

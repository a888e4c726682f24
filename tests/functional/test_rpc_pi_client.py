"""pi 1.6's own RpcClient (its TypeScript client, run by node) drives ``agent-tui --mode rpc``: what
a tool written for pi's RPC mode does must work against agent-tui, over real stdio, against the
fake model server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.test_pi_compat import Pi, pi  # noqa: F401  (pi: the fixture that installs pi)
from tests.functional.test_rpc_pi_agreement import rewriting_hook
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.pi_stream import check_stream, of_type, text_of
from tests.support.print_env import Env

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

SCRIPT = Path(__file__).parents[1] / "support" / "pi_compat" / "pi_rpc_client.mjs"


def test_pis_rpc_client_prompts_runs_bash_and_reads_state(
    tmp_path: Path,
    server: FakeModelServer,
    pi: Pi,  # noqa: F811  (the fixture imported above)
) -> None:
    env = Env(tmp_path, server)
    (env.work / "a.txt").write_text("alpha\n")
    server.push(
        anthropic_stream(text("Reading.\n"), tool_use("toolu_1", "read", {"path": "a.txt"})),
        anthropic_stream(text("It says alpha.")),
        anthropic_stream(text("Still alpha.")),
    )
    session = tmp_path / "pi-client.jsonl"
    proc = subprocess.run(
        [pi.node, str(SCRIPT), str(session)],
        cwd=env.work,
        env={**env.env, "AGENT_TUI_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0 and "error" not in out, out.get("error", proc.stderr)

    for events in out["events"]:  # collectEvents: everything up to agent_settled
        check_stream(events)
        assert events[-1] == {"type": "agent_settled", "aborted": False}
    first, second = out["events"]
    assert [
        text_of(r["message"]) for r in of_type(first, "message_end") if r["message"]["role"] == "assistant"
    ] == [
        "Reading.\n",
        "It says alpha.",
    ]
    assert of_type(first, "tool_execution_end")[0]["result"]["content"] == [
        {"type": "text", "text": "alpha\n"}
    ]
    assert out["bash"] == {"output": "from bash\n", "exitCode": 0, "cancelled": False, "truncated": False}
    assert out["lastText"] == "Still alpha."
    assert out["state"]["sessionFile"] == str(session) and out["state"]["isStreaming"] is False
    roles = [m["role"] for m in out["messages"]]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant", "user", "user", "assistant"]
    # the bash output reached the model with the second prompt, as pi sends it
    sent = server.requests[-1].body["messages"]
    assert any("from bash" in json.dumps(m) for m in sent)
    ids = [json.loads(line)["id"] for line in session.read_text().splitlines()[1:]]
    # pi's nested tree: a straight branch, each node the only child of the one before
    tree, walked = out["tree"]["tree"], []
    while tree:
        (node,) = tree
        walked.append(node["entry"]["id"])
        tree = node["children"]
    assert walked == ids and out["tree"]["leafId"] == ids[-1]
    assert [m["text"] for m in out["forkMessages"]] == ["what is in a.txt?", "and now?"]
    assert out["models"] and all(
        {"id", "provider", "api", "contextWindow"} <= m.keys() for m in out["models"]
    )
    assert out["commands"] == []
    assert out["cycled"]["isScoped"] is False and out["cycled"]["model"]["id"] != out["state"]["model"]["id"]
    assert Path(out["html"]["path"]).read_text().startswith("<!DOCTYPE html>")
    assert out["cloned"]["cancelled"] is False
    assert out["clonedState"]["sessionFile"] not in (str(session), out["state"]["sessionFile"])
    assert out["clonedState"]["sessionFile"] == out["cloned"]["sessionFile"]
    assert text_of(second[-3]["message"]) == "Still alpha."


AGREEMENT = Path(__file__).parents[1] / "support" / "pi_compat" / "pi_rpc_agreement.mjs"


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def test_pis_rpc_client_reads_pis_types_on_a_local_model(
    tmp_path: Path,
    server: FakeModelServer,
    pi: Pi,  # noqa: F811  (the fixture imported above)
) -> None:
    """A model without a price and without reasoning (a local one), --permissions ask and a hook
    that rewrites the command: what pi's client reads is what pi's types promise."""
    env = Env(tmp_path, server)
    rewriting_hook(env, decision=None)  # rewrites, and leaves the question to the policy
    slow = anthropic_stream(tool_use("toolu_1", "bash", {"command": "echo original"}))
    slow.delay = 0.2  # the first delta comes well after the request is sent
    server.push(slow, anthropic_stream(text("It printed rewritten."), input_tokens=500, output_tokens=40))
    session = tmp_path / "pi-types.jsonl"
    proc = subprocess.run(
        [pi.node, str(AGREEMENT), str(session), "--model", "anthropic/local-model", "--permissions", "ask"],
        cwd=env.work,
        env={**env.env, "AGENT_TUI_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=150,
    )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0 and "error" not in out, out.get("error", proc.stderr)

    # thinking: clamped as pi clamps it ("high" on a model with only "off")
    assert out["levels"] == ["off"] and out["afterHigh"]["thinkingLevel"] == "off"
    assert out["stateAfter"]["thinkingLevel"] == "off" and out.get("cycled") is None
    # costs: numbers everywhere, model.cost always there
    for state in (out["afterHigh"], out["stateAfter"]):
        cost = state["model"]["cost"]
        assert set(cost) == {"input", "output", "cacheRead", "cacheWrite"} and all(
            map(is_number, cost.values())
        )
    assert all(is_number(v) for m in out["models"] for v in m["cost"].values())
    for stats in (out["statsBefore"], out["statsAfter"]):
        assert is_number(stats["cost"]) and stats["cost"] == 0
        assert all(map(is_number, stats["tokens"].values()))
    assert out["statsAfter"]["tokens"]["input"] > 0

    # collectEvents keeps every record but responses; the question is not a session event
    events = [r for r in out["events"] if r["type"] != "extension_ui_request"]
    check_stream(events)  # an assistant message_start carries its message's timestamp
    starts = [r for r in of_type(events, "message_start") if r["message"]["role"] == "assistant"]
    ends = [r for r in of_type(events, "message_end") if r["message"]["role"] == "assistant"]
    assert [s["message"]["timestamp"] for s in starts] == [e["message"]["timestamp"] for e in ends]
    # the command as the hook rewrote it: in the question, in tool_execution_start, in what ran
    (question,) = out["questions"]
    assert question["method"] == "select" and "echo rewritten" in question["title"]
    (started,) = of_type(events, "tool_execution_start")
    assert started["args"] == {"command": "echo rewritten"}
    (ended,) = of_type(events, "tool_execution_end")
    assert ended["isError"] is False and ended["result"]["content"] == [
        {"type": "text", "text": "rewritten\n"}
    ]
    assert text_of(ends[-1]["message"]) == "It printed rewritten."

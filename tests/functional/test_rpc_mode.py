"""``agent-tui --mode rpc``: the real command in a subprocess, driven over its stdin and stdout as a pi
RPC client would, against the fake model server."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.pi_stream import check_stream, of_type, text_of
from tests.support.print_env import KEY, Env
from tests.support.rpc_client import Record, RpcClient

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    env = Env(tmp_path, server)
    (tmp_path / "config.toml").write_text(
        "[retry]\nbase_delay = 0.01\n\n[compaction]\nkeep_recent_tokens = 5\nreserve_tokens = 1000\n"
    )
    return env


@pytest.fixture
def session_file(env: Env) -> Path:
    return env.tmp / "rpc.jsonl"


@pytest.fixture
def rpc(env: Env, session_file: Path) -> Iterator[RpcClient]:
    client = RpcClient(["--session", str(session_file)], env.work, env.env)
    yield client
    client.kill()


def events(records: list[Record]) -> list[Record]:
    """The session events among ``records`` (responses and bash output left out)."""
    return [r for r in records if r["type"] not in ("response", "bash_execution_update")]


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def settle(rpc: RpcClient) -> Record:
    return rpc.wait_for(lambda r: r["type"] == "agent_settled")


def test_every_command_answers_with_its_id(
    rpc: RpcClient, env: Env, server: FakeModelServer, session_file: Path
) -> None:
    # (a file long enough that the compaction below folds more than its summary adds)
    (env.work / "a.txt").write_text("alpha\n" + "a line of the file that the summary folds\n" * 60)
    server.push(
        anthropic_stream(text("Reading."), tool_use("toolu_1", "read", {"path": "a.txt"})),
        anthropic_stream(text("It says alpha.")),
        anthropic_stream(text("Second answer.")),
    )
    state = rpc.call({"type": "get_state"})
    assert state["success"] and state["data"]["sessionFile"] == str(session_file)
    assert state["data"]["isStreaming"] is False and state["data"]["messageCount"] == 0

    started = rpc.call({"type": "prompt", "message": "what is in a.txt?"})
    assert started["data"] == {"disposition": "started"}
    assert settle(rpc) == {"type": "agent_settled", "aborted": False}
    rpc.call({"type": "prompt", "message": "and again?"})
    settle(rpc)

    messages = rpc.call({"type": "get_messages"})["data"]["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]
    context = rpc.call({"type": "get_context"})["data"]
    assert context["messages"] == messages
    file_entries = entries(session_file)
    assert [s["entryId"] for s in context["sources"]] == [
        e["id"] for e in file_entries if e["type"] == "message"
    ]
    tree = rpc.call({"type": "get_tree", "flat": True})["data"]
    assert [n["id"] for n in tree["nodes"]] == [e["id"] for e in file_entries]
    assert tree["leafId"] == file_entries[-1]["id"]
    assert rpc.call({"type": "get_entries", "since": file_entries[-2]["id"]})["data"]["entries"] == [
        file_entries[-1]
    ]
    assert rpc.call({"type": "get_last_assistant_text"})["data"] == {"text": "Second answer."}
    stats = rpc.call({"type": "get_session_stats"})["data"]
    assert (stats["userMessages"], stats["assistantMessages"], stats["toolCalls"], stats["toolResults"]) == (
        2,
        3,
        1,
        1,
    )
    assert (
        stats["tokens"]["input"] == 300 and stats["tokens"]["output"] == 60
    )  # the fake server's 100 + 20 per call
    assert 0 < stats["contextUsage"]["tokens"] < stats["contextUsage"]["contextWindow"]

    # compact: compaction_start / compaction_end, then the response with the result
    server.push(anthropic_stream(text("## Goal\nRead a.txt.")))
    compacted = rpc.call({"type": "compact", "customInstructions": "the file"})
    assert compacted["success"], compacted
    assert compacted["data"]["summary"].startswith("## Goal\nRead a.txt.")
    (start,) = of_type(rpc.records, "compaction_start")
    (end,) = of_type(rpc.records, "compaction_end")
    assert start["reason"] == "manual" and end["result"] == compacted["data"] and end["aborted"] is False
    assert rpc.records.index(end) < rpc.records.index(compacted)
    assert entries(session_file)[-1]["type"] == "compaction"

    # edit: hide, replace, restore the second prompt, each one appended context_edit
    second = [e["id"] for e in file_entries if e.get("message", {}).get("role") == "user"][1]
    hidden = rpc.call({"type": "edit", "entryId": second, "action": "hide"})
    assert hidden["success"], hidden
    sources = rpc.call({"type": "get_context"})["data"]["sources"]
    assert second not in [s["entryId"] for s in sources]
    replaced = rpc.call({"type": "edit", "entryId": second, "action": "replace", "content": "reworded"})
    assert replaced["success"]
    context = rpc.call({"type": "get_context"})["data"]
    at = [s["entryId"] for s in context["sources"]].index(second)
    assert context["sources"][at]["status"] == "replaced" and text_of(context["messages"][at]) == "reworded"
    assert rpc.call({"type": "edit", "entryId": second, "action": "restore"})["success"]
    edits = [e for e in entries(session_file) if e["type"] == "context_edit"]
    assert [e["id"] for e in edits] == [hidden["data"]["editId"], replaced["data"]["editId"], edits[2]["id"]]

    # branch back to the first answer
    first_answer = [e["id"] for e in file_entries if e.get("message", {}).get("role") == "assistant"][1]
    branched = rpc.call({"type": "branch", "entryId": first_answer})["data"]
    assert branched["leafId"] == branched["markerId"] and branched["markerId"] is not None
    assert [m["role"] for m in rpc.call({"type": "get_messages"})["data"]["messages"]][-1] == "assistant"
    assert "and again?" not in json.dumps(rpc.call({"type": "get_messages"})["data"])

    # model and thinking level: recorded with the next call
    model = rpc.call({"type": "set_model", "provider": "anthropic", "modelId": "claude-haiku-4-5"})
    assert model["data"]["id"] == "claude-haiku-4-5" and model["data"]["provider"] == "anthropic"
    assert rpc.call({"type": "set_thinking_level", "level": "low"})["success"]
    assert of_type(rpc.records, "thinking_level_changed") == [
        {"type": "thinking_level_changed", "level": "low"}
    ]
    state = rpc.call({"type": "get_state"})["data"]
    assert state["model"]["id"] == "claude-haiku-4-5" and state["thinkingLevel"] == "low"
    bad_level = rpc.call({"type": "set_thinking_level", "level": "enormous"})
    assert bad_level["success"] is False and "enormous" in bad_level["error"]

    # bash: output streams as bash_execution_update with the command's id, then the response
    bash = rpc.call({"type": "bash", "command": "echo one; echo two"})
    assert bash["data"] == {"output": "one\ntwo\n", "exitCode": 0, "cancelled": False, "truncated": False}
    updates = [r for r in rpc.records if r["type"] == "bash_execution_update" and r.get("id") == bash["id"]]
    assert "".join(u["delta"] for u in updates) == "one\ntwo\n"
    last = entries(session_file)[-1]
    assert last["message"]["role"] == "bashExecution" and last["message"]["command"] == "echo one; echo two"

    # the next prompt records the model and thinking level chosen above
    server.push(anthropic_stream(text("On haiku.")))
    rpc.call({"type": "prompt", "message": "third"})
    settle(rpc)
    kinds = [e["type"] for e in entries(session_file)]
    assert "model_change" in kinds[-6:] and "thinking_level_change" in kinds[-6:]
    assert server.requests[-1].body["model"] == "claude-haiku-4-5"

    # fork at an entry: a new file with the path to it; the process continues in it
    rpc.call({"type": "set_session_name", "name": "rpc  test"})
    assert of_type(rpc.records, "session_info_changed") == [
        {"type": "session_info_changed", "name": "rpc test"}
    ]
    fork_at = rpc.call({"type": "get_state"})["data"]["leafId"]
    forked = rpc.call({"type": "fork", "entryId": fork_at, "position": "at"})["data"]
    fork_path = Path(forked["sessionFile"])
    assert fork_path != session_file and forked["switched"] is True
    header = json.loads(fork_path.read_text().splitlines()[0])
    assert header["parentSession"] == str(session_file.resolve())
    state = rpc.call({"type": "get_state"})["data"]
    assert state["sessionFile"] == str(fork_path) and state["leafId"] == fork_at

    server.push(anthropic_stream(text("In the fork.")))
    rpc.call({"type": "prompt", "message": "fourth"})
    settle(rpc)
    assert "fourth" in fork_path.read_text() and "fourth" not in session_file.read_text()

    code, err = rpc.finish()
    assert code == 0, err
    check_stream(events(rpc.records))
    assert all(
        r["success"] for r in rpc.records if r["type"] == "response" and r["command"] != "set_thinking_level"
    )


def test_events_and_responses_interleave_while_a_turn_streams(
    rpc: RpcClient, server: FakeModelServer, session_file: Path
) -> None:
    lines = "".join(f"line {i}\n" for i in range(120))
    server.push(anthropic_stream(text(lines)).slow(60), anthropic_stream(text("Steered.")))
    rpc.call({"type": "prompt", "message": "talk"})
    rpc.wait_for(
        lambda r: r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta"
    )
    state = rpc.call({"type": "get_state"})
    assert state["data"]["isStreaming"] is True
    # a second prompt mid-turn must say how to queue it
    refused = rpc.call({"type": "prompt", "message": "impatient"})
    assert refused["success"] is False and "streamingBehavior" in refused["error"]
    queued = rpc.call({"type": "prompt", "message": "then say steered", "streamingBehavior": "steer"})
    assert queued["data"] == {"disposition": "queued"}
    # the responses arrived while the reply was still streaming
    after = rpc.wait_for(lambda r: r["type"] == "message_update")
    assert rpc.records.index(state) < rpc.records.index(after)
    settle(rpc)
    code, err = rpc.finish()
    assert code == 0, err
    stream = events(rpc.records)
    check_stream(stream)
    users = [text_of(r["message"]) for r in of_type(stream, "message_end") if r["message"]["role"] == "user"]
    assert users == ["talk", "then say steered"]
    # pi's queue_update: the whole queue after each change, before the steering message goes in
    updates = of_type(stream, "queue_update")
    assert [(u["steering"], u["followUp"]) for u in updates] == [(["then say steered"], []), ([], [])]
    delivered = next(
        r for r in stream if r["type"] == "message_end" and text_of(r["message"]) == "then say steered"
    )
    assert stream.index(updates[1]) < stream.index(delivered)
    sent = server.requests[1].body["messages"]
    assert sent[-1]["content"][0]["text"] == "then say steered"


def test_bad_input_gets_an_error_naming_it_and_the_process_goes_on(rpc: RpcClient) -> None:
    rpc.send("this is not json")
    parse = rpc.wait_for(lambda r: r["type"] == "response")
    assert (
        parse["command"] == "parse"
        and parse["success"] is False
        and "Failed to parse command" in parse["error"]
    )
    rpc.send("[1, 2]")
    assert "JSON object" in rpc.wait_for(lambda r: r["type"] == "response")["error"]
    rpc.send(json.dumps({"id": "n1", "message": "no type"}))
    assert "'type'" in rpc.response("n1")["error"]
    unknown = rpc.call({"type": "teleport"})
    assert unknown["success"] is False and unknown["error"] == "Unknown command: teleport"
    assert unknown["command"] == "teleport"
    missing = rpc.call({"type": "prompt"})
    assert missing["success"] is False and "'message'" in missing["error"]
    wrong = rpc.call({"type": "edit", "entryId": "nope", "action": "hide"})
    assert wrong["success"] is False and "nope" in wrong["error"]
    action = rpc.call({"type": "edit", "entryId": "nope", "action": "explode"})
    assert action["success"] is False and "action" in action["error"]
    rpc.send("\r")  # a blank CRLF line is skipped
    rpc.send(json.dumps({"id": "crlf", "type": "get_state"}) + "\r")
    assert rpc.response("crlf")["success"] is True
    code, err = rpc.finish()
    assert code == 0, err


def test_deep_and_huge_lines_get_one_error_each_mid_turn(
    rpc: RpcClient, server: FakeModelServer, session_file: Path
) -> None:
    """5,000 '[' ended the process with a traceback (and the reply being streamed with it); a 50 MB
    line took 29 s to read (each chunk joined to the line and split again)."""
    server.push(anthropic_stream(text("a slow reply", chunks=6)).slow(20))
    rpc.send({"id": "p", "type": "prompt", "message": "go"})
    assert rpc.response("p")["success"] is True
    rpc.send("[" * 5000)
    deep = rpc.wait_for(lambda r: r["type"] == "response" and r["command"] == "parse")
    assert deep["success"] is False and "nested deeper than 64" in deep["error"]
    rpc.send(json.dumps({"id": "d", "type": "get_state", "x": [[[[[[[[[[0]]]]]]]]]]}))
    assert rpc.response("d")["success"] is True  # ten levels are a command like any other
    rpc.send({"id": "n", "type": "get_state", "deep": json.loads("[" * 70 + "]" * 70)})
    assert "nested deeper than 64" in rpc.wait_for(lambda r: r["type"] == "response")["error"]
    rpc.send('{"type": "get_state", "pad": "' + "x" * (40 * 1024 * 1024) + '"')  # unterminated
    big = rpc.wait_for(lambda r: r["type"] == "response" and r["command"] == "parse", timeout=60)
    assert "Failed to parse command" in big["error"]
    settle(rpc)
    messages = [e["message"] for e in entries(session_file) if e["type"] == "message"]
    assert [m["role"] for m in messages if m["role"] != "system"] == ["user", "assistant"]
    assert messages[-1]["content"][0]["text"] == "a slow reply" and messages[-1]["stopReason"] == "stop"
    code, err = rpc.finish()
    assert code == 0 and "Traceback" not in err, err


def test_eof_mid_turn_aborts_records_and_exits_cleanly(
    rpc: RpcClient, server: FakeModelServer, session_file: Path
) -> None:
    lines = "".join(f"line {i}\n" for i in range(400))
    server.push(anthropic_stream(text(lines)).slow(40))
    rpc.call({"type": "prompt", "message": "talk"})
    rpc.wait_for(
        lambda r: r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta"
    )
    code, err = rpc.finish()  # closes stdin
    assert code == 0, err
    stream = events(rpc.records)
    check_stream(stream)
    assert stream[-1] == {"type": "agent_settled", "aborted": True}
    reply = [r["message"] for r in of_type(stream, "message_end") if r["message"]["role"] == "assistant"][-1]
    assert reply["stopReason"] == "aborted" and len(text_of(reply)) < len(lines)
    written = [e["message"] for e in entries(session_file) if e.get("message", {}).get("role") == "assistant"]
    assert written[-1] == reply


def test_abort_answers_once_the_turn_has_stopped(rpc: RpcClient, server: FakeModelServer) -> None:
    lines = "".join(f"line {i}\n" for i in range(400))
    server.push(anthropic_stream(text(lines)).slow(40))
    rpc.call({"type": "prompt", "message": "talk"})
    rpc.wait_for(lambda r: r["type"] == "message_update")
    aborted = rpc.call({"type": "abort"})
    assert aborted["success"] is True
    settled = next(r for r in rpc.records if r["type"] == "agent_settled")
    assert settled["aborted"] is True and rpc.records.index(settled) < rpc.records.index(aborted)
    assert rpc.call({"type": "get_state"})["data"]["isStreaming"] is False


def test_secrets_never_reach_stdout(rpc: RpcClient, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text(f"the key is {KEY}\n")))
    rpc.call({"type": "prompt", "message": "key?"})
    settle(rpc)
    rpc.call({"type": "bash", "command": f"echo {KEY}"})
    code, _ = rpc.finish()
    assert code == 0
    assert not any(KEY.encode() in line for line in rpc.raw)


def test_sigterm_mid_turn_aborts_records_and_exits_cleanly(
    rpc: RpcClient, server: FakeModelServer, session_file: Path
) -> None:
    lines = "".join(f"line {i}\n" for i in range(400))
    server.push(anthropic_stream(text(lines)).slow(40))
    rpc.call({"type": "prompt", "message": "talk"})
    rpc.wait_for(
        lambda r: r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta"
    )
    rpc.proc.send_signal(signal.SIGTERM)
    code = rpc.proc.wait(30)
    assert code == 0
    rpc.finish()
    stream = events(rpc.records)
    check_stream(stream)
    assert stream[-1] == {"type": "agent_settled", "aborted": True}
    written = [e["message"] for e in entries(session_file) if e.get("message", {}).get("role") == "assistant"]
    assert written[-1]["stopReason"] == "aborted"


def test_new_and_switch_session_and_the_queue_modes(
    rpc: RpcClient, server: FakeModelServer, session_file: Path
) -> None:
    server.push(anthropic_stream(text("First.")), anthropic_stream(text("In the new one.")))
    rpc.call({"type": "prompt", "message": "first-prompt-q1"})
    settle(rpc)
    fresh = rpc.call({"type": "new_session"})["data"]
    new_file = Path(fresh["sessionFile"])
    assert fresh["cancelled"] is False and new_file != session_file and new_file.parent == session_file.parent
    state = rpc.call({"type": "get_state"})["data"]
    assert state["sessionFile"] == str(new_file) and state["messageCount"] == 0
    rpc.call({"type": "prompt", "message": "second-prompt-q2"})
    settle(rpc)
    assert "second-prompt-q2" in new_file.read_text() and "second-prompt-q2" not in session_file.read_text()

    back = rpc.call({"type": "switch_session", "sessionPath": str(session_file)})
    assert back["data"] == {"cancelled": False}
    assert [text_of(m) for m in rpc.call({"type": "get_messages"})["data"]["messages"]][-2:] == [
        "first-prompt-q1",
        "First.",
    ]
    missing = rpc.call({"type": "switch_session", "sessionPath": str(session_file.parent / "nope.jsonl")})
    assert missing["success"] is False and "nope.jsonl" in missing["error"]

    assert rpc.call({"type": "set_steering_mode", "mode": "all"})["success"]
    assert rpc.call({"type": "set_follow_up_mode", "mode": "all"})["success"]
    state = rpc.call({"type": "get_state"})["data"]
    assert state["steeringMode"] == "all" and state["followUpMode"] == "all"
    bad = rpc.call({"type": "set_steering_mode", "mode": "sometimes"})
    assert bad["success"] is False and "'mode'" in bad["error"]
    levels = rpc.call({"type": "get_available_thinking_levels"})["data"]["levels"]
    assert levels[0] == "off" and "high" in levels
    code, err = rpc.finish()
    assert code == 0, err


def test_the_permission_rules_are_listed_and_one_is_removed(rpc: RpcClient, env: Env) -> None:
    """The app's /permissions, as two commands: every rule and its file, then one taken out of it."""
    settings = env.work / ".claude" / "settings.json"
    settings.parent.mkdir()
    rules = {"allow": ["Bash(make:*)"], "deny": ["Bash(rm:*)", "WebFetch(domain:evil.example)"]}
    settings.write_text(json.dumps({"permissions": rules}))
    listed = rpc.call({"type": "get_permission_rules"})["data"]
    shown = str(settings)
    assert listed["rules"] == [
        {"kind": "deny", "rule": "Bash(rm:*)", "source": shown, "applied": True},
        {"kind": "deny", "rule": "WebFetch(domain:evil.example)", "source": shown, "applied": True},
        {
            "kind": "allow",
            "rule": "Bash(make:*)",
            "source": shown,
            "applied": False,
            "why": "this folder is not trusted",
        },
    ]
    assert f"deny   Bash(rm:*)  {shown}" in listed["text"] and listed["warnings"] == []
    removed = rpc.call({"type": "remove_permission_rule", "rule": "Bash(rm:*)"})
    assert removed["data"] == {"removed": [f"removed deny Bash(rm:*) from {shown}"]}
    assert json.loads(settings.read_text())["permissions"]["deny"] == ["WebFetch(domain:evil.example)"]
    assert [r["rule"] for r in rpc.call({"type": "get_permission_rules"})["data"]["rules"]] == [
        "WebFetch(domain:evil.example)",
        "Bash(make:*)",
    ]
    missing = rpc.call({"type": "remove_permission_rule", "rule": "Bash(rm:*)"})
    assert (
        not missing["success"]
        and "no permission rule or allowedDomains entry 'Bash(rm:*)'" in missing["error"]
    )


def test_set_permission_mode_switches_records_and_plan_refuses_a_write(
    rpc: RpcClient, env: Env, server: FakeModelServer, session_file: Path
) -> None:
    server.push(
        anthropic_stream(tool_use("toolu_w", "write", {"path": "p.txt", "content": "x"})),
        anthropic_stream(text("Plan: write p.txt.")),
    )
    assert rpc.call({"type": "get_state"})["data"]["permissionMode"] == "auto"  # print mode's default
    switched = rpc.call({"type": "set_permission_mode", "mode": "plan"})
    assert switched["success"] and switched["data"] == {"mode": "plan"}
    assert rpc.call({"type": "get_state"})["data"]["permissionMode"] == "plan"
    rpc.call({"type": "prompt", "message": "add p.txt"})
    settle(rpc)
    assert not (env.work / "p.txt").exists()
    assert "agent-tui is in plan mode" in json.dumps(server.requests[1].body)
    bad = rpc.call({"type": "set_permission_mode", "mode": "yolo"})
    assert not bad["success"] and "unknown permission mode 'yolo'" in bad["error"]
    modes = [e["data"] for e in entries(session_file) if e.get("customType") == "agent-tui.permission-mode"]
    assert modes == [{"mode": "plan", "previous": "auto"}]

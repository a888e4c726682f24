"""pi 1.6's RPC commands beyond the first set, over the real ``agent-tui --mode rpc`` process and
its stdio, against the fake model server: ``get_tree`` in pi's nested shape (compared with pi's own
``getTree`` on the same file), ``fork`` before a user message, ``clone``, ``get_fork_messages``,
``new_session`` with a parent, ``export_html``, ``get_available_models``, ``cycle_model``,
``cycle_thinking_level``, ``set_auto_compaction``, ``set_auto_retry``, ``abort_retry`` and
``get_commands``, each with pi's request and response shapes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.functional.test_pi_compat import Pi, pi  # noqa: F401  (pi: the fixture that installs pi)
from tests.support.fake_model_server import FakeModelServer, anthropic_error, anthropic_stream, text
from tests.support.print_env import Env
from tests.support.rpc_client import Record, RpcClient
from tests.support.session_builder import Builder, assistant, user

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

PI_TREE = Path(__file__).parents[1] / "support" / "pi_compat" / "pi_tree.mjs"


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    return Env(tmp_path, server)


@pytest.fixture
def session_file(env: Env) -> Path:
    return env.tmp / "rpc.jsonl"


def start(env: Env, session_file: Path, *args: str) -> RpcClient:
    return RpcClient(["--session", str(session_file), *args], env.work, env.env)


@pytest.fixture
def rpc(env: Env, session_file: Path) -> Iterator[RpcClient]:
    client = start(env, session_file)
    yield client
    client.kill()


def settle(rpc: RpcClient) -> Record:
    return rpc.wait_for(lambda r: r["type"] == "agent_settled")


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def ok(response: Record) -> Any:
    assert response["success"], response
    return response.get("data")


@pytest.fixture
def deep_json() -> Iterator[None]:
    """Python's json reads nested documents recursively: pi's tree of a long branch nests deep."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    yield
    sys.setrecursionlimit(old)


def walk(nodes: list[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(depth, node) in pre-order, without recursion."""
    stack = [(0, n) for n in reversed(nodes)]
    while stack:
        depth, node = stack.pop()
        yield depth, node
        stack.extend((depth + 1, c) for c in reversed(node["children"]))


def test_get_tree_is_pis_nested_tree(
    env: Env,
    tmp_path: Path,
    pi: Pi,  # noqa: F811  (the fixture imported above)
) -> None:
    # A tree with branches, a label, an orphan and children out of timestamp order in the file.
    b = Builder()
    first = b.message(user("first"))
    answer = b.message(assistant("one"))
    b.message(user("retry later"), parent=first)
    b.add("label", targetId=answer, label="the answer", timestamp="2026-01-01T00:00:05.000Z")
    b.message(user("early child"), parent=first)
    b.lines[-1]["timestamp"] = "2025-12-31T23:59:00.000Z"  # sorts before its older siblings
    b.message(user("second"), parent=answer)
    orphan = b.message(user("orphan"), parent="missing-parent")
    b.message(assistant("after the orphan"))
    path = b.write(tmp_path / "tree.jsonl")

    rpc = start(env, path)
    try:
        ours = ok(rpc.call({"type": "get_tree"}))
        flat = ok(rpc.call({"type": "get_tree", "flat": True}))
    finally:
        rpc.kill()
    proc = subprocess.run([pi.node, str(PI_TREE), str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert ours == json.loads(proc.stdout)
    # The shape itself: two roots (the file's and the orphan), the label on its node, children
    # oldest first.
    roots = ours["tree"]
    assert [r["entry"]["id"] for r in roots] == [first, orphan]
    labelled = [n for _, n in walk(roots) if "label" in n]
    assert [(n["entry"]["id"], n["label"], n["labelTimestamp"]) for n in labelled] == [
        (answer, "the answer", "2026-01-01T00:00:05.000Z")
    ]
    children = [c["entry"]["message"]["content"] for c in roots[0]["children"]]
    assert children[0] == "early child"
    # The flat list is still there for clients that want it.
    assert len(flat["nodes"]) == len(b.lines) - 1


def test_get_tree_of_a_long_branch_is_written_without_recursion(
    env: Env, tmp_path: Path, deep_json: None
) -> None:
    b = Builder()
    for i in range(1500):  # 3,000 levels: json.dumps gives up at about 1,000
        b.message(user(f"q{i}"))
        b.message(assistant(f"a{i}"))
    path = b.write(tmp_path / "long.jsonl")
    rpc = start(env, path)
    try:
        tree = ok(rpc.call({"type": "get_tree"}, timeout=60))
        state = ok(rpc.call({"type": "get_state"}))  # the process goes on
    finally:
        rpc.kill()
    nodes = list(walk(tree["tree"]))
    assert len(nodes) == 3000 and max(d for d, _ in nodes) == 2999
    assert tree["leafId"] == b.leaf == state["leafId"]


def test_fork_before_a_user_message_clone_and_the_fork_messages(
    rpc: RpcClient, server: FakeModelServer, session_file: Path
) -> None:
    server.push(anthropic_stream(text("One.")), anthropic_stream(text("Two.")))
    for prompt in ("first question", "second question"):
        ok(rpc.call({"type": "prompt", "message": prompt}))
        settle(rpc)
    original = entries(session_file)
    users = [e for e in original if e["type"] == "message" and e["message"]["role"] == "user"]
    assert ok(rpc.call({"type": "get_fork_messages"})) == {
        "messages": [
            {"entryId": users[0]["id"], "text": "first question"},
            {"entryId": users[1]["id"], "text": "second question"},
        ]
    }

    # fork before the second question: pi's answer carries its text; the new file stops before it
    forked = ok(rpc.call({"type": "fork", "entryId": users[1]["id"]}))
    assert forked["text"] == "second question" and forked["cancelled"] is False
    fork_path = Path(forked["sessionFile"])
    assert fork_path.parent == session_file.parent and fork_path != session_file
    assert json.loads(fork_path.read_text().splitlines()[0])["parentSession"] == str(session_file.resolve())
    kept = [e["message"].get("content") for e in entries(fork_path) if e["type"] == "message"]
    assert "second question" not in json.dumps(kept) and "first question" in json.dumps(kept)
    state = ok(rpc.call({"type": "get_state"}))
    assert state["sessionFile"] == str(fork_path)
    messages = ok(rpc.call({"type": "get_messages"}))["messages"]
    assert [m["role"] for m in messages if m["role"] != "system"] == ["user", "assistant"]

    # not a user message: refused, as pi refuses it
    answer = next(e["id"] for e in entries(fork_path) if e.get("message", {}).get("role") == "assistant")
    refused = rpc.call({"type": "fork", "entryId": answer})
    assert refused["success"] is False and "not a user message" in refused["error"]

    # clone: the same branch in a new file, continued there
    before = ok(rpc.call({"type": "get_messages"}))
    cloned = ok(rpc.call({"type": "clone"}))
    assert cloned["cancelled"] is False
    clone_path = Path(cloned["sessionFile"])
    assert clone_path not in (fork_path, session_file)
    assert ok(rpc.call({"type": "get_state"}))["sessionFile"] == str(clone_path)
    assert ok(rpc.call({"type": "get_messages"})) == before
    server.push(anthropic_stream(text("In the clone.")))
    ok(rpc.call({"type": "prompt", "message": "third"}))
    settle(rpc)
    assert "third" in clone_path.read_text() and "third" not in fork_path.read_text()

    # an empty name is refused, as pi refuses it (nothing is appended)
    count = len(entries(clone_path))
    empty = rpc.call({"type": "set_session_name", "name": "  "})
    assert empty == {**empty, "success": False, "error": "Session name cannot be empty"}
    assert len(entries(clone_path)) == count

    # new_session with a parent: the header names it
    parent = str(session_file.resolve())
    fresh = ok(rpc.call({"type": "new_session", "parentSession": parent}))
    assert fresh["cancelled"] is False
    assert json.loads(Path(fresh["sessionFile"]).read_text().splitlines()[0])["parentSession"] == parent
    code, err = rpc.finish()
    assert code == 0, err


def test_export_html_writes_the_page_and_never_over_a_file(
    rpc: RpcClient, env: Env, server: FakeModelServer, session_file: Path
) -> None:
    server.push(anthropic_stream(text("An answer worth keeping.")))
    empty = rpc.call({"type": "export_html"})
    assert empty["success"] is False and "nothing to export" in empty["error"]
    ok(rpc.call({"type": "prompt", "message": "export me"}))
    settle(rpc)
    first = ok(rpc.call({"type": "export_html"}))
    path = Path(first["path"])
    assert path == env.work / f"agent-tui-session-{session_file.stem}.html"
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "An answer worth keeping." in page
    second = Path(ok(rpc.call({"type": "export_html"}))["path"])
    assert second != path and second.parent == env.work  # numbered past the first
    (env.work / "out").mkdir()
    chosen = ok(rpc.call({"type": "export_html", "outputPath": "out/page.html"}))
    assert chosen == {"path": str(env.work / "out" / "page.html")}
    again = rpc.call({"type": "export_html", "outputPath": str(env.work / "out" / "page.html")})
    assert again["success"] is False and "exists" in again["error"]


def test_models_are_listed_and_cycled_with_their_thinking_levels(env: Env, session_file: Path) -> None:
    rpc = start(env, session_file, "--model", "anthropic/claude-sonnet-4-5")
    try:
        models = ok(rpc.call({"type": "get_available_models"}))["models"]
        ids = [(m["provider"], m["id"]) for m in models]
        assert ("anthropic", "claude-sonnet-4-5") in ids and ("anthropic", "claude-haiku-4-5") in ids
        assert all(m["provider"] == "anthropic" for m in models)  # only the providers with a key
        sonnet = models[ids.index(("anthropic", "claude-sonnet-4-5"))]
        assert sonnet["api"] == "anthropic-messages" and sonnet["reasoning"] is True
        assert sonnet["cost"] == {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
        assert sonnet["contextWindow"] > 0 and sonnet["maxTokens"] > 0

        cycled = ok(rpc.call({"type": "cycle_model"}))
        assert (
            cycled["isScoped"] is False
            and cycled["model"]["id"]
            == ids[(ids.index(("anthropic", "claude-sonnet-4-5")) + 1) % len(ids)][1]
        )
        assert ok(rpc.call({"type": "get_state"}))["model"]["id"] == cycled["model"]["id"]
    finally:
        rpc.kill()

    rpc = start(env, session_file, "--models", "anthropic/claude-sonnet-4-5,anthropic/claude-haiku-4-5")
    try:
        assert ok(rpc.call({"type": "get_state"}))["model"]["id"] == "claude-sonnet-4-5"
        levels = ok(rpc.call({"type": "get_available_thinking_levels"}))["levels"]
        assert ok(rpc.call({"type": "set_thinking_level", "level": levels[0]})) is None
        stepped = ok(rpc.call({"type": "cycle_thinking_level"}))
        assert stepped == {"level": levels[1]}
        assert {"type": "thinking_level_changed", "level": levels[1]} in rpc.records
        assert ok(rpc.call({"type": "get_state"}))["thinkingLevel"] == levels[1]

        first = ok(rpc.call({"type": "cycle_model"}))
        assert first["isScoped"] is True and first["model"]["id"] == "claude-haiku-4-5"
        back = ok(rpc.call({"type": "cycle_model"}))
        assert back["model"]["id"] == "claude-sonnet-4-5"
    finally:
        rpc.kill()

    rpc = start(env, session_file, "--models", "anthropic/claude-sonnet-4-5")
    try:  # one model in scope: nothing to cycle to, pi's null
        nothing = rpc.call({"type": "cycle_model"})
        assert nothing["success"] is True and "data" in nothing and nothing["data"] is None
    finally:
        rpc.kill()


def test_auto_retry_can_be_switched_off_and_a_waiting_retry_called_off(
    env: Env, server: FakeModelServer, session_file: Path
) -> None:
    (env.tmp / "config.toml").write_text("[retry]\nbase_delay = 60\nmax_delay = 60\n")
    rpc = start(env, session_file)
    try:
        # A retry waits 60 s; abort_retry ends the turn at once with the error (not as aborted).
        server.push(anthropic_error(529, "overloaded_error", "Overloaded"))
        ok(rpc.call({"type": "prompt", "message": "hello"}))
        started = rpc.wait_for(lambda r: r["type"] == "auto_retry_start")
        assert started["delayMs"] == 60_000
        assert ok(rpc.call({"type": "abort_retry"})) is None
        settled = settle(rpc)
        assert settled["aborted"] is False
        (end,) = [r for r in rpc.records if r["type"] == "auto_retry_end"]
        assert end["success"] is False and "Overloaded" in end["finalError"]
        assert len(server.requests) == 1
        assert entries(session_file)[-1]["message"]["stopReason"] == "error"

        # Retries off: the first error ends the turn, no auto_retry_start.
        assert ok(rpc.call({"type": "set_auto_retry", "enabled": False})) is None
        server.push(anthropic_error(529, "overloaded_error", "Overloaded"))
        seen = len(rpc.records)
        ok(rpc.call({"type": "prompt", "message": "again"}))
        settle(rpc)
        assert not [r for r in rpc.records[seen:] if r["type"] == "auto_retry_start"]
        assert len(server.requests) == 2

        bad = rpc.call({"type": "set_auto_retry", "enabled": "yes"})
        assert bad["success"] is False and "'enabled'" in bad["error"]
    finally:
        rpc.kill()


def test_auto_compaction_switch_and_the_commands_one_can_prompt_with(
    env: Env, rpc: RpcClient, session_file: Path
) -> None:
    assert ok(rpc.call({"type": "get_state"}))["autoCompactionEnabled"] is True
    assert ok(rpc.call({"type": "set_auto_compaction", "enabled": False})) is None
    assert ok(rpc.call({"type": "get_state"}))["autoCompactionEnabled"] is False
    ok(rpc.call({"type": "new_session"}))  # a new session keeps the switch, as pi's settings do
    assert ok(rpc.call({"type": "get_state"}))["autoCompactionEnabled"] is False
    assert ok(rpc.call({"type": "set_auto_compaction", "enabled": True})) is None
    assert ok(rpc.call({"type": "get_state"}))["autoCompactionEnabled"] is True
    rpc.kill()

    prompts = env.work / ".agent-tui" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "fix-tests.md").write_text("---\ndescription: Fix failing tests\n---\nFix the tests in $1\n")
    skill = env.work / ".agent-tui" / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release\n---\nSteps.\n")
    again = start(env, session_file, "--trust-project")  # a folder's own prompts: trusted only
    try:
        commands = ok(again.call({"type": "get_commands"}))["commands"]
    finally:
        again.kill()
    by_name = {c["name"]: c for c in commands}
    assert (
        by_name["fix-tests"]["source"] == "prompt"
        and by_name["fix-tests"]["description"] == "Fix failing tests"
    )
    assert by_name["fix-tests"]["sourceInfo"]["path"] == str((prompts / "fix-tests.md").resolve())
    assert by_name["fix-tests"]["sourceInfo"]["scope"] == "project"
    assert by_name["skill:release"]["source"] == "skill"
    assert by_name["skill:release"]["description"] == "Cut a release"

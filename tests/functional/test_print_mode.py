"""``agent-tui -p``: the real command in a subprocess, against the fake model server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_error,
    anthropic_stream,
    openai_stream,
    text,
    tool_use,
)

# Several agent-tui processes per test: slow (make test-fast leaves them out), slower on a loaded machine.
from tests.support.print_env import KEY, Env

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    return Env(tmp_path, server)


def test_print_mode_streams_the_reply_runs_tools_and_writes_the_session(
    env: Env, server: FakeModelServer
) -> None:
    snapshots: list[bytes] = []
    server.on_request = lambda _: snapshots.append(env.sessions()[0].read_bytes())
    server.push(
        anthropic_stream(
            text("Creating it."), tool_use("toolu_w", "write", {"path": "hello.py", "content": "print(1)\n"})
        ),
        anthropic_stream(text("Done: hello.py prints 1.")),
    )
    result = env.run("-p", "create hello.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Creating it.\nDone: hello.py prints 1.\n"
    lines = result.stderr.splitlines()
    assert lines[0] == "> write hello.py"
    assert lines[-1].startswith("agent-tui: session ") and lines[-1].endswith(".jsonl")
    assert (env.work / "hello.py").read_text() == "print(1)\n"

    (session,) = env.sessions()
    assert str(session) in lines[-1]
    roles = [e["message"]["role"] for e in env.entries(session) if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant"]

    # The request log holds every body sent, and no key anywhere.
    logged = [json.loads(line) for line in env.log.read_text().splitlines()]
    assert logged == [r.body for r in server.requests]
    for path in (env.log, session):
        assert KEY not in path.read_text()

    # Each request equals `agent-tui context --format anthropic` of the session as it was then.
    for number, snapshot in enumerate(snapshots):
        copy = env.tmp / f"snapshot-{number}.jsonl"
        copy.write_bytes(snapshot)
        context = env.run("context", str(copy), "--format", "anthropic")
        assert context.returncode == 0, context.stderr
        assert json.loads(context.stdout) == server.requests[number].body


def test_continue_and_branch_from_a_leaf(env: Env, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("First answer.")))
    assert env.run("-p", "first question").returncode == 0
    server.push(anthropic_stream(text("Second answer.")))
    second = env.run("-p", "second question", "-c")
    assert second.returncode == 0, second.stderr
    (session,) = env.sessions()  # -c wrote to the same file
    sent = server.requests[1].body["messages"]
    assert [m["content"][0]["text"] for m in sent] == ["first question", "First answer.", "second question"]

    first_answer = next(
        e["id"]
        for e in env.entries(session)
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    server.push(anthropic_stream(text("Alternative answer.")))
    branched = env.run("-p", "another second question", "--session", str(session), "--leaf", first_answer)
    assert branched.returncode == 0, branched.stderr
    sent = server.requests[2].body["messages"]
    assert [m["content"][0]["text"] for m in sent] == [
        "first question",
        "First answer.",
        "another second question",
    ]
    entries = env.entries(session)
    marker = next(e for e in entries if e["type"] == "custom")
    assert marker["parentId"] == first_answer
    user = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"][-1]
    assert user["parentId"] == marker["id"]


def test_session_file_is_created_when_missing(env: Env, server: FakeModelServer) -> None:
    target = env.tmp / "named" / "mine.jsonl"
    server.push(anthropic_stream(text("Hi.")))
    result = env.run("-p", "hello", "--session", str(target))
    assert result.returncode == 0, result.stderr
    assert target.exists() and not env.sessions()


def test_bad_key_exits_with_one_clear_line(env: Env, server: FakeModelServer) -> None:
    server.push(anthropic_error(401, "authentication_error", "invalid x-api-key"))
    result = env.run("-p", "hello")
    assert result.returncode == 1
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if not line.startswith("agent-tui: session ")]
    assert len(errors) == 1
    assert "API key was rejected" in errors[0] and "ANTHROPIC_API_KEY" in errors[0]
    assert len(server.requests) == 1


def test_server_errors_are_retried_then_reported(env: Env, server: FakeModelServer) -> None:
    for _ in range(4):
        server.push(anthropic_error(529, "overloaded_error", "Overloaded"))
    result = env.run("-p", "hello")
    assert result.returncode == 1
    assert result.stderr.count("retrying in") == 3
    assert "gave up after 3 retries" in result.stderr
    assert len(server.requests) == 4


def test_without_any_key_the_message_says_what_to_set(env: Env) -> None:
    bare = {k: v for k, v in env.env.items() if not k.startswith("ANTHROPIC_")}
    result = env.run("-p", "hello", env=bare)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "ANTHROPIC_API_KEY" in result.stderr and "http://localhost:11434/v1" in result.stderr
    assert not env.sessions()


def test_local_openai_compatible_server(env: Env, server: FakeModelServer) -> None:
    bare = {k: v for k, v in env.env.items() if not k.startswith("ANTHROPIC_")}
    server.push(openai_stream("Hello from a local model."))
    result = env.run(
        "-p",
        "hi",
        "--provider",
        "openai",
        "--base-url",
        server.openai_base_url,
        "--model",
        "llama3.1",
        env=bare,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from a local model.\n"
    body = server.requests[0].body
    assert body["model"] == "llama3.1" and body["messages"][0]["role"] == "system"
    (session,) = env.sessions()
    change = next(e for e in env.entries(session) if e["type"] == "model_change")
    assert (change["provider"], change["modelId"]) == ("openai", "llama3.1")


def test_unknown_leaf_is_one_line(env: Env, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("x")))
    env.run("-p", "hello")
    (session,) = env.sessions()
    result = env.run("-p", "again", "--session", str(session), "--leaf", "nosuchid")
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1 and "nosuchid" in result.stderr
    assert len(server.requests) == 1


def test_ctrl_c_aborts_and_keeps_the_partial_reply(env: Env, server: FakeModelServer) -> None:
    words = " ".join(f"w{i}" for i in range(400))
    server.push(anthropic_stream(text(words)).slow(40))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "-p", "talk"],
        cwd=env.work,
        env=env.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = os.read(proc.stdout.fileno(), 3).decode()  # wait for the reply to start (unbuffered)
    assert first
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "agent-tui: aborted" in err
    (session,) = env.sessions()
    assistant = [
        e["message"] for e in env.entries(session) if e.get("message", {}).get("role") == "assistant"
    ]
    assert assistant[-1]["stopReason"] == "aborted"
    partial = assistant[-1]["content"][0]["text"]
    assert partial.startswith("w0 w1") and len(partial) < len(words)
    assert (first + out).strip().startswith("w0 w1")


def test_steer_stdin_queues_each_line_as_a_steering_message(env: Env, server: FakeModelServer) -> None:
    import threading

    gate = threading.Event()
    first = anthropic_stream(tool_use("toolu_e", "bash", {"command": "echo working"}))
    first.gate, first.gate_at = gate, 1
    server.push(first, anthropic_stream(text("Steered.")))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "-p", "start", "--steer-stdin"],
        cwd=env.work,
        env=env.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    deadline = time.monotonic() + 30
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.stdin.write("look at the tests first\n")
    proc.stdin.flush()
    time.sleep(0.3)  # the line is queued while the first reply still streams
    gate.set()
    out, err = proc.communicate(timeout=40)
    assert proc.returncode == 0, err
    assert "Steered." in out
    assert len(server.requests) == 2
    last = server.requests[1].body["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]
    assert last["content"][1]["text"] == "look at the tests first"
    roles = [e["message"]["role"] for e in env.entries(env.sessions()[0]) if e["type"] == "message"]
    assert roles[-4:] == ["assistant", "toolResult", "user", "assistant"]


def test_steer_stdin_needs_the_prompt_as_an_argument(env: Env) -> None:
    result = env.run("-p", "-", "--steer-stdin")
    assert result.returncode == 1
    assert "--steer-stdin" in result.stderr and len(result.stderr.strip().splitlines()) == 1

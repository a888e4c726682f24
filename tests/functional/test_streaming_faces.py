"""A reply streams to every face as it arrives, with redaction on: the fake server sends a one-line,
96-character reply 5 characters every 150 ms, and JSON mode, RPC mode, an ACP editor and the app
each get it in at least 10 pieces, the 10th well before the stream ends (the redactor held the
unfinished line: one delta at the end, 5.4 s after the prompt)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import AgentMessageChunk, TextContentBlock

from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import ModelChoice
from tests.support.acp_editor import AcpEnv, EditorClient
from tests.support.agent_support import make_config as agent_config
from tests.support.fake_model_server import (
    FakeModelServer,
    Stream,
    anthropic_stream,
    text,
    thinking,
    tool_use,
)
from tests.support.print_env import Env
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]  # subprocesses, a few seconds of stream each

#: 24 words: with redaction on, text comes out a word at a time (18 pieces of 5-character chunks).
REPLY = "So it is: a one-line reply, and we want to see it come in bit by bit, as the model sends it out."
CHUNK, DELAY = 5, 0.15
assert len(REPLY) == 96


def _slow_reply() -> Stream:
    stream = anthropic_stream(text(REPLY, chunks=len(REPLY) // CHUNK + 1))
    stream.delay = DELAY
    return stream


def _assert_streamed(arrivals: list[float], end: float, what: str) -> None:
    """At least 10 pieces, the 10th at least 0.5 s (over 3 chunks) before the stream's end."""
    assert len(arrivals) >= 10, f"{what}: {len(arrivals)} pieces"
    assert arrivals[9] <= end - 0.5, f"{what}: the 10th piece {end - arrivals[9]:.2f}s before the end"


class Lines:
    """A subprocess's stdout, each JSON line with the time it arrived."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.records: list[tuple[float, dict[str, Any]]] = []
        self.done = threading.Event()
        self._proc = proc
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self.records.append((time.monotonic(), json.loads(line)))
        self.done.set()

    def wait(self, kind: str, timeout: float = 60) -> float:
        """When the first record of type ``kind`` came (``message_end``: the assistant's)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for at, record in self.records:
                if record.get("type") == kind and (
                    kind != "message_end" or record["message"].get("role") == "assistant"
                ):
                    return at
            if self.done.is_set():
                break
            time.sleep(0.02)
        raise AssertionError(f"no {kind}: {[r.get('type') for _, r in self.records][-10:]}")

    def text_deltas(self) -> tuple[list[float], str]:
        deltas = [
            (at, r["assistantMessageEvent"]["delta"])
            for at, r in self.records
            if r.get("type") == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta"
        ]
        return [at for at, _ in deltas], "".join(d for _, d in deltas)


def _spawn(env: Env, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_tui", *args],
        cwd=env.work,
        env=env.env,
        # -p reads a stdin that is not a terminal to its end (pi's rule): only rpc mode gets a pipe
        stdin=subprocess.PIPE if "rpc" in args else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def test_json_mode_streams_a_one_line_reply(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(_slow_reply())
    env = Env(tmp_path, server)
    proc = _spawn(env, "-p", "hi", "--mode", "json")
    try:
        lines = Lines(proc)
        end = lines.wait("message_end")
        arrivals, streamed = lines.text_deltas()
        assert streamed == REPLY
        _assert_streamed(arrivals, end, "json")
        assert proc.wait(30) == 0
    finally:
        proc.kill()


def test_json_mode_streams_thinking_and_tool_arguments_too(tmp_path: Path, server: FakeModelServer) -> None:
    """Thinking and a tool call's arguments (a JSON text: long runs without a space) stream too."""
    thought = "First I look at the notes, then I read the file and answer from what it says there."
    arguments = {"path": "notes.txt", "offset": 1, "limit": 40, "note": "read it all from the top " * 3}
    stream = anthropic_stream(
        thinking(thought, chunks=len(thought) // CHUNK),
        tool_use("toolu_1", "read", arguments, chunks=len(json.dumps(arguments)) // CHUNK),
    )
    stream.delay = DELAY / 3
    server.push(stream, anthropic_stream(text("Done.")))
    env = Env(tmp_path, server)
    (env.work / "notes.txt").write_text("notes\n")
    proc = _spawn(env, "-p", "hi", "--mode", "json")
    try:
        lines = Lines(proc)
        end = lines.wait("message_end")
        for kind in ("thinking_delta", "toolcall_delta"):
            arrivals = [
                at
                for at, r in lines.records
                if r.get("type") == "message_update" and r["assistantMessageEvent"]["type"] == kind
            ]
            assert len(arrivals) >= 10 and arrivals[4] <= end - 0.5, (kind, len(arrivals))
        deltas = [
            r["assistantMessageEvent"]["delta"]
            for _, r in lines.records
            if r.get("type") == "message_update" and r["assistantMessageEvent"]["type"] == "toolcall_delta"
        ]
        assert json.loads("".join(deltas)) == arguments
        assert proc.wait(30) == 0
    finally:
        proc.kill()


def test_rpc_mode_streams_a_one_line_reply(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(_slow_reply())
    env = Env(tmp_path, server)
    proc = _spawn(env, "--mode", "rpc")
    try:
        lines = Lines(proc)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"type": "prompt", "id": "p1", "message": "hi"}).encode() + b"\n")
        proc.stdin.flush()
        end = lines.wait("message_end")
        arrivals, streamed = lines.text_deltas()
        assert streamed.endswith(REPLY)
        _assert_streamed(arrivals, end, "rpc")
        lines.wait("agent_settled")
        proc.stdin.close()
        assert proc.wait(30) == 0
    finally:
        proc.kill()


class TimedEditor(EditorClient):
    """An editor that notes when each reply chunk came."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[tuple[float, str]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            self.chunks.append((time.monotonic(), update.content.text))
        await super().session_update(session_id, update, **kwargs)


async def test_an_acp_editor_gets_a_one_line_reply_as_it_streams(
    tmp_path: Path, server: FakeModelServer
) -> None:
    server.push(_slow_reply())
    env = AcpEnv(tmp_path, server)
    client = TimedEditor()
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        end = time.monotonic()
        assert response.stop_reason == "end_turn"
    assert "".join(t for _, t in client.chunks) == REPLY
    _assert_streamed([at for at, _ in client.chunks], end, "acp")


def _factory(server: FakeModelServer, tmp_path: Path) -> Any:
    config = agent_config(server)

    def factory(session: Session, choice: ModelChoice) -> AgentLoop:
        return AgentLoop(
            session,
            make_provider(config),
            default_tools(),
            config=config,
            global_context_dir=tmp_path / "no-global-context",
        )

    return factory


async def test_the_app_shows_a_one_line_reply_as_it_streams(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(_slow_reply())
    app = make_app(tmp_path, None, agent_factory=_factory(server, tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h", "i", "enter")
        seen: list[float] = []  # when the streaming reply's text grew
        shown = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            reply = app.chat.streaming
            size = len(reply.text) if reply is not None else 0
            if size > shown:
                seen.append(time.monotonic())
                shown = size
            if shown and reply is None:  # the message was appended: the stream has ended
                break
            await pilot.pause(0.01)
        end = time.monotonic()
        assert shown == len(REPLY)
        _assert_streamed(seen, end, "app")


async def test_the_app_never_shows_a_secret_while_it_streams(tmp_path: Path, server: FakeModelServer) -> None:
    """The reply on screen is redacted as it streams, as its stored message is."""
    secret = "sk-ant-api03-" + "Qw3rTy" * 8
    reply = f"Your key is {secret} and\npassword: hunter2hunter2\nis old."
    stream = anthropic_stream(text(reply, chunks=len(reply) // 3))
    stream.delay = 0.05
    server.push(stream)
    app = make_app(tmp_path, None, agent_factory=_factory(server, tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h", "i", "enter")
        shown: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            streaming = app.chat.streaming
            if streaming is not None and (not shown or streaming.text != shown[-1]):
                shown.append(streaming.text)
            if shown and streaming is None:
                break
            await pilot.pause(0.01)
        assert len(shown) > 3
        for seen in shown:
            assert "Qw3rTy" not in seen and "hunter2" not in seen, seen
        assert shown[-1].startswith("Your key is [REDACTED anthropic-key] and\npassword: [REDACTED")

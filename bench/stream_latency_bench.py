"""Streaming latency: from the model server's chunk to the client's delta, per face, redaction on.

The fake Anthropic server (``tests/support/fake_model_server.py``, in this process, on 127.0.0.1)
streams a one-line reply in 5-character chunks (``"abcd "``: each ends a word, so the redactor
has nothing to wait for but the pipeline) every ``--gap`` seconds; the moment each chunk was
written and flushed to the socket is noted (the server's loop asks for the next event right after
flushing one). Each face is a real client:

- ``--mode json``: ``agent-tui -p hi --mode json``, its stdout read line by line;
- ``--mode rpc``: ``agent-tui --mode rpc`` and one ``prompt`` command;
- ACP: ``agent-tui acp`` driven by the ``agent-client-protocol`` package's client;
- the app: in this process under Textual's Pilot, the streaming reply's text polled every 2 ms.

For each chunk: the time until the client first holds all the text up to the chunk's end (a
``text_delta``, an ``agent_message_chunk``, the reply widget's text). The figure is the median over
every chunk of ``--runs`` runs, with the 90th percentile, the maximum and the median of each run's
first chunk (which waits for the reply to be set up: the app mounts its reply widget then). Goal:
under 20 ms median.
A chunk that ends inside a word waits for the word's end as well (at most one chunk gap): that is the
redactor's hold, not measured here.

``run()`` returns ``(label, figure)`` pairs for ``bench/run.py``; run this file directly to print
them: ``.venv/bin/python bench/stream_latency_bench.py [--runs N] [--chunks N] [--gap S]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from tests.support.fake_model_server import FakeModelServer, Stream, anthropic_stream, text  # noqa: E402
from tests.support.print_env import Env  # noqa: E402

RUNS = 3
CHUNKS = 40
GAP = 0.05
TARGET_MS = 20.0
WORDS = ["word", "text", "more", "line", "flow", "fast", "each", "tick"]


class Stamped(list[tuple[str | None, Any]]):
    """A stream's events that note when each was sent: the server's loop takes the next event only
    after writing and flushing the one before."""

    def __init__(self, events: list[tuple[str | None, Any]]) -> None:
        super().__init__(events)
        self.sent: list[float] = []

    def __iter__(self) -> Iterator[tuple[str | None, Any]]:
        for item in list.__iter__(self):
            yield item
            self.sent.append(time.monotonic())


class Reply:
    """One scripted reply: its text, and when each chunk of it left the server."""

    def __init__(self, chunks: int, gap: float) -> None:
        self.text = "".join(f"{WORDS[i % len(WORDS)]} " for i in range(chunks))
        stream = anthropic_stream(text(self.text, chunks=chunks))
        self.events = Stamped(stream.events)
        self.stream = Stream(self.events, delay=gap)
        self.deltas = [
            i
            for i, (_, data) in enumerate(stream.events)
            if isinstance(data, dict) and data.get("type") == "content_block_delta"
        ]

    def latencies(self, received: list[tuple[float, int]]) -> list[float]:
        """Per chunk: seconds from its sending until the client held the text up to its end
        (``received``: (arrival, characters held so far), in order)."""
        out: list[float] = []
        end = 0
        for n, event in enumerate(self.deltas):
            end += len(self.events[event][1]["delta"]["text"])
            sent = self.events.sent[event]
            arrival = next((at for at, held in received if held >= end), None)
            if arrival is None:
                raise AssertionError(f"chunk {n} never arrived ({received[-1:]} of {len(self.text)})")
            out.append(max(0.0, arrival - sent))
        return out


def _spawn(env: Env, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_tui", *args],
        cwd=env.work,
        env=env.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _read_deltas(
    proc: subprocess.Popen[bytes], until: Callable[[dict[str, Any]], bool]
) -> list[tuple[float, int]]:
    assert proc.stdout is not None
    received: list[tuple[float, int]] = []
    held = 0
    for line in proc.stdout:
        at = time.monotonic()
        record = json.loads(line)
        event = record.get("assistantMessageEvent") or {}
        if record.get("type") == "message_update" and event.get("type") == "text_delta":
            held += len(event["delta"])
            received.append((at, held))
        if until(record):
            break
    return received


def _settled(record: dict[str, Any]) -> bool:
    return record.get("type") == "agent_settled"


def json_face(env: Env, reply: Reply) -> list[float]:
    proc = _spawn(env, "-p", "hi", "--mode", "json")
    try:
        received = _read_deltas(proc, _settled)
        proc.wait(30)
    finally:
        proc.kill()
    return reply.latencies(received)


def rpc_face(env: Env, reply: Reply) -> list[float]:
    proc = _spawn(env, "--mode", "rpc")
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"type": "prompt", "id": "p1", "message": "hi"}).encode() + b"\n")
        proc.stdin.flush()
        received = _read_deltas(proc, _settled)
        proc.stdin.close()
        proc.wait(30)
    finally:
        proc.kill()
    return reply.latencies(received)


def acp_face(tmp: Path, server: FakeModelServer, reply: Reply) -> list[float]:
    from acp import text_block
    from acp.schema import AgentMessageChunk, TextContentBlock

    from tests.support.acp_editor import AcpEnv, EditorClient

    received: list[tuple[float, int]] = []

    class Editor(EditorClient):
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
                held = (received[-1][1] if received else 0) + len(update.content.text)
                received.append((time.monotonic(), held))
            await super().session_update(session_id, update, **kwargs)

    acp_env = AcpEnv(tmp, server)

    async def drive() -> None:
        async with acp_env.agent(Editor()) as conn:
            session = await conn.new_session(cwd=str(acp_env.work), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])

    asyncio.run(drive())
    return reply.latencies(received)


def app_face(tmp: Path, server: FakeModelServer, reply: Reply) -> list[float]:
    from agent_tui.agent.loop import AgentLoop, make_provider
    from agent_tui.agent.tools.builtin import default_tools
    from agent_tui.store.session import Session
    from agent_tui.tui.agent_bridge import ModelChoice
    from tests.support.agent_support import make_config
    from tests.support.tui_fixtures import SIZE, make_app

    config = make_config(server)

    def factory(session: Session, choice: ModelChoice) -> AgentLoop:
        return AgentLoop(session, make_provider(config), default_tools(), config=config)

    received: list[tuple[float, int]] = []

    async def drive() -> None:
        app = make_app(tmp, None, agent_factory=factory)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("h", "i", "enter")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                streaming = app.chat.streaming
                held = len(streaming.text) if streaming is not None else 0
                if held > (received[-1][1] if received else 0):
                    received.append((time.monotonic(), held))
                if received and streaming is None:
                    break
                await asyncio.sleep(0.002)

    asyncio.run(drive())
    return reply.latencies(received)


def _figure(runs: list[list[float]]) -> str:
    ms = sorted(s * 1000 for run in runs for s in run)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    median = statistics.median(ms)
    first = statistics.median(run[0] * 1000 for run in runs)
    verdict = "ok" if median < TARGET_MS else "OVER"
    return (
        f"median {median:.1f} ms (p90 {p90:.1f}, max {ms[-1]:.1f}; n={len(ms)}; the first chunk's"
        f" {first:.0f} ms)  goal <{TARGET_MS:.0f} ms {verdict}"
    )


def run(runs: int = RUNS, chunks: int = CHUNKS, gap: float = GAP, app: bool = True) -> list[tuple[str, str]]:
    faces: dict[str, list[list[float]]] = {"--mode json": [], "--mode rpc": [], "acp": []}
    if app:
        faces["the app (Pilot, in process)"] = []
    with FakeModelServer() as server:
        for i in range(runs + 1):  # the first run of each face warms the disk cache: not counted
            for face, samples in faces.items():
                tmp = Path(tempfile.mkdtemp(prefix="stream-bench-"))
                reply = Reply(chunks, gap)
                server.push(reply.stream)
                if face == "--mode json":
                    got = json_face(Env(tmp, server), reply)
                elif face == "--mode rpc":
                    got = rpc_face(Env(tmp, server), reply)
                elif face == "acp":
                    got = acp_face(tmp, server, reply)
                else:
                    (tmp / "app").mkdir()
                    got = app_face(tmp / "app", server, reply)
                if i:
                    samples.append(got)
    rows = [(f"{face}: server chunk -> client delta", _figure(samples)) for face, samples in faces.items()]
    rows.append(("  (chunks of 5 characters, one word each", f"every {gap * 1000:.0f} ms; {runs} runs)"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--chunks", type=int, default=CHUNKS)
    parser.add_argument("--gap", type=float, default=GAP, help="seconds between chunks")
    parser.add_argument("--no-app", action="store_true", help="leave out the app")
    args = parser.parse_args()
    for label, figure in run(args.runs, args.chunks, args.gap, app=not args.no_app):
        print(f"    {label:<46} {figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Concurrency campaign: two processes on one session file.

A print-mode run (slow streamed replies and a tool call, so it holds the file
for a while) is joined, once it has written, by other processes on the same
file: a second print-mode run, ``agent-tui label/edit/rename`` (writers),
``agent-tui context/tree`` (readers), and a program that appends without
taking the lock, as pi does. Checked each time:

- a writer that overlaps the run is refused with one line naming the lock, exit 1;
- readers get a read-only view: exit 0, a valid request body;
- an append behind the run's back is detected: the run stops with one line
  (exit 1) instead of interleaving its next entry;
- every line of the file is a whole JSON object; it loads and projects to a
  valid request; it only ever grew.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from tests.support.campaign_support import SEED, complete_lines, report, request_problems, scale
from tests.support.fake_model_server import (
    FakeModelServer,
    RecordedRequest,
    Response,
    anthropic_stream,
    text,
    tool_use,
)

ROUNDS = scale(4, 60)
# ~13 s idle; each round starts seven processes, ten times slower on a loaded machine: a guard for a hang
pytestmark = [pytest.mark.timeout(scale(600, 3600)), pytest.mark.slow]
LOCKED = "another agent-tui process is writing this session"


class GatedResponder:
    """Replies with a tool call, then a final answer that waits for ``gate`` halfway: the run holds
    the session (and has more to append) until the test lets it finish."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, request: RecordedRequest) -> Response:
        messages = (request.body or {}).get("messages", [])
        words = " ".join(f"word{i}" for i in range(20))
        last = messages[-1]["content"] if messages else []
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            stream = anthropic_stream(text(words + "."))
            stream.gate, stream.gate_at = self.gate, len(stream.events) // 2
            return stream
        return anthropic_stream(
            text(words + "."), tool_use(f"toolu_{time.monotonic_ns()}", "bash", {"command": "printf ok"})
        ).slow(400)


@pytest.fixture
def responder() -> GatedResponder:
    return GatedResponder()


@pytest.fixture
def server(responder: GatedResponder) -> Iterator[FakeModelServer]:
    with FakeModelServer() as s:
        s.responder = responder
        yield s


class Bench:
    def __init__(self, tmp: Path, server: FakeModelServer) -> None:
        self.tmp = tmp
        self.work = tmp / "project"
        self.work.mkdir()
        self.session = tmp / "shared.jsonl"
        config = tmp / "config.toml"
        config.write_text("[retry]\nbase_delay = 0.01\n")
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))
        }
        self.env.update(
            AGENT_TUI_HOME=str(tmp / "home"),
            AGENT_TUI_CONFIG=str(config),
            ANTHROPIC_API_KEY="test-key-concurrency-0123",
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
        )
        self.runs = 0

    def spawn(self, *args: str, ack: Path | None = None) -> subprocess.Popen[str]:
        env = dict(self.env)
        if ack is not None:
            env["AGENT_TUI_DEBUG_ACK"] = str(ack)
        return subprocess.Popen(
            [sys.executable, "-m", "agent_tui", *args],
            cwd=self.work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def print_run(self, prompt: str, ack: Path | None = None) -> subprocess.Popen[str]:
        return self.spawn("-p", prompt, "--session", str(self.session), ack=ack)


def check_file(path: Path, before: bytes) -> tuple[bytes, int]:
    data = path.read_bytes()
    assert data.startswith(before), "the file was rewritten"
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    for number, line in enumerate(lines, 1):
        assert isinstance(json.loads(line), dict), f"line {number} is not a whole JSON object"
    index = SessionIndex(read_file(path), str(path))
    assert not index.warnings, index.warnings
    assert request_problems(index) == []
    return data, len(lines)


def one_line_error(proc: subprocess.Popen[str], out: str, err: str, needle: str) -> None:
    errors = [
        line
        for line in err.splitlines()
        if line.startswith("agent-tui:") and not line.startswith("agent-tui: session ")
    ]
    assert proc.returncode == 1 and len(errors) == 1 and needle in errors[0], (proc.returncode, err)
    assert "Traceback" not in err


def test_two_processes_on_one_session(
    server: FakeModelServer, responder: GatedResponder, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random(SEED)
    bench = Bench(tmp_path, server)
    first = bench.print_run("start")
    assert first.wait(timeout=60) == 0
    before, lines = check_file(bench.session, b"")
    figures: Counter[str] = Counter()
    started = time.monotonic()
    for round_number in range(ROUNDS):
        ack = tmp_path / f"ack{round_number}.txt"
        responder.gate.clear()
        runner = bench.print_run(f"round {round_number}", ack=ack)
        deadline = time.monotonic() + 120  # a hang guard: a loaded machine starts Python slowly
        # user, assistant, permission (auto), toolResult: the run now waits for its final answer
        while len(complete_lines(ack)) < 4:
            assert runner.poll() is None and time.monotonic() < deadline, runner.communicate()
            time.sleep(0.005)
        ids = [e.id for e in SessionIndex(read_file(bench.session)).entries if e.type == "message"]
        target = rng.choice(ids)
        others = {
            "print": bench.print_run("me too"),
            "label": bench.spawn("label", str(bench.session), target, "mine"),
            "edit": bench.spawn("edit", str(bench.session), target, "--hide"),
            "rename": bench.spawn("rename", str(bench.session), "renamed"),
            "context": bench.spawn("context", str(bench.session), "--format", "anthropic"),
            "tree": bench.spawn("tree", str(bench.session)),
        }
        for name, proc in others.items():
            out, err = proc.communicate(timeout=60)
            if name in ("context", "tree"):
                assert proc.returncode == 0 and "Traceback" not in err, (name, err)
                if name == "context":
                    assert json.loads(out)["messages"]
                figures["read-only views"] += 1
            else:
                one_line_error(proc, out, err, LOCKED)
                figures["writers refused"] += 1
        foreign = round_number % 2 == 1  # every other round, an append that takes no lock (as pi's)
        if foreign:
            line = {
                "type": "label",
                "id": f"pi{round_number:06d}",
                "parentId": None,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "targetId": target,
                "label": "from pi",
            }
            fd = os.open(bench.session, os.O_WRONLY | os.O_APPEND)
            os.write(fd, json.dumps(line).encode() + b"\n")
            os.close(fd)
        responder.gate.set()
        out, err = runner.communicate(timeout=60)
        if foreign:
            one_line_error(runner, out, err, "changed on disk by another program")
            figures["foreign appends detected"] += 1
        else:
            assert runner.returncode == 0, err
        before, lines = check_file(bench.session, before)
        figures["lines checked"] += lines
        figures["rounds"] += 1
    report(
        request,
        "concurrency",
        {**figures, "corrupt lines": 0, "seed": SEED, "seconds": f"{time.monotonic() - started:.1f}"},
    )

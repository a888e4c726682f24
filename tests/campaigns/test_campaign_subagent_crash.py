"""Crash campaign for subagents: ``kill -9`` while ``agent-tui -p`` runs two ``task`` calls at once.

Each run continues one session file against the fake model server: the parent's model calls two
subagents in one message; each subagent runs ``ls`` then answers; the parent answers last. Every
reply streams slowly, so kills land in the parent's stream, in the subagents' (both running), and
between their appends. After every kill:

- the parent file still starts with every byte it had (never rewritten), loads, holds every entry
  print mode acknowledged, and its next request is valid for both APIs;
- every subagent file beside it loads, and its next request is valid too;
- the parent's file never holds a subagent's messages (their words are only in its results);
- at the end pi 1.6 projects every file (the parent and every subagent's) as agent-tui does.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.agent_types import GENERAL_PROMPT
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from tests.functional.test_pi_compat import Job, Pi, compare, pi  # noqa: F401  (pi: the fixture)
from tests.support.campaign_support import SEED, complete_lines, report, request_problems, scale
from tests.support.fake_model_server import (
    FakeModelServer,
    RecordedRequest,
    Response,
    anthropic_stream,
    text,
    tool_use,
)

KILLS = scale(10, 120)
pytestmark = [pytest.mark.timeout(scale(600, 3600)), pytest.mark.slow]
SUB_WORDS = "subagent-words"


def responder() -> Callable[[RecordedRequest], Response]:
    counter = itertools.count()

    def respond(request: RecordedRequest) -> Response:
        body = request.body or {}
        system = json.dumps(body.get("system"))
        messages: list[dict[str, Any]] = body.get("messages", [])
        last = messages[-1] if messages else {}
        answered = isinstance(last.get("content"), list) and any(
            b.get("type") == "tool_result" for b in last["content"]
        )
        n = next(counter)
        words = " ".join(f"w{n}x{i}" for i in range(12))
        if GENERAL_PROMPT[:40] in system:  # a subagent
            if not answered:
                return anthropic_stream(
                    text(words + ". "), tool_use(f"toolu_{n}ls", "ls", {"path": "."})
                ).slow(200)
            return anthropic_stream(text(f"{SUB_WORDS} {words}.")).slow(200)
        if not answered:
            return anthropic_stream(
                text(words + ". "),
                tool_use(f"toolu_{n}a", "task", {"description": "look a", "prompt": f"look around a{n}"}),
                tool_use(f"toolu_{n}b", "task", {"description": "look b", "prompt": f"look around b{n}"}),
            ).slow(200)
        return anthropic_stream(text(words + " done.\n")).slow(200)

    return respond


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as s:
        s.responder = responder()
        yield s


class Runner:
    def __init__(self, tmp: Path, server: FakeModelServer) -> None:
        self.rng = random.Random(SEED * 7 + 1)
        self.root = tmp
        self.work = tmp / "project"
        self.work.mkdir()
        self.session = tmp / "sessions" / "parent.jsonl"
        config = tmp / "config.toml"
        config.write_text("[retry]\nbase_delay = 0.01\n")
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))
        }
        self.env.update(
            AGENT_TUI_HOME=str(tmp / "home"),
            AGENT_TUI_CONFIG=str(config),
            ANTHROPIC_API_KEY="test-key-subagent-0123456789",
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
        )
        self.before = b""
        self.acked: set[str] = set()
        self.runs = 0
        self.last: Counter[str] = Counter()

    def children(self) -> list[Path]:
        return sorted((self.session.with_suffix("") / "subagents").glob("*.jsonl"))

    def start(self) -> tuple[subprocess.Popen[bytes], Path]:
        ack = self.root / f"ack{self.runs}.txt"
        self.runs += 1
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_tui", "-p", f"turn {self.runs}", "--session", str(self.session)],
            cwd=self.work,
            env={**self.env, "AGENT_TUI_DEBUG_ACK": str(ack)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return proc, ack

    def crash_once(self) -> bool:
        proc, ack = self.start()
        wanted = self.rng.randint(1, 12)  # parent entries acknowledged, then a moment more
        deadline = time.monotonic() + 120
        while len(complete_lines(ack)) < wanted and proc.poll() is None:
            assert time.monotonic() < deadline, "the run stopped making progress"
            time.sleep(0.002)
        pause = time.monotonic() + self.rng.uniform(0.0, 0.6)
        while time.monotonic() < pause and proc.poll() is None:
            time.sleep(0.002)
        killed = proc.poll() is None
        if killed:
            proc.kill()
        _, err = proc.communicate(timeout=30)
        if not killed:
            assert proc.returncode == 0, err.decode()
        self.check(complete_lines(ack), killed)
        return killed

    def check(self, acked: list[str], killed: bool) -> SessionIndex:
        data = self.session.read_bytes()
        assert data.startswith(self.before), "the parent file was rewritten"
        self.before = data
        self.acked.update(acked)
        index = SessionIndex(read_file(self.session), str(self.session))
        lost = self.acked - set(index.by_id)
        assert not lost, f"acknowledged entries lost: {sorted(lost)}"
        assert request_problems(index) == []
        for entry in index.entries:
            if entry.type == "message" and entry.role != "toolResult":
                assert SUB_WORDS not in json.dumps(entry.message), "a subagent's message in the parent"
        for child in self.children():
            child_index = SessionIndex(read_file(child), str(child))
            assert child_index.header.get("parentSession") == str(self.session)
            assert request_problems(child_index) == [], child
        if killed:
            running = [
                e
                for e in index.entries
                if e.type == "custom" and e.data.get("customType") == "agent-tui.subagent"
            ]
            open_tasks = {
                e.data["data"]["toolCallId"] for e in running if e.data["data"]["status"] == "running"
            }
            ended = {e.data["data"]["toolCallId"] for e in running if e.data["data"]["status"] != "running"}
            self.last["killed mid-subagent" if open_tasks - ended else "killed elsewhere"] += 1
        return index


def test_kill_minus_nine_during_subagents(
    server: FakeModelServer,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    pi: Pi,  # noqa: F811  (the fixture imported above)
) -> None:
    runner = Runner(tmp_path, server)
    started = time.monotonic()
    kills = 0
    for _ in range(KILLS * 3):
        if kills >= KILLS:
            break
        kills += runner.crash_once()
    assert kills >= KILLS
    proc, ack = runner.start()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    index = runner.check(complete_lines(ack), killed=False)
    last = index.by_id[index.leaf_id or ""]
    assert last.role == "assistant" and "done." in json.dumps(last.message)
    children = runner.children()
    assert len(children) >= 2
    problems = compare(pi, [Job(runner.session), *(Job(c) for c in children)])
    assert problems == []
    assert runner.last["killed mid-subagent"] > 0, runner.last
    report(
        request,
        "subagent crash",
        {
            "kills survived": kills,
            "mid-subagent": runner.last["killed mid-subagent"],
            "subagent files checked": len(children),
            "acknowledged entries": len(runner.acked),
            "pi agreed on": len(children) + 1,
            "seed": SEED,
            "seconds": f"{time.monotonic() - started:.1f}",
        },
    )

"""Crash campaign: ``kill -9`` at random moments while ``agent-tui -p`` appends.

Each run is the real command in a subprocess, continuing one session file
(``--session FILE``) against the fake model server, whose replies stream
slowly and call tools (write, bash, ls) for two rounds before a final answer,
so entries are appended all through the run. Most kills wait until the run has
acknowledged a random number of entries and then a random moment more; the
rest land at a random moment from the start (imports, session creation).

"Acknowledged": print mode appends each entry id to ``AGENT_TUI_DEBUG_ACK``
after the entry's write has returned. After every kill:

- the file still starts with every byte it had before the run (never rewritten);
- it loads without an exception, and every acknowledged id is in it;
- the projection of its leaf is a valid Anthropic and OpenAI request;
- opened through its sidecar offset index, it equals the full parse;
- the next run continues it (the campaign's runs all use the same file), and
  a last run without a kill exits 0 with its first entry chained to the leaf.
"""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from tests.unit.test_sidecar_index import assert_same_as_full_parse

KILLS = scale(30, 320)
WORKERS = 2
# The timeout guards a hang, not speed: 30 agent-tui starts take ~60 s idle and 4x that on a loaded machine.
pytestmark = [pytest.mark.timeout(scale(600, 3600)), pytest.mark.slow]


def crash_responder() -> Callable[[RecordedRequest], Response]:
    """Two rounds of tool calls, then a final answer; every reply streams slowly."""
    counter = itertools.count()

    def respond(request: RecordedRequest) -> Response:
        messages: list[dict[str, Any]] = (request.body or {}).get("messages", [])
        rounds = 0
        for m in reversed(messages):
            content = m.get("content")
            if m.get("role") == "assistant":
                rounds += 1
            elif not (isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)):
                break  # the prompt of this turn
        n = next(counter)
        words = " ".join(f"w{n}x{i}" for i in range(16))
        if rounds == 0:
            stream = anthropic_stream(
                text(words + ". "),
                tool_use(f"toolu_{n}a", "write", {"path": f"notes/n{n % 5}.txt", "content": words}),
                tool_use(f"toolu_{n}b", "bash", {"command": "printf ok"}),
            )
        elif rounds == 1:
            stream = anthropic_stream(text(words + ". "), tool_use(f"toolu_{n}c", "ls", {"path": "notes"}))
        else:
            stream = anthropic_stream(text(words + " done.\n"))
        return stream.slow(250)

    return respond


@dataclass
class Figures:
    kills: int = 0
    completed: int = 0
    acked: int = 0
    lines: int = 0
    torn_tails: int = 0
    last_before_kill: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Worker:
    def __init__(self, number: int, tmp: Path, server: FakeModelServer, figures: Figures) -> None:
        self.rng = random.Random(SEED * 100 + number)
        self.root = tmp / f"worker{number}"
        self.work = self.root / "project"
        self.work.mkdir(parents=True)
        self.session = self.root / "sessions" / "crash.jsonl"
        self.figures = figures
        config = self.root / "config.toml"
        config.write_text("[retry]\nbase_delay = 0.01\n")
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))
        }
        self.env.update(
            AGENT_TUI_HOME=str(self.root / "home"),
            AGENT_TUI_CONFIG=str(config),
            ANTHROPIC_API_KEY="test-key-crash-0123456789",
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
        )
        self.before = b""
        self.all_acked: set[str] = set()
        self.runs = 0

    def start(self, prompt: str) -> tuple[subprocess.Popen[bytes], Path]:
        ack = self.root / f"ack{self.runs}.txt"
        self.runs += 1
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_tui", "-p", prompt, "--session", str(self.session)],
            cwd=self.work,
            env={**self.env, "AGENT_TUI_DEBUG_ACK": str(ack)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return proc, ack

    def crash_once(self) -> None:
        proc, ack = self.start(f"turn {self.runs}")
        if self.rng.random() < 0.15:
            wait_until = time.monotonic() + self.rng.uniform(0.0, 1.6)  # anywhere, startup included
            while time.monotonic() < wait_until and proc.poll() is None:
                time.sleep(0.005)
        else:
            wanted = self.rng.randint(1, 7)  # then a random moment more
            deadline = time.monotonic() + 120  # a hang, not a slow machine (a loaded one took over 30 s)
            while len(complete_lines(ack)) < wanted and proc.poll() is None:
                assert time.monotonic() < deadline, "the run stopped making progress"
                time.sleep(0.002)
            pause = time.monotonic() + self.rng.uniform(0.0, 0.12)
            while time.monotonic() < pause and proc.poll() is None:
                time.sleep(0.002)
        killed = proc.poll() is None
        if killed:
            proc.kill()
        _, err = proc.communicate(timeout=30)
        if not killed:
            assert proc.returncode == 0, err.decode()
        self.check(complete_lines(ack), killed)

    def check(self, acked: list[str], killed: bool) -> SessionIndex | None:
        data = self.session.read_bytes() if self.session.exists() else b""
        assert data.startswith(self.before), "the file was rewritten"
        self.before = data
        self.all_acked.update(acked)
        if not data:
            assert not self.all_acked, "acknowledged entries in a file that has none"
            return None
        index = SessionIndex(read_file(self.session), str(self.session))
        # opened through its sidecar offset index (the run's records, torn by the kill or missing):
        # the same entries and projection as the full parse, the session's bytes untouched
        assert_same_as_full_parse(self.session)
        lost = self.all_acked - set(index.by_id)
        assert not lost, f"acknowledged entries lost: {sorted(lost)}"
        assert request_problems(index) == []
        with self.figures.lock:
            self.figures.lines += data.count(b"\n")
            self.figures.acked += len(acked)
            self.figures.torn_tails += 0 if data.endswith(b"\n") else 1
            if killed:
                self.figures.kills += 1
                last = index.by_id.get(index.leaf_id or "")
                if last is None:
                    label = "header only"
                elif last.type == "custom":
                    label = str(last.data.get("customType"))
                else:
                    label = last.role or last.type
                self.figures.last_before_kill[label] += 1
            else:
                self.figures.completed += 1
        return index

    def final_run(self) -> None:
        previous = SessionIndex(read_file(self.session), str(self.session)) if self.before else None
        old_ids = set(previous.by_id) if previous is not None else set()
        proc, ack = self.start("the last turn")
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        index = self.check(complete_lines(ack), killed=False)
        assert index is not None
        new = [e for e in index.entries if e.id not in old_ids]
        assert new and set(complete_lines(ack)) == {e.id for e in new}
        if previous is not None:
            assert new[0].parent_id == previous.leaf_id, "the next run did not continue the session"
        # the reply ends the turn; a file checkpoint of a turn that ran a tool may follow it
        replies = [e for e in new if e.role == "assistant"]
        assert replies and "done." in str(replies[-1].message)
        assert all(
            e.type == "custom" and e.data.get("customType") == "agent-tui.checkpoint"
            for e in new[new.index(replies[-1]) + 1 :]
        )


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as s:
        s.responder = crash_responder()
        yield s


def test_kill_minus_nine_at_random_moments(
    server: FakeModelServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    figures = Figures()
    workers = [Worker(n, tmp_path, server, figures) for n in range(WORKERS)]
    failures: list[BaseException] = []

    def run(worker: Worker, count: int) -> None:
        try:
            while figures.kills < KILLS and count > 0:
                worker.crash_once()
                count -= 1
        except BaseException as e:
            failures.append(e)

    started = time.monotonic()
    per_worker = KILLS  # the shared kill count ends the campaign; this only bounds a worker
    threads = [threading.Thread(target=run, args=(w, per_worker * 2)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    for worker in workers:
        worker.final_run()
    assert figures.kills >= KILLS
    lost = sum(
        len(w.all_acked - set(SessionIndex(read_file(w.session), str(w.session)).by_id)) for w in workers
    )
    assert lost == 0
    moments = ", ".join(f"{k or '?'} {v}" for k, v in figures.last_before_kill.most_common())
    report(
        request,
        "crash",
        {
            "kills survived": figures.kills,
            "runs that finished first": figures.completed,
            "acknowledged entries checked": figures.acked,
            "lines checked": figures.lines,
            "torn tails (loaded fine)": figures.torn_tails,
            "entries lost": lost,
            "seed": SEED,
            "seconds": f"{time.monotonic() - started:.1f}",
            "last entry at the kill": moments,
        },
    )

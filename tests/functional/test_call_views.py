"""``agent-tui cache`` and ``agent-tui cost --by-entry`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cli.main import main as agent_tui_main
from agent_tui.projection.call_history import cache_reports, model_calls
from agent_tui.store.session import Session
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.model_env import fake_anthropic_env
from tests.unit.test_call_history import _conversation, _index


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_the_cache_and_cost_commands(tmp_path: Path) -> None:
    path, _ = _conversation(tmp_path)
    done = _cli("cache", str(path), "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {"entryId", "sharedPrefixTokens", "firstDifference", "cause"} <= set(rows[0])
    assert [r["cause"] for r in rows] == [r.cause.kind for r in cache_reports(model_calls(_index(path)))]
    text = _cli("cache", str(path))
    assert text.returncode == 0 and "hidden" in text.stdout and "model change" in text.stdout
    done = _cli("cost", str(path), "--by-entry", "--json", "--next", "5")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {"entryId", "carriedTokens", "calls", "cost"} <= set(rows[0])
    assert rows[0]["saving"]["nextCalls"] == 5
    assert rows == sorted(rows, key=lambda r: -r["carriedTokens"])
    assert _cli("cost", str(path)).stdout.startswith("cost of this branch")
    missing = _cli("cache", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1


# -- against what a server really received ------------------------------------------------------


def _strip_cache_marks(value: Any) -> Any:
    """A body without Anthropic's cache breakpoints: they move to the end of every request."""
    if isinstance(value, dict):
        return {k: _strip_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_marks(v) for v in value]
    return value


def _shared_messages(before: list[Any], after: list[Any]) -> int:
    shared = 0
    for old, new in zip(before, after, strict=False):
        if old != new:
            break
        shared += 1
    return shared


def test_the_shared_prefix_matches_the_bodies_the_server_received(
    server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Four turns in print mode with the second hidden before the third: the messages each
    request shares with the one before, counted on the bodies the server logged, are the pieces
    the call history says were shared, and the hidden entry is named where they first differ."""
    fake_anthropic_env(monkeypatch, server, tmp_path / "none.toml")
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "s.jsonl"
    for turn in range(4):
        if turn == 2:
            with Session.open(path, write=False) as s:
                second_question = [e for e in s.index.active_path() if e.role == "user"][1].id
                second_answer = s.index.active_path()[-1].id
            # the second turn as a span (a lone user message would leave two replies in a row, which
            # the Messages API merges into one)
            assert agent_tui_main(["edit", str(path), f"{second_question}..{second_answer}", "--hide"]) == 0
        server.push(anthropic_stream(text(f"answer {turn}"), cache_read=10 * turn))
        assert agent_tui_main(["-p", f"question {turn} " + "w" * 200, "--session", str(path)]) == 0
    capsys.readouterr()
    bodies = [_strip_cache_marks(r.body) for r in server.requests]
    calls = model_calls(_index(path))
    assert len(calls) == len(bodies) == 4
    reports = cache_reports(calls)
    for previous, body, call, report in zip([None, *bodies], bodies, calls, reports, strict=False):
        messages = [p for p in call.pieces if p.kind == "message"]
        assert len(messages) == len(body["messages"])
        if previous is None:
            continue
        shared = _shared_messages(previous["messages"], body["messages"])
        same_start = previous["system"] == body["system"] and previous["tools"] == body["tools"]
        assert same_start
        expected = sum(p.tokens for p in call.pieces if p.kind != "message") + sum(
            p.tokens for p in messages[:shared]
        )
        assert report.shared_prefix_tokens == expected
        if shared < len(previous["messages"]):  # the request did not just extend the one before
            assert report.cause.kind == "hidden" and report.first_difference == second_question
        else:
            assert report.cause.kind == "none"
    assert [r.cause.kind for r in reports] == ["first call", "none", "hidden", "none"]
    assert calls[3].usage.cache_read == 30

"""Cost: each reply's ``usage.cost`` priced as pi prices it, config prices over the table, and the
totals per branch and per file in ``/session``, the status line and ``sessions --json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytest import approx

from agent_tui.cli.main import main
from agent_tui.config import register_models
from agent_tui.projection.context import project
from agent_tui.projection.figures import FigureSource, format_status, usage_lines
from agent_tui.projection.pricing import session_usage
from agent_tui.projection.tokens import context_tokens
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import parse_session
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.session_builder import Builder, assistant, user

PI_COST_KEYS = {"input", "output", "cacheRead", "cacheWrite", "total"}


async def test_each_reply_records_its_cost_as_pi_does(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    # claude-sonnet-5-5: $2 input, $10 output, $0.1 cache read, $2.5 cache write per million tokens
    server.push(
        anthropic_stream(text("hi"), input_tokens=1_000, output_tokens=200, cache_read=500, cache_write=100)
    )
    await anthropic_harness.run("hello")
    usage = anthropic_harness.messages("assistant")[-1]["usage"]
    assert set(usage["cost"]) == PI_COST_KEYS
    assert usage["cost"]["input"] == approx(1_000 * 2 / 1e6)
    assert usage["cost"]["output"] == approx(200 * 10 / 1e6)
    assert usage["cost"]["cacheRead"] == approx(500 * 0.1 / 1e6)
    assert usage["cost"]["cacheWrite"] == approx(100 * 2.5 / 1e6)
    assert usage["cost"]["total"] == approx(0.002 + 0.002 + 0.00005 + 0.00025)


async def test_a_price_from_the_config_file_is_what_is_recorded(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    register_models(
        {"models": {"registry-priced": {"provider": "anthropic", "cost": {"input": 1, "output": 4}}}}
    )
    anthropic_harness.loop.model = "registry-priced"
    server.push(anthropic_stream(text("hi"), input_tokens=2_000_000, output_tokens=1_000_000))
    await anthropic_harness.run("hello")
    cost = anthropic_harness.messages("assistant")[-1]["usage"]["cost"]
    assert cost["input"] == approx(2.0) and cost["output"] == approx(4.0) and cost["total"] == approx(6.0)


def _two_branches(tmp_path: Path) -> Path:
    """Three priced replies (claude-sonnet-4-5, $3/$15: 10 in, 5 out each), two on the active branch."""
    b = Builder()
    b.message(user("one"))
    first_reply = b.message(assistant("a"))
    b.message(user("two"))
    b.message(assistant("b"))  # the abandoned branch
    b.message(user("three"), parent=first_reply)
    b.message(assistant("c", ts=4))
    folder = tmp_path / "sessions"
    folder.mkdir()
    return b.write(folder / "s.jsonl")


ONE_CALL = 10 * 3 / 1e6 + 5 * 15 / 1e6


def test_sessions_json_has_the_files_and_the_branchs_totals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(tmp_path / "none.toml"))
    path = _two_branches(tmp_path)
    assert main(["sessions", "--json", "--session-dir", str(path.parent)]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["usage"]["calls"] == 3 and summary["branch_usage"]["calls"] == 2
    assert summary["usage"]["cost"] == approx(3 * ONE_CALL)
    assert summary["branch_usage"]["cost"] == approx(2 * ONE_CALL)
    assert summary["usage"]["totalTokens"] == 45


def test_the_status_line_and_session_info_show_the_branch_and_the_file(tmp_path: Path) -> None:
    index = SessionIndex(parse_session(_two_branches(tmp_path).read_bytes()))
    projection = project(index)
    figures = FigureSource().figures(
        index,
        projection,
        model="claude-sonnet-4-5",
        provider="anthropic",
        thinking="off",
        window=200_000,
        context=context_tokens(projection),
    )
    assert figures.branch is not None and figures.branch.calls == 2 and figures.totals.calls == 3
    line = format_status(figures, 200)
    assert "branch $0.0002 · file $0.0003" in line
    lines = usage_lines(session_usage(index.entries), session_usage(projection.path))
    assert lines[0].startswith("cost of this branch: $0.0002 · 2 calls")
    assert lines[1].startswith("cost of the whole file: $0.0003 · 3 calls")


def test_session_info_lists_the_cost_of_the_branch_and_the_file(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from agent_tui.store.session import Session
    from agent_tui.tui.user_commands import session_text

    with Session.open(_two_branches(tmp_path), write=False) as session:
        figures = SimpleNamespace(context=0, window=0)  # the status line's (the app works them out)
        app = SimpleNamespace(
            session=session,
            projection=project(session.index),
            config=SimpleNamespace(resources=None, cwd=tmp_path, config_path=tmp_path / "config.toml"),
            status_figures=lambda: figures,
        )
        text = session_text(app)
    assert "cost of this branch: $0.0002 · 2 calls" in text
    assert "cost of the whole file: $0.0003 · 3 calls" in text

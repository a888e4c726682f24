"""The status line's figures: prices, session cost, last turn, and fitting 80 columns (pure)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_tui.config import ConfigError, load_config
from agent_tui.projection import pricing
from agent_tui.projection.context import project
from agent_tui.projection.figures import (
    FigureSource,
    StatusFigures,
    format_status,
    plural,
    session_title,
    short_tokens,
)
from agent_tui.projection.pricing import Usage, UsageTotals, price_for, session_usage
from agent_tui.projection.tokens import context_tokens
from tests.support.indexes import index_of
from tests.support.session_builder import Builder, assistant, user


def with_usage(message: dict[str, Any], **usage: int) -> dict[str, Any]:
    return {**message, "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, **usage}}


def test_cost_is_priced_per_message_by_its_own_model() -> None:
    b = Builder()
    b.message(user("q"))
    b.message(with_usage(assistant("a", model="claude-sonnet-4-5"), input=1_000_000, output=100_000))
    b.message(user("q2"))
    # cache reads and writes at their own prices; a dated id matches its base
    b.message(
        with_usage(
            assistant("b", model="claude-haiku-4-5-20251001"), cacheRead=1_000_000, cacheWrite=1_000_000
        )
    )
    totals = session_usage(index_of(b).entries)
    assert totals.calls == 2 and totals.priced
    assert totals.cost == pytest.approx(3.0 + 1.5 + 0.1 + 1.25)
    assert (totals.input, totals.output, totals.cache_read, totals.cache_write) == (
        1_000_000,
        100_000,
        1_000_000,
        1_000_000,
    )


def test_a_tier_applies_above_its_input_threshold() -> None:
    price = price_for("gpt-6.2-sol")
    assert price is not None
    assert price.cost(Usage(input=100_000)) == pytest.approx(0.2)
    assert price.cost(Usage(input=300_000)) == pytest.approx(1.2)  # $4/M above 272k


def test_unknown_models_show_tokens_only() -> None:
    b = Builder()
    b.message(user("q"))
    b.message(with_usage(assistant("a", model="qwen2.5-coder:14b"), input=12_000, output=3_000))
    totals = session_usage(index_of(b).entries)
    assert totals.unpriced == 1 and not totals.priced and totals.cost == 0
    figures = StatusFigures("s", "qwen2.5-coder:14b", "openai", "off", 0, 32_768, True, None, totals)
    line = format_status(figures, 80)
    assert "$" not in line and "Σ 15k tok" in line


def test_config_overrides_and_adds_prices(tmp_path: Path) -> None:
    saved = dict(pricing.PRICES)
    try:
        config = tmp_path / "config.toml"
        config.write_text(
            'provider = "openai"\n[openai]\nbase_url = "http://127.0.0.1:1/v1"\n'
            '[models."claude-sonnet-4-5"]\ncost = { input = 1, output = 2 }\n'
            '[models."my-local"]\ncost = { input = 0.5, output = 1, cache_read = 0.1, cache_write = 0.2 }\n'
        )
        load_config(path=config, env={})
        sonnet = price_for("claude-sonnet-4-5")
        assert sonnet is not None and (sonnet.base.input, sonnet.base.output, sonnet.base.cache_read) == (
            1,
            2,
            0.3,
        )
        local = price_for("my-local")
        assert local is not None and local.cost(
            Usage(1_000_000, 1_000_000, 1_000_000, 1_000_000)
        ) == pytest.approx(1.8)
        config.write_text('[models."x"]\ncost = { input = "cheap" }\n')
        with pytest.raises(ConfigError, match=r"cost\.input"):
            load_config(path=config, env={})
    finally:
        pricing.PRICES.clear()
        pricing.PRICES.update(saved)


def test_the_last_turn_counts_every_call_since_the_last_user_message() -> None:
    b = Builder()
    b.message(user("q"))
    b.message(with_usage(assistant("old"), input=999, output=999))
    b.message(user("now"))
    b.message(with_usage(assistant("", [("c1", "read", {})]), input=1000, cacheRead=500, output=20))
    b.message({"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": "x", "timestamp": 3})
    b.message(with_usage(assistant("done"), input=100, cacheRead=1500, output=30))
    index = index_of(b)
    projection = project(index)
    source = FigureSource()
    figures = source.figures(
        index,
        projection,
        model="claude-sonnet-4-5",
        provider="anthropic",
        thinking="off",
        window=200_000,
        context=context_tokens(projection),
    )
    assert figures.turn == Usage(input=3100, output=50)
    assert figures.context == 1630 and not figures.estimated
    assert figures.session == "q"  # the first message, never the file's uuid
    b.message(with_usage(assistant("more"), input=10, output=10))
    again = source.figures(
        index_of(b),
        projection,
        model=None,
        provider=None,
        thinking="off",
        window=1,
        context=context_tokens(projection),
    )
    assert again.totals.calls == 4  # a new index is read afresh


def test_session_title_is_the_name_else_the_first_message() -> None:
    b = Builder()
    assert session_title(None) == "new session"
    b.message(user("Fix the parser\nplease"))
    assert session_title(index_of(b)) == "Fix the parser"
    b.add("session_info", name="parser work")
    assert session_title(index_of(b)) == "parser work"


def figures(**overrides: object) -> StatusFigures:
    base = dict(
        session="Fix the failing parser test in src/parse.py",
        model="claude-sonnet-4-5",
        provider="anthropic",
        thinking="high",
        context=12_345,
        window=200_000,
        estimated=False,
        turn=Usage(10_234, 340),
        totals=UsageTotals(input=12_000, output=3_400, cost=0.04213, calls=3),
    )
    base.update(overrides)
    return StatusFigures(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("width", [200, 120, 100, 80, 60, 40, 24])
def test_the_line_fits_its_width_and_keeps_the_activity(width: int) -> None:
    line = format_status(figures(), width, "⠋ 1m05s")
    assert len(line) <= width
    assert line.startswith("⠋ 1m05s")


def test_at_80_columns_every_field_is_there() -> None:
    line = format_status(figures(), 78, "⠋ 12s")  # 80 minus the widget's padding
    for part in ("Fix the", "claude-sonnet-4-5 high", "12k/200k 6%", "↑10k ↓340", "$0.042"):
        assert part in line, line
    wide = format_status(figures(), 200)
    assert "anthropic/claude-sonnet-4-5 · think high" in wide and "ctx 12,345/200k (6.2%)" in wide


def test_plurals_and_short_tokens() -> None:
    assert plural(1, "token") == "1 token" and plural(2, "token") == "2 tokens"
    assert plural(1, "entry", "entries") == "1 entry" and plural(1234, "entry", "entries") == "1,234 entries"
    assert [short_tokens(n) for n in (999, 1234, 12_345, 1_234_567, 12_345_678)] == [
        "999",
        "1.2k",
        "12k",
        "1.2M",
        "12M",
    ]


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_help_names_every_thinking_level() -> None:
    import subprocess
    import sys

    from agent_tui.projection.models import THINKING_LEVELS

    out = subprocess.run([sys.executable, "-m", "agent_tui", "--help"], capture_output=True, text=True).stdout
    flat = " ".join(out.split())
    for level in THINKING_LEVELS:
        assert level in flat.split("--thinking THINKING thinking level:", 1)[1].split("--permissions")[0], (
            level
        )

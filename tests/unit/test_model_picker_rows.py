"""The model picker's rows fitted to a width: the id whole, the other columns aligned and dropped
least useful first (where from, then the window; "no key" last)."""

from __future__ import annotations

from agent_tui.projection.catalog import CatalogModel
from agent_tui.tui.screens.model_picker import Columns, fit_row

SONNET = CatalogModel("anthropic", "claude-sonnet-4-5", 200_000, "built-in", False)
GPT = CatalogModel("openai", "gpt-5.5", 272_000, "built-in", True)
LONG = CatalogModel("amazon-bedrock", "global.anthropic.claude-3-7-sonnet-latest", 200_000, "built-in", False)
LOCAL = CatalogModel("openai", "qwen2.5-coder:14b", None, "server", True)
MODELS = [SONNET, GPT, LONG, LOCAL]
COLUMNS = Columns.of(MODELS)


def test_wide_rows_show_every_column_aligned() -> None:
    rows = [fit_row(m, 100, COLUMNS).plain for m in MODELS]
    assert rows[0].split() == ["anthropic/claude-sonnet-4-5", "200k", "no", "key", "built-in"]
    assert rows[3].split() == ["openai/qwen2.5-coder:14b", "?", "server"]
    assert len({r.index("k  ") for r in rows[:3]} | {rows[3].index("?  ")}) == 1, rows  # the window aligned
    assert all(len(r) <= 100 for r in rows)


def test_narrow_rows_drop_where_from_then_the_window_never_the_id() -> None:
    for width in (72, 64, 60, 44):
        for m in MODELS:
            row = fit_row(m, width, COLUMNS).plain
            assert row.startswith(m.spec), (width, row)
            assert len(row) <= max(width, len(m.spec)), (width, row)
            assert "…" not in row
    assert fit_row(LONG, 72, COLUMNS).plain.split() == [LONG.spec, "200k", "no", "key"]
    assert fit_row(LONG, 64, COLUMNS).plain.split() == [LONG.spec, "no", "key"]
    assert fit_row(LONG, 60, COLUMNS).plain == LONG.spec
    assert fit_row(SONNET, 60, COLUMNS).plain.split() == [SONNET.spec, "200k", "no", "key", "built-in"]
    assert fit_row(SONNET, 44, COLUMNS).plain.split() == [SONNET.spec, "no", "key"]


def test_an_id_longer_than_the_width_wraps_whole() -> None:
    row = fit_row(LONG, 30, COLUMNS)
    assert row.plain == LONG.spec and row.overflow == "fold"

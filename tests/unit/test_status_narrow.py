"""Below 80 columns the status line drops fields in the order the README gives (the last turn,
then the name, the cost, the model) before the context figure loses its numbers: the context used
against the window is what a narrow terminal keeps longest."""

from __future__ import annotations

from agent_tui.projection.figures import StatusFigures, format_status
from agent_tui.projection.pricing import Usage, UsageTotals


def _figures() -> StatusFigures:
    return StatusFigures(
        "draft more", "zzz-unknown", "openai", "off", 1_815, 128_000, True, Usage(100, 20),
        UsageTotals(input=100, output=20, cost=0.0004, calls=1),
    )  # fmt: skip


def test_at_60_columns_the_context_keeps_its_figure_and_the_last_turn_goes_first() -> None:
    line = format_status(_figures(), 58)  # 60 minus the widget's padding
    assert "≈1.8k/128k 1%" in line, line
    assert "↑100" not in line, line


def test_the_context_shrinks_to_a_percentage_only_when_nothing_else_is_left() -> None:
    assert format_status(_figures(), 30) == "zzz-unknown · ≈1.8k/128k 1%"
    assert format_status(_figures(), 14) == "≈1.8k/128k 1%"
    assert format_status(_figures(), 10) == "1%"

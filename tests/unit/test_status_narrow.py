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


def _two_branches(branch: float, file: float) -> StatusFigures:
    """The sample session's figures at 80 columns, with other branches that cost too."""
    return StatusFigures(
        "Fix the failing test in parser.py", "claude-sonnet-4-5", "anthropic", "off", 105, 200_000,
        True, Usage(10, 5), UsageTotals(input=30, output=15, cost=file, calls=3),
        UsageTotals(input=20, output=10, cost=branch, calls=2),
    )  # fmt: skip


def test_the_branch_and_the_file_costs_say_which_is_which_at_every_width() -> None:
    assert format_status(_two_branches(0.0064, 0.074), 200).endswith("branch $0.0064 · file $0.074")
    line = format_status(_two_branches(0.0064, 0.074), 78)  # 80 minus the widget's padding
    assert line == "Fix the f… · claude-sonnet-4-5 · ≈105/200k 0% · ↑10 ↓5 · $0.0064 (file $0.074)", line
    assert "/$" not in line
    # longer figures: the last turn goes first, the legend stays
    line = format_status(_two_branches(0.0004, 0.0005), 78)
    assert line == "Fix the f… · claude-sonnet-4-5 · ≈105/200k 0% · $0.0004 (file $0.0005)", line
    for width in range(20, 200):
        line = format_status(_two_branches(0.0064, 0.074), width)
        assert len(line) <= width, (width, line)
        assert "$0.0064" not in line or "file $0.074" in line, (width, line)

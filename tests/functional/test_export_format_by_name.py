"""``agent-tui export FILE -o NAME.md`` writes Markdown: without --format, the output file's
extension picks the format, as the app's export prompt does (it wrote HTML into notes.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "sessions.example" / "branches.jsonl"


@pytest.mark.parametrize(
    ("name", "starts"),
    [
        ("notes.md", "# "),
        ("page.html", "<!DOCTYPE html>"),
        ("copy.jsonl", '{"type":"session"'),
        ("x.txt", "<!"),
    ],
)
def test_the_output_name_picks_the_format(tmp_path: Path, name: str, starts: str) -> None:
    out = tmp_path / name
    assert main(["export", str(SOURCE), "-o", str(out)]) == 0
    assert out.read_text().startswith(starts)


def test_an_explicit_format_wins_over_the_name(tmp_path: Path) -> None:
    out = tmp_path / "page.md"
    assert main(["export", str(SOURCE), "--format", "html", "-o", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")

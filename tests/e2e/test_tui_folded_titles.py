"""A folded line of the chat (a tool's result, a run of failed attempts) too long for the terminal
ends in "…" rather than stopping at the edge mid-word ("503 server_error: overl")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.screen_text import screen_lines
from tests.support.session_builder import Builder, assistant, tool_result, user
from tests.support.tui_fixtures import make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

LONG_LINE = "drwxr-xr-x  12 someone staff 384 Dec  1 19:00 a-folder-with-a-long-name-that-goes-on"


async def test_a_long_folded_title_ends_in_an_ellipsis_at_80_columns(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("list the files"))
    b.message(assistant("", (("c1", "bash", {"command": "ls -la"}),)))
    b.message(tool_result("c1", LONG_LINE + "\nmore", "bash"))
    b.message(assistant("Listed."))
    app = make_app(tmp_path, b.write(tmp_path / "s.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = [row.rstrip() for row in screen_lines(app) if "↳ bash: drwxr-xr-x" in row]
        assert len(rows) == 1, screen_lines(app)
        assert rows[0].endswith("…") and len(rows[0]) <= 80, rows[0]

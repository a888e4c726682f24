"""``ascii_symbols = true``: the marks that lead the chat's lines and the branch notice are ASCII
too, not only the tree's (``⑂`` ``⚿`` ``⧉`` are tofu in many terminal fonts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.tui import symbols
from tests.support.pilot import notices, select, wait_for
from tests.support.screen_text import screen_lines
from tests.support.tui_fixtures import make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

#: the marks the chat, the tree and the notices lead lines with, in the Unicode set
MARKS = set("⑂◀⋯⚠↪❯●↳⚙⊞✎✦⚲◇⚿⧉✗✓")


async def test_with_ascii_symbols_the_chat_and_the_branch_notice_use_ascii_marks(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("ascii_symbols = true\n")
    app = make_app(tmp_path, sample_session(tmp_path))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            shown = "\n".join(screen_lines(app))
            assert "hid r1 from the model" in shown and "label" in shown, shown
            assert not MARKS & set(shown), f"Unicode marks on screen: {MARKS & set(shown)}\n{shown}"
            await select(pilot, app, "a2")
            await pilot.press("enter")
            await wait_for(pilot, lambda: any("continuing from a2" in n for n in notices(app)), "the notice")
            notice = next(n for n in notices(app) if "continuing from a2" in n)
            assert notice == "continuing from a2; 6 later entries are now a side branch Y"
            await pilot.press("escape")  # the tree's drawer, if any
            await wait_for(pilot, lambda: "continued from" in "\n".join(screen_lines(app)), "the marker")
            shown = "\n".join(screen_lines(app))
            assert not MARKS & set(shown), f"Unicode marks on screen: {MARKS & set(shown)}\n{shown}"
    finally:
        symbols.use_ascii(False)


def test_only_the_leading_mark_is_swapped() -> None:
    symbols.use_ascii(True)
    try:
        assert symbols.lead("⚿ allowed once: bash echo ⑂") == "? allowed once: bash echo ⑂"
        assert symbols.lead("plain ⚙") == "plain ⚙"
    finally:
        symbols.use_ascii(False)
    assert symbols.lead("⚿ allowed once") == "⚿ allowed once"

"""The footer's right-hand key is the command palette's, wherever the keymap puts it (with
``keymap = "pi"`` Ctrl+P is the next model and the palette is on F10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.pilot import wait_for
from tests.support.screen_text import screen_lines
from tests.support.tui_fixtures import make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


@pytest.mark.parametrize(
    ("config", "shown", "not_shown"),
    [
        ('keymap = "pi"\n', "f10 palette", "Next model"),
        ('[keys]\npalette = "f12"\n', "f12 palette", "^p palette"),
        ("", "^p palette", "f10"),
    ],
    ids=["pi", "keys table", "default"],
)
async def test_the_footer_shows_the_palettes_own_key(
    tmp_path: Path, config: str, shown: str, not_shown: str
) -> None:
    (tmp_path / "config.toml").write_text(config)
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: "palette" in screen_lines(app)[-1], "the footer")
        for _ in range(3):
            await pilot.pause()
        footer = screen_lines(app)[-1]
        assert shown in footer and not_shown not in footer, footer


async def test_quit_moved_in_the_keys_table_leaves_ctrl_q_alone(tmp_path: Path) -> None:
    """Textual's own Ctrl+Q binding had no id: with ``quit = "f12"`` both keys quit."""
    (tmp_path / "config.toml").write_text('[keys]\nquit = "f12"\n')
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: "palette" in screen_lines(app)[-1], "the footer")
        await pilot.press("ctrl+q")
        for _ in range(3):
            await pilot.pause()
        assert app.is_running and app.return_code is None, "Ctrl+Q quit"
        await pilot.press("f12")
        await wait_for(pilot, lambda: app.return_code is not None or not app.is_running, "F12 quits")

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

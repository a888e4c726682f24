"""The first-run "no model configured" notice is on screen whole at the smallest size the app
supports, 60x15, as at 80x24 (at 60x15 its last line, "the README.", was cut off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.model_env import without_provider_env
from tests.support.screen_text import assert_whole
from tests.support.tui_fixtures import make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


@pytest.mark.parametrize("size", [(60, 15), (80, 24)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_no_model_notice_is_whole_on_a_small_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    without_provider_env(monkeypatch)
    (tmp_path / "config.toml").write_text("")
    app = make_app(tmp_path, None, agent_factory=None)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.pause()
        notice = app.main_screen.notice
        text = str(notice.render())
        assert "LM Studio" in text and text.rstrip().endswith("README."), text
        assert_whole(app, notice, text)

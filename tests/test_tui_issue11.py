"""Issue 11 in the app: the status line, figures that agree, errors in one line, the small ones."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Collapsible

from tests.test_tui_actions import SIZE, wait_for
from tests.tui_fixtures import ScriptedFactory, make_app


async def test_the_thinking_title_loses_its_ellipsis_when_the_reply_is_done(tmp_path: Path) -> None:
    factory = ScriptedFactory(reply="Done.")
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "turn done")
        titles = [str(c.title) for c in app.chat.query(Collapsible) if "thinking" in str(c.title)]
        assert titles == ["thinking (17 characters)"], titles

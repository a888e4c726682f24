"""The last ``!cmd``'s output stays open in the chat once the command ends."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Collapsible

from agent_tui.tui.widgets.chat_entry import ChatEntry
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


def runs(app: object) -> list[ChatEntry]:
    return [
        w
        for w in app.chat.children  # type: ignore[attr-defined]
        if isinstance(w, ChatEntry) and w.entry.role == "bashExecution"
    ]


def is_open(entry: ChatEntry) -> bool:
    (box,) = entry.query(Collapsible).filter(".tool-output")
    return not box.collapsed


async def test_the_last_bang_command_stays_open(tmp_path: Path) -> None:
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("!echo first-output")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(runs(app)) == 1, "the first run in the chat")
        await pilot.pause()
        (first,) = runs(app)
        assert is_open(first), "the run that just ended shows its output"
        assert "first-output" in " ".join(str(s.render()) for s in first.query("Static"))
        app.composer.set_text("!echo second-output")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(runs(app)) == 2, "the second run in the chat")
        await pilot.pause()
        assert is_open(runs(app)[-1]), "the newest run is open"
        # a fold by the user sticks across the chat's next syncs
        (box,) = runs(app)[-1].query(Collapsible).filter(".tool-output")
        box.collapsed = True
        await app.refresh_views(app.index.leaf_id)
        await pilot.pause()
        assert not is_open(runs(app)[-1])

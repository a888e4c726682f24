"""Keys typed right after Enter, before the app has taken the message, stay in the composer: the
send cleared the whole composer, so "also " typed on after "list⏎" was lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


@pytest.mark.parametrize("first", ["list the files", "/session", "!true"], ids=["send", "slash", "command"])
async def test_what_is_typed_after_enter_stays(tmp_path: Path, first: str) -> None:
    factory = ScriptedFactory(reply="Listed.")
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.composer.set_text(first)
        # Enter and the next keys arrive together, as a typist's do: the app reads them all before
        # the message reaches the app's handler
        for key, character in [("enter", None), *[(c if c != " " else "space", c) for c in "also "]]:
            app.post_message(events.Key(key, character))
        await wait_for(
            pilot, lambda: "also" in app.composer.text and first not in app.composer.text, "the send"
        )
        await pilot.pause()
        assert app.composer.text == "also ", repr(app.composer.text)

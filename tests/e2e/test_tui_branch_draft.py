"""Branching to a past message while a draft is typed: the draft stays, and Up brings the message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tui_fixtures import SIZE, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


async def test_up_brings_the_text_of_the_message_branched_to(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("my draft")
        app.composer.focus()
        await pilot.pause()
        await app.branch_to("u3")
        await pilot.pause()
        assert app.composer.text == "my draft", "the draft is never overwritten"
        notes = [str(n.message) for n in app._notifications]
        assert any("Up brings that message's text" in n for n in notes), notes
        await pilot.press("up")
        assert app.composer.text == "Actually, explain the fix instead", "one Up brings it"
        await pilot.press("up")
        assert app.composer.text == "Fix the failing test in parser.py", "then the branch's prompts"
        await pilot.press("down", "down")
        assert app.composer.text == "my draft", "Down comes back to the draft"

"""Keys that arrive together (a fast typist, a paste without bracketed paste, tmux send-keys) are
one burst: the app forwards each to whatever had the focus when it was read, before any of them is
handled. Text typed in a pane that takes none must still reach the composer whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from tests.support.pilot import notices, select, wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


def burst(app: object, text: str) -> None:
    """Post every key of ``text`` before the app handles the first, as a terminal read delivers them."""
    for character in text:
        app.post_message(events.Key(character, character))  # type: ignore[attr-defined]


@pytest.mark.parametrize("pane", ["f1", "f3"])
async def test_a_burst_typed_in_a_pane_reaches_the_composer_whole(tmp_path: Path, pane: str) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press(pane)
        assert app.focused is not app.composer
        burst(app, "word")
        await wait_for(pilot, lambda: app.composer.text.startswith("w"), "the first key in the composer")
        for _ in range(5):
            await pilot.pause()
        assert app.composer.text == "word"
        assert app.focused is app.composer


async def test_a_message_and_enter_typed_in_the_tree_in_one_burst_is_sent_not_a_branch(
    tmp_path: Path,
) -> None:
    path = sample_session(tmp_path)
    factory = ScriptedFactory()
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f1")
        burst(app, "word")
        app.post_message(events.Key("enter", None))
        await wait_for(
            pilot, lambda: bool(factory.turns) and factory.turns[0].prompts == ["word"], "the send"
        )
        assert app.composer.text == ""
        assert not [n for n in notices(app) if "continuing from" in n or "Already there" in n], (
            "the Enter went to the composer, not to the tree"
        )


async def test_tree_keys_in_a_burst_stay_tree_keys(tmp_path: Path) -> None:
    """Only text is redirected: a letter the tree binds acts on the tree, as typed one at a time."""
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await select(pilot, app, "a5")
        before = path.read_text().count("\n")
        burst(app, "h")
        await wait_for(pilot, lambda: path.read_text().count("\n") == before + 1, "the hide")
        assert app.composer.text == ""


@pytest.mark.parametrize("pane", ["f1", "f3"])
async def test_a_paste_in_a_pane_goes_to_the_composer(tmp_path: Path, pane: str) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press(pane)
        assert app.focused is not app.composer
        app.post_message(events.Paste("pasted from the terminal"))
        await wait_for(pilot, lambda: app.composer.text == "pasted from the terminal", "the paste")
        assert app.focused is app.composer

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


async def test_a_slash_command_and_its_argument_typed_with_enter_in_one_burst_keep_the_argument(
    tmp_path: Path,
) -> None:
    """The menu of slash commands follows the text through TextArea.Changed, which queues behind the
    keys of a burst: the Enter of ``/branch a1⏎`` arrived while the menu still offered ``/branch``
    and ran the highlighted command without its argument (no question, "Already there")."""
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.composer.focus()
        await pilot.pause()
        burst(app, "/branch a1")
        app.post_message(events.Key("enter", None))
        await wait_for(pilot, lambda: app.composer.text == "", "the command run")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ChoiceScreen", "the branch question")
        assert app.screen.title_text.startswith("Summarize branch? (")  # type: ignore[attr-defined]


async def test_enter_on_a_stale_menu_runs_the_command_typed_not_the_one_highlighted(tmp_path: Path) -> None:
    """``/clear⏎`` in one burst after the menu had last seen ``/c`` (``/compact`` highlighted): the
    Enter runs what the text names now."""
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.composer.focus()
        await pilot.pause()
        burst(app, "/c")
        await wait_for(pilot, lambda: app.composer.menu is not None and app.composer.menu.shown, "the menu")
        chosen = app.composer.menu.chosen()  # type: ignore[union-attr]
        assert chosen is not None and chosen.insert.startswith("/compact")
        burst(app, "lear")
        app.post_message(events.Key("enter", None))
        await wait_for(pilot, lambda: app.composer.text == "", "the command run")
        assert app.composer.input_history[-1] == "/clear"

"""In the app: the status line, figures that agree, errors in one line, the small ones."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Collapsible, Input, Label, Static

from agent_tui.agent.events import EntryAppended, Retrying, TextDelta, TurnDone
from agent_tui.projection.preview import Change
from agent_tui.store.entries import now_ms
from agent_tui.tui import symbols
from agent_tui.tui.agent_bridge import ModelChoice
from agent_tui.tui.screens.prompt import PromptScreen
from agent_tui.tui.widgets.chat_entry import ChatEntry, LazyCollapsible, is_failed_attempt
from agent_tui.tui.widgets.streaming_reply import StreamingReply
from tests.support.pilot import select, wait_for
from tests.support.screen_text import assert_whole
from tests.support.session_builder import Builder, assistant, user
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app, sample_session


async def test_the_thinking_title_loses_its_ellipsis_when_the_reply_is_done(tmp_path: Path) -> None:
    factory = ScriptedFactory(reply="Done.")
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "turn done")
        titles = [str(c.title) for c in app.chat.query(Collapsible) if "thinking" in str(c.title)]
        assert titles == ["thinking (17 characters)"], titles


# -- the status line ---------------------------------------------------------------------------


class RetryingTurns:
    """Two failed attempts (appended as the loop does), retries in between, then a reply."""

    def __init__(self, session: Any, hold: asyncio.Event) -> None:
        self.session = session
        self.hold = hold
        self.retrying = asyncio.Event()

    def abort(self) -> None:
        self.hold.set()

    async def run(self, prompt: str) -> AsyncIterator[Any]:
        user = self.session.append_message({"role": "user", "content": prompt, "timestamp": now_ms()})
        yield EntryAppended(user.id, "message")
        for attempt in (1, 2):
            partial = "Here is the sta" if attempt == 1 else ""  # the first dropped mid-stream
            if partial:
                yield TextDelta(partial)
            failed = {
                **assistant(partial),
                "stopReason": "error",
                "errorMessage": "could not reach api.example.com: connection refused",
            }
            entry = self.session.append_message(failed)
            yield EntryAppended(entry.id, "message")
            yield Retrying(attempt, 4.0, "could not reach api.example.com: connection refused", 3)
            if attempt == 2:
                self.retrying.set()
                await self.hold.wait()
        yield TextDelta("Here at last.")
        entry = self.session.append_message(assistant("Here at last."))
        yield EntryAppended(entry.id, "message")
        yield TurnDone("stop")


async def test_retries_are_one_updating_status_line_and_failed_attempts_stay_folded(tmp_path: Path) -> None:
    hold = asyncio.Event()
    made: list[RetryingTurns] = []

    def factory(session: Any, choice: Any) -> RetryingTurns:
        made.append(RetryingTurns(session, hold))
        return made[-1]

    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: bool(made) and made[0].retrying.is_set(), "the second retry")
        await pilot.pause()
        line = app.main_screen.status_line.text
        assert "retrying in 4 s (retry 2 of 3): could not reach" in line, line
        assert len(line) <= 78
        assert not [n for n in app._notifications if "etry" in n.message], "no toast per retry"
        hold.set()
        await wait_for(pilot, lambda: not app.busy, "turn done")
        assert "retrying" not in app.main_screen.status_line.text
        # the run of failed attempts is one folded line, the first's; it holds them both
        failed = [e for e in app.chat.query(ChatEntry) if is_failed_attempt(e.entry)]
        shown = [e for e in failed if e.display]
        assert len(failed) == 2 and shown == failed[:1]
        (folded,) = shown[0].query(LazyCollapsible)
        assert folded.collapsed
        assert str(folded.title).startswith("✗ 2 failed attempts, the last: could not reach"), folded.title
        assert not app.chat.query(".error"), "no red blocks in the chat"
        # the first attempt's streamed text went into the fold: the reply shown is the last one
        assert [r.text for r in app.chat.query(StreamingReply)] == ["Here at last."]
        folded.collapsed = False
        await wait_for(pilot, lambda: bool(folded.query(Static)), "the attempts shown")
        inside = "".join(str(w.render()) for w in folded.query(Static))
        assert inside.count("✗ could not reach api.example.com") == 2, inside
        assert "Here is the sta" in inside


async def test_the_status_line_shows_name_model_context_turn_and_cost(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("Fix the parser please"))
    b.message(
        {
            **assistant("done"),
            "usage": {
                "input": 2_000,
                "output": 500,
                "cacheRead": 10_000,
                "cacheWrite": 0,
                "totalTokens": 12_500,
            },
        }
    )
    b.add("session_info", name="parser work")
    path = b.write(tmp_path / "s.jsonl")
    app = make_app(tmp_path, path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        line = app.main_screen.status_line.text
        # claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read per Mtok = 0.006 + 0.0075 + 0.003
        for part in ("parser work", "claude-sonnet-4-5", "12k/200k 6%", "↑12k ↓500", "$0.017"):
            assert part in line, line
        assert app.panel.model is not None and app.panel.model.total == 12_500
        assert "s.jsonl" not in line
        app.busy = True
        await pilot.pause()
        assert app.main_screen.status_line.text.startswith("⠋ streaming… 0s") or "streaming…" in (
            app.main_screen.status_line.text
        )
        app.busy = False


async def test_the_header_names_the_model_the_next_send_uses(tmp_path: Path) -> None:
    b = Builder()
    b.add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    b.message(user("q"))
    b.message(assistant("a"))
    path = b.write(tmp_path / "s.jsonl")
    config = tmp_path / "config.toml"
    config.write_text("")
    choice = ModelChoice(
        provider="openai", model="gpt-4o", base_url="http://127.0.0.1:9/v1", config_path=config
    )
    app = make_app(tmp_path, path, model=choice, agent_factory=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.panel.model is not None and app.panel.model.model_name == "openai/gpt-4o"
        assert app.panel.model.window == 128_000
        assert "gpt-4o" in app.main_screen.status_line.text


# -- errors ------------------------------------------------------------------------------------


async def test_a_sessions_folder_that_cannot_be_made_is_one_line_and_the_message_stays(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the sessions folder should be")
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory(), session_dir=blocker / "sessions")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"keep me", "enter")
        await pilot.pause()
        assert app.is_running
        assert app.composer.text == "keep me", "the typed message is not lost"
        notice = str(app.main_screen.notice.render())
        assert "cannot send: cannot create a session in" in notice and "\n" not in notice.strip()
        assert app.session is None


async def test_model_with_no_key_or_an_unknown_name_says_so_before_appending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    path = sample_session(tmp_path)
    size = path.stat().st_size
    (tmp_path / "config.toml").write_text('[anthropic]\napi_key = "sk-ant-test-not-real"\n')
    app = make_app(tmp_path, path, agent_factory=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.composer.set_text("/model openai/gpt-4o")  # no OpenAI key anywhere
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: "cannot switch to openai/gpt-4o" in str(app.main_screen.notice.render()), "said"
        )
        assert "OPENAI_API_KEY" in str(app.main_screen.notice.render())
        app.composer.set_text("/model anthropic/claude-sonnet-9-9")  # a key, but no such model
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: "unknown model 'claude-sonnet-9-9'" in str(app.main_screen.notice.render()), "said"
        )
        assert path.stat().st_size == size, "nothing appended"
        app.composer.set_text("/model anthropic/claude-haiku-4-5")
        await pilot.press("enter")
        await wait_for(pilot, lambda: path.stat().st_size > size, "a known model with a key is appended")


# -- the small ones ----------------------------------------------------------------------------


async def test_a_second_enter_does_not_stack_continued_here_markers(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.index.leaf_id not in (None, "x1"), "branch appended")
        size = path.stat().st_size
        await select(pilot, app, "a2")
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert path.stat().st_size == size, "no second marker"
        assert any("Already there" in str(n.message) for n in app._notifications)


async def test_the_rename_dialog_has_the_name_selected_typing_replaces_it(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("q"))
    b.add("session_info", name="old name")
    app = make_app(tmp_path, b.write(tmp_path / "s.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()

        async def open_dialog() -> Input:
            app.action_rename()
            await wait_for(
                pilot,
                lambda: isinstance(app.screen, PromptScreen) and bool(app.screen.query(Input)),
                "the dialog",
            )
            await pilot.pause()
            return app.screen.query_one(Input)

        field = await open_dialog()
        assert field.value == "old name", "the name to correct is there"
        await pilot.press(*"new", "enter")
        await wait_for(pilot, lambda: app.index.name == "new", "renamed to what was typed, not 'old namenew'")
        field = await open_dialog()
        assert field.value == "new"
        await pilot.press("end", *"er", "enter")
        await wait_for(pilot, lambda: app.index.name == "newer", "the name corrected in place")


async def test_exports_go_to_the_exports_folder_by_default_and_the_hint_fits(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.action_export()
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, PromptScreen) and bool(app.screen.query(Input)),
            "the dialog",
        )
        field = app.screen.query_one(Input)
        assert field.value.startswith(str(tmp_path / "exports")), field.value
        hint = next(label for label in app.screen.query(Label) if "format" in str(label.render()))
        assert_whole(app, hint, str(hint.render()))  # read off the screen: wrapped, not cut, at 80 columns
        await pilot.press("enter")
        await wait_for(pilot, lambda: any((tmp_path / "exports").glob("*.html")), "exported there")
        assert not any((tmp_path / "project").glob("*.html")), "not in the project root"


async def test_ascii_symbols_replace_the_fork_mark(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("ascii_symbols = true\n")
    app = make_app(tmp_path, sample_session(tmp_path))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            labels = app.session_tree.visible_labels()
            assert any("Y1" in label for label in labels) and not any("⑂" in label for label in labels), (
                labels
            )
            assert not any("◀" in label for label in labels)
    finally:
        symbols.use_ascii(False)


async def test_the_no_model_notice_is_shown_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "config.toml").write_text("")
    app = make_app(tmp_path, None, agent_factory=None)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        notice = app.main_screen.notice
        text = str(notice.render())
        assert "LM Studio :1234" in text and "Ollama" in text
        lines = notice.render_lines(notice.region.reset_offset)
        shown = " ".join("".join(seg.text for seg in line) for line in lines)
        assert "LM Studio" in shown, "the last example is on screen, not cut off"


async def test_the_edit_preview_predicts_the_figure_the_panel_shows_after(tmp_path: Path) -> None:
    """The figure is reported usage + estimate; an edit voids the usage, so the preview's "after"
    is the estimate of the edited request, and the panel shows exactly that after the hide."""
    b = Builder()
    b.message(user("question " * 30))
    target = b.message(assistant("a long answer " * 40))
    b.message(user("next"))
    b.message({**assistant("short"), "usage": {"input": 5_000, "output": 20, "totalTokens": 5_020}})
    path = b.write(tmp_path / "s.jsonl")
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, target)
        await wait_for(pilot, lambda: isinstance(app.edit_change("hide", target), Change), "the preview")
        change = app.edit_change("hide", target)
        assert isinstance(change, Change)
        assert app.panel.model is not None and change.tokens_before == app.panel.model.total == 5_020
        await pilot.press("h")
        await wait_for(
            pilot, lambda: app.panel.model is not None and app.panel.model.total != 5_020, "hidden"
        )
        assert app.panel.model.total == change.tokens_after


async def test_one_fork_in_the_footer_and_one_theme_command_in_the_palette(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        shown = [
            b.description
            for _, b, enabled, _ in app.active_bindings.values()
            if b.show and enabled and b.description == "Fork"
        ]
        assert len(shown) == 1, shown
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert sum(1 for t in titles if "theme" in t.lower()) == 1, titles

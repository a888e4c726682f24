"""The app opening a big file without a current sidecar: its end is shown at once, read-only and
marked "indexing…", and a message typed meanwhile is held in the composer and sent once the whole
file is indexed (``AGENT_TUI_SLOW_OPEN_BYTES`` makes a small file count as big)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent_tui.store.session import Session
from agent_tui.tui.app import AgentTuiApp
from tests.support.pilot import wait_for
from tests.support.screen_text import screen_lines
from tests.support.session_builder import Builder, assistant, user
from tests.support.tui_fixtures import ScriptedFactory, make_app

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]


def screen_text(app: AgentTuiApp) -> str:
    return "\n".join(screen_lines(app))


def _session(tmp_path: Path) -> Path:
    b = Builder()
    b.message(user("the old question"))
    b.message(assistant("the old answer"))
    kept = b.message(user("the kept question"))
    b.message(assistant("the kept answer"))
    b.add("compaction", summary="what came before", firstKeptEntryId=kept, tokensBefore=100)
    b.message(user("the last question"))
    b.message(assistant("TAILMARK the last answer"))
    return b.write(tmp_path / "s.jsonl")


async def test_a_message_typed_while_indexing_waits_and_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TUI_SLOW_OPEN_BYTES", "1")
    release = threading.Event()
    whole = AgentTuiApp._load_session

    def slow_load(path: Path, notify):  # type: ignore[no-untyped-def]
        release.wait(30)  # the whole file's index, held until the test lets it go
        return whole(path, notify)

    monkeypatch.setattr(AgentTuiApp, "_load_session", staticmethod(slow_load))
    factory = ScriptedFactory()
    app = make_app(tmp_path, _session(tmp_path), agent_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "TAILMARK" in screen_text(app), "the tail on screen")
        assert app.session is not None and app.session.partial and app.session.read_only
        assert "indexing" in screen_text(app)
        assert "ctx" not in app.main_screen.status_line.text and "%" not in app.main_screen.status_line.text
        await pilot.press(*"hello there", "enter")
        await pilot.pause(0.3)
        assert not factory.turns  # held: nothing sent, the text still typed
        assert "hello there" in app.composer.text
        release.set()
        await wait_for(pilot, lambda: bool(factory.turns) and bool(factory.turns[0].prompts), "the send")
        assert factory.turns[0].prompts == ["hello there"]
        assert app.session is not None and not app.session.partial and not app.session.read_only
        await wait_for(pilot, lambda: "indexing" not in screen_text(app), "the indexing notice gone")
    with Session.open(tmp_path / "s.jsonl", write=False) as session:
        texts = [
            str((e.message or {}).get("content")) for e in session.index.active_path() if e.role == "user"
        ]
    assert texts[-1] == "hello there"  # appended to the whole file's branch, after the tail

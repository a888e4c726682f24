"""A count of one reads "1 token", "1 line", "1 character", "1 entry", "1 message" wherever it
is shown: the edit preview, the exports, the copy notices."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.library.export import export_bytes
from agent_tui.store.session import Session
from tests.support.pilot import notices, select, wait_for
from tests.support.session_builder import Builder, user
from tests.support.tui_fixtures import make_app

pytestmark = [pytest.mark.timeout(60)]


def _one_of_each(path: Path) -> Path:
    b = Builder()
    b.message(user("ok"))  # a one-token message
    b.message({"role": "assistant", "content": [{"type": "text", "text": "y"}], "stopReason": "stop"})
    b.message({"role": "bashExecution", "command": "pwd", "output": "/tmp", "exitCode": 0, "timestamp": 2})
    return b.write(path)


def test_the_exports_say_1_line_and_1_entry(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("ok"))
    with Session.open(b.write(tmp_path / "one.jsonl"), write=False) as session:
        markdown = export_bytes(session.index, "md").decode()
    assert "1 entry" in markdown and "1 entries" not in markdown
    assert "1 message" in markdown and "1 messages" not in markdown
    with Session.open(_one_of_each(tmp_path / "s.jsonl"), write=False) as session:
        html = export_bytes(session.index, "html").decode()
    assert "output · 1 line · ok" in html


@pytest.mark.slow
async def test_the_preview_and_the_copy_notice_say_1_token_and_1_character(tmp_path: Path) -> None:
    path = _one_of_each(tmp_path / "s.jsonl")
    app = make_app(tmp_path, path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await select(pilot, app, "e0001")
        lines = app.edit_preview_lines("e0001")
        assert "replace e0001: 1 token now (the editor counts as you type)" in lines, lines
        assert app.replace_count("e0001", "ok").startswith("replacement 1 token ")
        await app.run_slash("copy", "")
        await wait_for(pilot, lambda: any("Copied the last reply" in n for n in notices(app)), "copied")
        assert "Copied the last reply (1 character)." in notices(app)


@pytest.mark.slow
async def test_the_chat_says_1_character_and_1_more_line(tmp_path: Path) -> None:
    """The streamed thinking's title, a capped text's "show more", a clipped tool result."""
    from textual.widgets import Collapsible

    from agent_tui.tui.widgets.capped_text import CappedText
    from agent_tui.tui.widgets.chat_entry import clip_lines

    assert clip_lines("a\nb\nc", limit=2).endswith("… 1 more line")
    assert clip_lines("a\nb\nc\nd", limit=2).endswith("… 2 more lines")
    capped = CappedText("x" * 30_001)  # one line: the hidden middle is characters only
    capped.shown = capped.tail_start - 1
    assert capped._label() == "… 1 more character: show more"
    app = make_app(tmp_path)
    async with app.run_test() as pilot:
        reply = await app.chat.start_reply()
        reply.add_thinking("h")
        await reply.flush()
        await pilot.pause()
        title = str(reply.query_one("#reply-thinking", Collapsible).title)
        assert "(1 character)" in title, title

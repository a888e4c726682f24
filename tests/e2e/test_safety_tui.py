"""The chat never lays out megabytes of text up front: big messages are shown capped."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Static

from tests.support.session_builder import Builder, assistant, tool_result, user
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = pytest.mark.timeout(120)

LINE = "A line of a very long reply, with **markdown** and `code` in it, number {}.\n"


def _big(lines: int, tag: str) -> str:
    return "".join(LINE.format(f"{tag}{i}") for i in range(lines))


async def test_a_big_message_is_shown_capped_with_show_more(tmp_path: Path) -> None:
    from agent_tui.tui.widgets.capped_text import HEAD_CHARS, PAGE_CHARS, TAIL_CHARS, CappedText
    from agent_tui.tui.widgets.chat_entry import ChatEntry

    big_user = _big(30_000, "u")  # 2.3 MB
    big_reply = _big(15_000, "a") + "THE END"
    b = Builder()
    b.message(user(big_user))
    b.message(assistant(big_reply, calls=[("c1", "bash", {"command": "cat log"})]))
    b.message(tool_result("c1", "x" * 3_000_000, name="bash"))  # one 3 MB line
    b.message(user("small"))
    path = b.write(tmp_path / "big.jsonl")
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        entries = {w.entry.id: w for w in app.chat.query(ChatEntry)}
        user_entry, reply_entry = entries["e0001"], entries["e0002"]
        for entry, text in ((user_entry, big_user), (reply_entry, big_reply)):
            (capped,) = entry.query(CappedText)
            shown = [str(s.render()) for s in capped.query(Static) if not isinstance(s, Button)]
            assert sum(len(part) for part in shown) <= HEAD_CHARS + TAIL_CHARS
            assert shown[0].startswith(text[:40]) and text.rstrip("\n").endswith(shown[-1].rstrip("\n")[-40:])
            (button,) = capped.query(Button)
            assert "more lines" in str(button.label) and "show more" in str(button.label)
        assert "THE END" in str(reply_entry.query_one(CappedText).query(Static).last().render())
        assert "small" in str(entries["e0004"].query(Static).first().render())

        # the tool result's one 3 MB line: capped inside its collapsible, once opened
        from textual.widgets import Collapsible

        collapsible = entries["e0003"].query(Collapsible).first()
        collapsible.collapsed = False
        await pilot.pause()
        (capped,) = entries["e0003"].query(CappedText)
        assert "more characters" in str(capped.query(Button).first().label)

        # show more: one page of the hidden middle at a time, the count going down
        (capped,) = user_entry.query(CappedText)
        button = capped.query_one(Button)
        before = str(button.label)
        button.press()
        await pilot.pause()
        pages = [str(w.render()) for w in capped.query(".capped-page")]
        assert len(pages) == 1 and len(pages[0]) <= PAGE_CHARS
        assert big_user[capped.shown - len(pages[0]) - 1 : capped.shown].strip() == pages[0].strip()
        assert str(capped.query_one(Button).label) != before


async def test_show_more_reaches_the_end_and_the_whole_text_is_shown(tmp_path: Path) -> None:
    from agent_tui.tui.widgets.capped_text import CappedText

    text = _big(1_500, "m")  # 117 KB: capped; the middle is two pages
    b = Builder()
    b.message(user(text))
    app = make_app(tmp_path, b.write(tmp_path / "s.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        capped = app.chat.query_one(CappedText)
        presses = 0
        while capped.query(Button):
            capped.query_one(Button).press()
            await pilot.pause()
            presses += 1
        assert presses == 2
        shown = [str(w.render()) for w in capped.query(Static) if not isinstance(w, Button)]
        assert "\n".join(part.rstrip("\n") for part in shown) == text.rstrip("\n")


def test_head_and_tail_cut_at_lines_and_characters() -> None:
    from agent_tui.tui.widgets.capped_text import HEAD_LINES, TAIL_LINES, head_and_tail, is_big

    text = "".join(f"line {i}\n" for i in range(1000))
    head, tail, hidden, chars = head_and_tail(text)
    assert head.splitlines() == [f"line {i}" for i in range(HEAD_LINES)]
    assert tail.splitlines() == [f"line {i}" for i in range(1000 - TAIL_LINES, 1000)]
    assert hidden == 1000 - HEAD_LINES - TAIL_LINES
    assert head + text[len(head) : len(head) + chars] + tail == text
    assert is_big(text) and not is_big("short\n" * 10)

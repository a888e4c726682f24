"""The plain tail of a streamed reply: a long open fence renders only its new lines as it grows,
and the reply's last paragraph is markdown once the reply is complete."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Markdown, Static

from agent_tui.tui.widgets.streaming_reply import StreamingReply
from agent_tui.tui.widgets.tail_lines import TailLines
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

CODE = "".join(f"    value_{i} = compute({i})  # line {i}\n" for i in range(150))


def plain(reply: StreamingReply) -> str:
    """The tail's text: what the reply shows plain."""
    return reply.query_one("#reply-tail", TailLines).text


async def test_a_long_open_fence_stays_in_the_tail_until_it_is_highlighted(tmp_path: Path) -> None:
    reply_text = "Here it comes.\n\n```python\n" + CODE + "```\n\nThat is all.\n\n"
    factory = ScriptedFactory(reply=reply_text, chunks=3, hold=True)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set(), "streaming")
        reply = app.chat.streaming
        assert reply is not None
        await reply.flush()
        await pilot.pause()
        tail = reply.query_one("#reply-tail", TailLines)
        assert plain(reply) == reply.tail_text
        assert reply.tail_text.startswith("```python\n    value_0")
        rows = [tail.render_line(y).text for y in range(tail.size.height)]
        assert rows[0] == "```python" and rows[1] == "    value_0 = compute(0)  # line 0", rows[:2]
        assert len(reply.query(TailLines)) == 1, "one widget, however long the fence"
        factory.turns[0].release.set()
        await wait_for(
            pilot,
            lambda: not app.busy and not reply.rendering and bool(reply.query(".code.highlighted")),
            "the turn and the fence's render",
        )
        await pilot.pause()
        assert plain(reply) == "", "once highlighted, the plain copy is gone"
        assert reply.query(".code.highlighted"), "the fence is highlighted"


async def test_the_last_paragraph_of_a_finished_reply_is_markdown(tmp_path: Path) -> None:
    factory = ScriptedFactory(reply="First paragraph.\n\nHello **bold** world.", chunks=2)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "turn done")
        reply = next(w for w in app.chat.children if isinstance(w, StreamingReply))
        await pilot.pause()
        assert plain(reply) == "", "nothing is left as plain text"
        shown = " ".join(str(block.source) for block in reply.query(Markdown))
        assert "Hello **bold** world." in shown


async def test_a_reply_that_ends_inside_a_long_fence_is_highlighted_off_the_loop(tmp_path: Path) -> None:
    factory = ScriptedFactory(reply="The code:\n\n```python\n" + CODE.rstrip("\n"), chunks=3)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "turn done")
        reply = next(w for w in app.chat.children if isinstance(w, StreamingReply))
        await wait_for(
            pilot, lambda: not reply.rendering and bool(reply.query(".code.highlighted")), "highlighted"
        )
        await pilot.pause()
        assert plain(reply) == ""
        assert not [f for m in reply.query(Markdown) for f in m.query("MarkdownFence")], "not on the loop"
        headers = [str(h.render()) for h in reply.query(".code-header").results(Static)]
        assert headers == ["⧉ copy python (150 lines)"], headers
        header = reply.query(".code-header").first()
        assert getattr(header, "code", "").endswith("value_149 = compute(149)  # line 149\n"), (
            "the last line kept"
        )


async def test_a_very_long_open_fence_renders_each_line_once_as_it_streams(tmp_path: Path) -> None:
    """A flush renders the lines that came since the last one and the unfinished last line, not
    the whole open fence again (a Static holding the tail rendered all of it at every flush)."""
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        reply = await app.chat.start_reply()
        tail = reply.query_one("#reply-tail", TailLines)
        code = "```python\n" + "".join(f"x_{i} = {i}\n" for i in range(1000))
        costs: list[tuple[int, int]] = []  # (lines rendered, lines that came) of each flush
        for at in range(0, len(code), 397):  # as it streams, flush after flush
            before = tail.rendered
            reply.add_text(code[at : at + 397])
            await reply.flush()
            await pilot.pause()
            costs.append((tail.rendered - before, code[at : at + 397].count("\n")))
        assert tail.text == reply.tail_text == code
        # (once the chat scrolls, its scrollbar narrows the tail: that flush renders all again)
        assert all(rendered <= came + 1 for rendered, came in costs[5:]), costs
        assert tail.size.height == 1002  # the fence line, 1000 lines, the row for the next one
        assert tail.render_line(1000).text == "x_999 = 999"

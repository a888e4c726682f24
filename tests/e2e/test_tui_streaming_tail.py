"""The plain tail of a streamed reply: a long open fence is frozen in chunks as it grows, and the
reply's last paragraph is markdown once the reply is complete."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Markdown, Static

from agent_tui.tui.widgets.streaming_reply import MERGED_CHUNKS, TAIL_CHUNK_LINES, StreamingReply
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

MERGED = TAIL_CHUNK_LINES * MERGED_CHUNKS
CODE = "".join(f"    value_{i} = compute({i})  # line {i}\n" for i in range(150))


def plain(reply: StreamingReply) -> tuple[list[str], str]:
    """The frozen chunks' text and the live tail's, as shown."""
    chunks = [str(w.render()) for w in reply.query(".reply-chunk").results(Static)]
    return chunks, str(reply.query_one("#reply-tail", Static).render())


async def test_a_long_open_fence_is_frozen_in_chunks_and_the_live_tail_stays_short(tmp_path: Path) -> None:
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
        chunks, live = plain(reply)
        assert chunks, "the fence's older lines are frozen"
        assert all(c.count("\n") in (TAIL_CHUNK_LINES, MERGED) for c in chunks), [
            c.count("\n") for c in chunks
        ]
        assert live.count("\n") <= 2 * TAIL_CHUNK_LINES
        # together they show the whole open fence, in order, once
        assert "".join(chunks) + live == reply.tail_text
        assert reply.tail_text.startswith("```python\n    value_0")
        factory.turns[0].release.set()
        await wait_for(
            pilot,
            lambda: not app.busy and not reply.rendering and bool(reply.query(".code.highlighted")),
            "the turn and the fence's render",
        )
        await pilot.pause()
        chunks, live = plain(reply)
        assert chunks == [] and live == "", "once highlighted, the plain copy is gone"
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
        assert plain(reply) == ([], ""), "nothing is left as plain text"
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
        assert plain(reply) == ([], "")
        assert not [f for m in reply.query(Markdown) for f in m.query("MarkdownFence")], "not on the loop"
        headers = [str(h.render()) for h in reply.query(".code-header").results(Static)]
        assert headers == ["⧉ copy python (150 lines)"], headers
        header = reply.query(".code-header").first()
        assert getattr(header, "code", "").endswith("value_149 = compute(149)  # line 149\n"), (
            "the last line kept"
        )


async def test_a_very_long_open_fence_is_frozen_in_few_widgets(tmp_path: Path) -> None:
    """Every chunk is a widget each layout of the screen places again: small chunks are merged."""
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        reply = await app.chat.start_reply()
        code = "```python\n" + "".join(f"x_{i} = {i}\n" for i in range(1000))
        for at in range(0, len(code), 997):  # as it streams, flush after flush
            reply.add_text(code[at : at + 997])
            await reply.flush()
        await pilot.pause()
        chunks, live = plain(reply)
        assert "".join(chunks) + live == reply.tail_text == code
        sizes = [c.count("\n") for c in chunks]
        assert sizes.count(MERGED) >= 9, sizes
        assert len(chunks) <= 1000 // MERGED + MERGED_CHUNKS, sizes  # 50 chunks of 20 lines before
        assert sizes == sorted(sizes, reverse=True), "merged ones first, in order"

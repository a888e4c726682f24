"""A streamed reply's copy lines sit right above their code blocks, while it streams and after."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Markdown

from agent_tui.tui.widgets.chat_entry import CodeHeader
from agent_tui.tui.widgets.streaming_reply import StreamingReply
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

REPLY = (
    "Intro.\n\n```python\nprint(1)\n```\n\nMiddle text.\n\n```sh\necho hi\necho there\n```\n\nThe end.\n\n"
)


def layout(reply: StreamingReply) -> list[str]:
    """The reply's shown blocks in order: a copy line's code, or a Markdown widget's first line."""
    shown: list[str] = []
    for child in reply.children:
        if isinstance(child, CodeHeader):
            shown.append("copy:" + child.code.rstrip("\n"))
        elif isinstance(child, Markdown) and child.source.strip():
            shown.append("md:" + child.source.lstrip().splitlines()[0])
    return shown


EXPECTED = [
    "md:Intro.",
    "copy:print(1)",
    "md:```python",
    "copy:echo hi\necho there",
    "md:```sh",
]


async def test_copy_lines_stay_above_their_fences_while_streaming(tmp_path: Path) -> None:
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        reply = await app.chat.start_reply()
        first = REPLY.index("Middle")
        reply.add_text(REPLY[:first])
        await reply.flush()
        await pilot.pause()
        assert layout(reply) == EXPECTED[:3], layout(reply)
        reply.add_text(REPLY[first:])
        await reply.flush()
        await pilot.pause()
        assert layout(reply) == EXPECTED, layout(reply)
        prose = " ".join(m.source for m in reply.query(Markdown))
        assert "Middle text." in prose and "The end." in prose


async def test_copy_lines_stay_above_their_fences_after_the_reply(tmp_path: Path) -> None:
    factory = ScriptedFactory(reply=REPLY, chunks=3)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "turn done")
        reply = next(w for w in app.chat.children if isinstance(w, StreamingReply))
        await pilot.pause()
        assert reply.entry is not None, "the streamed reply is the chat's view of the message"
        assert layout(reply) == EXPECTED, layout(reply)
        assert len(reply.query(CodeHeader)) == 2, "one copy line per block, none added at the end"

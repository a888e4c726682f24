"""A long fence in a streaming reply is highlighted once the typing pauses, not while keys come
(the thread's Pygments would slow every frame of the typing down). The time is a hand-moved
clock: the test says when the keys came and when the pause is over, whatever the machine's load."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from agent_tui.tui.widgets.composer import TYPING_PAUSE
from agent_tui.tui.widgets.streaming_reply import StreamingReply
from agent_tui.tui.widgets.tail_lines import TailLines
from tests.support.clock import ManualClock
from tests.support.pilot import wait_for

pytestmark = pytest.mark.timeout(60)

FENCE = "```python\n" + "".join(f"value_{i} = compute({i})\n" for i in range(80)) + "```\n"


class _Host(App[None]):
    def __init__(self, reply: StreamingReply) -> None:
        super().__init__()
        self.reply = reply

    def compose(self) -> ComposeResult:
        yield self.reply


def _plain(reply: StreamingReply) -> str:
    return reply.query_one("#reply-tail", TailLines).text


async def test_a_long_fence_is_highlighted_once_the_typing_pauses() -> None:
    clock = ManualClock()
    typed = clock.now  # the last key, on the clock
    reply = StreamingReply(typed_at=lambda: typed, clock=clock)
    app = _Host(reply)
    async with app.run_test(size=(100, 40)) as pilot:
        reply.add_text("Here.\n\n" + FENCE + "\nAfter the code.\n\n")
        await reply.flush()  # the fence closed while the keys come: shown plain
        clock.now += TYPING_PAUSE / 2
        typed = clock.now  # another key
        await reply.flush()
        await pilot.pause(TYPING_PAUSE * 1.5)  # the real timers fire; on the clock, still typing
        assert "After the code." in _plain(reply) and "value_79 = compute(79)" in _plain(reply)
        assert not reply.rendering and not reply.query(".code.highlighted"), "not while typing"
        clock.now = typed + TYPING_PAUSE + 0.001  # the pause (and a bit: float sums round)
        await reply.flush()
        await wait_for(pilot, lambda: bool(reply.query(".code.highlighted")), "highlighted after the pause")
        await wait_for(pilot, lambda: "value_79" not in _plain(reply), "the plain copy gone")

"""The frames a streaming reply costs: one layout per flush, and while keys come, a flush waits for
the frame that draws the keys typed before it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.tui.region_compositor import RegionCompositor
from agent_tui.tui.widgets import streaming_reply
from agent_tui.tui.widgets.streaming_reply import StreamingReply
from agent_tui.tui.widgets.tail_lines import TailLines
from tests.support.layouts import count_layouts
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


async def test_a_growing_reply_costs_one_layout_per_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        reply = await app.chat.start_reply()
        reply.add_text("".join(f"first line {j}\n" for j in range(30)))  # the chat scrolls from here on
        await reply.flush()
        await wait_for(pilot, lambda: app.chat.max_scroll_y > 0, "a chat that scrolls")
        for _ in range(4):
            await pilot.pause()
        layouts = count_layouts(monkeypatch)
        flushes = 4
        for i in range(flushes):
            reply.add_text("".join(f"line {i}.{j} of a reply that grows\n" for j in range(8)))
            await reply.flush()
            for _ in range(4):
                await pilot.pause()
        assert 0 < len(layouts) <= flushes  # Textual's virtual size asked for a second one each time
        chat = app.chat
        assert chat.scroll_y == chat.max_scroll_y  # still at the end
        assert "line 3.7" in reply.query_one("#reply-tail", TailLines).text


async def test_while_keys_come_a_flush_waits_for_the_keys_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        reply = await app.chat.start_reply(lambda: app.composer.typed_at)
        await pilot.pause()
        frames: list[float] = []
        flushes: list[float] = []
        frame = RegionCompositor.render_update
        flush = StreamingReply.flush

        def drawing(self: RegionCompositor, *args: Any, **kwargs: Any) -> Any:
            frames.append(time.monotonic())  # any frame, full or partial
            return frame(self, *args, **kwargs)

        async def flushing(self: StreamingReply) -> None:
            flushes.append(time.monotonic())
            await flush(self)

        monkeypatch.setattr(RegionCompositor, "render_update", drawing)
        monkeypatch.setattr(StreamingReply, "flush", flushing)
        # The order is what is tested, not the 50 ms: a loaded machine (CI) can take longer
        # than that to draw a frame, and the flush would then rightly go ahead without it.
        monkeypatch.setattr(streaming_reply, "KEYS_FIRST_WAIT", 10.0)
        reply.add_text("some more text\n")
        await pilot.press("a")  # the user is typing
        app.composer.insert("b")  # a key handled, not drawn yet
        typed = time.monotonic()
        reply._flushed_at = 0.0  # a flush is due
        assert reply._typing()
        await reply._flush_due()
        flushed = [f for f in flushes if f > typed]
        assert flushed, "the due flush ran"
        assert any(typed < f < flushed[0] for f in frames), "a frame drew the key before the flush"

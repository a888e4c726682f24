"""Pilot tests of long code fences in a streamed reply: highlighted off the event loop, as the chat shows them."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.segment import Segment
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from agent_tui.tui.widgets.chat_entry import ChatEntry, markdown_renderable
from agent_tui.tui.widgets.reply_blocks import HighlightedFence
from agent_tui.tui.widgets.streaming_reply import StreamingReply
from agent_tui.tui.widgets.tail_lines import TailLines
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

FENCE = (
    "```python\n"
    + "".join(
        f'def handler_{i}(event):\n    """Doc\n    string."""\n    return event.value + {i}  # n\n'
        for i in range(50)
    )
    + "```\n"
)  # 200 lines, with strings spanning lines


def rendered(widget: Widget) -> list[Strip]:
    return widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))


def styles(strips: list[Strip]) -> set[Any]:
    return {seg.style.color for strip in strips for seg in strip if seg.text.strip() and seg.style}


def highlighted_fence(reply: StreamingReply) -> Static | None:
    found = list(reply.query(".code.highlighted").results(Static))
    return found[0] if found else None


def test_a_fence_renders_as_the_chat_renders_it() -> None:
    console = Console(width=100, color_system="truecolor")
    options = console.options.update(highlight=False, width=90)
    fence = HighlightedFence(FENCE)
    lines = fence.render_lines(console, options, pause=0.0001)
    assert lines == console.render_lines(markdown_renderable(FENCE), options, pad=False, new_lines=True)
    assert len(lines) == 200 + 2  # Syntax's padding line above and below
    assert fence.render_lines(console, options) is lines, "the second render replays the lines"
    assert list(console.render(fence, options)) == [seg for line in lines for seg in line]


async def test_a_long_fence_is_highlighted_when_it_closes_without_rebuilding_the_chat(tmp_path: Path) -> None:
    factory = ScriptedFactory(reply="Here is the code.\n\n" + FENCE + "\nThat is all.\n\n", chunks=12)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "turn done")
        reply = list(app.chat.children)[-1]
        assert isinstance(reply, StreamingReply) and reply.entry is not None, "the chat was not rebuilt"
        await wait_for(pilot, lambda: highlighted_fence(reply) is not None, "the fence highlighted")
        code = highlighted_fence(reply)
        assert code is not None
        await pilot.pause()
        streamed = rendered(code)
        assert len(streamed) == 202
        assert len(styles(streamed)) > 2, "keywords, names, strings, comments in their colours"
        # Blocks in order: the prose before, the fence, the prose after.
        order = [w for w in reply.children if w.display and not w.has_class("tool-line")]
        assert order.index(code) < len(order) - 1
        text = "\n".join(strip.text for strip in streamed)
        assert "def handler_0(event):" in text and "return event.value + 49" in text
        assert "That is all." not in plain_shown(reply)
        # Rebuild the chat: the stored message's Static shows the same lines, segment for segment.
        app.chat._shown = []
        await app.refresh_views(app.index.leaf_id)
        await pilot.pause()
        entry = next(
            w for w in app.chat.children if isinstance(w, ChatEntry) and w.entry.id == reply.entry.id
        )
        # (the stored message shows the fence in its own Static, under its copy header)
        rebuilt = [s for w in entry.query(".markdown").results(Static) for s in rendered(w) if s.text.strip()]
        code_lines = [s for s in streamed if s.text.strip()]
        first = next(i for i, s in enumerate(rebuilt) if s.text == code_lines[0].text)
        assert [list(s) for s in rebuilt[first : first + len(code_lines)]] == [list(s) for s in code_lines]
        assert app.last_error is None


def plain_shown(reply: StreamingReply) -> str:
    """What the reply shows as plain text (its tail)."""
    return reply.query_one("#reply-tail", TailLines).text


def gate_threads(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold every fence's thread render until the returned event is set (the loop's renders pass)."""
    gate = threading.Event()
    original = HighlightedFence.render_lines

    def held(
        self: HighlightedFence, console: Console, options: Any, pause: float = 0.0
    ) -> list[list[Segment]]:
        if threading.current_thread() is not threading.main_thread():
            gate.wait(20)
        return original(self, console, options, pause)

    monkeypatch.setattr(HighlightedFence, "render_lines", held)
    return gate


def record_errors(monkeypatch: pytest.MonkeyPatch) -> list[BaseException]:
    errors: list[BaseException] = []
    original = StreamingReply._highlight

    async def recording(self: StreamingReply, fence: str) -> None:
        try:
            await original(self, fence)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            errors.append(e)
            raise

    monkeypatch.setattr(StreamingReply, "_highlight", recording)
    return errors


async def test_aborting_while_a_fence_renders_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = gate_threads(monkeypatch)
    errors = record_errors(monkeypatch)
    after = "And the rest of the answer, which is cut. " * (
        len(FENCE) // 30
    )  # the first half: fence and more
    factory = ScriptedFactory(reply=FENCE + "\nNext paragraph.\n\n" + after, chunks=2, hold=True)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set(), "streaming")
        await wait_for(
            pilot, lambda: app.chat.streaming is not None and app.chat.streaming.rendering, "rendering"
        )
        reply = app.chat.streaming
        assert reply is not None
        assert "def handler_0" in plain_shown(reply), "plain meanwhile"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.busy, "stopped")
        assert factory.turns[0].aborted
        assert reply.is_attached and reply.entry is not None and reply.rendering
        gate.set()
        await wait_for(pilot, lambda: not reply.rendering, "the fence rendered after the abort")

        def painted() -> bool:
            code = highlighted_fence(reply)
            return code is not None and len(styles(rendered(code))) > 2

        await wait_for(pilot, painted, "the highlighted fence painted")
        await pilot.pause()
        assert "Next paragraph." not in plain_shown(reply)
        assert reply.query_one(".error", Static) is not None, "the abort is shown after the code"
        assert errors == [] and app.last_error is None
        assert not [n for n in notices(app) if "rror" in n]


async def test_a_rebuild_while_a_fence_renders_cancels_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = gate_threads(monkeypatch)
    errors = record_errors(monkeypatch)
    factory = ScriptedFactory(reply=FENCE + "\nDone.\n\n" + "cut " * len(FENCE), chunks=2, hold=True)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: app.chat.streaming is not None and app.chat.streaming.rendering, "rendering"
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.busy, "stopped")
        reply = next(w for w in app.chat.children if isinstance(w, StreamingReply))
        app.chat._shown = []
        await app.refresh_views(app.index.leaf_id)
        assert not reply.is_attached
        gate.set()
        await pilot.pause(0.3)
        assert errors == [] and app.last_error is None
        entry = next(w for w in app.chat.children if isinstance(w, ChatEntry) and w.entry.role == "assistant")
        assert "def handler_0" in "\n".join(s.text for s in rendered(entry.query_one(".markdown", Static)))

"""A streaming reply while someone types: it is redrawn less often, and a long fence is highlighted
once the typing pauses (the thread's Pygments would slow every frame of the typing down)."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.widgets.composer import TYPING_PAUSE
from agent_tui.tui.widgets.streaming_reply import TYPING_FLUSH_SECONDS, StreamingReply
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

FENCE = "```python\n" + "".join(f"value_{i} = compute({i})\n" for i in range(80)) + "```\n"


async def type_for(app: AgentTuiApp, pilot: Pilot[None], seconds: float, every: float = 0.02) -> float:
    """Keys for ``seconds``: one pressed, then the composer told of one every ``every`` seconds (a
    pressed key can take longer than the pause to go through on a busy machine). Returns when the
    last one came (``time.monotonic``)."""
    before = app.composer.typed_at
    await pilot.press("a")
    assert app.composer.typed_at > before, "a key reaching the composer is noted"
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.composer.typed_at = time.monotonic()
        await asyncio.sleep(every)
    return app.composer.typed_at


async def test_while_keys_come_the_reply_is_redrawn_at_most_every_typing_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushes: list[float] = []
    original = StreamingReply.flush

    async def recording(self: StreamingReply) -> None:
        flushes.append(time.monotonic())
        await original(self)

    monkeypatch.setattr(StreamingReply, "flush", recording)
    factory = ScriptedFactory(reply="Some text. " * 40, chunks=4, hold=True)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set(), "streaming")
        await type_for(app, pilot, 0.3)
        flushes.clear()
        await type_for(app, pilot, 1.5)
        gaps = [b - a for a, b in itertools.pairwise(flushes)]
        assert gaps, "the timer went on"
        assert min(gaps) >= TYPING_FLUSH_SECONDS * 0.9, [round(g, 3) for g in gaps]
        factory.turns[0].release.set()
        await wait_for(pilot, lambda: not app.busy, "the turn")


async def test_a_long_fence_is_highlighted_once_the_typing_pauses(tmp_path: Path) -> None:
    factory = ScriptedFactory(reply="Here.\n\n" + FENCE + "\nAfter the code.\n\n", chunks=2, hold=True)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set(), "streaming")
        reply = app.chat.streaming
        assert reply is not None
        stop = asyncio.Event()

        async def typing() -> float:
            """Keys until ``stop``: the composer told of one every 20 ms (see ``type_for``)."""
            await type_for(app, pilot, 0.0)
            while not stop.is_set():
                app.composer.typed_at = time.monotonic()
                await asyncio.sleep(0.02)
            return app.composer.typed_at

        keys = asyncio.ensure_future(typing())
        factory.turns[0].release.set()  # the fence closes while the keys come

        def plain() -> str:
            parts = [*reply.query(".reply-chunk").results(Static), reply.query_one("#reply-tail", Static)]
            return "".join(str(w.render()) for w in parts)

        await wait_for(pilot, lambda: "After the code." in plain(), "the fence and what follows, plain")
        assert "value_79 = compute(79)" in plain()
        assert not reply.rendering and not reply.query(".code.highlighted"), "not while typing"
        stop.set()
        last_key = await keys
        await wait_for(
            pilot, lambda: bool(reply.query(".code.highlighted")), "highlighted after the pause", 400
        )
        assert time.monotonic() >= last_key + TYPING_PAUSE * 0.9
        await wait_for(pilot, lambda: not app.busy, "the turn")

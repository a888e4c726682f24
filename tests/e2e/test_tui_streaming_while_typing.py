"""A streaming reply while someone types is redrawn less often (a long fence highlighted once the
typing pauses: test_tui_fence_after_typing, on a hand-moved clock)."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot

from agent_tui.tui.app import AgentTuiApp
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

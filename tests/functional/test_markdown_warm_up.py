"""The first reply's Markdown costs paid ahead while idle (tui/warm_up.py): after the warm-up the
first reply mounts no widget whose CSS the app has not parsed yet, and nothing of it stays."""

from __future__ import annotations

from pathlib import Path

from agent_tui.tui import warm_up
from agent_tui.tui.widgets.streaming_reply import StreamingReply
from tests.support.tui_fixtures import make_app

REPLY = "The answer: see https://example.com, `code`, **bold**.\n\n- a list\n\n# A heading\n\n```python\nx = 1\n```\n\n"


async def test_after_the_warm_up_the_first_reply_brings_no_new_css(tmp_path: Path) -> None:
    warm_up.warm_parsers()
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        before = len(app.stylesheet.source)
        assert await warm_up.warm_widgets(app, lambda: True)
        await pilot.pause()
        assert not app.screen.query(f"#{warm_up.WARM_ID}"), "the hidden widget stayed"
        warmed = len(app.stylesheet.source)
        assert warmed > before  # the Markdown widgets' CSS was parsed
        reply = StreamingReply()
        await app.chat.mount(reply)
        reply.text = REPLY
        await reply.flush()
        await pilot.pause()
        assert len(app.stylesheet.source) == warmed, [k[1] for k in list(app.stylesheet.source)[warmed:]]


async def test_no_warm_up_while_the_app_is_never_idle(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        before = len(app.stylesheet.source)
        assert not await warm_up.warm_widgets(app, lambda: False, pause=0.001)
        assert len(app.stylesheet.source) == before
        assert not app.screen.query(f"#{warm_up.WARM_ID}")

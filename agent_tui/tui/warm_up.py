"""What the first reply would pay for on the event loop, paid once while the app is idle.

The first paragraph of the first reply stalled the event loop once (82 ms in a profile): the
Markdown parser compiling its link-finding regular expressions on its first parse (about 30 ms),
Pygments compiling a lexer on the first code block of each language (25-50 ms each), and Textual
parsing the Markdown widgets' CSS and matching it the first time they are mounted (about 40 ms).

:func:`warm_parsers` does the first two; it is pure parsing, for any thread (the app's preload
thread, after the provider's SDK; it gives way between its steps: ``give_way``).
:func:`warm_widgets` does the CSS: on the event loop, a hidden
streaming reply (the widget the first reply streams into, its Markdown widget inside) of the
screen's own, given one small document per step (a step each loop turn, never while the user types
or a turn runs), removed at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.app import App

from agent_tui.tui import give_way
from agent_tui.tui.widgets.streaming_reply import StreamingReply

#: The languages whose lexers are compiled ahead (the most common in replies).
LANGUAGES = ("python", "bash", "json")

#: One small document per step: each brings Markdown block widgets the chat has not mounted yet.
STEPS = (
    "Some **bold** text, a `span` and a link: https://example.com/x.",
    "# A heading\n\n> a quote",
    "- one\n- two\n\n1. first",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "---\n\n```python\nx = 1\n```",
)

WARM_ID = "markdown-warm-up"


def warm_parsers() -> None:
    """The Markdown parser's and the common lexers' compiled expressions (any thread)."""
    from markdown_it import MarkdownIt
    from pygments.lexers import get_lexer_by_name

    for text in STEPS:
        give_way.pause_point()
        MarkdownIt("gfm-like").parse(text)  # the parser Textual's Markdown widget makes
    for language in LANGUAGES:
        give_way.pause_point()
        get_lexer_by_name(language)  # a lexer's first instance compiles its class's rules


async def warm_widgets(app: App[Any], idle: Callable[[], bool], pause: float = 0.3) -> bool:
    """Mount a hidden streaming reply on ``app``'s screen and give it :data:`STEPS`, one a loop
    turn, each when ``idle()`` (else after ``pause`` seconds, up to 20 times); removed at the end.
    False when it gave up (the app busy all along, or closing)."""
    import asyncio

    widget: StreamingReply | None = None
    try:
        for text in STEPS:
            for _ in range(20):
                if idle():
                    break
                await asyncio.sleep(pause)
            else:
                return False
            started = time.perf_counter()
            if widget is None:
                widget = StreamingReply()
                widget.id = WARM_ID
                widget.display = False
                await app.screen.mount(widget)
            widget.add_text(text + "\n\n")
            await widget.flush()
            await asyncio.sleep(max(0.0, time.perf_counter() - started))  # the loop's own turn
        return True
    finally:
        if widget is not None and widget.is_attached:
            await widget.remove()

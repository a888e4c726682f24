"""The main screen's frame timer: a frame as soon as one is needed, at most one per interval.

Textual's screen draws from an interval timer that it pauses after each frame and resumes when a
widget needs a repaint. That timer keeps a fixed grid of ticks, and after a frame that overran its
slot it waits for the slot after the next one: a key typed just after a 10 ms frame (a streaming
reply scrolls the chat several times a second) waited up to two intervals, 33 ms at 60 fps, before
the frame that shows it even began (``bench/tui_bench.py``, "until the frame that shows it").
:class:`FrameTimer` keeps only the rate limit: a frame begins when the timer is resumed, or one
interval after the previous frame began (half one, after a cheap frame: :data:`CHEAP_FACTOR`),
whichever is later. :func:`next_frame` waits for a
screen's next frame (the app repaints one pane per frame after an append).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from textual.screen import Screen
from textual.timer import EventTargetGone, Timer

#: After a frame that took less than a quarter of the interval, the next may begin sooner: four
#: times that frame's time after it began, and at least half an interval. A frame of 2 ms (a
#: scrollbar redrawn after a reply's flush) held the next one, with the key typed meanwhile,
#: for the rest of its 16.7 ms; drawing still takes at most a quarter of the time.
CHEAP_FACTOR = 4


def frame_delay(last_frame: float, interval: float, now: float, last_took: float = float("inf")) -> float:
    """How long to wait before the next frame: none once a whole interval has passed since the
    previous one began, or once four times its time has, but never less than half an interval."""
    gap = max(interval / 2, min(interval, CHEAP_FACTOR * last_took))
    return max(0.0, last_frame + gap - now)


class FrameTimer(Timer):
    """An interval timer without a grid: it ticks when resumed, no sooner than one interval after
    its previous tick began (see the module's docstring)."""

    async def _run(self) -> None:
        last_frame = -float("inf")
        last_took = float("inf")
        count = 0
        while True:
            await self._active.wait()
            delay = frame_delay(last_frame, self._interval, time.monotonic(), last_took)
            if delay > 0:
                await asyncio.sleep(delay)
                continue  # it may have been paused meanwhile: wait for the next resume
            last_frame = time.monotonic()
            count += 1
            try:
                await self._tick(next_timer=last_frame, count=count)
            except EventTargetGone:  # the screen is gone
                return
            last_took = time.monotonic() - last_frame


async def next_frame(screen: Screen[Any], wait: float) -> None:
    """Return once ``screen`` has drawn what is pending, or after ``wait`` seconds: a frame comes
    within one interval, unless this is awaited in a handler of the screen's own, where none can
    come before it returns."""
    drawn: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_screen() -> None:
        if not drawn.done():
            drawn.set_result(None)

    _hand_over_focused(screen)
    if screen.call_after_refresh(on_screen):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(drawn, wait)


def _hand_over_focused(screen: Screen[Any]) -> None:
    """The focused widget's pending repaint (the keys just typed into the composer), handed to
    ``screen`` now. A widget tells its screen only from its own idle handler; when the screen
    was idle first, it ran the after-refresh callback at once, with no frame, and the keys waited
    for the flush's frame after all (one CI run in three)."""
    focused = screen.focused
    if (
        focused is not None
        and focused._repaint_required
        and focused.display
        and focused in screen._compositor
    ):
        focused._repaint_required = False
        screen._dirty_widgets.add(focused)
        screen.check_idle()

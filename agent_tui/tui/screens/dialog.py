"""The base of every dialog: a modal screen that knows how small the terminal is.

Textual's breakpoints give the screen ``-short`` below :data:`TALL` rows and ``-narrow`` below
:data:`WIDE` columns (updated live on resize), and ``app.tcss`` makes the dialogs compact there:
no padding, no blank lines between title, body and hint, the whole height for lists and editors,
so at 80x24 every dialog shows its title, its body and its hint (what to press) at once.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from textual.app import App
from textual.screen import ModalScreen, Screen, ScreenResultType

ResultType = TypeVar("ResultType")

#: From this many rows on, dialogs have room for padding and blank lines.
TALL = 32
#: From this many columns on, dialogs keep their own width (below it they take the screen's).
WIDE = 100


class Dialog(ModalScreen[ScreenResultType]):
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TALL, "-tall")]  # noqa: RUF012
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]  # noqa: RUF012

    def __init__(self) -> None:
        super().__init__(classes="modal")


async def ask(app: App[Any], screen: Screen[ResultType]) -> ResultType | None:
    """Push ``screen`` and wait for its answer (None when dismissed without one). Cancelled meanwhile
    (an abort), it closes the screen and lets the cancellation through."""
    answer: asyncio.Future[ResultType | None] = asyncio.get_running_loop().create_future()

    def done(value: ResultType | None) -> None:
        if not answer.done():
            answer.set_result(value)

    app.push_screen(screen, done)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_attached:
            screen.dismiss(None)
        raise


__all__ = ["TALL", "WIDE", "Dialog", "ask"]

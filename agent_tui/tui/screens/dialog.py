"""The base of every dialog: a modal screen that knows how small the terminal is.

Textual's breakpoints give the screen ``-short`` below :data:`TALL` rows and ``-narrow`` below
:data:`WIDE` columns (updated live on resize), and ``app.tcss`` makes the dialogs compact there:
no padding, no blank lines between title, body and hint, the whole height for lists and editors,
so at 80x24 every dialog shows its title, its body and its hint (what to press) at once.
"""

from __future__ import annotations

from textual.screen import ModalScreen, ScreenResultType

#: From this many rows on, dialogs have room for padding and blank lines.
TALL = 32
#: From this many columns on, dialogs keep their own width (below it they take the screen's).
WIDE = 100


class Dialog(ModalScreen[ScreenResultType]):
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TALL, "-tall")]  # noqa: RUF012
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]  # noqa: RUF012

    def __init__(self) -> None:
        super().__init__(classes="modal")


__all__ = ["TALL", "WIDE", "Dialog"]

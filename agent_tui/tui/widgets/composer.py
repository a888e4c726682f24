"""The composer: a multi-line TextArea where Enter sends and Shift+Enter / Ctrl+J add a line.

Up on the first line and Down on the last walk the input history.
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class Composer(TextArea):
    DEFAULT_CSS = """
    Composer { height: auto; min-height: 3; max-height: 12; }
    """

    # Enter and Shift+Enter / Ctrl+J are handled in ``_on_key``, in order with the typed keys (a
    # priority binding would run before the keys queued ahead of it: "abc⏎" typed fast sent "").
    # The bindings are here for the footer.
    BINDINGS = [  # noqa: RUF012 - Textual's convention
        Binding("enter", "submit", "Send"),
        Binding("shift+enter,ctrl+j", "newline", "New line", show=False),
    ]

    class Submitted(Message):
        def __init__(self, composer: Composer, text: str) -> None:
            super().__init__()
            self.composer = composer
            self.text = text

        @property
        def control(self) -> Composer:
            return self.composer

    def __init__(self, *, id: str | None = None, history: list[str] | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True)
        self.cursor_blink = False
        self.input_history: list[str] = list(history or [])
        self._history_pos: int | None = None
        self._draft = ""

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()
            return
        if event.key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.action_newline()
            return
        await super()._on_key(event)

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        if not self.input_history or self.input_history[-1] != text:
            self.input_history.append(text)
        self._history_pos = None
        self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        self.insert("\n")

    def set_text(self, text: str) -> None:
        """Replace the content and put the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0 and self.input_history:
            self._history_step(-1)
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        last = self.document.line_count - 1
        if not select and self.cursor_location[0] == last and self._history_pos is not None:
            self._history_step(1)
            return
        super().action_cursor_down(select)

    def _history_step(self, step: int) -> None:
        if self._history_pos is None:
            if step > 0:
                return
            self._draft = self.text
            self._history_pos = len(self.input_history)
        pos = self._history_pos + step
        if pos < 0:
            return
        if pos >= len(self.input_history):
            self._history_pos = None
            self.set_text(self._draft)
            return
        self._history_pos = pos
        self.set_text(self.input_history[pos])

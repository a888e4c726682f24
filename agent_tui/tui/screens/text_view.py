"""A read-only view of a long text (a panel row's full request text): Escape closes it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea


class TextViewScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close"), Binding("q", "close", "Close", show=False)]  # noqa: RUF012

    def __init__(self, title: str, text: str) -> None:
        super().__init__(classes="modal")
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog editor-dialog"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            area = TextArea(self.text, id="text-view", soft_wrap=True, read_only=True)
            area.cursor_blink = False
            yield area
            yield Label("Escape to close · select text to copy it", classes="dialog-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)

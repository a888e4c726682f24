"""A read-only view of a long text (a panel row's full request text): Escape closes it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, TextArea

from agent_tui.tui.screens.dialog import Dialog


class TextViewScreen(Dialog[None]):
    BINDINGS = [Binding("escape", "close", "Close"), Binding("q", "close", "Close", show=False)]  # noqa: RUF012

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
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

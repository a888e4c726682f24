"""A multi-line editor, pre-filled: Ctrl+S saves, Escape cancels (dismisses with None)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea


class EditorScreen(ModalScreen[str | None]):
    BINDINGS = [  # noqa: RUF012
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__(classes="modal")
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog editor-dialog"):
            yield Label(self.title_text, classes="dialog-title")
            area = TextArea(self.text, id="editor-text", soft_wrap=True)
            area.cursor_blink = False
            yield area
            yield Label("Ctrl+S to save · Escape to cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)

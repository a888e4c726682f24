"""A multi-line editor, pre-filled: Ctrl+S saves, Escape cancels (dismisses with None), Ctrl+A
selects all (Alt+A with ``keymap = "pi"``, where Ctrl+A stays pi's line start).

With a ``counter``, a line under the text says what saving it would do (the app
counts the replacement's tokens against the context), updated as the user types. With an
``addition``, Ctrl+L replaces the text with what it returns for the text (a compaction review adds
what the summary left out).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, TextArea

from agent_tui.terminal_text import visible
from agent_tui.tui.keymap import key_name
from agent_tui.tui.screens.dialog import Dialog
from agent_tui.tui.widgets.inert_lines import InertTextArea


class EditorScreen(Dialog[str | None]):
    BINDINGS = [  # noqa: RUF012
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+l", "add", "Add", show=False, priority=True),
        # pi's keys keep Ctrl+A at the line start (pi's editor): there it is Alt+A (keymap.PI)
        Binding("ctrl+a", "select_all", "Select all", id="editor.select_all", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(
        self,
        title: str,
        text: str,
        counter: Callable[[str], str] | None = None,
        addition: tuple[str, Callable[[str], str]] | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.counter = counter
        self.addition = addition  # (what Ctrl+L does, in a few words; the new text for a text)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog editor-dialog"):
            yield Label(Text(visible(self.title_text)), classes="dialog-title", markup=False)
            area = InertTextArea(self.text, id="editor-text", soft_wrap=True)
            area.cursor_blink = False
            yield area
            count = Label(self._count(self.text), id="editor-count", classes="dialog-hint", markup=False)
            count.display = self.counter is not None
            yield count
            yield Label(self._keys(), classes="dialog-hint", markup=False)

    def _keys(self) -> str:
        """The keys line; one line at 80 columns (70 inside the dialog), Ctrl+L's too."""
        select = key_name(getattr(self.app, "keymap", {}), "editor.select_all", "ctrl+a")
        if self.addition is None:
            return f"{select} selects all · Ctrl+S to save · Escape to cancel"
        return f"Ctrl+L {self.addition[0]} · {select} all · Ctrl+S save · Esc cancel"

    def _count(self, text: str) -> str:
        return visible(self.counter(text)) if self.counter is not None else ""

    @property
    def count_text(self) -> str:
        """The count line as shown (for tests)."""
        return str(self.query_one("#editor-count", Label).content)

    @on(TextArea.Changed, "#editor-text")
    def _changed(self, event: TextArea.Changed) -> None:
        if self.counter is not None:
            self.query_one("#editor-count", Label).update(self._count(event.text_area.text))

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_add(self) -> None:
        if self.addition is None:
            return
        area = self.query_one(TextArea)
        new = self.addition[1](area.text)
        if new != area.text:
            area.text = new  # Changed updates the count
            area.move_cursor(area.document.end)

    def action_select_all(self) -> None:
        self.query_one(TextArea).select_all()

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)

"""Ctrl+R in the composer: search the prompt history as you type (Claude Code's habit, a shell's too).

Every word typed must appear in a prompt (any case); the newest matches come first. Up/Down (or
Ctrl+R again) move through them, Enter puts the chosen prompt, whole, in the composer, Escape
leaves the composer as it was.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from agent_tui.projection.describe import plural
from agent_tui.tui.screens.dialog import Dialog

MAX_SHOWN = 200


class HistorySearch(Dialog[str | None]):
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "cancel", "Cancel"),
        Binding("down,ctrl+r,ctrl+n", "move(1)", "Older", show=False, priority=True),
        Binding("up,ctrl+p", "move(-1)", "Newer", show=False, priority=True),
    ]

    def __init__(self, items: list[str], query: str = "") -> None:
        super().__init__()
        self.items = list(items)  # oldest first
        self.query_text = query
        self.matches: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Search history", classes="dialog-title", markup=False)
            yield Input(self.query_text, placeholder="words in an earlier prompt", id="history-query")
            yield OptionList(id="history-matches")
            yield Label(
                "Enter puts it in the composer · Up/Down or Ctrl+R move · Escape cancels",
                classes="dialog-hint",
                markup=False,
            )

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = False
        field.focus()
        self._fill(self.query_text)

    def search(self, query: str) -> list[str]:
        words = query.lower().split()
        return [t for t in reversed(self.items) if all(w in t.lower() for w in words)]

    def _fill(self, query: str) -> None:
        self.matches = self.search(query)
        options = self.query_one(OptionList)
        options.clear_options()
        for text in self.matches[:MAX_SHOWN]:
            lines = text.strip().splitlines() or [""]
            label = lines[0] + (f"  (+{plural(len(lines) - 1, 'line')})" if len(lines) > 1 else "")
            options.add_option(Option(Text(label, no_wrap=True, overflow="ellipsis")))
        if self.matches:
            options.highlighted = 0

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._accept()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._accept(event.option_index)

    def _accept(self, index: int | None = None) -> None:
        options = self.query_one(OptionList)
        at = index if index is not None else options.highlighted
        self.dismiss(self.matches[at] if self.matches and at is not None and at < len(self.matches) else None)

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if not self.matches:
            return
        current = options.highlighted if options.highlighted is not None else -step
        options.highlighted = max(0, min(min(len(self.matches), MAX_SHOWN) - 1, current + step))

    def action_cancel(self) -> None:
        self.dismiss(None)


__all__ = ["HistorySearch"]

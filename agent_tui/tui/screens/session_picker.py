"""Resume: the sessions of this directory (or all), filtered as you type."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from agent_tui.library.search_query import parse_query
from agent_tui.store.listing import SessionInfo


def matches(info: SessionInfo, query: str) -> bool:
    """Every word of ``query`` appears in the name, first message, cwd or file name (anywhere in a
    word), as does every "quoted phrase", and no -excluded word (``library.search_query``)."""
    hay = " ".join([info.name or "", info.first_message, info.cwd, Path(info.path).name])
    return parse_query(query).matches_text(hay, substrings=True)


def describe(info: SessionInfo) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(info.name or info.first_message or "(empty session)", style="bold")
    text.append(f"\n  {info.modified[:19].replace('T', ' ')}  {info.entries} entries  ", style="dim")
    text.append(f"{_size(info.size)}  {info.cwd}", style="dim")
    if info.name and info.first_message:
        text.append(f"\n  {info.first_message[:100]}", style="dim italic")
    return text


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}"
        size = size // 1024
    return f"{size} GB"


class SessionPicker(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("down", "to_list", show=False)]  # noqa: RUF012

    def __init__(self, sessions: list[SessionInfo], title: str = "Resume a session") -> None:
        super().__init__(classes="modal")
        self.sessions = sessions
        self.title_text = title
        self.shown: list[SessionInfo] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog picker-dialog"):
            yield Label(f"{self.title_text} ({len(self.sessions)})", classes="dialog-title")
            yield Input(placeholder="search name, first message, folder…", id="picker-search")
            yield OptionList(id="picker-list")
            yield Label("Enter to open · ↓ to the list · Escape to cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        search = self.query_one(Input)
        search.cursor_blink = False
        search.focus()
        self._fill("")

    def _fill(self, query: str) -> None:
        self.shown = [s for s in self.sessions if matches(s, query)]
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(describe(s), id=s.path) for s in self.shown])
        if self.shown:
            options.highlighted = 0

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one(OptionList)
        if self.shown:
            self.dismiss(self.shown[options.highlighted or 0].path)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_to_list(self) -> None:
        self.query_one(OptionList).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

"""Resume: the sessions of this directory, forks under their parent, searched in full text as you type.

The list and the search come from the session library's index
(``library.search.Library``): names, labels, message text and tool output, with
"phrases" and -exclusions. Opening lists at once from the summaries
(``refresh(text=False)``: a new or grown file is summarized once); the full-text
index is brought up to date only when a search is typed, in a thread, while the
list stays usable and the title says "indexing N sessions…" (a search typed
meanwhile is answered from what is indexed so far, and again when it is done).
Each search runs in a thread too, so typing never waits; a search overtaken by
the next keystroke is dropped.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from typing import TypeVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from agent_tui.library.search import Library, SearchHit, SessionSummary
from agent_tui.projection.describe import plural
from agent_tui.terminal_text import clip, visible, visible_line
from agent_tui.tui.screens.dialog import Dialog
from agent_tui.tui.symbols import SYMBOLS
from agent_tui.tui.widgets.inert_lines import InertInput

T = TypeVar("T")

#: Rows a search shows, and how many of them get the entry and snippet that matched.
SEARCH_LIMIT = 50
SNIPPETS = 10


def describe(summary: SessionSummary, depth: int = 0, snippet: str | None = None) -> Text:
    """Name (or first message), then last activity, size, entries, branches, folder; forks indented."""
    indent = "   " * depth
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(indent + (f"{SYMBOLS['fork']} " if depth else ""))
    text.append(visible_line(summary.title), style="bold")
    branches = f"{summary.branches} branches  " if summary.branches > 1 else ""
    text.append(
        f"\n{indent}  {summary.modified[:19].replace('T', ' ')}  {plural(summary.entries, 'entry', 'entries')}  {branches}"
        f"{_size(summary.size)}  {visible_line(summary.cwd)}",
        style="dim",
    )
    if snippet:
        text.append(f"\n{indent}  {clip(snippet, 120, one_line=True)}", style="italic")
    elif summary.name and summary.first_message:
        text.append(f"\n{indent}  {clip(summary.first_message, 100, one_line=True)}", style="dim italic")
    return text


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}"
        size = size // 1024
    return f"{size} GB"


class SessionPicker(Dialog[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("down", "to_list", show=False)]  # noqa: RUF012

    def __init__(self, library: Library, title: str = "Resume a session") -> None:
        super().__init__()
        self.library = library
        self.title_text = title
        self.shown: list[SessionSummary] = []
        self.ready = False  # the summaries are up to date with the files: the list is shown
        self.text_ready = False  # the full-text index is too: a search finds every hit
        self.indexing = False  # the full-text index is being brought up to date
        self.text_failed = False
        self.query_text = ""
        self.searched: str | None = None  # the query the list shows results for
        self._open_when_shown = False
        # Library calls running in threads: the library is closed when the last has returned (a
        # thread cannot be cancelled; closing under it broke its connection and leaked a new one)
        self._calls = 0
        self._calls_lock = threading.Lock()
        self._closing = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog picker-dialog"):
            yield Label(
                Text(visible(self.title_text)), classes="dialog-title", id="picker-title", markup=False
            )
            yield InertInput(
                placeholder='search names, messages, tool output… ("a phrase", -word)', id="picker-search"
            )
            yield OptionList(id="picker-list")
            yield Label(
                "Enter to open · ↓ to the list · Escape to cancel", classes="dialog-hint", markup=False
            )

    def on_mount(self) -> None:
        search = self.query_one(Input)
        search.cursor_blink = False
        search.focus()
        self._title(f"{self.title_text} (reading the sessions…)")
        self._load()

    def _title(self, text: str) -> None:
        self.query_one("#picker-title", Label).update(Text(visible(text)))

    def _unusable(self, error: Exception) -> None:
        self._title(
            f"{self.title_text}: the session index at {self.library.db_path} cannot be used ({error})"
        )

    @work(exclusive=True, group="picker-index", exit_on_error=False)
    async def _load(self) -> None:
        """The summaries only: what the list shows (the text index waits for a search)."""
        try:
            await self._in_thread(lambda: self.library.refresh(text=False))
        except (sqlite3.Error, OSError) as e:  # e.g. a data dir that cannot be written
            self._unusable(e)
            return
        self._notices()
        self._title(f"{self.title_text} ({len(self.library.sessions())})")
        self.ready = True
        self._search(self.query_text)

    def _notices(self) -> None:
        for notice in self.library.notices:  # e.g. a damaged index, rebuilt
            self.notify(notice, severity="warning")
        self.library.notices.clear()

    @work(exclusive=True, group="picker-text", exit_on_error=False)
    async def _index_text(self) -> None:
        """The full-text index, for the first search typed: the list stays usable meanwhile."""
        self.indexing = True
        try:
            pending = await self._in_thread(self.library.text_pending)
            if pending:
                self._title(f"{self.title_text} (indexing {plural(pending, 'session', 'sessions')}…)")
            await self._in_thread(self.library.refresh)
        except (sqlite3.Error, OSError) as e:
            self.text_failed = True  # said in the title; not tried again on every keystroke
            self._unusable(e)
            return
        finally:
            self.indexing = False
        self._notices()
        self._title(f"{self.title_text} ({len(self.library.sessions())})")
        self.text_ready = True
        if self.query_text.strip():
            self._search(self.query_text)  # again: with every file's text

    @work(exclusive=True, group="picker-search", exit_on_error=False)
    async def _search(self, query: str) -> None:
        """Show what ``query`` finds; ``searched`` says the list is complete for it (with a
        search, once the text index is: until then the hits are those of what it holds)."""
        rows: list[tuple[int, SessionSummary, str | None]]
        complete = self.text_ready or self.text_failed or not query.strip()
        if not query.strip():
            rows = [(depth, s, None) for node in self.library.tree() for depth, s in node.walk()]
        else:
            if not (self.text_ready or self.indexing or self.text_failed):
                self._index_text()
            hits: list[SearchHit] = await self._in_thread(
                lambda: self.library.search(query, SEARCH_LIMIT, locate=SNIPPETS)
            )
            rows = [(0, hit.session, hit.snippet) for hit in hits]
        if query != self.query_text:
            return  # a later keystroke's search will show its own
        self._show(rows)
        if not self.indexing:  # the count is the search's, not the whole library's
            total = len(self.library.sessions())
            shown = f"{len(rows)} of {total} match" if query.strip() else str(total)
            self._title(f"{self.title_text} ({shown})")
        if not complete:
            return  # shown meanwhile; searched again when the text index is ready
        self.searched = query
        if self._open_when_shown and self.shown:
            self.dismiss(self.shown[0].path)

    def _show(self, rows: list[tuple[int, SessionSummary, str | None]]) -> None:
        self.shown = [summary for _, summary, _ in rows]
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(describe(s, depth, snippet), id=s.path) for depth, s, snippet in rows])
        if self.shown:
            options.highlighted = 0

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self.query_text = event.value
        if self.ready:
            self._search(event.value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one(OptionList)
        if self.searched != self.query_text:
            self._open_when_shown = True  # Enter before the results of what was typed: open the first
        elif self.shown:
            self.dismiss(self.shown[options.highlighted or 0].path)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_to_list(self) -> None:
        self.query_one(OptionList).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    async def _in_thread(self, call: Callable[[], T]) -> T:
        """``call`` (a library call) in a thread, counted so that closing waits for it."""

        def run() -> T:
            with self._calls_lock:
                if self._closing:  # closed before this thread started: the library is not opened again
                    raise sqlite3.ProgrammingError("the session picker is closed")
                self._calls += 1
            try:
                return call()
            finally:
                self._returned()

        return await asyncio.to_thread(run)

    def _returned(self) -> None:
        with self._calls_lock:
            self._calls -= 1
            close = self._closing and self._calls == 0
        if close:
            self.library.close()  # the picker closed while this call ran: its last user closes it

    def on_unmount(self) -> None:
        with self._calls_lock:
            self._closing = True
            close = self._calls == 0
        if close:
            self.library.close()

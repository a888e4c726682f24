"""The live "what the model sees" panel: the next request's messages, with provenance and tokens.

The rows (``projection.rows``) follow the request as sent: the system prompt,
the tool definitions, one row per message (role, source entry, status,
estimated tokens, first line), messages left out, hidden entries, the folded
range a compaction summarized, and the repairs that make the request valid.
A header shows the one context figure (the one compaction decides on) against
the model's window with a meter, and how it is made. Enter on a row opens its
full text. Rows live in a ``RowList``, which stays fast with 20,000 of them.

Two keys change what the rows are: ``c`` sorts them by carry cost (what each entry cost across
every call it rode in), ``m`` lists every model call of the branch instead, with what each
shared with the call before and why not more (``widgets.call_rows``). Both replay the branch's
calls (``projection.call_history``, as ``agent-tui cost`` and ``agent-tui cache`` do) in a thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from agent_tui.projection.call_history import CacheReport, Carry, cache_reports, calls_on_path, carry_costs
from agent_tui.projection.context import Status
from agent_tui.projection.describe import plural
from agent_tui.projection.figures import money
from agent_tui.projection.rows import PanelModel, PanelRow, TokenCache, build_panel_model
from agent_tui.store.record import Entry
from agent_tui.terminal_text import visible, visible_line
from agent_tui.tui.widgets.call_rows import CALL_HEADER, call_detail, call_row, call_title
from agent_tui.tui.widgets.row_list import RowList

__all__ = ["ContextPanel", "PanelModel", "PanelRow", "TokenCache", "build_panel_model", "meter"]

METER_WIDTH = 24

_STATUS_COLOUR = {
    Status.HIDDEN: "error",
    Status.REPLACED: "warning",
    Status.RESTORED: "success",
    Status.SUMMARY: "accent",
    Status.AFTER_COMPACTION: "foreground",
    Status.KEPT: "foreground",
}


def meter(total: int, window: int, width: int = METER_WIDTH) -> str:
    fraction = min(total / window, 1.0) if window else 0.0
    filled = round(fraction * width)
    return "█" * filled + "░" * (width - filled)


class ContextPanel(Vertical):
    """The model's view of the active branch; the app calls :meth:`show` after every change."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        f"context-panel--{c}" for c in ("accent", "warning", "error", "success")
    }

    DEFAULT_CSS = """
    ContextPanel > .context-panel--accent { color: $accent; }
    ContextPanel > .context-panel--warning { color: $warning; }
    ContextPanel > .context-panel--error { color: $error; }
    ContextPanel > .context-panel--success { color: $success; }
    ContextPanel { height: 1fr; }
    ContextPanel > #context-summary { height: auto; padding: 0 1; }
    ContextPanel > RowList { height: 1fr; }
    ContextPanel > #context-repairs { height: auto; max-height: 4; padding: 0 1; color: $warning; }
    ContextPanel > #context-preview {
        height: auto; max-height: 7; padding: 0 1; border-top: solid $secondary 50%;
    }
    """

    BINDINGS: ClassVar = [
        Binding(
            "c",
            "toggle_carry",
            "Carry cost",
            id="panel.carry",
            priority=True,
            tooltip="Sort the rows by what each entry cost over every call it rode in (again: back)",
        ),
        Binding(
            "m",
            "toggle_calls",
            "Cache per call",
            id="panel.calls",
            priority=True,
            tooltip="List every model call: the prefix it shared with the one before, where they "
            "first differ, why, the server's cache read/write (again: back)",
        ),
    ]

    class EntryHighlighted(Message):
        def __init__(self, entry_id: str | None) -> None:
            super().__init__()
            self.entry_id = entry_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model: PanelModel | None = None
        self.folding: set[str] = set()  # a compaction preview: entries it would summarize
        self.edit_preview: list[str] = []  # what an edit of the selected entry would change
        self.sources = ""  # the user's files shaping the prompt, one line (SYSTEM.md, templates, skills)
        #: entry id -> what it cost by riding along, while the rows are sorted by it (None: request order)
        self.carry: dict[str, Carry] | None = None
        #: every call of the branch, while the rows list them (None: the request's rows)
        self.calls: list[CacheReport] | None = None
        self._calls_of: tuple[int, str | None] | None = None  # the branch they are of (or are being)

    def compose(self) -> ComposeResult:
        yield Static(id="context-summary", markup=False)
        yield RowList(id="context-rows")
        yield Static(id="context-repairs", markup=False)
        preview = Static(id="context-preview", markup=False)
        preview.display = False
        yield preview

    @property
    def rows_list(self) -> RowList:
        return self.query_one("#context-rows", RowList)

    def show(self, model: PanelModel) -> None:
        self.model = model
        percent = 100 * model.total / model.window if model.window else 0.0
        summary = Text()
        summary.append(visible_line(model.model_name), style=Style(bold=True))
        summary.append(f" · thinking {visible_line(model.thinking)}\n")
        colour = "error" if percent >= 90 else "warning" if percent >= 70 else "success"
        summary.append(meter(model.total, model.window), style=self._colour(colour))
        summary.append(f" {model.total:,} / {model.window:,} tokens ({percent:.1f}%)")
        if model.context:
            summary.append(f"\n= {visible(model.context)}", style=Style(dim=True))
        sent = len(model.message_rows)
        left_out = sum(1 for r in model.rows if r.status == "left out")
        summary.append(f"\n{plural(sent, 'message')} sent")
        if left_out:
            summary.append(f" · {left_out} left out")
        summary.append(" · Enter on a row shows its full text", style=Style(dim=True))
        if self.sources:
            summary.append(f"\nuser files: {visible_line(self.sources)} (/session)", style=Style(dim=True))
        if self.calls is not None:
            self._show_calls(model, summary, self.calls)
            return
        if model.cache_line:
            summary.append(f"\n{visible_line(model.cache_line)}", style=Style(dim=True))
        rows = self.shown_rows
        if self.carry is not None:
            summary.append("\nsorted by carry cost: tokens over every call so far · c: request order")
        self.query_one("#context-summary", Static).update(summary)
        self.rows_list.set_rows(len(rows), lambda i: self._row_text(rows[i]))
        repairs = self.query_one("#context-repairs", Static)
        repairs.update(Text("\n".join(f"repair: {visible_line(r)}" for r in model.repairs)))
        repairs.display = bool(model.repairs)
        self.query_one("#context-preview", Static).display = bool(self.edit_preview)

    def _show_calls(self, model: PanelModel, summary: Text, calls: list[CacheReport]) -> None:
        """The rows are the branch's calls, oldest first; a branch that moved is worked out again
        (the rows of the one before stay meanwhile)."""
        if model.projection is not None and _branch_key(model.projection.path) != self._calls_of:
            self._work_out_calls(model.projection.path)
        summary.append(
            f"\n{plural(len(calls), 'model call')} on the branch: what each shared with the one before"
        )
        summary.append(" · Enter: all of it · m: the request", style=Style(dim=True))
        summary.append(f"\n{CALL_HEADER}", style=Style(bold=True))
        self.query_one("#context-summary", Static).update(summary)
        miss = self._colour("warning")
        self.rows_list.set_rows(len(calls), lambda i: call_row(i + 1, calls[i], miss))
        self.query_one("#context-repairs", Static).display = False
        self.query_one("#context-preview", Static).display = False  # the rows get its lines (80x24)

    @property
    def shown_rows(self) -> list[PanelRow]:
        """The rows in the order shown: the request's, or by carry cost (most carried first)."""
        if self.model is None:
            return []
        if self.carry is None:
            return self.model.rows
        carry = self.carry

        def carried(row: PanelRow) -> int:
            found = carry.get(row.source_id) if row.source_id is not None else None
            return found.carried_tokens if found is not None else 0

        return sorted(self.model.rows, key=carried, reverse=True)

    def action_toggle_carry(self) -> None:
        """Sort the rows by what each entry cost across every call it rode in, or back. The carry
        costs replay every call of the branch (one projection each): worked out in a thread, so a
        long session's keys stay answered meanwhile."""
        if self.carry is not None or self.model is None or self.model.projection is None:
            self.carry = None
            self.redraw()
            return
        self.calls = self._calls_of = None
        path = self.model.projection.path
        self.query_one("#context-summary", Static).update(Text("working out the carry costs of every call…"))
        self.app.run_worker(
            lambda: self._carry_worked_out(path),
            thread=True,
            group="panel-carry",
            exclusive=True,
            exit_on_error=False,  # a failure is the app's one notice (tui.worker_errors), not its end
        )

    def action_toggle_calls(self) -> None:
        """List every model call of the branch (what each shared with the one before, where they
        first differ and why, beside the server's cache figures), or go back to the request."""
        if self.calls is not None or self.model is None or self.model.projection is None:
            self.calls = self._calls_of = None
            self.redraw()
            return
        self.carry = None
        self.query_one("#context-summary", Static).update(Text("working out what every call shared…"))
        self._work_out_calls(self.model.projection.path)

    def _work_out_calls(self, path: Sequence[Entry]) -> None:
        self._calls_of = _branch_key(path)
        self.app.run_worker(
            lambda: self._calls_worked_out(path),
            thread=True,
            group="panel-calls",
            exclusive=True,
            exit_on_error=False,  # a failure is the app's one notice (tui.worker_errors), not its end
        )

    def _calls_worked_out(self, path: Sequence[Entry]) -> None:
        reports = cache_reports(calls_on_path(path))

        def apply() -> None:
            if self._calls_of != _branch_key(path):
                return  # gone back to the request, or the branch moved: another worker is on it
            self.calls = reports
            self.redraw()

        self.app.call_from_thread(apply)

    def _carry_worked_out(self, path: Sequence[Entry]) -> None:
        carry = {c.entry_id: c for c in carry_costs(calls_on_path(path))}

        def apply() -> None:
            if (
                self.model is not None
                and self.model.projection is not None
                and self.model.projection.path == path
                and self._calls_of is None  # m was pressed meanwhile: the calls' list stays
            ):
                self.carry = carry
            self.redraw()  # the branch moved meanwhile: the request's order, as it is now

        self.app.call_from_thread(apply)

    def show_pending(self, messages: int) -> None:
        """A placeholder while a big session's tokens are counted in the background."""
        self.show_placeholder(f"counting the tokens of {messages:,} messages…")

    def show_placeholder(self, text: str) -> None:
        """``text`` where the figures go, and no rows, until a model is shown."""
        self.query_one("#context-summary", Static).update(Text(text))
        self.rows_list.set_rows(0, lambda i: Text(""))

    def _colour(self, name: str) -> Style:
        """The colour of the ``context-panel--NAME`` component class (the theme's, through the CSS)."""
        return self.get_component_rich_style(f"context-panel--{name}", partial=True)

    def show_edit_preview(self, title: str, lines: list[str]) -> None:
        """What hide / replace / restore / pin would do to the selected entry (no lines: hidden)."""
        self.edit_preview = lines
        preview = self.query_one("#context-preview", Static)
        text = Text()
        if lines:
            text.append(visible_line(title), style=Style(bold=True))
            for line in lines:
                text.append("\n" + visible_line(line))
        preview.update(text)
        preview.display = bool(lines) and self.calls is None

    def preview_fold(self, entry_ids: set[str]) -> None:
        """Mark the rows a compaction would fold into its summary (an empty set clears it)."""
        self.folding = entry_ids
        self.rows_list.redraw()

    def _row_text(self, row: PanelRow) -> Text:
        number = f"{row.number:>4}" if row.number is not None else "   -"
        if row.source_id is not None and row.source_id in self.folding:
            text = Text(no_wrap=True, overflow="ellipsis")
            text.append(f"{number} {visible_line(row.role):<9} {visible_line(row.source_id):<8} ")
            text.append(f"{'→ summary':<16}", style=self._colour("accent") + Style(bold=True))
            text.append(f" {row.tokens:>6}  ", style=Style(dim=True))
            text.append(visible_line(row.text), style=Style(dim=True))
            return text
        status_key = row.status.split(" ")[0]
        colour = next((c for s, c in _STATUS_COLOUR.items() if s.value == status_key), None)
        style = self._colour(colour) if colour and colour != "foreground" else Style()
        if status_key in ("hidden", "summarized", "left", "→"):
            style += Style(dim=True)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(
            f"{number} {visible_line(row.role):<9} {visible_line(row.source_id or ''):<8} ",
            style=Style(dim=status_key == "hidden"),
        )
        text.append(f"{visible_line(row.status):<16}", style=style)
        text.append(f" {row.tokens:>6}  ", style=Style(dim=True))
        if self.carry is not None:
            found = self.carry.get(row.source_id) if row.source_id is not None else None
            if found is not None:
                cost = "" if found.unpriced_calls == found.calls else f" {money(found.cost)}"
                text.append(
                    f"carried {found.carried_tokens:,} in {found.calls}{cost}  ", style=self._colour("accent")
                )
        text.append(
            visible_line(row.text),
            style=Style(dim=True) if status_key in ("hidden", "summarized", "left", "→") else Style(),
        )
        return text

    def row_lines(self) -> list[str]:
        """Each row as plain text, as shown (for tests)."""
        if self.calls is not None:
            return [call_row(i + 1, r, Style()).plain for i, r in enumerate(self.calls)]
        return [self._row_text(r).plain for r in self.shown_rows]

    def redraw(self) -> None:
        if self.model is not None:
            self.show(self.model)

    @on(RowList.Selected)
    def _selected(self, event: RowList.Selected) -> None:
        """Open the row: the full text the request carries for it."""
        event.stop()
        from agent_tui.tui.screens.text_view import TextViewScreen

        if self.calls is not None:
            if event.index < len(self.calls):
                report, number = self.calls[event.index], event.index + 1
                detail = call_detail(number, report, len(self.calls))
                self.app.push_screen(TextViewScreen(call_title(number, report), visible(detail)))
            return
        rows = self.shown_rows
        if event.index >= len(rows):
            return

        row = rows[event.index]
        where = f" {row.source_id}" if row.source_id else ""
        title = f"{row.role}{where} · {row.status} · {plural(row.tokens, 'token')}"
        self.app.push_screen(TextViewScreen(visible_line(title), visible(row.full_text())))

    @on(RowList.Highlighted)
    def _highlighted(self, event: RowList.Highlighted) -> None:
        event.stop()
        if self.calls is not None:  # a call's row: its reply is the entry /hide, /pin... act on
            if event.index < len(self.calls):
                self.post_message(self.EntryHighlighted(self.calls[event.index].call.entry_id))
            return
        rows = self.shown_rows
        if event.index >= len(rows):
            return
        self.post_message(self.EntryHighlighted(rows[event.index].source_id))


def _branch_key(path: Sequence[Entry]) -> tuple[int, str | None]:
    """What tells one branch (as it is now) from another: its length and its last entry (the file
    is append-only, so an edit or a new reply is a new last entry)."""
    return len(path), path[-1].id if path else None

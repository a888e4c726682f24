"""The model picker (F4, ``/model``): a search box over the model catalog, filtered as you type.

It opens on the model table and the config file's ``[models]`` at once; what the configured
servers list is asked for in a thread and merged in when it arrives (a slow or absent server
never holds the dialog up). Each row names the provider and id, the window, where the model comes
from and whether the provider has a key, in aligned columns fitted to the width the row is drawn
at (:func:`fit_row`): where they do not fit, "where from" goes first, then the window, and the id
is never cut (a too-long one wraps). Labels are text, never markup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from agent_tui.projection.catalog import CatalogModel, merge, search
from agent_tui.projection.figures import short_tokens
from agent_tui.terminal_text import visible_line
from agent_tui.tui.screens.dialog import Dialog

SHOWN = 200  # rows at most: the search narrows the rest
NO_KEY = "no key"
GAP = 2  # spaces between columns
ID_COLUMN = 32  # the id column is at least this wide (or as wide as the widest id) before columns go
#: The columns after the id, and which of them a row keeps as its width shrinks (least useful first out).
_FITS = (("window", "key", "source"), ("window", "key"), ("key",), ())


@dataclass(frozen=True, slots=True)
class Columns:
    """The widths of a list's columns (0: no row has anything in that column)."""

    spec: int
    window: int
    source: int
    key: int

    @classmethod
    def of(cls, models: Iterable[CatalogModel]) -> Columns:
        rows = [_cells(m) for m in models]
        return cls(
            max((len(r["spec"]) for r in rows), default=0),
            max((len(r["window"]) for r in rows), default=0),
            max((len(r["source"]) for r in rows), default=0),
            max((len(r["key"]) for r in rows), default=0),
        )

    def width(self, name: str) -> int:
        return {"window": self.window, "source": self.source, "key": self.key}[name]

    def tail(self, kept: Sequence[str]) -> int:
        return sum(GAP + self.width(k) for k in kept if self.width(k))


def _cells(m: CatalogModel) -> dict[str, str]:
    return {
        "spec": visible_line(m.spec),
        "window": short_tokens(m.context_window) if m.context_window else "?",
        "source": visible_line(m.source),
        "key": "" if m.key else NO_KEY,
    }


_STYLE = {"window": "", "source": "dim", "key": "yellow"}


def fit_row(m: CatalogModel, width: int, columns: Columns) -> Text:
    """One row in ``width`` cells: the id, then as many of window, key and source as fit beside it,
    in columns aligned on ``columns``: the id column is as wide as the widest id where that fits,
    else the room the columns leave, else :data:`ID_COLUMN` with fewer columns (source goes first).
    An id too long for its column pushes its row's columns right, or drops them; an id longer than
    the width wraps: it is never cut."""
    cells = _cells(m)
    spec = cells["spec"]
    want = min(columns.spec, ID_COLUMN)
    column = next((c for kept in _FITS if (c := min(columns.spec, width - columns.tail(kept))) >= want), want)
    for kept in _FITS:
        tail = columns.tail(kept)
        if max(len(spec), column) + tail <= width:
            row = Text(spec.ljust(column), no_wrap=True)
            for k in kept:
                if columns.width(k):
                    cell = (
                        cells[k].rjust(columns.window) if k == "window" else cells[k].ljust(columns.width(k))
                    )
                    row.append(" " * GAP)
                    row.append(cell, style=_STYLE[k])
            return row
    return Text(spec, overflow="fold")


class ModelRow:
    """A picker row as a Rich renderable: :func:`fit_row` at the width it is drawn at (so a resize
    re-fits it)."""

    def __init__(self, model: CatalogModel, columns: Columns) -> None:
        self.model = model
        self.columns = columns

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield fit_row(self.model, options.max_width - 1, self.columns)  # a space before the scrollbar

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        full = fit_row(self.model, 10_000, self.columns).cell_len
        return Measurement(min(len(self.model.spec), full), full)


def picker_rows(models: Sequence[CatalogModel]) -> list[ModelRow]:
    columns = Columns.of(models)
    return [ModelRow(m, columns) for m in models]


class ModelPickerScreen(Dialog[str | None]):
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
    ]

    def __init__(
        self,
        models: list[CatalogModel],
        current: str | None = None,
        more: Callable[[], list[CatalogModel]] | None = None,
    ) -> None:
        super().__init__()
        self.models = models
        self.current = current
        self.more = more  # the servers' lists, fetched in a thread
        self.shown: list[CatalogModel] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog picker-dialog"):
            yield Label("Switch model", classes="dialog-title", markup=False)
            yield Input(placeholder="search: provider, id, parts of one", id="model-search")
            yield OptionList(id="model-choices")
            yield Label(
                "type to search · ↑↓ · Enter to choose · Escape to cancel",
                classes="dialog-hint",
                markup=False,
            )

    def on_mount(self) -> None:
        self.refilter("")
        self.query_one(Input).focus()
        if self.more is not None:
            self.fetch_more()

    @work(thread=True, exit_on_error=False, description="ask the configured servers for their models")
    def fetch_more(self) -> None:
        assert self.more is not None
        listed = self.more()
        self.app.call_from_thread(self.add_models, listed)

    def add_models(self, listed: list[CatalogModel]) -> None:
        if not listed:
            return  # no server answered: the list stays as it is (and where the user moved in it)
        self.models = merge(self.models, listed)
        if self.is_mounted:
            self.refilter(self.query_one(Input).value)

    def refilter(self, query: str) -> None:
        options = self.query_one(OptionList)
        self.shown = search(self.models, query)[:SHOWN]
        options.clear_options()
        options.add_options([Option(row, id=row.model.spec) for row in picker_rows(self.shown)])
        specs = [m.spec for m in self.shown]
        if self.shown:
            options.highlighted = specs.index(self.current) if (not query and self.current in specs) else 0

    @on(Input.Changed, "#model-search")
    def _typed(self, event: Input.Changed) -> None:
        self.refilter(event.value)

    @on(Input.Submitted, "#model-search")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one(OptionList)
        if options.highlighted is not None and self.shown:
            self.dismiss(self.shown[options.highlighted].spec)
        elif event.value.strip():
            self.dismiss(event.value.strip())  # a model no list knows: a local server may serve it

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            current = options.highlighted if options.highlighted is not None else -step
            options.highlighted = max(0, min(options.option_count - 1, current + step))

    def action_cancel(self) -> None:
        self.dismiss(None)

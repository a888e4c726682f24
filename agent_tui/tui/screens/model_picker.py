"""The model picker (F4, ``/model``): a search box over the model catalog, filtered as you type.

It opens on the model table and the config file's ``[models]`` at once; what the configured
servers list is asked for in a thread and merged in when it arrives (a slow or absent server
never holds the dialog up). Each row names the provider, the window, where the model comes from
and whether the provider has a key. Labels are text, never markup.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from agent_tui.projection.catalog import CatalogModel, merge, search
from agent_tui.terminal_text import visible_line

SHOWN = 200  # rows at most: the search narrows the rest


class ModelPickerScreen(ModalScreen[str | None]):
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
        super().__init__(classes="modal")
        self.models = models
        self.current = current
        self.more = more  # the servers' lists, fetched in a thread
        self.shown: list[CatalogModel] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
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
        self.models = merge(self.models, listed)
        if self.is_mounted:
            self.refilter(self.query_one(Input).value)

    def refilter(self, query: str) -> None:
        options = self.query_one(OptionList)
        self.shown = search(self.models, query)[:SHOWN]
        options.clear_options()
        options.add_options([Option(Text(visible_line(m.label())), id=m.spec) for m in self.shown])
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

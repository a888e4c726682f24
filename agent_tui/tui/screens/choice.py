"""Pick one of a few options (model, thinking level, theme); titles and labels are text, never markup.

Asked unasked (the trust question), it is ``guarded``: a :class:`~dialog.Question` whose keys typed
for the composer answer nothing, and whose ``deliberate`` choices take a settled highlight."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from agent_tui.terminal_text import visible, visible_line
from agent_tui.tui.screens.dialog import Question


class ChoiceScreen(Question[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]  # noqa: RUF012

    def __init__(
        self,
        title: str,
        choices: list[tuple[str, str]],
        current: str | None = None,
        *,
        guarded: bool = False,
        clock: Callable[[], float] = time.monotonic,
        typed_at: float | None = None,
        on_text: Callable[[str], object] | None = None,
        deliberate: Iterable[str] = (),
    ) -> None:
        super().__init__(
            guarded=guarded, clock=clock, typed_at=typed_at, on_text=on_text, deliberate=deliberate
        )
        self.title_text = title
        self.choices = choices
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(visible(self.title_text)), classes="dialog-title", markup=False)
            yield OptionList(
                *[Option(Text(visible_line(label)), id=value) for value, label in self.choices], id="choices"
            )
            yield Label("Enter to choose · Escape to cancel", classes="dialog-hint", markup=False)

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        values = [v for v, _ in self.choices]
        if self.current in values:
            options.highlighted = values.index(self.current)
        options.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if not self.answerable:  # a click in the question's first moments
            self.app.bell()
            return
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)

"""A one-line prompt: Enter accepts, Escape cancels (dismisses with None).

With an ``alternate`` key, that key also accepts the text, and :attr:`PromptScreen.alternate_chosen`
says it was the one pressed (a second way to go on, e.g. reviewing a summary before compacting)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from agent_tui.terminal_text import visible
from agent_tui.tui.screens.dialog import Dialog
from agent_tui.tui.widgets.inert_lines import InertInput


class PromptScreen(Dialog[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]  # noqa: RUF012

    def __init__(
        self,
        title: str,
        value: str = "",
        placeholder: str = "",
        hint: str = "",
        *,
        alternate: str | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder
        self.hint = hint
        self.alternate_chosen = False
        if alternate is not None:
            self._bindings.bind(alternate, "alternate", "Alternate", show=False, priority=True)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(visible(self.title_text)), classes="dialog-title", markup=False)
            yield InertInput(self.value, placeholder=self.placeholder, id="prompt-input")
            yield Label(
                Text(visible(self.hint or "Enter to accept · Escape to cancel")),
                classes="dialog-hint",
                markup=False,
            )

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = False
        field.focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_alternate(self) -> None:
        self.alternate_chosen = True
        self.dismiss(self.query_one(Input).value)

    def action_cancel(self) -> None:
        self.dismiss(None)

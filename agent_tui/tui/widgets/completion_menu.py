"""The composer's completion dropdown: slash commands with their descriptions, or ``@`` files.

It never takes the focus: the composer moves its highlight (Up/Down), accepts (Tab/Enter) and
closes it (Esc), so typing goes on in the composer while it is open.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from agent_tui.terminal_text import visible_line


@dataclass(frozen=True, slots=True)
class Candidate:
    """What Tab or Enter puts in place of the word being completed, and how the row reads."""

    insert: str
    label: str
    detail: str = ""


class CompletionMenu(OptionList):
    DEFAULT_CSS = """
    CompletionMenu { height: auto; max-height: 8; margin: 0 1; border: round $primary 40%; display: none; }
    CompletionMenu.-shown { display: block; }
    """
    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.candidates: list[Candidate] = []

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def show(self, candidates: list[Candidate]) -> None:
        self.candidates = list(candidates)
        self.clear_options()
        for c in candidates:
            row = Text(visible_line(c.label), no_wrap=True, overflow="ellipsis")  # file names: untrusted
            if c.detail:
                row.append("  " + visible_line(c.detail), style="dim")
            self.add_option(Option(row))
        self.set_class(bool(candidates), "-shown")
        if candidates:
            self.highlighted = 0

    def hide(self) -> None:
        self.candidates = []
        self.clear_options()
        self.remove_class("-shown")

    def move(self, step: int) -> None:
        if not self.candidates:
            return
        current = self.highlighted if self.highlighted is not None else 0
        self.highlighted = (current + step) % len(self.candidates)

    def chosen(self) -> Candidate | None:
        if not self.candidates:
            return None
        index = self.highlighted if self.highlighted is not None else 0
        return self.candidates[index]


__all__ = ["Candidate", "CompletionMenu"]

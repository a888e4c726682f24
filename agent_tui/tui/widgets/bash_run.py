"""A ``!cmd`` while it runs: its command line and the tail of its output, above the composer.

The output is plain text in a ``Log`` (never markup; control sequences were removed by
``agent.user_bash``); when the command ends the panel goes and the chat shows the entry, its
output open (the last run stays open: ``ChatView._open_last_run``).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Log, Static

from agent_tui.terminal_text import visible, visible_line

MAX_LINES = 2000


class BashRun(Vertical):
    DEFAULT_CSS = """
    BashRun { height: auto; max-height: 12; margin: 0 1; border: round $warning 60%; }
    BashRun > Log { height: auto; max-height: 9; }
    """

    def __init__(self, command: str, *, excluded: bool = False) -> None:
        super().__init__(classes="bash-run")
        self.command = command
        self.excluded = excluded
        self.output = ""

    def compose(self) -> ComposeResult:
        note = " · not sent to the model" if self.excluded else ""
        line = f"$ {visible_line(self.command, strict=True)}  (running, Esc cancels){note}"
        yield Static(Text(line, no_wrap=True), markup=False)
        yield Log(max_lines=MAX_LINES, auto_scroll=True)

    def add_output(self, text: str) -> None:
        self.output += text if len(self.output) < 100_000 else ""
        if self.is_mounted:
            self.query_one(Log).write(visible(text))  # and whatever the stripping missed, inert


__all__ = ["BashRun"]

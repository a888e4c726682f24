"""The question about hooks, MCP servers and permission rules new or changed since accepted.

Asked when a hook or server was written (by the model, a repository, anyone) after the user
accepted what was there (:mod:`agent_tui.agent.trust`), or an allow or ask rule or a sandbox
allowed domain (:mod:`agent_tui.agent.rule_trust`: ``allow Bash(rm:*) — ~/.claude/settings.json``);
nothing of it runs or is allowed until the answer is yes. It is not the folder-trust question: the folder's trust stands, the question is about these
commands. Each line says what would start or be allowed; however many there are (30 changed hooks
are 60 wrapped lines), the list is a box of at most :data:`BODY_ROWS` rows that scrolls (Tab puts
the focus on it, then the arrows and PageUp/PageDown; the mouse wheel too), so the choices and the
hint stay on screen at 80x24. Guarded like every question (:class:`~dialog.Question`); "Yes"
starts programs, so it takes the arrow and an Enter once the highlight has settled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from agent_tui.terminal_text import visible, visible_line
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.dialog import ask

if TYPE_CHECKING:
    from agent_tui.tui.host import Host

#: Rows the list of changes takes at most (then it scrolls).
BODY_ROWS = 8
#: The prefix the agent layer puts before each line (said once, in the title, here).
PREFIX = "new or changed since you last accepted them: "


class TrustChangesScreen(ChoiceScreen):
    #: Tab moves between the list of changes and the choices (the app's own focus keys are off
    #: while a dialog is open).
    BINDINGS = [*ChoiceScreen.BINDINGS, Binding("tab", "switch_focus", "Scroll the list", show=False)]  # noqa: RUF012

    DEFAULT_CSS = f"""
    TrustChangesScreen #trust-changes-body {{
        height: auto;
        max-height: {BODY_ROWS};
        border-left: tall $warning;
        padding-left: 1;
        scrollbar-size-vertical: 1;
    }}
    """

    def __init__(self, title: str, lines: list[str], choices: list[tuple[str, str]], **options: Any) -> None:
        super().__init__(title, choices, "no", **options)
        self.lines = lines
        #: What the question shows of the changes (one entry per line, each made visible).
        self.body_text = "\n".join(f"• {visible_line(line)}" for line in lines)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(visible(self.title_text)), classes="dialog-title", markup=False)
            with VerticalScroll(id="trust-changes-body"):
                yield Static(Text(self.body_text), markup=False)
            yield OptionList(
                *[Option(Text(visible_line(label)), id=value) for value, label in self.choices], id="choices"
            )
            yield Label(
                "Enter to choose · Escape to leave them out · Tab, then ↑↓: scroll the list",
                classes="dialog-hint",
                markup=False,
            )

    def action_switch_focus(self) -> None:
        self.focus_next()


async def ask_trust_changes(
    app: Host, folder: str, lines: list[str], *, clock: Callable[[], float] = time.monotonic
) -> bool | None:
    """Ask about the hooks, servers and rules in ``lines``; True loads and applies them
    (remembered as accepted)."""
    shown = [line.removeprefix(PREFIX) for line in lines]
    count = len(shown)
    what = (
        "A hook, MCP server or permission rule"
        if count == 1
        else f"{count} hooks, MCP servers or permission rules"
    )
    title = (
        f"{what} new or changed since you last accepted them (not in force). This folder's "
        "trust stands; nothing of it runs or is allowed unless you accept:"
    )
    composer = app.composer
    screen = TrustChangesScreen(
        title,
        shown,
        [
            ("yes", f"Yes: load {'it' if count == 1 else 'them'} (remembered as now)"),
            ("no", "No: leave them out this time"),
        ],
        guarded=True,
        clock=clock,
        typed_at=composer.typed_at,
        on_text=composer.insert,
        deliberate={"yes"},
    )
    value = await ask(app, screen)
    return None if value is None else value == "yes"


__all__ = ["BODY_ROWS", "TrustChangesScreen", "ask_trust_changes"]

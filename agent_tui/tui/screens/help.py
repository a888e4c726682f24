"""The help screen: every key and every slash command, one line each.

Built from the bindings (as the keymap left them) and the command table, so it
never drifts from what the keys and commands do. ``?`` on an empty composer,
``/help`` and the palette open it; Esc, ``q`` or ``?`` close it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, Static

from agent_tui.tui.commands import COMMANDS
from agent_tui.tui.screens.dialog import Dialog
from agent_tui.tui.user_commands import command_rows, ready_resources

if TYPE_CHECKING:
    from agent_tui.tui.host import Host

KEYS_WIDTH = 24  # the keys column at most (a longer one wraps)


@dataclass(frozen=True, slots=True)
class HelpRow:
    section: str
    keys: str
    what: str


#: Keys handled in a widget's own code rather than by a binding (so the help lists them too).
_FIXED = (
    HelpRow("In the composer", "Enter", "Send (a /command runs it; //text sends /text)"),
    HelpRow("In the composer", "Shift+Enter, Ctrl+J", "New line"),
    HelpRow("In the composer", "Up / Down", "History, on the first / last line"),
    HelpRow("In the composer", "?", "This help, when the composer is empty"),
    HelpRow("In the composer", "/", "The slash commands as you type; Tab inserts one, Enter runs it"),
    HelpRow(
        "In the composer",
        "@",
        "Pick a project file; on send @path attaches its text (an image as an image)",
    ),
    HelpRow(
        "In the composer",
        "Tab",
        "Complete the word before the cursor as a path (in a list: insert the pick)",
    ),
    HelpRow(
        "In the composer",
        "!cmd",
        "Run cmd in the session's folder; its output goes to the model with the next message",
    ),
    HelpRow("In the composer", "!!cmd", "Run cmd the same way, never sent to the model"),
    HelpRow(
        "In the tree",
        "Up / Down, click",
        "Select an entry: the chat shows it, the panel says what h/e/u/p would do",
    ),
    HelpRow("In the tree", "Enter, double click", "Continue from the entry (a branch; the old branch stays)"),
    HelpRow("In the tree", "other letters", "Go to the composer, as text"),
    HelpRow("In the panel", "Up / Down, click", "Select a row: its entry is the one /hide, /pin... act on"),
    HelpRow("In the panel", "Enter, double click", "Show the full text the row sends"),
    HelpRow("In the panel", "other letters", "Go to the composer, as text"),
    HelpRow("Anywhere", "Esc Esc", "Open the tree (on an idle, empty screen)"),
    HelpRow(
        "Anywhere",
        "mouse drag, Ctrl+C",
        "Select text in the chat and copy it (OSC 52 where there is no clipboard)",
    ),
)


def _bindings(cls: type[Any]) -> Iterable[Binding]:
    seen: set[str] = set()
    for klass in cls.__mro__:
        for binding in klass.__dict__.get("BINDINGS", ()):
            if isinstance(binding, Binding) and binding.id and binding.id not in seen:
                seen.add(binding.id)
                yield binding


def _keys(app: Host, binding: Binding, keymap: dict[str, str]) -> str:
    keys = keymap.get(binding.id or "", binding.key)
    return ", ".join(app.get_key_display(Binding(k.strip(), "")) for k in keys.split(","))


def help_rows(app: Host) -> list[HelpRow]:
    """The rows of the help screen, for ``app`` with its keymap."""
    from agent_tui.tui.screens.main import MainScreen
    from agent_tui.tui.widgets.composer import Composer
    from agent_tui.tui.widgets.context_panel import ContextPanel
    from agent_tui.tui.widgets.session_tree import SessionTree

    keymap = app.keymap
    rows: list[HelpRow] = []
    for cls in (type(app), MainScreen):
        for binding in _bindings(cls):
            if binding.description:
                what = binding.tooltip or binding.description
                rows.append(HelpRow("Anywhere", _keys(app, binding, keymap), what))
    for binding in _bindings(Composer):
        if binding.description and binding.id:
            rows.append(HelpRow("In the composer", _keys(app, binding, keymap), binding.description))
    for binding in _bindings(SessionTree):
        if binding.description:
            rows.append(HelpRow("In the tree", _keys(app, binding, keymap), binding.description))
    for binding in _bindings(ContextPanel):
        if binding.description:
            what = binding.tooltip or binding.description
            rows.append(HelpRow("In the panel", _keys(app, binding, keymap), what))
    rows.extend(_FIXED)
    for command in COMMANDS:
        rows.append(HelpRow("Slash commands", command.usage, f"{command.title}: {command.help}"))
    for name, usage, what in command_rows(ready_resources(app)):
        section = "Skills" if name.startswith("skill:") else "Prompt templates"
        rows.append(HelpRow(section, usage, what))
    return rows


class HelpScreen(Dialog[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", id="help.close"),
    ]

    def __init__(self, rows: list[HelpRow]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog help-dialog"):
            yield Label("Keys and commands", classes="dialog-title", markup=False)
            with VerticalScroll(id="help-body"):
                sections: list[str] = []
                for row in self.rows:
                    if row.section not in sections:
                        sections.append(row.section)
                for section in sections:
                    yield Static(self._table(section), classes="help-section")
            yield Label(
                "Esc closes · keys are remapped in the config's [keys] table (keymap = \"pi\" for pi's)",
                classes="dialog-hint",
                markup=False,
            )

    def _table(self, section: str) -> Table:
        table = Table(
            title=Text(section, style="bold"), title_justify="left", show_header=False, box=None, expand=True
        )
        # The keys as wide as the longest (up to KEYS_WIDTH, then wrapped at spaces), the rest for
        # the description: neither is ever cut.
        table.add_column("keys", max_width=KEYS_WIDTH, overflow="fold")
        table.add_column("what", ratio=1, overflow="fold")
        for row in self.rows:
            if row.section == section:
                table.add_row(Text(row.keys, style="bold"), Text(row.what))
        return table

    def action_close(self) -> None:
        self.dismiss(None)

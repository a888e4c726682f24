"""``/mcp``: each MCP server with its state, why it failed, its tools; restart or disable one.

Server names, reasons, commands and tool names come from config files and servers: untrusted, so
every one is a ``rich.text.Text`` made visible (``terminal_text``), never markup. Secrets (``env``,
``headers``) are never shown.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from agent_tui.projection.describe import plural
from agent_tui.terminal_text import visible_line
from agent_tui.tui.screens.dialog import Dialog

STATE_STYLE = {
    "ready": "green",
    "starting": "yellow",
    "failed": "red",
    "disabled": "dim",
    "not started": "dim",
}


def server_line(row: Any) -> Text:
    """One server on two lines: name, state and tool count, then where it was configured (a path
    can be long: on its own line it wraps instead of pushing the state away)."""
    line = Text(visible_line(row.name), style="bold")
    line.append("  ")
    line.append(row.state, style=STATE_STYLE.get(row.state, ""))
    if row.state == "ready":
        line.append(f"  {plural(len(row.tools), 'tool')}")
    line.append(f"\n  {visible_line(row.source)}", style="dim")
    return line


def server_details(row: Any) -> Text:
    text = Text()
    text.append(f"{row.transport}: ", style="dim")
    text.append(visible_line(row.target) + "\n")
    if row.reason:
        text.append("why: ", style="red")
        text.append(visible_line(row.reason) + "\n")
    if row.tools:
        text.append("tools: ", style="dim")
        text.append(", ".join(visible_line(t) for t in row.tools))
    elif row.state == "starting":
        text.append("starting…", style="dim")
    text.rstrip()  # no blank line under the last one
    return text


class McpScreen(Dialog[None]):
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "close", "Close"),
        Binding("r", "restart", "Restart"),
        Binding("d", "toggle_server", "Disable / enable"),
    ]

    def __init__(self, manager: Any) -> None:
        super().__init__()
        self.manager = manager
        self._listener = lambda _server: self.call_later(self.refresh_rows)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("MCP servers", classes="dialog-title", markup=False)
            yield OptionList(id="mcp-servers")
            with VerticalScroll(id="mcp-details-box"):
                yield Static(id="mcp-details", markup=False)
            yield Label(
                "r restart · d disable / enable · Escape to close", classes="dialog-hint", markup=False
            )

    def on_mount(self) -> None:
        self.manager.listeners.append(self._listener)
        self.refresh_rows()
        self.query_one(OptionList).focus()

    def on_unmount(self) -> None:
        if self._listener in self.manager.listeners:
            self.manager.listeners.remove(self._listener)

    def _rows(self) -> list[Any]:
        return list(self.manager.status())

    def refresh_rows(self) -> None:
        options = self.query_one(OptionList)
        keep = options.highlighted
        options.clear_options()
        rows = self._rows()
        options.add_options([Option(server_line(r), id=r.name) for r in rows])
        if rows:
            options.highlighted = min(keep or 0, len(rows) - 1)
        self._show_details()

    @on(OptionList.OptionHighlighted)
    def _highlighted(self) -> None:
        self._show_details()

    def _selected_name(self) -> str | None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return None
        return options.get_option_at_index(options.highlighted).id

    def _show_details(self) -> None:
        name = self._selected_name()
        rows = {r.name: r for r in self._rows()}
        details = self.query_one("#mcp-details", Static)
        details.update(server_details(rows[name]) if name in rows else Text("No MCP servers configured."))

    def action_restart(self) -> None:
        name = self._selected_name()
        if name is not None:
            self.app.run_worker(self.manager.restart(name), exit_on_error=False, group="mcp")

    def action_toggle_server(self) -> None:
        name = self._selected_name()
        if name is None:
            return
        server = self.manager.servers[name]
        work = self.manager.enable(name) if server.state == "disabled" else self.manager.disable(name)
        self.app.run_worker(work, exit_on_error=False, group="mcp")

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["McpScreen", "server_details", "server_line"]

"""The main screen: the session tree, the chat with the composer, the "what the model sees" panel.

It owns the layout (``main.tcss`` beside it) and gives the app typed getters for
its panes, which stay reachable while a dialog is on top of it. The ``#status``
slot, docked above the footer, holds the status line (``widgets/status_line``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from agent_tui.tui.widgets.chat_view import ChatView
from agent_tui.tui.widgets.completion_menu import CompletionMenu
from agent_tui.tui.widgets.composer import Composer
from agent_tui.tui.widgets.context_panel import ContextPanel
from agent_tui.tui.widgets.queue_view import QueueView
from agent_tui.tui.widgets.session_tree import SessionTree
from agent_tui.tui.widgets.status_line import StatusLine


class MainScreen(Screen[None]):
    CSS_PATH = Path(__file__).parent / "main.tcss"
    AUTO_FOCUS = "#composer"

    def __init__(
        self, history: list[str] | None = None, on_ready: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        super().__init__(id="main-screen")
        self._history = history
        self._on_ready = on_ready  # run once the panes are mounted (the app opens its session)

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            with Vertical(id="sidebar"):
                yield Static("Session", id="sidebar-title", markup=False)
                yield SessionTree(id="tree")
            with Vertical(id="center"):
                yield ChatView(id="chat")
                yield Static(id="notice", markup=False)
                yield QueueView(id="queue")
                yield CompletionMenu(id="completion")
                yield Composer(id="composer", history=self._history)
            with Vertical(id="context"):
                yield Static("What the model sees", id="context-title", markup=False)
                yield ContextPanel(id="panel")
        with Vertical(id="status"):
            yield StatusLine(id="status-line")
        yield Footer()

    async def on_mount(self) -> None:
        if self._on_ready is not None:
            await self._on_ready()

    # -- the panes ----------------------------------------------------------------

    @property
    def session_tree(self) -> SessionTree:
        return self.query_one(SessionTree)

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    @property
    def panel(self) -> ContextPanel:
        return self.query_one(ContextPanel)

    @property
    def composer(self) -> Composer:
        return self.query_one(Composer)

    @property
    def notice(self) -> Static:
        return self.query_one("#notice", Static)

    @property
    def status_line(self) -> StatusLine:
        return self.query_one(StatusLine)

    @property
    def sidebar_title(self) -> Static:
        return self.query_one("#sidebar-title", Static)

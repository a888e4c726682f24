"""What the app's controllers use of the app: :class:`Host`.

The controllers (:mod:`~agent_tui.tui.session_actions`, :mod:`~agent_tui.tui.composer_actions`,
:mod:`~agent_tui.tui.agent_events`, :mod:`~agent_tui.tui.commands`,
:mod:`~agent_tui.tui.user_commands`, :mod:`~agent_tui.tui.reload`, the compaction review and
surgery, the pending prompt) are handed the app and typed against this protocol (and those the
session actions call, against :class:`Actions`), never against
``tui.app.AgentTuiApp``: the app imports them, and none of them imports the app (an import-linter
contract keeps it so). Each member is here because a controller uses it; ``AgentTuiApp`` has them
all (mypy checks it where the app hands itself over). The second half is Textual's own ``App``,
as far as the controllers call it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from textual.notifications import SeverityLevel

if TYPE_CHECKING:
    from textual.binding import Binding
    from textual.screen import Screen, ScreenResultCallbackType
    from textual.theme import Theme
    from textual.timer import Timer, TimerCallback
    from textual.widget import Widget
    from textual.worker import Worker, WorkType

    from agent_tui.agent.events import AgentEvent
    from agent_tui.agent.user_bash import UserCommand
    from agent_tui.projection.context import Projection
    from agent_tui.projection.figures import StatusFigures
    from agent_tui.store.index import SessionIndex
    from agent_tui.store.session import Session
    from agent_tui.tui.agent_bridge import Turns
    from agent_tui.tui.screens.main import MainScreen
    from agent_tui.tui.tui_config import TuiConfig
    from agent_tui.tui.widgets.chat_view import ChatView
    from agent_tui.tui.widgets.composer import Composer
    from agent_tui.tui.widgets.context_panel import ContextPanel
    from agent_tui.tui.widgets.session_tree import SessionTree

R = TypeVar("R")


class Host(Protocol):
    """The app, as its controllers see it."""

    # -- what it holds ------------------------------------------------------------------------

    config: TuiConfig
    session: Session | None  # None until the first append (or a session is opened)
    index: SessionIndex  # the session's (an empty one without a session)
    projection: Projection  # of ``index``, as the last refresh made it
    turns: Turns | None  # the session's agent, once built (None: the next send builds one)
    busy: bool  # a turn (or a compaction) runs
    selected_id: str | None  # the entry the tree or the panel has selected
    last_error: str | None
    keymap: dict[str, str]  # binding id -> keys
    refreshed: tuple[int, str | None]  # (entries, leaf) at the last refresh

    @property
    def main_screen(self) -> MainScreen: ...

    @property
    def session_tree(self) -> SessionTree: ...

    @property
    def chat(self) -> ChatView: ...

    @property
    def panel(self) -> ContextPanel: ...

    @property
    def composer(self) -> Composer: ...

    # -- what it does ---------------------------------------------------------------------------

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast (never markup)."""

    def set_notice(self, text: str) -> None:
        """The line under the status bar (empty: none)."""

    async def refresh_views(self, cursor: str | None = None) -> None:
        """Project the session afresh and redraw the panes."""

    def update_status(self) -> None: ...

    def ensure_session(self) -> Session:
        """The session to append to (its file created on first use)."""

    def open_session(self, path: Path) -> bool: ...

    def set_session(self, session: Session | None) -> None: ...

    def turns_for_session(self) -> Turns:
        """The session's agent, built on first use (raises ``AgentUnavailable``)."""

    def run_events(self, events: AsyncIterator[AgentEvent]) -> object:
        """Show a turn's (or a compaction's) events in a worker."""

    def next_send(self, projection: Projection | None = None) -> tuple[str | None, str | None, str]:
        """(provider, model, thinking level) of the next send."""

    def replace_count(self, target_id: str, text: str) -> str: ...

    def status_figures(self) -> StatusFigures:
        """The status line's figures (the next request's context and window among them)."""

    def focus_composer(self) -> None: ...

    async def send(self, prompt: str | list[dict[str, Any]]) -> bool: ...

    async def run_slash(self, name: str, arg: str) -> None: ...

    def run_user_command(self, command: UserCommand, cwd: str, abort: asyncio.Event) -> object: ...

    def show_help(self) -> None: ...

    # -- Textual's App ----------------------------------------------------------------------------

    theme: str

    @property
    def available_themes(self) -> dict[str, Theme]: ...

    @property
    def screen(self) -> Screen[object]: ...

    def action_change_theme(self) -> None: ...

    def get_key_display(self, binding: Binding) -> str: ...

    def push_screen(
        self, screen: Screen[R], callback: ScreenResultCallbackType[R] | None = None
    ) -> object: ...

    def run_worker(
        self,
        work: WorkType[R],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[R]: ...

    def set_timer(
        self,
        delay: float,
        callback: TimerCallback | None = None,
        *,
        name: str | None = None,
        pause: bool = False,
    ) -> Timer: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def call_from_thread(self, callback: Callable[..., R | Awaitable[R]], *args: Any, **kwargs: Any) -> R: ...

    def set_focus(self, widget: Widget | None, scroll_visible: bool = True) -> None: ...

    def copy_to_clipboard(self, text: str) -> None: ...

    def exit(self, result: None = None, return_code: int = 0, message: Any = None) -> None: ...


class Actions(Protocol):
    """What the compaction review, the surgery and ``/reload`` use of the session actions
    (``tui.session_actions.SessionActions``, which calls them: they do not import it)."""

    @property
    def app(self) -> Host: ...

    def notify(self, message: str, **kwargs: object) -> None: ...

    def can_append(self) -> bool:
        """False (and the user told why) while a reply streams."""

    async def append(self, fn: Callable[[Session], object], cursor: str | None = None) -> bool:
        """Run ``fn`` on the session (created if need be), then redraw; False if refused."""


__all__ = ["Actions", "Host"]

"""The Textual app: it holds the session and wires the main screen, the actions and the agent.

(Over 500 lines, on purpose: this is the one place that holds the open session and connects
the screen, the actions controller, the agent's turns, the previews and the dialogs; the work
itself lives in the modules named below, and new logic goes there, not here.)

Every user action appends through :class:`~agent_tui.store.session.Session`
(the actions live in :mod:`agent_tui.tui.session_actions`) and then
:meth:`AgentTuiApp.refresh_views` projects the session afresh and updates the
panes of the :class:`~agent_tui.tui.screens.main.MainScreen`, so the panel always
shows the next request. Slash commands are a lookup in :mod:`agent_tui.tui.commands`;
a turn's events are shown by :mod:`agent_tui.tui.agent_events`. Build the app with
:func:`create_app`; it reads nothing but the paths it is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import inspect
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from textual import events, on, work
from textual.actions import SkipAction
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, TextArea
from textual.worker import Worker, WorkerState

from agent_tui.agent.events import AgentEvent
from agent_tui.agent.permissions import Decision, PermissionRequest, cwd_notice
from agent_tui.config import next_model
from agent_tui.library.latest import close_and_record, close_and_record_later, latest_session
from agent_tui.projection.context import Projection, Projector, project
from agent_tui.projection.describe import plural
from agent_tui.projection.edit_preview import COUNTING, EditPreview
from agent_tui.projection.figures import FigureSource, StatusFigures, session_title
from agent_tui.projection.models import lookup
from agent_tui.projection.preview import Change
from agent_tui.projection.tokens import ContextTokens, context_tokens
from agent_tui.providers.base import preload_sdk
from agent_tui.store.errors import SessionLockedError, StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.paths import make_private_dirs
from agent_tui.store.reader import LoadedFile
from agent_tui.store.session import Session
from agent_tui.store.sidecar import opens_slowly
from agent_tui.terminal_text import visible, visible_line
from agent_tui.tui import frame_timer, gc_pacing, give_way, settings, symbols, user_commands, warm_up
from agent_tui.tui.agent_bridge import (
    CONFIGURE_HINT,
    AgentFactory,
    AgentUnavailable,
    Turns,
    default_agent_factory,
    load_agent_config,
    model_problem,
    preload_agent,
    start_eager_servers,
)
from agent_tui.tui.agent_events import show_events, show_notice
from agent_tui.tui.commands import BY_NAME, COMMANDS, SlashArgs, SlashCommand, slash_rows
from agent_tui.tui.composer_actions import ComposerActions
from agent_tui.tui.crash import OneLineCrash
from agent_tui.tui.file_index import FileIndex
from agent_tui.tui.history import PromptHistory, default_history_path
from agent_tui.tui.kept_css import KeptParseStylesheet
from agent_tui.tui.keymap import binding_ids, load_keymap
from agent_tui.tui.pending_prompt import PendingPrompt
from agent_tui.tui.permission_mode_actions import PermissionModes
from agent_tui.tui.screens.dialog import ask
from agent_tui.tui.screens.main import MainScreen
from agent_tui.tui.screens.permission import PermissionScreen, answer_line
from agent_tui.tui.screens.trust import ask_trust
from agent_tui.tui.screens.trust_changes import ask_trust_changes
from agent_tui.tui.session_actions import SessionActions, export_session
from agent_tui.tui.surgery_actions import span_preview_lines
from agent_tui.tui.themes import load_themes
from agent_tui.tui.tree_state import TreeState
from agent_tui.tui.tui_config import TuiConfig  # its own module: the controllers name it too
from agent_tui.tui.typed_keys import redirect_paste, redirect_typed_key
from agent_tui.tui.widgets.chat_entry import split_attachments
from agent_tui.tui.widgets.chat_view import ChatView
from agent_tui.tui.widgets.completion_menu import CompletionMenu
from agent_tui.tui.widgets.composer import TYPING_PAUSE, Composer
from agent_tui.tui.widgets.context_panel import ContextPanel, TokenCache, build_panel_model
from agent_tui.tui.widgets.queue_view import QueueView
from agent_tui.tui.widgets.session_tree import SessionTree
from agent_tui.tui.worker_errors import WorkerFailed, failure_text

DEFAULT_THEME = "agent-dark"
BACKGROUND_PANEL_MESSAGES = 2000
#: The edit preview waits until the tree's cursor rests this long (moving it stays instant).
EDIT_PREVIEW_DELAY = 0.12
DOUBLE_ESCAPE = 0.5  # seconds between two presses of Esc that open the tree
TYPING_PATIENCE = 2.0  # the longest a big panel's recount waits for a pause in the typing
NEXT_FRAME_WAIT = 0.1  # the longest refresh_views waits for a pane's repaint (_next_frame)
RECORDING_WAIT = 10.0  # the longest the app's end waits for a session left earlier to be recorded
OLD_COLLECTION_DELAY = 1.0  # seconds after a turn before the full garbage collection (gc_pacing)


def create_app(config: TuiConfig) -> AgentTuiApp:
    return AgentTuiApp(config)


def _empty_index() -> SessionIndex:
    return SessionIndex(LoadedFile(header={}, entries=[]), "<new session>")


class AgentTuiApp(OneLineCrash, App[None]):
    CSS_PATH = Path(__file__).parent / "app.tcss"
    DEFAULT_MODE = "main"  # the MainScreen (a mode's screen gets its own CSS_PATH, main.tcss)
    TITLE = "agent-tui"

    # Every binding has an id: the config's [keys] table and the keymap preset remap them by id
    # (keymap.py), and the help screen lists them.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Copy / stop", priority=True, show=False, id="interrupt"),
        Binding("escape", "escape", "Stop the reply / close / back", show=False, id="escape"),
        Binding(
            "ctrl+p",
            "command_palette",
            "palette",
            tooltip="The command palette: every action, the themes",
            show=False,
            priority=True,
            id="palette",
        ),
        Binding("question_mark", "help", "Help", show=False, priority=True, id="help"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit"),  # Textual's, with an id
        Binding("ctrl+o", "resume", "Resume", id="resume"),
        Binding("ctrl+n", "new_session", "New", id="new"),
        Binding("ctrl+g", "compact", "Compact", id="compact"),
        Binding("ctrl+f", "fork", "Fork", id="fork"),
        Binding("ctrl+s", "export", "Export", id="export"),
        Binding("ctrl+r", "rename", "Rename", id="rename"),
        Binding("ctrl+l", "label", "Label", show=False, id="label"),
        Binding("f4", "model", "Model", id="model"),
        Binding("f6", "cycle_model", "Next model", show=False, id="cycle_model"),
        Binding("ctrl+t", "thinking", "Thinking", priority=True, id="thinking"),
        # priority: shift+tab (the pi keymap's key) would otherwise move the focus
        Binding(
            "alt+t", "cycle_thinking", "Next thinking level", priority=True, show=False, id="cycle_thinking"
        ),
        # priority: the composer's focus chain would take Shift+Tab (ESC [ Z) for "focus previous"
        Binding(
            "shift+tab", "cycle_permission_mode", "Mode", priority=True, show=False, id="permission_mode"
        ),
    ]

    # vars, not reactives: the App draws nothing, and a reactive's change repaints the whole screen
    # (a full update: every widget redrawn, 15-20 ms at 160x50, at each turn's start and end and
    # at every tree row the cursor passed)
    selected_id: var[str | None] = var(None)
    busy: var[bool] = var(False)

    def __init__(self, config: TuiConfig) -> None:
        super().__init__()
        self.stylesheet = KeptParseStylesheet(variables=self.stylesheet._variables)  # (kept_css)
        self.config = config
        self.session: Session | None = None
        self.index: SessionIndex = _empty_index()
        self.projection: Projection = project(self.index)
        self._projector = Projector(self.index)
        self.agent_factory: AgentFactory = config.agent_factory or default_agent_factory
        self.turns: Turns | None = None
        self.turn_session: Session | None = None
        self.last_error: str | None = None
        self.actions = SessionActions(self)
        self.prompt_history = PromptHistory(config.history_file)
        self.prompt_history.entries[:0] = [t for t in config.history if t not in self.prompt_history.entries]
        self.composer_actions = ComposerActions(self, self.prompt_history)
        self.permission_modes = PermissionModes(self)  # Shift+Tab, the status line, plan approval
        self._tokens = TokenCache()
        self._theme_ready = False
        self._saved_theme = ""
        self._notice_text = ""
        self._views_ready = False
        self.refreshed: tuple[int, str | None] = (-1, None)  # (entries, leaf) at the last refresh
        self._configured: tuple[str, str] | None = None  # (provider, model) of the agent's config
        self._agent_config_key: tuple[str | None, ...] | None = None
        self._agent_config_value: Any = None
        self._figures = FigureSource()
        self.started_at = time.perf_counter()
        self.first_paint_at: float | None = None
        self._tree_waits = False  # the tree is built after the first frame (hidden while opening)
        self._preview_timer: Timer | None = None
        self._gc_thresholds: tuple[int, int, int] | None = None  # before the app paced the collector
        self.preview_seconds = 0.0  # how long the last edit preview took (the benchmark reads this)
        self._preview: EditPreview | None = None
        self._main_screen: MainScreen | None = None
        self._last_idle_escape = 0.0
        self._recording: list[threading.Thread] = []  # sessions left, being recorded in the index
        self.keymap: dict[str, str] = {}  # binding id -> keys, from the config (the help screen shows it)
        self.add_mode("main", self._make_main_screen)
        self._theme_errors = self._setup_themes()  # before the first paint: no flash of another theme

    # -- the screen and its panes -------------------------------------------------

    def _make_main_screen(self) -> MainScreen:
        screen = MainScreen(
            history=self.config.history, on_ready=self._main_screen_ready, on_wanted=self._want_pane
        )
        for pane in ("tree", "panel"):
            screen.wanted[pane] = settings.read_pane(self.config.config_path, pane)
        self._main_screen = screen
        return screen

    @property
    def main_screen(self) -> MainScreen:
        """The screen with the panes (also while a dialog is on top of it)."""
        assert self._main_screen is not None, "the app is not running"
        return self._main_screen

    @property
    def session_tree(self) -> SessionTree:
        return self.main_screen.session_tree

    @property
    def chat(self) -> ChatView:
        return self.main_screen.chat

    @property
    def panel(self) -> ContextPanel:
        return self.main_screen.panel

    @property
    def composer(self) -> Composer:
        return self.main_screen.composer

    async def _main_screen_ready(self) -> None:
        """Open the session into the panes (the main screen calls this once they are mounted)."""
        self._gc_thresholds = gc_pacing.loading()  # few collections while the session opens
        ascii_only = settings.read_flag(self.config.config_path, "ascii_symbols")
        symbols.use_ascii(ascii_only)  # fonts without ⑂ ◀ ⋯ (the config's ascii_symbols = true)
        self.main_screen.status_line.ascii = ascii_only
        self.composer.focus()
        self.composer.menu = self.main_screen.query_one(CompletionMenu)
        self.composer.commands_source = partial(slash_rows, self)  # the table's, then the user's
        user_commands.attach(self, self._offer_waiting)  # panel, warnings
        self._theme_changes()
        self._apply_keymap()
        config = self.config
        if config.session_file is not None:
            self.open_session(config.session_file)
        elif config.continue_last:
            latest = latest_session(config.cwd, session_dir=config.session_dir, db_path=config.search_index)
            if latest is not None:
                self.open_session(latest)
            else:
                self.notify("No earlier session in this folder: starting a new one.")
        if self.session is not None:
            self._name_session(self.session)
        if config.model.config_path is None:
            config.model.config_path = config.config_path
        if config.model.approver is None:
            config.model.approver = self.approve
        if config.model.trust_asker is None:
            config.model.trust_asker = partial(ask_trust, self)
        if config.model.change_asker is None:
            config.model.change_asker = partial(ask_trust_changes, self)
        if config.model.notice is None:
            config.model.notice = partial(show_notice, self)
        if config.model.echo is None:
            config.model.echo = partial(PendingPrompt, self)  # the prompt shown until it is written
        if self.config.agent_factory is None:
            try:
                agent_config = load_agent_config(config.model)
                self._configured = (str(agent_config.provider), str(agent_config.model))
            except AgentUnavailable as e:
                self._notice_text = str(e)
        self._views_ready = True
        self._history_changed()
        from agent_tui.tui.agent_events import show_branch_todos

        # a resumed session's plan, above the composer (from the branch the projection walks: the
        # projector keeps it for refresh_views)
        show_branch_todos(self, self._projector.project().path)
        if self.prompt_history.problem:
            self.notify(self.prompt_history.problem, severity="warning")
        await self.refresh_views()
        self.composer.focus()
        self.call_after_refresh(self._painted)
        if config.pick:
            self.action_resume()

    def _offer_waiting(self, resources: Any) -> None:
        """The prompt files held back, asked about once the first frame is drawn (``tui.reload``
        imports the MCP, hooks and rules modules: 20-25 ms the first frame need not wait for)."""

        def offer() -> None:
            if self.first_paint_at is None:  # (called before ``_painted``, after the same refresh)
                self.call_after_refresh(offer)
                return
            from agent_tui.tui.reload import offer_waiting

            offer_waiting(self.actions, resources)

        self.call_after_refresh(offer)

    def _want_pane(self, pane: str, shown: bool) -> None:
        """The user showed or hid a pane on a wide screen: remember it."""
        try:
            settings.write_pane(self.config.config_path, pane, shown)
        except OSError as e:
            self.notify(f"could not save the layout: {e}", severity="warning")

    def _apply_keymap(self) -> None:
        """The config's ``keymap`` preset and ``[keys]`` table (see keymap.py)."""
        from agent_tui.tui.screens.editor import EditorScreen  # its keys are remapped too

        known = binding_ids(self, EditorScreen, *self.main_screen.walk_children(with_self=True))
        self.keymap, problems = load_keymap(settings.read_config(self.config.config_path), known)
        for line in settings.config_problems(self.config.config_path):  # an unknown or mistyped key
            self.notify(line, title="config", severity="warning", timeout=10)
        for problem in problems:
            self.notify(problem, title="keys", severity="warning", timeout=10)
        if self.keymap:
            self.set_keymap(self.keymap)
            palette = self.keymap.get("palette")
            if palette:
                # the footer's right-hand key is whatever binds this attribute's key: the
                # palette's own (else, with pi's keys, Ctrl+P's "Next model" sat there)
                self.COMMAND_PALETTE_BINDING = palette.split(",")[0]  # type: ignore[misc]

    async def on_event(self, event: events.Event) -> None:
        # text typed in a pane goes to the composer as it is read, before the keys behind it
        screen = self._main_screen
        if screen is not None and not event.is_forwarded:
            if isinstance(event, events.Key) and redirect_typed_key(screen, event):
                return
            if isinstance(event, events.Paste) and redirect_paste(screen, event):
                return
        await super().on_event(event)

    def on_unmount(self) -> None:
        if self._gc_thresholds is not None:
            gc_pacing.restore(self._gc_thresholds)
        if self._preview_timer is not None:
            self._preview_timer.stop()
        for recording in self._recording:
            recording.join(RECORDING_WAIT)  # the sessions left earlier, before the process ends
        if self.session is not None:
            close_and_record(self.session, db_path=self.config.search_index)

    def _painted(self) -> None:
        """The first frame with the session in it is on screen (the benchmark reads this)."""
        if self.first_paint_at is None:
            self.first_paint_at = time.perf_counter()
            if self._tree_waits:
                self._tree_waits = False
                self._show_tree()
            if self.session is not None and self.session.partial:
                self.main_screen.status_line.start("indexing…")
            gc_pacing.pace()  # from now on small collections; the old generation when idle
            self._preload(self._configured[0] if self._configured is not None else None)
            if self.config.agent_factory is None:
                start_eager_servers(self.config.model)

    @work(thread=True, exit_on_error=False, description="import what the first send needs")
    def _preload(self, provider: str | None) -> None:
        """Off the event loop, what the first send would import on it: the entry models (pydantic
        builds their validators, about 0.1 s) and the provider's SDK (0.4-0.9 s); each module waits
        while the event loop shows a message just sent (``give_way``)."""
        with give_way.giving_way():
            importlib.import_module("agent_tui.store.entries")
            if self.config.agent_factory is None:  # the sandbox's probe (agent.sandbox), off the loop
                from agent_tui.tui.agent_bridge import choice_config
                from agent_tui.tui.sandbox_state import start_notice

                line = start_notice(choice_config(self.config.model))
                if line is not None:
                    self.call_from_thread(self.notify, line, severity="warning", timeout=15, markup=False)
            if provider is not None:
                preload_sdk(provider)
                preload_agent()  # the session core's modules, which the first send builds in a thread
                warm_up.warm_parsers()  # the first reply's Markdown: its parser and common lexers
                with contextlib.suppress(RuntimeError):  # (the app has closed)
                    self.call_from_thread(self._warm_widgets)

    def _warm_widgets(self) -> None:
        """The Markdown widgets' CSS, while idle: no turn running, no key for ``TYPING_PAUSE``."""
        composer = self.composer

        def idle() -> bool:
            return not self.busy and time.monotonic() - composer.typed_at >= TYPING_PAUSE

        self.run_worker(warm_up.warm_widgets(self, idle), exit_on_error=False, description="warm up")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker runs with ``exit_on_error=False``: its failure is shown here, not lost."""
        if event.state is WorkerState.ERROR:
            self.on_worker_failed(WorkerFailed(event.worker))

    def on_worker_failed(self, message: WorkerFailed) -> None:
        """The one place a worker's failure is shown: the app's and those screens and widgets
        forward (``worker_errors.forward_failure``: Textual's ``StateChanged`` does not bubble)."""
        text = failure_text(message.worker)
        self.last_error = text
        self.notify(text, title=message.worker.description or "error", severity="error", timeout=10)

    # -- themes -------------------------------------------------------------------

    def _setup_themes(self) -> list[str]:
        """Register the theme files and pick the configured theme; returns the files' errors."""
        themes, errors = load_themes(self.config.themes_dir)
        for theme in themes:
            self.register_theme(theme)
        wanted = self.config.theme or settings.read_theme(self.config.config_path) or DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
        elif DEFAULT_THEME in self.available_themes:
            self.theme = DEFAULT_THEME
        self._saved_theme = self.theme
        return errors

    def _theme_changes(self) -> None:
        """From now on a theme change is saved in the config file."""
        for error in self._theme_errors:
            self.notify(error, title="theme", severity="warning")
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self._theme_ready = True

    def _theme_changed(self, theme: Any) -> None:
        name = str(theme.name)
        if not self._theme_ready or name == self._saved_theme:
            return
        self._saved_theme = name
        try:
            settings.write_theme(self.config.config_path, name)
        except OSError as e:
            self.notify(f"could not save the theme: {e}", severity="warning")
        self.call_later(self.refresh_views)  # the tree and panel colours come from the theme

    # -- the session --------------------------------------------------------------

    def open_session(self, path: Path) -> bool:
        if opens_slowly(path):
            # A big file without a current sidecar: its end first (the last branch, from its
            # latest compaction on), read-only, while a thread indexes the whole file.
            partial = Session.open_tail(path)
            if partial is not None:
                self.set_session(partial)
                self._index_whole_file(path, partial)
                return True
        session = self._load_session(path, self.notify)
        if session is None:
            return False
        self._adopt_session(session)
        return True

    @staticmethod
    def _load_session(path: Path, notify: Callable[..., None]) -> Session | None:
        try:
            return Session.open(path)
        except SessionLockedError as e:
            try:
                session = Session.open(path, write=False)
            except StoreError as e2:
                notify(str(e2), severity="error")
                return None
            notify(f"{e}; opened read-only", severity="warning")
            return session
        except (StoreError, OSError) as e:
            notify(str(e), severity="error")
            return None

    @work(thread=True, group="indexing", exit_on_error=False, description="index the session")
    def _index_whole_file(self, path: Path, partial: Session) -> None:
        def notify(*args: Any, **kwargs: Any) -> None:
            self.call_from_thread(self.notify, *args, **kwargs)

        session = self._load_session(path, notify)
        if session is not None:
            self.call_from_thread(self._indexed, partial, session)

    def _indexed(self, partial: Session, session: Session) -> None:
        """The whole file is indexed: it replaces the tail view (unless another session was opened
        meanwhile); a message held while indexing is sent now (``ComposerActions``)."""
        if self.session is not partial:
            session.close()
            return
        self._adopt_session(session)
        if not self.busy:
            self.main_screen.status_line.stop()
        self.call_later(self.refresh_views)

    def _adopt_session(self, session: Session) -> None:
        path = session.path
        self.set_session(session)
        # A big session is millions of long-lived objects: keep the cyclic GC from rescanning
        # them (a full collection of a 20,000-entry session stalls the UI for ~0.1 s).
        gc.freeze()
        if session.read_only_reason and session.index.version < 2:
            self.notify(session.read_only_reason, title="read-only", severity="warning", timeout=10)
        for warning in session.index.warnings[:3]:
            self.notify(f"{path}: {warning}", severity="warning")
        elsewhere = cwd_notice(session.cwd, str(self.config.cwd))  # tools still run here
        if elsewhere:
            self.notify(elsewhere, severity="warning", markup=False)

    def set_session(self, session: Session | None) -> None:
        left = self.session
        if left is not None and left is not session and (left is not self.turn_session or not self.busy):
            # (a turn's own session stays open while the turn runs; once it has ended it is closed
            # like any other, else it stayed locked and out of the index until the app ended)
            if left is self.turn_session:
                self.turn_session = None
            # recorded in a thread: the new session opens meanwhile
            recording = close_and_record_later(left, db_path=self.config.search_index)
            if recording is not None:
                self._recording = [t for t in self._recording if t.is_alive()] + [recording]
        self.session = session
        self.index = session.index if session is not None else _empty_index()
        self._projector = Projector(self.index)
        self.turns = None
        self.selected_id = None
        self._tokens.clear()
        if self._views_ready:
            self._history_changed()
            from agent_tui.tui.agent_events import show_branch_todos

            show_branch_todos(self)  # the plan of the session now open (agent_work)

    def _history_changed(self) -> None:
        """Up/Down walk this session's prompts first, then the global history (worked out when the
        composer first needs them, not at every turn); ``@`` and Tab list the working folder."""
        composer = self.composer
        composer.history_source = self._recall_list
        root = self.config.cwd  # where agent-tui was started, never a session header's cwd
        composer.root = lambda: root
        if not isinstance(composer.file_index, FileIndex) or composer.file_index.root != root:
            composer.file_index = FileIndex(root)

    def _recall_list(self) -> list[str]:
        prompts: list[str] = []
        if self.session is not None:
            for entry in self.session.index.active_path():
                message = entry.message if entry.role == "user" else None
                if message is not None:
                    prompts.append(split_attachments(message.get("content"))[0])
        return self.prompt_history.recall_list([p for p in prompts if p.strip()])

    def ensure_session(self) -> Session:
        """The session to append to, creating the file on first use."""
        if self.session is None:
            folder = self.config.session_dir
            try:
                if self.config.no_session:  # --no-session: in memory only
                    session = Session.in_memory(self.config.cwd)
                else:
                    make_private_dirs(folder)
                    session = Session.create(folder, self.config.cwd)
            except OSError as e:  # read-only, or a file where a folder should be: one line
                reason = e.strerror or str(e)
                raise StoreError(f"cannot create a session in {folder}: {reason}") from e
            self._name_session(session)
            self.set_session(session)
        assert self.session is not None
        return self.session

    def _name_session(self, session: Session) -> None:
        """``-n/--name``: name the session the app starts with (once; nothing if it has the name)."""
        name, self.config.session_name = self.config.session_name, None
        if name and session.index.name != name and not session.read_only:
            session.rename(name)

    # -- refreshing ---------------------------------------------------------------

    def next_send(self, projection: Projection | None = None) -> tuple[str | None, str | None, str]:
        """(provider, model, thinking level) the next send will use: the flags (and /model), else the
        agent's rule (``config.next_model``: an explicitly configured model, else the session's)."""
        projection = projection or self.projection
        session_model = projection.model or {}
        choice = self.config.model
        thinking = choice.thinking or projection.thinking_level
        agent = self._agent_config()
        if agent is not None:
            return str(agent.provider), next_model(agent, session_model), agent.thinking or thinking
        if choice.model:
            return choice.provider or session_model.get("provider"), choice.model, thinking
        return session_model.get("provider"), session_model.get("modelId"), thinking

    def _agent_config(self) -> Any:
        """The agent's config for the current flags (None with a test's agent or no model)."""
        if self.config.agent_factory is not None:
            return None
        choice = self.config.model
        key = (choice.provider, choice.model, choice.base_url, choice.thinking)
        if self._agent_config_key != key:
            self._agent_config_key = key
            try:
                self._agent_config_value = load_agent_config(choice)
            except AgentUnavailable:
                self._agent_config_value = None
        return self._agent_config_value

    def _panel_model(self, projection: Projection | None = None) -> Any:
        projection = projection or self.projection
        provider, model_id, _ = self.next_send(projection)
        info = lookup(model_id, provider)
        name = f"{provider or '?'}/{model_id}" if model_id else "no model configured"
        return build_panel_model(projection, info, name, self._tokens)

    async def refresh_views(self, cursor: str | None = None) -> None:
        """Project the session afresh and update the panel, the tree, the chat and the status bar."""
        self.projection = self._projector.project()
        partial = self.session is not None and self.session.partial
        if partial:  # pins and settings above the tail may change it: no figure until indexed
            self.panel.show_placeholder("indexing the whole session file…")
        elif len(self.projection.messages) > BACKGROUND_PANEL_MESSAGES:
            # A big session's rows are built off the event loop (typing stays responsive); the
            # first time, after the first paint, with a placeholder until then.
            projection = self.projection
            if not self._tokens:
                self.panel.show_pending(len(projection.messages))
                self.call_after_refresh(lambda: self._fill_panel(projection))
            else:
                self._fill_panel_when_typing_pauses(projection, time.monotonic())
        else:
            self.panel.show(self._panel_model())
        await self._next_frame()  # keys typed meanwhile, and the panel's repaint, before the tree
        if partial:
            pass  # the tree is built from the whole index (the title says "indexing…")
        elif self.first_paint_at is None and not self.main_screen.is_shown("tree"):
            self._tree_waits = True  # opening at 80 columns: built once the first frame is shown
        else:
            self._show_tree(cursor)
        await self._next_frame()
        await self.chat.sync(self.projection)
        self.update_status()
        self.refreshed = (len(self.index), self.index.leaf_id)
        self._schedule_edit_preview()

    def _show_tree(self, cursor: str | None = None) -> None:
        """The tree of the session as it is now (a 150,000-entry file's takes 0.3-0.5 s)."""
        if not self._closing_views():
            self.session_tree.show_session(
                TreeState.build(self.index, self.projection), cursor or self.selected_id
            )

    async def _next_frame(self) -> None:
        """One pane's repaint per frame after an append, with a frame for the keys typed meanwhile
        in between (the panel, the tree and the chat repainted in the same frames: up to 35 ms each
        at 160x50; and a key typed while one pane was drawn, drawn with the next pane, waited for
        two such frames)."""
        if self.first_paint_at is None:
            # opening: this runs in the main screen's mount handler, where no frame can come
            # before it returns; let the keys in, no more
            await asyncio.sleep(0)
            return
        await frame_timer.next_frame(self.main_screen, NEXT_FRAME_WAIT)  # the pane's
        await frame_timer.next_frame(self.main_screen, NEXT_FRAME_WAIT)  # the keys'

    def _fill_panel_when_typing_pauses(self, projection: Projection, since: float) -> None:
        """Fill the panel once no key has come for :data:`TYPING_PAUSE` (or :data:`TYPING_PATIENCE`
        after ``since`` at the latest): its thread works out the whole request (about 60 ms of
        Python for 10,000 messages), and while it runs the event loop gets half the interpreter,
        so each frame of the typing takes twice as long."""
        if projection is not self.projection:
            return  # a later refresh fills it
        if self._closing_views():
            return
        now = time.monotonic()
        wait = self.composer.typed_at + TYPING_PAUSE - now
        if wait > 0 and now - since < TYPING_PATIENCE:
            self.set_timer(wait, lambda: self._fill_panel_when_typing_pauses(projection, since))
        else:
            self._fill_panel(projection)

    @work(thread=True, exclusive=True, group="panel", exit_on_error=False, description="count tokens")
    def _fill_panel(self, projection: Projection) -> None:
        """Count the tokens of a big session off the event loop, so the first paint does not wait."""
        model = self._panel_model(projection)
        self._figures.catch_up(self.index if self.session is not None else None, projection.path)
        self.call_from_thread(self._show_filled_panel, projection, model)

    def _show_filled_panel(self, projection: Projection, model: Any) -> None:
        if projection is self.projection:
            self.panel.show(model)
            self.update_status()  # the status line's context figure is the panel's
            self._schedule_edit_preview()
        gc.freeze()  # the token cache and the rows are long-lived too

    def update_status(self) -> None:
        session = self.session
        screen = self.main_screen
        title = session_title(self.index) if session is not None else "new session (not saved yet)"
        if session is not None and session.partial:
            title = f"{session.path.name} · indexing…"  # its name may be set above the tail
        screen.sidebar_title.update(visible_line(title))
        # a file still indexed: its model, level, context and totals may be set above the tail, so
        # the line says "indexing…" alone until they are known
        screen.status_line.show(None if session is not None and session.partial else self.status_figures())
        notices = []
        if session is not None and session.read_only_reason:
            notices.append(session.read_only_reason)
        if self._notice_text:
            notices.append(self._notice_text)
        notice = screen.notice
        notice.update(visible("\n".join(notices)))
        notice.display = bool(notices)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast. Never markup (``[anthropic]`` is text, ``[/]`` no crash), whatever the caller
        asks: what toasts show quotes models, files and sessions; terminal controls are made visible."""
        super().notify(
            visible(str(message)), title=visible_line(title), severity=severity, timeout=timeout, markup=False
        )

    def status_figures(self) -> StatusFigures:
        """The status line's figures: the panel's context figure when it is current, else counted here."""
        projection = self.projection
        provider, model_id, thinking = self.next_send(projection)
        panel = self.panel.model
        info = lookup(model_id, provider)
        counted = True  # a big session's usage totals are counted with its panel, off the event loop
        window = info.context_window
        if panel is not None and panel.projection is projection and panel.figure is not None:
            figure = panel.figure
            window = panel.window  # the learned window, when the session has one
        elif len(projection.messages) <= BACKGROUND_PANEL_MESSAGES:
            figure = context_tokens(projection)
        else:
            figure = ContextTokens(0, 0, 0, None)  # a big session: the panel's count follows
            counted = False
        return self._figures.figures(
            self.index if self.session is not None else None,
            projection,
            model=model_id,
            provider=provider,
            thinking=thinking,
            window=window,
            context=figure,
            count_usage=counted,
            mode=self.permission_modes.label,
        )

    def set_notice(self, text: str) -> None:
        self._notice_text = text
        self.update_status()

    def watch_selected_id(self) -> None:
        if self._views_ready and not self._closing_views():  # (a tree built late, as it closes)
            self.update_status()
            self._schedule_edit_preview()

    def watch_busy(self, busy: bool) -> None:
        if self._views_ready:
            line = self.main_screen.status_line
            if busy:
                line.start("streaming…")
            else:
                line.stop()
                self.set_timer(OLD_COLLECTION_DELAY, self._collect_old)
            self.update_status()

    def _collect_old(self) -> None:
        if not self.busy:  # else the turn's end asks again
            gc_pacing.collect_old()

    # -- the edit preview: what h / e / u / p would do to the selected entry ----------

    def _closing_views(self) -> bool:
        """Whether the main screen's widgets are gone or going: the app's own timers outlive them
        while it closes, and one falling due then must not look them up."""
        screen = self._main_screen
        return screen is None or not screen.is_attached or screen.query_one_optional(Composer) is None

    def _schedule_edit_preview(self) -> None:
        """Work the preview out once the cursor rests (each move restarts the wait)."""
        if self._preview_timer is not None:
            self._preview_timer.stop()
        self._preview_timer = self.set_timer(EDIT_PREVIEW_DELAY, self._show_edit_preview)

    def _show_edit_preview(self) -> None:
        started = time.perf_counter()
        self._preview_timer = None
        if self._closing_views():
            return
        panel = self.panel
        target = self.selected_id
        if target is None or self.session is None or target not in self.index:
            panel.show_edit_preview("", [])
            return
        span = self.session_tree.marked_span()
        if span is not None:  # mark mode: what h / u / Ctrl+G would do to the whole span
            panel.show_edit_preview(f"If you act on {span[0]}..{span[1]}:", span_preview_lines(self, *span))
        else:
            panel.show_edit_preview(f"If you act on {target} (h/e/u/p):", self.edit_preview_lines(target))
        self.preview_seconds = time.perf_counter() - started
        if self.focused in (self.session_tree, panel.rows_list):  # the user is choosing: show it
            self.run_worker(
                self.chat.reveal(target, self.projection), group="reveal", exclusive=True, exit_on_error=False
            )

    def edit_preview(self) -> EditPreview | None:
        """The previews of the current projection (None without a session)."""
        if self.session is None:
            return None
        model = self.panel.model
        total = model.total if model is not None and model.projection is self.projection else None
        preview = self._preview
        if (
            preview is None
            or preview.projection is not self.projection
            or preview.session is not self.session
            or preview.total != total
        ):
            tokens = self._tokens
            preview = EditPreview(
                self.session,
                self.projection,
                total,
                lambda ce, i, m: tokens.get((m.source_id, ce.edit_id, i), m),
                model.estimated if model is not None and total is not None else None,
            )
            self._preview = preview
        return preview

    def edit_change(self, action: str, target_id: str, text: str | None = None) -> Change | str:
        """What ``action`` on ``target_id`` would change in the next request (see EditPreview)."""
        preview = self.edit_preview()
        return preview.change(action, target_id, text) if preview is not None else f"no entry {target_id}"

    def edit_preview_lines(self, target_id: str) -> list[str]:
        preview = self.edit_preview()
        from agent_tui.tui.checkpoint_offer import preview_lines  # a checkpoint row: its diff

        return preview_lines(self, target_id) + (preview.lines(target_id) if preview is not None else [])

    def replace_count(self, target_id: str, text: str) -> str:
        preview = self.edit_preview()
        return preview.replace_count(target_id, text) if preview is not None else COUNTING

    # -- selection ----------------------------------------------------------------

    @on(SessionTree.EntryHighlighted)
    def _tree_highlight(self, event: SessionTree.EntryHighlighted) -> None:
        if event.entry_id is not None:
            self.selected_id = event.entry_id

    @on(SessionTree.MarkChanged)
    def _tree_mark(self, event: SessionTree.MarkChanged) -> None:
        self._schedule_edit_preview()  # the preview is of the marked span now (or of the entry again)

    @on(ContextPanel.EntryHighlighted)
    def _panel_highlight(self, event: ContextPanel.EntryHighlighted) -> None:
        if event.entry_id is not None and event.entry_id in self.index:
            self.selected_id = event.entry_id

    @on(SessionTree.BranchRequested)
    async def _branch_requested(self, event: SessionTree.BranchRequested) -> None:
        await self.actions.branch_to(event.entry_id, summarize=event.summarize, ask_focus=event.ask_focus)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":
            return True
        return len(self.screen_stack) <= 1 or action in ("quit", "command_palette")

    # -- actions (keys and the palette): the controller does the work ---------------------

    async def branch_to(self, entry_id: str) -> None:
        await self.actions.branch_to(entry_id)

    async def action_hide(self, entry_id: str | None = None) -> None:
        await self.actions.hide(entry_id)

    async def action_restore(self, entry_id: str | None = None) -> None:
        await self.actions.restore(entry_id)

    async def action_pin(self, entry_id: str | None = None, pinned: bool | None = None) -> None:
        await self.actions.pin(entry_id, pinned)

    def action_replace(self, entry_id: str | None = None, text: str | None = None) -> None:
        self.actions.replace(entry_id, text)

    def action_label(self, entry_id: str | None = None, name: str | None = None) -> None:
        self.actions.label(entry_id, name)

    def action_rename(self, name: str | None = None) -> None:
        self.actions.rename(name)

    async def action_fork(self, entry_id: str | None = None) -> None:
        await self.actions.fork(entry_id)

    def action_export(self, path: str | None = None) -> None:
        self.actions.export(path)

    async def action_open_subagent(self) -> None:
        await self.actions.open_subagent()

    def action_resume(self) -> None:
        self.actions.resume()

    async def action_new_session(self) -> None:
        await self.actions.new_session()

    def action_model(self, spec: str | None = None) -> None:
        self.actions.model(spec)

    def action_thinking(self, level: str | None = None) -> None:
        self.actions.thinking(level)

    def action_compact(self, focus: str | None = None) -> None:
        self.actions.compact(focus)

    async def action_uncompact(self) -> None:
        await self.actions.uncompact()

    # -- focus and keys (the panes' keys are the main screen's) ---------------------

    def focus_composer(self) -> None:
        """Focus the composer, closing a drawer that covers the chat."""
        self.main_screen.focus_composer()

    def action_escape(self) -> None:
        """Close a drawer, else stop the reply, else back to the composer; twice quickly: the tree."""
        now = time.monotonic()
        idle, self._last_idle_escape = self._last_idle_escape, 0.0
        if self.composer_actions.cancel_command():
            return
        if self.main_screen.drawer is not None:
            self.focus_composer()
        elif self.busy:
            self.abort_turn()
        elif self.focused is not self.composer:
            self.set_focus(self.composer)
        elif now - idle < DOUBLE_ESCAPE:
            self.main_screen.toggle_pane("tree")  # Esc Esc, as in pi
        else:
            self._last_idle_escape = now

    def action_interrupt(self) -> None:
        """Ctrl+C: copy the selected text if there is any, else stop a command or the reply; it
        never quits."""
        selected = self.screen.get_selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            self.notify(f"Copied {plural(len(selected), 'character')}.")
            return
        if self.composer_actions.cancel_command():
            return
        focused = self.focused
        if isinstance(focused, TextArea) and focused.selected_text:
            focused.action_copy()
            self.notify(f"Copied {plural(len(focused.selected_text), 'character')}.")
            return
        if self.busy:
            self.abort_turn()
            return
        from agent_tui.tui.keymap import key_name

        stop, quit_key = key_name(self.keymap, "escape", "escape"), key_name(self.keymap, "quit", "ctrl+q")
        self.notify(f"Nothing selected to copy. {stop} stops a reply; {quit_key} quits.")

    def action_help(self) -> None:
        """``?``: the help screen, when the composer is empty (else ``?`` is text)."""
        if self.focused is self.composer and self.composer.text:
            raise SkipAction()
        if isinstance(self.focused, Input | TextArea) and self.focused is not self.composer:
            raise SkipAction()
        self.show_help()

    def action_cycle_model(self) -> None:
        self.actions.cycle_model()

    def action_cycle_thinking(self) -> None:
        self.actions.cycle_thinking()

    def action_cycle_permission_mode(self) -> None:
        self.permission_modes.cycle()

    # -- the command palette and slash commands ------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for command in COMMANDS:
            if command.name not in ("quit", "theme"):  # Textual's own Quit and Theme are in the palette
                yield SystemCommand(command.title, command.help, self._palette_callback(command))

    def _palette_callback(self, command: SlashCommand) -> Callable[[], Any]:
        async def run() -> None:
            await self.run_slash(command.name, "")

        return run

    async def run_slash(self, name: str, arg: str) -> None:
        command = BY_NAME.get(name)
        if command is None:
            self.notify(f"unknown command /{name} (try /help)", severity="error")
            return
        result = command.run(self.actions, SlashArgs.parse(arg, self.index))
        if inspect.isawaitable(result):
            await result

    def show_help(self) -> None:
        from agent_tui.tui.screens.help import HelpScreen, help_rows

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(help_rows(self)))

    # -- sending ------------------------------------------------------------------

    @on(Composer.Submitted)
    async def _submitted(self, event: Composer.Submitted) -> None:
        await self.composer_actions.submitted(event)  # slash, !cmd, steer / follow-up, or send

    @on(Composer.DequeueRequested)
    def _dequeue(self) -> None:
        self.composer_actions.dequeue()

    @on(QueueView.Removed)
    def _queue_removed(self, event: QueueView.Removed) -> None:
        self.composer_actions.removed(event.message_id, event.take_back)

    async def send(self, prompt: str | list[dict[str, Any]]) -> bool:
        """Start a turn with ``prompt`` (text, or content blocks with attachments); False if it could not."""
        if not self.actions.can_append():
            return False
        if self.session is not None and self.session.read_only:
            self.notify(self.session.read_only_reason or "read-only session", severity="error")
            return False
        try:
            turns = self.turns_for_session()
        except AgentUnavailable as e:
            self.set_notice(str(e))
            self.notify(str(e), title="cannot send", severity="warning", timeout=10)
            return False
        except StoreError as e:  # the sessions folder cannot be created: the message stays typed
            self.set_notice(f"cannot send: {e}")
            self.notify(str(e), title="cannot send", severity="error", timeout=10)
            return False
        self.composer.clear_submitted()  # what was typed after the Enter stays
        self._notice_text = ""  # an earlier error or hint is stale once a turn starts
        self.busy = True
        self.run_events(turns.run(prompt))
        return True

    @work(exclusive=True, group="user-command", exit_on_error=False, description="!cmd")
    async def run_user_command(self, command: Any, cwd: str, abort: asyncio.Event) -> None:
        await self.composer_actions.execute(command, cwd, abort)

    def turns_for_session(self) -> Turns:
        """The agent for the current session (built on first use; raises AgentUnavailable)."""
        if self.session is None and self.config.agent_factory is None:
            problem = model_problem(self.config.model)  # no model: do not leave an empty session file
            if problem:
                raise AgentUnavailable(problem)
        session = self.ensure_session()
        if self.turns is None or self.turn_session is not session:
            self.turns = self.agent_factory(session, self.config.model)
            self.turn_session = session
        return self.turns

    @work(exclusive=True, group="turn", exit_on_error=False, description="agent turn")
    async def run_events(self, events: AsyncIterator[AgentEvent]) -> None:
        """Show a turn's (or a compaction's) events as they come; the store has the entries."""
        stop_reason = await show_events(self, events)
        self._history_changed()
        await self.composer_actions.turn_ended(stop_reason)
        await self.permission_modes.turn_ended(stop_reason)  # plan mode: approve the plan

    async def approve(self, request: PermissionRequest) -> Decision:
        """Ask about one gated tool call (a modal); answers allow-once, allow-always (keep the
        request's rule), allow-session or deny.

        Escape, or an abort while the question is open, denies."""
        screen = PermissionScreen(
            str(request.tool),
            str(request.reason),
            request.details(),
            request.scope,
            typed_at=self.composer.typed_at,  # letters typed on as it appears are text, not answers
            on_text=self.composer.insert,
            rule=request.rule,
            holds_text=lambda: any(c.isalpha() for c in self.composer.text),  # words: a message
        )
        reply = self.chat.streaming
        if reply is not None:
            reply.tool_waiting(request.call_id)
        said = self.main_screen.status_line.activity("waiting for approval")  # not "streaming…"
        value = await ask(self, screen)
        self.main_screen.status_line.activity(said)
        decision = value or Decision.DENY
        if reply is not None:
            reply.tool_answered(request.call_id, decision)
        self.notify(answer_line(decision, str(request.tool), str(request.summary)))
        return decision

    def abort_turn(self) -> None:
        from agent_tui.tui.compaction_review import stop_summary

        if stop_summary(self):  # a reviewed or span compaction's summary: no turn runs
            return
        self.composer_actions.aborting()  # queued messages go back to the composer, unsent
        if self.turns is not None:
            self.turns.abort()
        self.notify("Stopping the reply…")


def default_config(cwd: Path, session_dir: Path | None = None) -> TuiConfig:
    from agent_tui.store.paths import session_dir_for

    return TuiConfig(
        cwd=cwd,
        session_dir=session_dir_for(cwd, session_dir),
        config_path=settings.default_config_path(),
        history_file=default_history_path(),
    )


__all__ = [
    "CONFIGURE_HINT",
    "AgentTuiApp",
    "TuiConfig",
    "create_app",
    "default_config",
    "export_session",
]

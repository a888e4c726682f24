"""The Textual app: session tree, chat, the live "what the model sees" panel, and the composer.

Every user action appends through :class:`~agent_tui.store.session.Session`
and then :meth:`AgentTuiApp.refresh_views` projects the session afresh and
updates the three panes, so the panel always shows the next request. Build
the app with :func:`create_app`; it reads nothing but the paths it is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static, TextArea

from agent_tui.agent.events import (
    AgentEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EntryAppended,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolCallStreaming,
    ToolFinished,
    ToolStarted,
    TurnError,
)
from agent_tui.library.search import Library
from agent_tui.projection.context import (
    ContextEntry,
    ProjectedMessage,
    Projection,
    Projector,
    Status,
    project,
)
from agent_tui.projection.describe import first_line
from agent_tui.projection.models import MODELS, lookup
from agent_tui.projection.preview import Change, compare, hypothetical, signed
from agent_tui.projection.tokens import estimate_message
from agent_tui.providers.base import preload_sdk
from agent_tui.store.errors import SessionLockedError, StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.listing import list_sessions
from agent_tui.store.paths import make_private_dirs, session_file_name
from agent_tui.store.reader import LoadedFile
from agent_tui.store.session import (
    DRAFT_ID,
    Session,
    hide_fields,
    is_editable,
    pin_fields,
    replace_fields,
    restore_fields,
)
from agent_tui.tui import settings
from agent_tui.tui.agent_bridge import (
    CONFIGURE_HINT,
    AgentFactory,
    AgentUnavailable,
    ModelChoice,
    Turns,
    default_agent_factory,
    load_agent_config,
    model_problem,
)
from agent_tui.tui.commands import COMMANDS, SlashCommand, parse_slash
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.editor import EditorScreen
from agent_tui.tui.screens.prompt import PromptScreen
from agent_tui.tui.screens.session_picker import SessionPicker
from agent_tui.tui.themes import DEFAULT_THEMES_DIR, load_themes
from agent_tui.tui.widgets.chat_entry import content_text
from agent_tui.tui.widgets.chat_view import ChatView
from agent_tui.tui.widgets.composer import Composer
from agent_tui.tui.widgets.context_panel import ContextPanel, TokenCache, build_panel_model
from agent_tui.tui.widgets.session_tree import SessionTree, TreeState

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
DEFAULT_THEME = "agent-dark"
BACKGROUND_PANEL_MESSAGES = 2000
#: The edit preview waits until the tree's cursor rests this long (moving it stays instant).
EDIT_PREVIEW_DELAY = 0.12


@dataclass(slots=True)
class TuiConfig:
    """Everything the app reads: where sessions are, what to open, the config file, the themes."""

    cwd: Path
    session_dir: Path  # where new sessions of ``cwd`` go (and where -c / -r look)
    config_path: Path
    session_file: Path | None = None
    continue_last: bool = False
    pick: bool = False
    model: ModelChoice = field(default_factory=ModelChoice)
    themes_dir: Path = DEFAULT_THEMES_DIR
    theme: str | None = None  # overrides the config file's theme (tests)
    agent_factory: AgentFactory | None = None
    history: list[str] = field(default_factory=list)
    summarize_branches: bool | None = None  # None: the config file's [compaction] summarize_branches
    search_index: Path | None = None  # the session library's index (None: the user data dir's)


def create_app(config: TuiConfig) -> AgentTuiApp:
    return AgentTuiApp(config)


def _empty_index() -> SessionIndex:
    return SessionIndex(LoadedFile(header={}, entries=[]), "<new session>")


class AgentTuiApp(App[None]):
    CSS_PATH = Path(__file__).parent / "app.tcss"
    AUTO_FOCUS = "#composer"
    TITLE = "agent-tui"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Stop", priority=True, show=False),
        Binding("escape", "escape", "Stop reply", show=False),
        Binding("ctrl+o", "resume", "Resume"),
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+g", "compact", "Compact"),
        Binding("ctrl+f", "fork", "Fork"),
        Binding("ctrl+s", "export", "Export"),
        Binding("ctrl+r", "rename", "Rename"),
        Binding("ctrl+l", "label", "Label", show=False),
        Binding("f4", "model", "Model"),
        Binding("ctrl+t", "thinking", "Thinking"),
        # Priority: a key typed right after F2 must already reach the composer.
        Binding("f1", "focus_tree", "Tree", show=False, priority=True),
        Binding("f2", "focus_composer", "Composer", show=False, priority=True),
        Binding("f3", "focus_panel", "Panel", show=False, priority=True),
    ]

    selected_id: reactive[str | None] = reactive(None)
    busy: reactive[bool] = reactive(False)

    def __init__(self, config: TuiConfig) -> None:
        super().__init__()
        self.config = config
        self.session: Session | None = None
        self.index: SessionIndex = _empty_index()
        self.projection: Projection = project(self.index)
        self._projector = Projector(self.index)
        self.agent_factory: AgentFactory = config.agent_factory or default_agent_factory
        self.turns: Turns | None = None
        self.turn_session: Session | None = None
        self.last_error: str | None = None
        self._tokens = TokenCache()
        self._theme_ready = False
        self._saved_theme = ""
        self._notice_text = ""
        self._views_ready = False
        self._refreshed: tuple[int, str | None] = (-1, None)  # (entries, leaf) at the last refresh
        self._configured: tuple[str, str] | None = None  # (provider, model) of the agent's config
        self.started_at = time.perf_counter()
        self.first_paint_at: float | None = None
        self._preview_timer: Timer | None = None
        self.preview_seconds = 0.0  # how long the last edit preview took (the benchmark reads this)
        self._active_ids: tuple[Projection | None, set[str]] = (None, set())
        self._cut: tuple[Projection | None, set[str]] = (None, set())

    # -- layout -------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            with Vertical(id="sidebar"):
                yield Static("Session", id="sidebar-title", markup=False)
                yield SessionTree(id="tree")
            with Vertical(id="center"):
                yield ChatView(id="chat")
                yield Static(id="notice", markup=False)
                yield Composer(id="composer", history=self.config.history)
            with Vertical(id="context"):
                yield Static("What the model sees", id="context-title", markup=False)
                yield ContextPanel(id="panel")
        yield Static(id="status-bar", markup=False)
        yield Footer()

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

    async def on_mount(self) -> None:
        # Fewer, cheaper collections: with a big session loaded, a full collection scans
        # hundreds of thousands of objects (a 0.3 s stall); what stays is frozen below.
        gc.set_threshold(10_000, 20, 1000)
        self.composer.focus()
        self._setup_themes()
        config = self.config
        if config.session_file is not None:
            self.open_session(config.session_file)
        elif config.continue_last:
            infos = list_sessions(str(config.cwd), session_dir=str(config.session_dir))
            if infos:
                self.open_session(Path(infos[0].path))
            else:
                self.notify("No earlier session in this folder: starting a new one.")
        if config.model.config_path is None:
            config.model.config_path = config.config_path
        if config.model.approver is None:
            config.model.approver = self.approve
        if self.config.agent_factory is None:
            try:
                agent_config = load_agent_config(config.model)
                self._configured = (str(agent_config.provider), str(agent_config.model))
            except AgentUnavailable as e:
                self._notice_text = str(e)
        self._views_ready = True
        await self.refresh_views()
        self.composer.focus()
        self.call_after_refresh(self._painted)
        if config.pick:
            self.action_resume()

    def on_unmount(self) -> None:
        if self._preview_timer is not None:
            self._preview_timer.stop()
        if self.session is not None:
            self.session.close()

    def _painted(self) -> None:
        """The first frame with the session in it is on screen (the benchmark reads this)."""
        if self.first_paint_at is None:
            self.first_paint_at = time.perf_counter()
            self._preload(self._configured[0] if self._configured is not None else None)

    @work(thread=True, exit_on_error=False, description="import what the first send needs")
    def _preload(self, provider: str | None) -> None:
        """Off the event loop, what the first send would import on it: the entry models (pydantic
        builds their validators, about 0.1 s) and the provider's SDK (0.4-0.9 s)."""
        importlib.import_module("agent_tui.store.entries")
        if provider is not None:
            preload_sdk(provider)

    # -- themes -------------------------------------------------------------------

    def _setup_themes(self) -> None:
        themes, errors = load_themes(self.config.themes_dir)
        for theme in themes:
            self.register_theme(theme)
        for error in errors:
            self.notify(error, title="theme", severity="warning")
        wanted = self.config.theme or settings.read_theme(self.config.config_path) or DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
        elif DEFAULT_THEME in self.available_themes:
            self.theme = DEFAULT_THEME
        self._saved_theme = self.theme
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
        try:
            session = Session.open(path)
        except SessionLockedError as e:
            try:
                session = Session.open(path, write=False)
            except StoreError as e2:
                self.notify(str(e2), severity="error")
                return False
            self.notify(f"{e}; opened read-only", severity="warning")
        except (StoreError, OSError) as e:
            self.notify(str(e), severity="error")
            return False
        self._set_session(session)
        # A big session is millions of long-lived objects: keep the cyclic GC from rescanning
        # them (a full collection of a 20,000-entry session stalls the UI for ~0.1 s).
        gc.freeze()
        if session.read_only_reason and session.index.version < 2:
            self.notify(session.read_only_reason, title="read-only", severity="warning", timeout=10)
        for warning in session.index.warnings[:3]:
            self.notify(f"{path}: {warning}", severity="warning")
        return True

    def _set_session(self, session: Session | None) -> None:
        if self.session is not None and self.session is not session and self.session is not self.turn_session:
            self.session.close()
        self.session = session
        self.index = session.index if session is not None else _empty_index()
        self._projector = Projector(self.index)
        self.turns = None
        self.selected_id = None
        self._tokens.clear()

    def ensure_session(self) -> Session:
        """The session to append to, creating the file on first use."""
        if self.session is None:
            make_private_dirs(self.config.session_dir)
            self._set_session(Session.create(self.config.session_dir, self.config.cwd))
        assert self.session is not None
        return self.session

    # -- refreshing ---------------------------------------------------------------

    def _panel_model(self, projection: Projection | None = None) -> Any:
        projection = projection or self.projection
        model = projection.model or {}
        configured = self._configured or (None, None)
        model_id = model.get("modelId") or self.config.model.model or configured[1]
        provider = model.get("provider") or self.config.model.provider or configured[0]
        info = lookup(model_id, provider)
        name = f"{provider or '?'}/{model_id}" if model_id else "no model configured"
        return build_panel_model(projection, info, name, self._tokens)

    async def refresh_views(self, cursor: str | None = None) -> None:
        """Project the session afresh and update the panel, the tree, the chat and the status bar."""
        self.projection = self._projector.project()
        if len(self.projection.messages) > BACKGROUND_PANEL_MESSAGES:
            # A big session's rows are built off the event loop (typing stays responsive); the
            # first time, after the first paint, with a placeholder until then.
            projection = self.projection
            if not self._tokens:
                self.panel.show_pending(len(projection.messages))
                self.call_after_refresh(lambda: self._fill_panel(projection))
            else:
                self._fill_panel(projection)
        else:
            self.panel.show(self._panel_model())
        await asyncio.sleep(0)  # let waiting keys in between the panes (a big session takes a while)
        self.session_tree.show_session(
            TreeState.build(self.index, self.projection), cursor or self.selected_id
        )
        await asyncio.sleep(0)
        await self.chat.sync(self.projection)
        self._update_status()
        self._refreshed = (len(self.index), self.index.leaf_id)
        self._schedule_edit_preview()

    @work(thread=True, exclusive=True, group="panel", exit_on_error=False, description="count tokens")
    def _fill_panel(self, projection: Projection) -> None:
        """Count the tokens of a big session off the event loop, so the first paint does not wait."""
        model = self._panel_model(projection)
        self.call_from_thread(self._show_filled_panel, projection, model)

    def _show_filled_panel(self, projection: Projection, model: Any) -> None:
        if projection is self.projection:
            self.panel.show(model)
            self._schedule_edit_preview()
        gc.freeze()  # the token cache and the rows are long-lived too

    def _update_status(self) -> None:
        session = self.session
        if session is None:
            title = "new session (not saved yet)"
        else:
            first = next((e for e in self.index.entries if e.type == "message" and e.role == "user"), None)
            title = self.index.name or (first_line(first, 40) if first is not None else session.path.stem)
        self.query_one("#sidebar-title", Static).update(title)
        parts = [session.path.name if session else "new session"]
        parts.append(f"{len(self.index)} entries")
        if self.index.leaf_id:
            parts.append(f"leaf {self.index.leaf_id}")
        if self.selected_id:
            parts.append(f"selected {self.selected_id}")
        if self.busy:
            parts.append("streaming… (Esc to stop)")
        self.query_one("#status-bar", Static).update(" · ".join(parts))
        notices = []
        if session is not None and session.read_only_reason:
            notices.append(session.read_only_reason)
        if self._notice_text:
            notices.append(self._notice_text)
        notice = self.query_one("#notice", Static)
        notice.update("\n".join(notices))
        notice.display = bool(notices)

    def set_notice(self, text: str) -> None:
        self._notice_text = text
        self._update_status()

    def watch_selected_id(self) -> None:
        if self._views_ready:
            self._update_status()
            self._schedule_edit_preview()

    def watch_busy(self) -> None:
        if self._views_ready:
            self._update_status()

    # -- the edit preview: what h / e / u / p would do to the selected entry ----------

    def _schedule_edit_preview(self) -> None:
        """Work the preview out once the cursor rests (each move restarts the wait)."""
        if self._preview_timer is not None:
            self._preview_timer.stop()
        self._preview_timer = self.set_timer(EDIT_PREVIEW_DELAY, self._show_edit_preview)

    def _show_edit_preview(self) -> None:
        started = time.perf_counter()
        self._preview_timer = None
        panel = self._main_panel()
        if panel is None:  # the app is closing
            return
        target = self.selected_id
        if target is None or self.session is None or target not in self.index:
            panel.show_edit_preview("", [])
            return
        panel.show_edit_preview(f"If you act on {target} (h/e/u/p):", self.edit_preview_lines(target))
        self.preview_seconds = time.perf_counter() - started

    def _main_panel(self) -> ContextPanel | None:
        """The panel, also while a modal screen (the replace editor) is on top of it."""
        if not self.screen_stack:
            return None
        try:
            return self.screen_stack[0].query_one(ContextPanel)
        except NoMatches:
            return None

    def _on_active_path(self, entry_id: str) -> bool:
        projection, ids = self._active_ids
        if projection is not self.projection:
            ids = {e.id for e in self.projection.path}
            self._active_ids = (self.projection, ids)
        return entry_id in ids

    def _cut_ids(self) -> set[str]:
        """What the latest compaction on the branch cuts: summarized, or pinned back into view."""
        projection, ids = self._cut
        if projection is not self.projection:
            ids = set(self.projection.summarized_ids)
            ids.update(
                ce.entry.id for ce in self.projection.entries if (ce.origin or ce.status) is Status.PINNED
            )
            self._cut = (self.projection, ids)
        return ids

    def _count(self, ce: ContextEntry, position: int, m: ProjectedMessage) -> int:
        """Tokens of a message as the panel counts it (a draft's edit is counted, not cached)."""
        if ce.edit_id == DRAFT_ID:
            return estimate_message(m.message)
        return self._tokens.get((m.source_id, ce.edit_id, position), m)

    def edit_change(self, action: str, target_id: str, text: str | None = None) -> Change | str:
        """What ``action`` (hide, replace, restore, pin, unpin) on ``target_id`` would change in the
        next request: the real projection of the session plus a draft of the entry the action
        would append, which is never written. A string says why there is no figure."""
        session = self.session
        entry = self.index.by_id.get(target_id)
        if session is None or entry is None:
            return f"no entry {target_id}"
        panel = self._main_panel()
        model = panel.model if panel is not None else None
        if model is None or model.projection is not self.projection:
            return "counting the context…"
        if action in ("hide", "replace", "restore"):
            if not is_editable(entry):
                what = f"{entry.type} ({entry.role})" if entry.role else entry.type
                return f"a {what} entry has no model content"
            if not self._on_active_path(target_id):
                return "not on the active branch (the next request is built from that one)"
            if action == "hide":
                fields = hide_fields(entry)
            elif action == "restore":
                fields = restore_fields(entry)
            else:
                fields = replace_fields(entry, text or "")
        else:
            if target_id not in self._cut_ids():
                # pins are read only for what a compaction cuts: elsewhere a pin changes nothing
                # in the request (and the full projection a pin needs would be spent for nothing)
                return Change(model.total, model.total)
            fields = pin_fields(target_id, action == "pin")
        if self.index.leaf_id != self.projection.leaf_id:
            # entries arrived (a reply is streaming) and the view has not caught up: a draft would
            # hang below the new leaf, not below the projection it is compared with
            return "the session is changing; the figures follow when the view catches up"
        try:
            draft = session.draft(fields)
        except (ValueError, StoreError) as e:
            return str(e)
        after = hypothetical(self.projection, draft)
        return compare(self.projection, after, model.total, self._count)

    def _tokens_now(self, target_id: str) -> int:
        """What ``target_id`` costs in the next request now (0 if it is not in view)."""
        for ce in self.projection.entries:
            if ce.entry.id == target_id and ce.messages:
                return sum(self._count(ce, i, m) for i, m in enumerate(ce.messages))
        return 0

    def edit_preview_lines(self, target_id: str) -> list[str]:
        """One line per action on ``target_id``, in figures (the panel shows them)."""
        lines: list[str] = []
        entry = self.index.get(target_id)
        if self.session is not None and self.session.read_only:
            lines.append("read-only session: the actions are refused; what they would do:")
        hide = self.edit_change("hide", target_id)
        if isinstance(hide, str):
            lines.append(f"hide / replace / restore {target_id}: {hide}")
        else:
            lines.append(hide.describe("hide", target_id))
            now = self._tokens_now(target_id)
            lines.append(
                f"replace {target_id}: {f'{now:,} tokens now' if now else 'not in view now'} "
                "(the editor counts as you type)"
            )
            restore = self.edit_change("restore", target_id)
            lines.append(restore.describe("restore", target_id) if isinstance(restore, Change) else restore)
        action = "unpin" if self.index.is_pinned(target_id) else "pin"
        pin = self.edit_change(action, target_id)
        if isinstance(pin, str):
            lines.append(f"{action} {target_id}: {pin}")
        else:
            line = pin.describe(action, target_id)
            if pin.unchanged and self.projection.compaction_id is None and entry.type != "compaction":
                line += " (pins act at compaction)"
            lines.append(line)
        return lines

    def replace_count(self, target_id: str, text: str) -> str:
        """The editor's live line: the replacement's tokens against what the entry costs now, and
        the context total before → after."""
        change = self.edit_change("replace", target_id, text)
        if isinstance(change, str):
            return change
        now = self._tokens_now(target_id)
        line = (
            f"replacement {now + change.delta:,} tokens (now {now:,}, {signed(change.delta)}) · "
            f"context {change.tokens_before:,} → {change.tokens_after:,}"
        )
        return "; ".join([line, *change.notes(target_id)])

    # -- selection ----------------------------------------------------------------

    @on(SessionTree.EntryHighlighted)
    def _tree_highlight(self, event: SessionTree.EntryHighlighted) -> None:
        if event.entry_id is not None:
            self.selected_id = event.entry_id

    @on(ContextPanel.EntryHighlighted)
    def _panel_highlight(self, event: ContextPanel.EntryHighlighted) -> None:
        if event.entry_id is not None and event.entry_id in self.index:
            self.selected_id = event.entry_id

    @on(SessionTree.BranchRequested)
    async def _branch_requested(self, event: SessionTree.BranchRequested) -> None:
        await self.branch_to(event.entry_id)

    def _target(self, entry_id: str | None = None) -> str | None:
        target = entry_id or self.selected_id or self.session_tree.cursor_entry_id
        if target is None:
            self.notify("Select an entry in the tree first (F1, then the arrow keys).", severity="warning")
            return None
        if target not in self.index:
            self.notify(f"no entry with id {target!r}", severity="error")
            return None
        return target

    def _can_append(self) -> bool:
        if self.busy:
            self.notify("A reply is streaming: wait for it or press Esc to stop it.", severity="warning")
            return False
        return True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":
            return True
        return len(self.screen_stack) <= 1 or action in ("quit", "command_palette")

    # -- actions: each appends through the store, then refreshes --------------------

    async def _append(self, fn: Callable[[Session], object], cursor: str | None = None) -> bool:
        if not self._can_append():
            return False
        try:
            fn(self.ensure_session())
        except StoreError as e:
            self.notify(str(e), severity="error")
            return False
        await self.refresh_views(cursor)
        return True

    async def branch_to(self, entry_id: str) -> None:
        """Continue from ``entry_id``; on a past user message, its text goes to the composer and the
        conversation continues from its parent (so sending makes a sibling of it)."""
        if not self._can_append():
            return
        entry = self.index.get(entry_id)
        target = entry_id
        if entry.type == "message" and entry.role == "user":
            self.composer.set_text(content_text((entry.message or {}).get("content")))
            if entry.parent_id is None:
                self.notify(
                    "That is the session's first entry: nothing comes before it. "
                    "Its text is in the composer; Ctrl+N starts a new session."
                )
                self.composer.focus()
                return
            target = entry.parent_id
            self.set_focus(self.composer)
        if target == self.index.leaf_id:
            self.notify("Already there: the next message continues from this entry.")
            return
        summarize = self._branch_summarizer(target)
        if summarize is not None:

            async def chosen(value: str | None) -> None:
                if value == "summarize":
                    self.busy = True
                    self.run_events(summarize(target))
                elif value == "move":
                    await self._move_to(target)

            self.push_screen(
                ChoiceScreen(
                    "Leave a summary of the branch you are leaving?",
                    [
                        ("summarize", "Summarize it: the model writes a branch_summary here"),
                        ("move", "Just move"),
                    ],
                    "summarize",
                ),
                chosen,
            )
            return
        await self._move_to(target)

    async def _move_to(self, target: str) -> None:
        if await self._append(lambda s: s.branch(target), cursor=None):
            self.selected_id = target
            await self.refresh_views(target)
            self.notify(f"Continuing from {target}.")

    def _branch_summarizer(self, target: str) -> Callable[[str], AsyncIterator[AgentEvent]] | None:
        """The agent's branch-summary call when branch summaries are on (``[compaction]
        summarize_branches``) and moving to ``target`` leaves messages behind; else None."""
        wanted = self.config.summarize_branches
        if wanted is None and self.config.agent_factory is None:
            try:
                wanted = bool(load_agent_config(self.config.model).compaction.summarize_branches)
            except (AgentUnavailable, AttributeError):
                wanted = False
        if not wanted or self.session is None:
            return None
        from agent_tui.agent.compaction import abandoned_entries

        if not any(e.type == "message" for e in abandoned_entries(self.session, target)):
            return None
        try:
            turns = self._turns()
        except AgentUnavailable:
            return None
        method = getattr(turns, "branch_with_summary", None)
        return method if callable(method) else None

    async def action_hide(self, entry_id: str | None = None) -> None:
        target = self._target(entry_id)
        if target is not None and await self._append(lambda s: s.hide(target), target):
            self.notify(f"Hid {target} from the model.")

    async def action_restore(self, entry_id: str | None = None) -> None:
        target = self._target(entry_id)
        if target is not None and await self._append(lambda s: s.restore(target), target):
            self.notify(f"Restored {target}.")

    async def action_pin(self, entry_id: str | None = None, pinned: bool | None = None) -> None:
        target = self._target(entry_id)
        if target is None:
            return
        value = (not self.index.is_pinned(target)) if pinned is None else pinned
        if await self._append(lambda s: s.pin(target, value), target):
            self.notify(f"{'Pinned' if value else 'Unpinned'} {target}.")

    def current_text(self, entry_id: str) -> str:
        """What the model sees of ``entry_id`` now (its replacement if replaced), as text."""
        for ce in self.projection.entries:
            if ce.entry.id == entry_id and ce.messages:
                return content_text(ce.messages[-1].message.get("content"))
        entry = self.index.get(entry_id)
        if entry.type == "message":
            return content_text((entry.message or {}).get("content"))
        return content_text(entry.data.get("content"))

    def action_replace(self, entry_id: str | None = None, text: str | None = None) -> None:
        target = self._target(entry_id)
        if target is None or not self._can_append():
            return

        async def done(value: str | None) -> None:
            if value is None:
                return
            if await self._append(lambda s: s.replace(target, value), target):
                self.notify(f"Replaced the content of {target}.")

        if text is not None:
            self.run_worker(done(text), exit_on_error=False)
            return
        self.push_screen(
            EditorScreen(
                f"Replace what the model sees of {target}",
                self.current_text(target),
                counter=lambda value: self.replace_count(target, value),
            ),
            done,
        )

    def action_label(self, entry_id: str | None = None, name: str | None = None) -> None:
        target = self._target(entry_id)
        if target is None:
            return

        async def done(value: str | None) -> None:
            if value is None:
                return
            if await self._append(lambda s: s.label(target, value.strip() or None), target):
                self.notify(
                    f"Labelled {target}: {value.strip()}"
                    if value.strip()
                    else f"Cleared the label of {target}."
                )

        if name is not None:
            self.run_worker(done(name), exit_on_error=False)
            return
        self.push_screen(
            PromptScreen(
                f"Label {target}", self.index.labels.get(target, ""), hint="An empty label clears it."
            ),
            done,
        )

    def action_rename(self, name: str | None = None) -> None:
        async def done(value: str | None) -> None:
            if value is None or not value.strip():
                return
            if await self._append(lambda s: s.rename(value)):
                self.notify(f"Renamed the session: {value.strip()}")

        if name is not None:
            self.run_worker(done(name), exit_on_error=False)
            return
        self.push_screen(PromptScreen("Rename the session", self.index.name or ""), done)

    def _new_session_path(self) -> Path:
        from agent_tui.store.entries import now_iso

        return self.config.session_dir / session_file_name(str(uuid.uuid4()), now_iso())

    async def action_fork(self, entry_id: str | None = None) -> None:
        """A new session file holding the path to the selected entry (or the leaf); then open it."""
        if self.session is None or not self.index.leaf_id:
            self.notify("Nothing to fork yet.", severity="warning")
            return
        if not self._can_append():
            return
        target = entry_id or self.session_tree.cursor_entry_id or self.index.leaf_id
        out = self._new_session_path()
        make_private_dirs(out.parent)
        try:
            self.session.fork(target, out)
        except StoreError as e:
            self.notify(str(e), severity="error")
            return
        if self.open_session(out):
            await self.refresh_views()
            self.notify(f"Forked at {target} into {out}.")

    def action_export(self, path: str | None = None) -> None:
        """Export the active branch: HTML, Markdown or JSONL, by the file's extension."""
        if self.session is None or not self.index.leaf_id:
            self.notify("Nothing to export yet.", severity="warning")
            return
        stem = "".join(
            c if c.isalnum() or c in "-_" else "-" for c in (self.index.name or self.session.path.stem)
        )
        default = str(self.config.cwd / f"{stem[:60]}.html")

        async def done(value: str | None) -> None:
            if not value or self.session is None:
                return
            out = Path(value).expanduser()
            if not out.is_absolute():
                out = self.config.cwd / out
            fmt = {".md": "md", ".jsonl": "jsonl"}.get(out.suffix.lower(), "html")
            try:
                export_session(self.session, out, fmt)
            except (StoreError, OSError) as e:
                self.notify(f"export failed: {e}", severity="error")
                return
            self.notify(f"Exported the active branch ({fmt}) to {out}.", timeout=8)

        if path is not None:
            self.run_worker(done(path), exit_on_error=False)
            return
        self.push_screen(
            PromptScreen(
                "Export the active branch to",
                default,
                hint="The extension picks the format: .html, .md or .jsonl. The file must not exist yet.",
            ),
            done,
        )

    def action_resume(self) -> None:
        library = Library([self.config.session_dir], db_path=self.config.search_index)

        async def done(path: str | None) -> None:
            if path is None:
                return
            if self.session is not None and Path(path) == self.session.path:
                return
            if self.busy:
                self.notify("A reply is streaming: stop it first (Esc).", severity="warning")
                return
            if self.open_session(Path(path)):
                await self.refresh_views()
                self.notify(f"Opened {path}.")

        self.push_screen(SessionPicker(library), done)

    async def action_new_session(self) -> None:
        if not self._can_append():
            return
        self._set_session(None)
        self.composer.set_text("")
        await self.refresh_views()
        self.notify("New session: the file is created when you send or act.")

    def action_model(self, spec: str | None = None) -> None:
        current = self.projection.model or {}
        provider = current.get("provider") or self.config.model.provider

        async def done(value: str | None) -> None:
            if not value:
                return
            prov, _, model_id = value.partition("/")
            if not model_id:
                prov, model_id = (MODELS[value].provider if value in MODELS else provider or "openai"), value
            if await self._append(
                lambda s: s.append({"type": "model_change", "provider": prov, "modelId": model_id})
            ):
                self.config.model.provider = prov
                self.config.model.model = model_id
                self.turns = None
                self.notify(f"Model: {prov}/{model_id}")

        if spec is not None:
            self.run_worker(done(spec), exit_on_error=False)
            return
        choices = [
            (f"{m.provider}/{m.id}", f"{m.provider}/{m.id}  ({m.context_window:,} tokens)")
            for m in MODELS.values()
        ]
        if self.config.model.model and not any(c[0].endswith("/" + self.config.model.model) for c in choices):
            mine = f"{self.config.model.provider or 'openai'}/{self.config.model.model}"
            choices.insert(0, (mine, mine))
        now = f"{current.get('provider')}/{current.get('modelId')}" if current else None
        self.push_screen(ChoiceScreen("Switch model", choices, now), done)

    def action_thinking(self, level: str | None = None) -> None:
        async def done(value: str | None) -> None:
            if not value:
                return
            if value not in THINKING_LEVELS:
                self.notify(f"thinking level must be one of {', '.join(THINKING_LEVELS)}", severity="error")
                return
            if await self._append(
                lambda s: s.append({"type": "thinking_level_change", "thinkingLevel": value})
            ):
                if self.config.model.thinking is not None:  # a --thinking flag must not undo this choice
                    self.config.model.thinking = value
                    self.turns = None
                self.notify(f"Thinking level: {value}")

        if level is not None:
            self.run_worker(done(level), exit_on_error=False)
            return
        choices = [(level, level) for level in THINKING_LEVELS]
        self.push_screen(ChoiceScreen("Thinking level", choices, self.projection.thinking_level), done)

    def action_compact(self, focus: str | None = None) -> None:
        """Fold older history into a summary (the model writes it), optionally with focus instructions."""
        if not self._can_append():
            return
        if focus is None and not self._compact_prompted:
            self._compact_prompted = True
            preview = self._compaction_preview()

            def done(value: str | None) -> None:
                self._compact_prompted = False
                self.panel.preview_fold(set())
                if value is not None:
                    self.action_compact(value)

            self.push_screen(
                PromptScreen(
                    "Compact the context",
                    "",
                    "optional focus, e.g. keep the parser details",
                    hint=preview + "\nEnter compacts (with the focus text, if any) · Escape cancels",
                ),
                done,
            )
            return
        try:
            turns = self._turns()
        except AgentUnavailable as e:
            self.notify(str(e), title="cannot compact", severity="warning", timeout=10)
            return
        compact = getattr(turns, "compact", None)
        if compact is None:
            self.notify("This agent cannot compact.", severity="warning")
            return
        self.busy = True
        self.run_events(compact((focus or "").strip() or None))

    _compact_prompted = False

    def _compaction_preview(self) -> str:
        """What a compaction would do now (the panel marks the rows it would fold)."""
        if self.session is None:
            return "Nothing to compact yet."
        from agent_tui.agent.compaction import estimated_after, preview
        from agent_tui.projection.compaction import CompactionSettings

        settings = CompactionSettings()
        with contextlib.suppress(AgentUnavailable):
            turns = self._turns()  # the agent's settings for its model (config file, per model)
            get = getattr(getattr(turns, "config", None), "compaction_settings", None)
            if callable(get):
                settings = get(getattr(turns, "model", None))
        plan = preview(self.session, settings)
        if plan is None:
            return "Nothing to compact: the branch is short or was just compacted."
        self.panel.preview_fold(set(plan.summarized_entry_ids))
        return (
            f"Folds {len(plan.summarized_entry_ids)} entries into a summary and keeps "
            f"{len(plan.kept_entry_ids)} ({plan.kept_tokens:,} tokens): about "
            f"{plan.tokens_before:,} → {estimated_after(plan):,} tokens (marked in the panel)."
        )

    async def action_uncompact(self) -> None:
        """Continue from the entry before the latest compaction (one appended leaf move)."""
        from agent_tui.agent.compaction import CompactionError, undo_compaction

        def undo(session: Session) -> None:
            try:
                undo_compaction(session)
            except CompactionError as e:
                raise StoreError(str(e)) from e

        if await self._append(undo):
            self.notify("Continuing from before the latest compaction.")

    # Focus at once (``Widget.focus`` is deferred, so keys typed right after would go elsewhere).

    def action_focus_tree(self) -> None:
        self.set_focus(self.session_tree)

    def action_focus_composer(self) -> None:
        self.set_focus(self.composer)

    def action_focus_panel(self) -> None:
        self.set_focus(self.panel.rows_list)

    def action_escape(self) -> None:
        if self.busy:
            self.abort_turn()
        elif self.focused is not self.composer:
            self.set_focus(self.composer)

    def action_interrupt(self) -> None:
        if self.busy:
            self.abort_turn()
            return
        focused = self.focused
        if isinstance(focused, TextArea) and focused.selected_text:
            focused.action_copy()
            return
        self.notify("Press Ctrl+Q to quit.")

    # -- the command palette and slash commands ------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for command in COMMANDS:
            yield SystemCommand(command.title, command.help, self._palette_callback(command))

    def _palette_callback(self, command: SlashCommand) -> Callable[[], Any]:
        async def run() -> None:
            await self.run_slash(command.name, "")

        return run

    async def run_slash(self, name: str, arg: str) -> None:
        arg = arg.strip()
        first, _, rest = arg.partition(" ")
        entry = first if first in self.index else None
        rest_if_entry = rest.strip() if entry else arg
        if name == "branch":
            target = self._target(first or None)
            if target is not None:
                await self.branch_to(target)
        elif name == "hide":
            await self.action_hide(entry)
        elif name == "restore":
            await self.action_restore(entry)
        elif name == "pin":
            await self.action_pin(entry, True)
        elif name == "unpin":
            await self.action_pin(entry, False)
        elif name == "replace":
            self.action_replace(entry, rest_if_entry or None)
        elif name == "label":
            self.action_label(entry, rest_if_entry if arg else None)
        elif name == "rename":
            self.action_rename(arg or None)
        elif name == "fork":
            await self.action_fork(entry)
        elif name == "export":
            self.action_export(arg or None)
        elif name == "resume":
            self.action_resume()
        elif name == "new":
            await self.action_new_session()
        elif name == "model":
            self.action_model(arg or None)
        elif name == "thinking":
            self.action_thinking(arg or None)
        elif name == "compact":
            self.action_compact(arg or None)
        elif name == "uncompact":
            await self.action_uncompact()
        elif name == "theme":
            if arg:
                if arg in self.available_themes:
                    self.theme = arg
                else:
                    self.notify(
                        f"no theme {arg!r}: {', '.join(sorted(self.available_themes))}", severity="error"
                    )
            else:
                self.action_change_theme()
        elif name == "help":
            self.notify(
                "Commands: " + " ".join(f"/{c.name}" for c in COMMANDS) + " · Ctrl+P opens the palette",
                timeout=10,
            )
        elif name == "quit":
            self.exit()
        else:
            self.notify(f"unknown command /{name} (try /help)", severity="error")

    # -- sending ------------------------------------------------------------------

    @on(Composer.Submitted)
    async def _submitted(self, event: Composer.Submitted) -> None:
        text = event.text
        slash = parse_slash(text)
        if slash is not None:
            self.composer.set_text("")
            await self.run_slash(*slash)
            return
        await self.send(text.removeprefix("/") if text.startswith("//") else text)

    async def send(self, text: str) -> None:
        if not self._can_append():
            return
        if self.session is not None and self.session.read_only:
            self.notify(self.session.read_only_reason or "read-only session", severity="error")
            return
        try:
            turns = self._turns()
        except AgentUnavailable as e:
            self.set_notice(str(e))
            self.notify(str(e), title="cannot send", severity="warning", timeout=10)
            return
        self.composer.set_text("")
        self._notice_text = ""  # an earlier error or hint is stale once a turn starts
        self.busy = True
        self.run_events(turns.run(text))

    def _turns(self) -> Turns:
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
        reply = None
        try:
            async for event in events:
                if isinstance(
                    event, TextDelta | ThinkingDelta | ToolStarted | ToolFinished | ToolCallStreaming
                ):
                    if reply is None:
                        reply = await self.chat.start_reply()
                    if isinstance(event, TextDelta):
                        reply.add_text(event.text)
                    elif isinstance(event, ThinkingDelta):
                        reply.add_thinking(event.text)
                    elif isinstance(event, ToolCallStreaming):
                        reply.tool_streaming(event.call_id, event.name)
                    elif isinstance(event, ToolStarted):
                        reply.tool_started(event.call_id, event.name, event.arguments)
                    else:
                        reply.tool_finished(event.call_id, event.name, event.is_error)
                elif isinstance(event, EntryAppended):
                    if reply is not None:
                        await reply.finish()
                    reply = None
                    await self.refresh_views(self.index.leaf_id)
                elif isinstance(event, Retrying):
                    self.notify(
                        f"Retrying (attempt {event.attempt}) in {event.delay:.1f}s: {event.reason}",
                        severity="warning",
                    )
                elif isinstance(event, CompactionStarted):
                    self.set_notice(f"Compacting ({event.reason}, {event.tokens_before:,} tokens)…")
                elif isinstance(event, CompactionFinished):
                    self.set_notice("")
                    self.notify(
                        f"Compacted: {event.tokens_before:,} → about {event.tokens_after:,} tokens.",
                        title="compact",
                    )
                elif isinstance(event, CompactionFailed):
                    self.last_error = event.message
                    self.set_notice(f"compaction failed: {event.message}")
                    self.notify(event.message, title="compaction failed", severity="error", timeout=10)
                elif isinstance(event, TurnError):
                    self.last_error = event.message
                    self.notify(event.message, title="error", severity="error", timeout=10)
                    self.set_notice(f"error: {event.message}")
        except Exception as e:
            self.last_error = f"{type(e).__name__}: {e}"
            self.notify(self.last_error, title="error", severity="error", timeout=10)
            self.set_notice(f"error: {self.last_error}")
        finally:
            if reply is not None:
                await reply.finish()
            self.busy = False
            changed = self._refreshed != (len(self.index), self.index.leaf_id)
            if changed or self.chat.streaming is not None:
                await self.refresh_views(self.index.leaf_id)
            else:
                self._update_status()

    async def approve(self, request: Any) -> str:
        """Ask about one gated tool call (a modal); answers allow-once, allow-session or deny.

        Escape, or an abort while the question is open, denies."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str | None] = loop.create_future()

        def done(value: str | None) -> None:
            if not answer.done():
                answer.set_result(value)

        scope = str(getattr(request, "scope", ""))
        screen = ChoiceScreen(
            f"Allow {request.prompt()}?",
            [
                ("allow-once", "Allow once"),
                ("allow-session", f"Allow for this session: {scope}"),
                ("deny", "Deny (the model is told)"),
            ],
            "deny",  # Enter on a reflex must not run a command
        )
        self.push_screen(screen, done)
        try:
            value = await answer
        except asyncio.CancelledError:
            if screen.is_attached:
                screen.dismiss(None)
            raise
        return value or "deny"

    def abort_turn(self) -> None:
        if self.turns is not None:
            self.turns.abort()
        self.notify("Stopping the reply…")


def export_session(session: Session, out: Path, fmt: str) -> None:
    """Write the active branch to ``out`` (never over an existing file)."""
    try:
        from agent_tui.library.export import export_bytes, write_new_file
    except ImportError:  # an agent-tui without the library: JSONL through fork
        session.fork(None, out)
        return
    write_new_file(out, export_bytes(session.index, fmt, source=session.path))


def default_config(cwd: Path, session_dir: Path | None = None) -> TuiConfig:
    from agent_tui.store.paths import session_dir_for

    return TuiConfig(
        cwd=cwd,
        session_dir=session_dir_for(cwd, session_dir),
        config_path=settings.default_config_path(),
    )


__all__ = ["CONFIGURE_HINT", "AgentTuiApp", "TuiConfig", "create_app", "default_config"]

"""Every dialog of the app, opened the way a user opens it, on the sample session: for the
snapshots at 80x24 and 200x50 and for the checks that their text is shown whole.

Each opener takes a pilot of an app made by :func:`dialog_app` and returns once the dialog is up
and settled. Nothing on screen depends on the machine: fixed paths, no keys, a stub of the MCP
servers (their rows are what ``McpManager.status`` gives).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import Screen

from agent_tui.agent import extensions
from agent_tui.agent.build import make_provider
from agent_tui.agent.compaction import Summarizer
from agent_tui.agent.mcp.manager import ServerStatus
from agent_tui.agent.queue import MessageQueue
from agent_tui.projection.compaction import CompactionSettings
from agent_tui.providers.base import Provider
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.dialog import Dialog
from agent_tui.tui.screens.editor import EditorScreen
from agent_tui.tui.screens.help import HelpScreen
from agent_tui.tui.screens.history_search import HistorySearch
from agent_tui.tui.screens.mcp import McpScreen
from agent_tui.tui.screens.model_picker import ModelPickerScreen
from agent_tui.tui.screens.permission import PermissionScreen
from agent_tui.tui.screens.prompt import PromptScreen
from agent_tui.tui.screens.session_picker import SessionPicker
from agent_tui.tui.screens.text_view import TextViewScreen
from agent_tui.tui.screens.trust import ask_trust
from tests.support.agent_support import make_config as agent_config
from tests.support.fake_model_server import FakeModelServer
from tests.support.model_env import without_provider_env
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedFactory, ScriptedTurns, make_app, sample_session

EXPORTS = Path("/data/agent-tui/exports")  # shown in the export prompt, never written

#: A command as long as a model writes them: wrapped lines, then more lines than the box shows.
LONG_COMMAND = (
    "find . -name '*.py' -newer setup.cfg -exec grep -l 'import os' {} + | xargs -I{} sh -c "
    "'cp {} /tmp/backup/$(basename {}).bak && sed -i s/foo/bar/g {}' && echo done\n"
    + "".join(f"echo step {i}\n" for i in range(1, 30))
    + "echo the last line of the command"
)
TRUST_FOLDER = "/home/someone/projects/a-project-with-a-rather-long-folder-name/services/api"
TRUST_RESOURCES = [
    ".mcp.json: MCP servers (files, search)",
    ".claude/settings.json: hooks (PreToolUse, Stop)",
]


class StubMcp:
    """What the /mcp screen reads of the app's MCP servers, fixed: one ready, one failed."""

    def __init__(self) -> None:
        self.listeners: list[Any] = []
        self.servers: dict[str, Any] = {}

    def status(self) -> list[ServerStatus]:
        return [
            ServerStatus(
                "files",
                "config.toml",
                "stdio",
                "ready",
                "",
                ("read_file", "write_file", "list_directory", "search_files", "move_file"),
                "npx -y @modelcontextprotocol/server-filesystem /home/someone/projects",
            ),
            ServerStatus(
                "search [red]x[/red]",
                "/home/someone/projects/a-project/.mcp.json",
                "stdio",
                "failed",
                "cannot start the command: No such file or directory: /opt/mcp/bin/search-server",
                (),
                "/opt/mcp/bin/search-server --index /var/lib/search",
            ),
        ]


class QueueTurns(ScriptedTurns):
    """A scripted turn that holds, with a queue: Enter and Alt+Enter queue while it streams."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = MessageQueue()


class QueueFactory(ScriptedFactory):
    def __call__(self, session: Any, choice: Any) -> ScriptedTurns:
        turns = QueueTurns(session, **self.kwargs)
        self.turns.append(turns)
        return turns


def review_factory(server: FakeModelServer) -> tuple[ScriptedFactory, Provider]:
    """Scripted turns whose summarizer is a real provider on the fake server (for a reviewed
    compaction: the model writes the summary the editor shows)."""
    provider = make_provider(agent_config(server))

    class Turns(ScriptedTurns):
        def summarizer(self) -> Summarizer:
            return Summarizer(provider, "claude-sonnet-4-5")

        def compaction_settings(self) -> CompactionSettings:
            return CompactionSettings(keep_recent_tokens=10)

    class Factory(ScriptedFactory):
        def __call__(self, session: Any, choice: Any) -> ScriptedTurns:
            turns = Turns(session)
            self.turns.append(turns)
            return turns

    return Factory(), provider


def dialog_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dialog: str) -> AgentTuiApp:
    """The sample session's app, with nothing of the machine on screen."""
    without_provider_env(monkeypatch)
    monkeypatch.setitem(extensions._shared, "app", StubMcp())
    # the model picker asks every provider's server for its list: whatever listens on this machine's
    # default ports (an Ollama, a test's server) would be on screen
    monkeypatch.setattr("agent_tui.tui.session_actions.server_catalog", lambda *args, **kwargs: [])
    if dialog == "queue":
        counter = iter(range(1, 1000))  # the ids of the entries the turn appends, fixed
        monkeypatch.setattr("agent_tui.store.clock.new_id", lambda taken=None: f"new{next(counter):05d}")
        factory: ScriptedFactory = QueueFactory(
            reply="Reading the parser and its tests now.", chunks=2, hold=True
        )
    else:
        factory = ScriptedFactory()
    return make_app(
        tmp_path,
        sample_session(tmp_path),
        agent_factory=factory,
        exports_dir=EXPORTS,
    )


async def settle(pilot: Pilot[None]) -> None:
    await pilot.pause()
    pilot.app.clear_notifications()
    await pilot.pause()


async def _opened(pilot: Pilot[None], kind: type[Screen[Any]]) -> None:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, kind), f"a {kind.__name__}")
    await pilot.pause(0.1)  # the breakpoints' classes and the layout they change
    await settle(pilot)


def _app(pilot: Pilot[None]) -> AgentTuiApp:
    assert isinstance(pilot.app, AgentTuiApp)
    return pilot.app


async def open_help(pilot: Pilot[None]) -> None:
    await pilot.press("question_mark")
    await _opened(pilot, HelpScreen)


async def open_help_composer(pilot: Pilot[None]) -> None:
    """The help scrolled to the composer's section, with the commands typed there (``!``, ``!!``,
    ``@``, ``/``, Tab) that no binding names."""
    await open_help(pilot)
    from textual.containers import VerticalScroll
    from textual.widgets import Static

    screen = pilot.app.screen
    assert isinstance(screen, HelpScreen)
    sections = list(dict.fromkeys(row.section for row in screen.rows))
    section = screen.query(".help-section").results(Static)
    target = list(section)[sections.index("In the composer")]
    body = screen.query_one("#help-body", VerticalScroll)
    body.scroll_to_widget(target, animate=False, top=True)
    await wait_for(pilot, lambda: body.scroll_y > 0, "the composer's section")
    await pilot.pause()


async def open_model_picker(pilot: Pilot[None]) -> None:
    await pilot.press("f4")
    await _opened(pilot, ModelPickerScreen)
    picker = pilot.app.screen
    assert isinstance(picker, ModelPickerScreen)
    await wait_for(pilot, lambda: bool(picker.shown), "the models")
    # the servers' lists come from a thread: the screen is what it shows once they are in
    await wait_for(pilot, lambda: not any(w.is_running for w in picker.workers), "the servers' lists")


async def open_compaction_preview(pilot: Pilot[None]) -> None:
    await pilot.press("ctrl+g")
    await _opened(pilot, PromptScreen)


async def open_compaction_review(pilot: Pilot[None]) -> None:
    """Ctrl+G, then Ctrl+R: the editor on the summary the model wrote (a ``review_factory`` app)."""
    await open_compaction_preview(pilot)
    await pilot.press("ctrl+r")
    await _opened(pilot, EditorScreen)
    editor = pilot.app.screen
    assert isinstance(editor, EditorScreen)
    for _ in range(100):  # shown unasked: the text area takes the focus once its guard has passed
        if editor.armed:
            break
        await pilot.pause(0.05)
    await pilot.pause()


async def open_rename(pilot: Pilot[None]) -> None:
    _app(pilot).action_rename()
    await _opened(pilot, PromptScreen)


async def open_export(pilot: Pilot[None]) -> None:
    _app(pilot).action_export()
    await _opened(pilot, PromptScreen)


async def open_label(pilot: Pilot[None]) -> None:
    _app(pilot).action_label("a3")
    await _opened(pilot, PromptScreen)


async def open_thinking(pilot: Pilot[None]) -> None:
    await pilot.press("ctrl+t")
    await _opened(pilot, ChoiceScreen)


async def open_permission(pilot: Pilot[None]) -> None:
    pilot.app.push_screen(
        PermissionScreen("bash", "runs a shell command", LONG_COMMAND, f"bash:{LONG_COMMAND}")
    )
    await _opened(pilot, PermissionScreen)


async def open_trust(pilot: Pilot[None]) -> None:
    pilot.app.run_worker(ask_trust(_app(pilot), TRUST_FOLDER, TRUST_RESOURCES))
    await _opened(pilot, ChoiceScreen)


async def open_mcp(pilot: Pilot[None]) -> None:
    await pilot.press(*"/mcp", "enter")
    await _opened(pilot, McpScreen)
    await pilot.press("down")  # the failed one: its reason
    await pilot.pause()


async def open_replace(pilot: Pilot[None]) -> None:
    _app(pilot).action_replace("a2")
    await _opened(pilot, EditorScreen)


async def open_span_compaction(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await pilot.press("f1")
    assert app.session_tree.reveal("a2")
    await wait_for(pilot, lambda: app.session_tree.cursor_entry_id == "a2", "the cursor on a2")
    await pilot.press("v", "down", "down")
    await wait_for(pilot, lambda: app.session_tree.marked_span() is not None, "a marked span")
    await pilot.press("ctrl+g")
    await _opened(pilot, PromptScreen)


async def open_branch_summary(pilot: Pilot[None]) -> None:
    """Enter on the fork point: pi's "Summarize branch?" about the branch left (u3, a5)."""
    app = _app(pilot)
    await pilot.press("f1")
    assert app.session_tree.reveal("a3")
    await wait_for(pilot, lambda: app.session_tree.cursor_entry_id == "a3", "the cursor on a3")
    await pilot.press("enter")
    await _opened(pilot, ChoiceScreen)


async def open_text_view(pilot: Pilot[None]) -> None:
    """Enter on a row of the panel: the full text that row sends."""
    await pilot.press("f3")
    await pilot.pause(0.2)
    await pilot.press("down", "down", "enter")
    await _opened(pilot, TextViewScreen)


async def open_history_search(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    app.composer.focus()
    await pilot.press("ctrl+r")
    await _opened(pilot, HistorySearch)


async def open_session_picker(pilot: Pilot[None]) -> None:
    await pilot.press("ctrl+o")
    await _opened(pilot, SessionPicker)
    picker = pilot.app.screen
    assert isinstance(picker, SessionPicker)
    await wait_for(pilot, lambda: picker.searched == "" and len(picker.shown) == 1, "the sessions")
    await pilot.pause()


async def open_queue(pilot: Pilot[None]) -> None:
    """Not a dialog: the queued messages above the composer while a reply streams."""
    app = _app(pilot)
    app.main_screen.status_line.clock = lambda: 100.0  # the spinner and the elapsed time stand still
    await pilot.press(*"why?", "enter")
    factory = app.config.agent_factory
    assert isinstance(factory, ScriptedFactory)
    await wait_for(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set(), "streaming")
    steer = "and also check the tests in tests/test_parser.py and the fixtures under tests/data, then run -x"
    app.composer.set_text(steer)
    await pilot.press("enter")
    app.composer.set_text("then update the changelog")
    await pilot.press("alt+enter")
    from agent_tui.tui.widgets.queue_view import QueueView

    await wait_for(pilot, lambda: len(app.query_one(QueueView).messages) == 2, "two queued")
    await pilot.pause(0.2)
    await settle(pilot)


def _after_settling(
    opener: Callable[[Pilot[None]], Awaitable[None]],
) -> Callable[[Pilot[None]], Awaitable[None]]:
    """The app's first notices (e.g. "this session was started in ...") cleared before opening."""

    async def run(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await opener(pilot)

    return run


OPENERS: dict[str, Callable[[Pilot[None]], Awaitable[None]]] = {
    "help": _after_settling(open_help),
    "model_picker": _after_settling(open_model_picker),
    "compaction_preview": _after_settling(open_compaction_preview),
    "rename": _after_settling(open_rename),
    "export": _after_settling(open_export),
    "label": _after_settling(open_label),
    "thinking": _after_settling(open_thinking),
    "permission_long_command": _after_settling(open_permission),
    "trust": _after_settling(open_trust),
    "mcp": _after_settling(open_mcp),
    "replace": _after_settling(open_replace),
    "span_compaction": _after_settling(open_span_compaction),
    "history_search": _after_settling(open_history_search),
    "branch_summary": _after_settling(open_branch_summary),
    "text_view": _after_settling(open_text_view),
    "session_picker": _after_settling(open_session_picker),
    "queue": _after_settling(open_queue),
}


def is_dialog(screen: Screen[Any]) -> bool:
    return isinstance(screen, Dialog)


__all__ = [
    "LONG_COMMAND",
    "OPENERS",
    "StubMcp",
    "dialog_app",
    "is_dialog",
    "open_compaction_review",
    "review_factory",
    "settle",
]

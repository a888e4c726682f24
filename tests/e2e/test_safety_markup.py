"""Untrusted text is never markup and never crashes the app (including the
permission dialog and toasts).

A session holding ``[/]`` (which Rich/Textual markup rejects with an exception) and ``[x="``
(which swallows what follows it) in every string field opens at 80x24, every collapsible
opened, and the app keeps running with the text shown literally; what the app would send to
the terminal holds no control from the file. The permission dialog shows the whole command.
"""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Collapsible, Static

from agent_tui.agent.permissions import Permissions
from agent_tui.store.session import Session
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.crash import CRASH_FILE, OneLineCrash
from agent_tui.tui.launch import exit_status
from agent_tui.tui.screens.dialog import SETTLE
from agent_tui.tui.screens.permission import PermissionScreen
from agent_tui.tui.screens.session_picker import SessionPicker
from tests.support.poisoned import write_poisoned
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]  # a Textual app per test

SMALL = (80, 24)
#: Textual's own output: colours and cursor moves. Anything else starting with ESC came from text.
_OWN = re.compile(r"\x1b\[[0-9;:]*m|\x1b\[\d+;\d+H")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_bytes(app: App[None]) -> str:
    """What the app would write to the terminal for a full repaint of the current screen, minus its
    own colour and cursor sequences."""
    from textual._compositor import CompositorUpdate

    update = app.screen._compositor.render_update(full=True)
    assert isinstance(update, CompositorUpdate)
    return _OWN.sub("", update.render_segments(app.console))


def assert_inert(app: App[None]) -> None:
    out = terminal_bytes(app)
    bad = [out[max(0, m.start() - 20) : m.end() + 20] for m in _CONTROL.finditer(out)]
    assert not bad, bad[:5]


def plain(renderable: object) -> str:
    if isinstance(renderable, str):
        return renderable
    if isinstance(renderable, Content | Text):
        return renderable.plain
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def screen_text(app: App[None]) -> str:
    """The text of every Static on the screen, mounted or scrolled away, as rendered."""
    return "\n".join(plain(w.content) for w in app.screen.query(Static))


async def wait_for(pilot: Pilot[None], condition: object, what: str, steps: int = 250) -> None:
    for _ in range(steps):
        if callable(condition) and condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def open_everything(pilot: Pilot[None], app: AgentTuiApp) -> None:
    for box in app.query(Collapsible):
        box.collapsed = False
    await pilot.pause(0.2)


async def test_a_session_with_markup_and_escapes_in_every_field_opens_at_80x24(tmp_path: Path) -> None:
    path = write_poisoned(tmp_path / "sessions" / "poisoned.jsonl")
    app = make_app(tmp_path, path)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause(0.3)
        await open_everything(pilot, app)
        assert app.is_running
        assert_inert(app)
        for size in ((120, 40), (200, 50)):
            await pilot.resize_terminal(*size)
            await pilot.pause(0.2)
            assert_inert(app)
        chat = screen_text(app)
        for tag in ("user", "reply", "thinking", "resultc1", "resultc3", "bashout", "lastreply", "errmsg"):
            assert f'[/] [x="{tag}-a" ; rm -f victim ; : "] [b]{tag}[/b]' in chat, tag
        assert "\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07\\x1b]0;PWNED-TITLE\\x07\\x1b[2J⟨U+202E⟩" in chat
        titles = " ".join(str(c.title) for c in app.query(Collapsible))
        assert "sed 's/[/]/x/'" in titles or "sed 's/[/]/x/'" in chat  # the bash call
        labels = " ".join(app.session_tree.visible_labels())
        for tag in ("name", "label", "customtype", "mcprov", "level", "lastuser"):
            assert f'[x="{tag}-a"' in labels, (tag, labels)
        assert "allowed once: bash [/]" in labels  # a permission decision, one readable line
        rows = " ".join(app.panel.row_lines())
        assert '[x="lastuser-a"' in rows and "\\x1b]" in rows
        assert "\x1b" not in labels + rows


async def test_continue_last_opens_the_poisoned_session_too(tmp_path: Path) -> None:
    """A session poisoned with ``[/]`` used to crash every ``-c``."""
    sessions = tmp_path / "sessions"
    write_poisoned(sessions / "poisoned.jsonl")
    app = make_app(tmp_path, None, continue_last=True)
    async with app.run_test(size=SMALL) as pilot:
        await wait_for(pilot, lambda: app.session is not None, "the session")
        await open_everything(pilot, app)
        assert app.is_running and app.session is not None
        assert app.session.path.name == "poisoned.jsonl"
        assert_inert(app)


async def test_rename_with_brackets_and_toasts_keep_their_text(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        app.notify("no key for [anthropic]: set ANTHROPIC_API_KEY [/]", title="[b]model[/b] \x1b]0;t\x07")
        app.action_rename()  # Ctrl+R, or /rename
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "PromptScreen", "the rename prompt")
        await pilot.press(*'[/] [x="', "enter")
        await wait_for(pilot, lambda: Session.open(path, write=False).index.name == '[/] [x="', "the rename")
        await pilot.pause(0.2)
        assert app.is_running
        messages = [str(n.message) for n in app._notifications]
        assert "no key for [anthropic]: set ANTHROPIC_API_KEY [/]" in messages
        assert any(n.title == "[b]model[/b] \\x1b]0;t\\x07" for n in app._notifications)
        assert any('[/] [x="' in m for m in messages)  # "Renamed the session: ..."
        assert '[/] [x="' in str(app.query_one("#sidebar-title", Static).render())
        assert_inert(app)


async def test_the_session_picker_shows_poisoned_names_literally(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    write_poisoned(sessions / "poisoned.jsonl")
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+o")
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionPicker) and app.screen.ready, "the picker"
        )
        await wait_for(pilot, lambda: len(app.screen.shown) == 2, "both sessions")  # type: ignore[attr-defined]
        await pilot.pause(0.2)
        assert app.is_running
        assert_inert(app)


async def test_a_streamed_reply_with_markup_and_escapes_is_shown_literally(tmp_path: Path) -> None:
    reply = 'echo "[/]" and [x="a" ; b] then \x1b]52;c;Y3VybA==\x07\x1b]0;T\x07\x1b[2J\u202e end\n\n```\nsed \'s/[/]/x/\' \x1b[2J\n```\n'
    factory = ScriptedFactory(reply=reply, chunks=7, hold=True)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set(), "streaming")
        await pilot.pause(0.3)  # a flush of the partial reply
        assert app.is_running
        assert_inert(app)
        factory.turns[0].release.set()
        await wait_for(pilot, lambda: not app.busy, "the turn's end")
        await pilot.pause(0.2)
        assert app.is_running
        assert_inert(app)
        shown = screen_text(app)
        assert 'echo "[/]" and [x="a" ; b] then \\x1b]52;c;Y3VybA==\\x07' in shown, shown


# -- the permission dialog ---------------------------------------------------------------------


async def _ask(
    pilot: Pilot[None], app: AgentTuiApp, command: str
) -> tuple[asyncio.Task[str], PermissionScreen]:
    request = Permissions().request_for("bash", {"command": command}, str(app.config.cwd), "c1")
    assert request is not None
    task = asyncio.create_task(app.approve(request))
    await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
    await pilot.pause(0.1)
    screen = app.screen
    assert isinstance(screen, PermissionScreen)
    await wait_for(pilot, lambda: screen.answerable, "the question on screen long enough to answer")
    return task, screen


async def test_the_dialog_shows_the_whole_command_markup_and_all(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    attack = "make docs-build '[x=\"' ; rm -f victim ; : '\"]'"
    async with app.run_test(size=SMALL) as pilot:
        task, screen = await _ask(pilot, app, attack)
        shown = str(screen.query_one("#permission-call-text", Static).render())
        assert shown == attack  # before: "make docs-build ''" (the markup ate the rest)
        assert "rm -f victim" in terminal_bytes(app)  # really on screen at 80x24
        assert_inert(app)
        await pilot.press("escape")  # No
        assert await task == "deny"
        task, screen = await _ask(pilot, app, "sed 's/[/]/x/' notes.txt && echo \"[/]\"")
        assert app.is_running  # "[/]" used to end the app
        assert str(screen.query_one("#permission-call-text", Static).render()) == (
            "sed 's/[/]/x/' notes.txt && echo \"[/]\""
        )
        await pilot.press("escape")  # No
        assert await task == "deny"


async def test_the_dialog_shows_every_line_and_control_characters(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    command = (
        "echo x\nrm -rf ~/important\r\n"
        + "\n".join(f"echo line {i}" for i in range(40))
        + "\n\x1b]0;t\x07\u202eend"
    )
    async with app.run_test(size=SMALL) as pilot:
        task, screen = await _ask(pilot, app, command)
        shown = screen.shown_call
        assert shown.split("\n")[:2] == ["echo x", "rm -rf ~/important\\x0d"]  # not joined into one echo
        assert "echo line 39" in shown and shown.endswith("\\x1b]0;t\\x07⟨U+202E⟩end")
        assert "rm -rf ~/important" in terminal_bytes(app)
        assert_inert(app)
        box = screen.query_one("#permission-call")
        assert box.max_scroll_y > 0  # long: the box scrolls, the choices stay on screen
        await pilot.press("pagedown")
        await pilot.pause(0.1)
        assert box.scroll_y > 0
        assert "1  Yes" in terminal_bytes(app)
        await pilot.press("up")  # for the session: the arrows, then Enter once the highlight settled
        await pilot.pause(SETTLE + 0.1)
        await pilot.press("enter")
        assert await task == "allow-session"


async def test_one_key_answers_deny_by_default_and_a_readable_notice(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=SMALL) as pilot:
        task, _ = await _ask(pilot, app, "ls -la")
        await pilot.press("1")
        assert await task == "allow-once"
        assert "allowed once: bash ls -la" in [str(n.message) for n in app._notifications]
        task, _ = await _ask(pilot, app, "ls -la")
        await pilot.press("enter")  # Deny is highlighted
        assert await task == "deny"
        task, _ = await _ask(pilot, app, "ls -la")
        await pilot.press("escape")
        assert await task == "deny"
        assert "denied: bash ls -la" in [str(n.message) for n in app._notifications]


async def test_the_tool_line_says_waiting_for_approval_while_the_dialog_is_open(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        reply = await app.chat.start_reply()
        reply.tool_started("c1", "bash", {"command": "ls -la"})
        task, _ = await _ask(pilot, app, "ls -la")
        line = str(reply._tools["c1"].render())
        assert line.endswith("waiting for approval") and "running" not in line
        await pilot.press("1")
        assert await task == "allow-once"
        assert str(reply._tools["c1"].render()).endswith("running…")


# -- a crash -----------------------------------------------------------------------------------


class _Crashing(OneLineCrash, App[None]):
    def compose(self) -> ComposeResult:
        yield Static("x")

    def on_mount(self) -> None:
        raise RuntimeError("boom [/] \x1b]0;t\x07 secret-local")


def test_a_crash_exits_non_zero_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    app = _Crashing()
    asyncio.run(app.run_async(headless=True, size=SMALL))
    assert app.return_code == 1
    code = exit_status(app)  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("agent-tui: crashed: RuntimeError: boom [/] \\x1b]0;t\\x07 secret-local")
    log = tmp_path / "home" / CRASH_FILE
    assert str(log) in lines[0] and "on_mount" in log.read_text()
    assert oct(log.stat().st_mode & 0o777) == "0o600"


async def test_a_running_command_and_the_queue_draw_no_control(tmp_path: Path) -> None:
    from agent_tui.agent.queue import QueuedMessage
    from agent_tui.tui.widgets.bash_run import BashRun
    from agent_tui.tui.widgets.queue_view import QueueView

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield BashRun("cat evil [/] \x1b]0;t\x07")
            yield QueueView(id="queue")

    app = Host()
    async with app.run_test(size=SMALL) as pilot:
        app.query_one(BashRun).add_output("out \x1b]52;c;Y3VybA==\x07\x1b[2J\u202e [/] end\n")
        queue = app.query_one(QueueView)
        queue.show([QueuedMessage("steer", "typed \x1b]0;t\x07 [/]")])
        await pilot.pause(0.2)
        assert app.is_running
        assert_inert(app)
        assert "out \\x1b]52;c;Y3VybA==\\x07" in terminal_bytes(app)

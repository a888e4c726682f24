"""The permission question on the smallest terminal the app supports (60x15): whatever wraps (a long
tool name, a long folder in "allow for this session", a long command), the choices and the key
hint stay on screen; the command's box is what gives way (it scrolls)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.widgets import Label, OptionList

from agent_tui.agent.permissions import Permissions
from agent_tui.tui.screens.permission import ANSWER_GRACE, TYPING_GAP, PermissionScreen
from tests.support.dialogs import LONG_COMMAND
from tests.support.pilot import wait_for
from tests.support.screen_text import assert_on_screen, assert_whole
from tests.support.tui_fixtures import make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

LONG_FOLDER = "/home/someone/projects/a-project-with-a-rather-long-folder-name/services/api/generated"
QUESTIONS = {
    "write outside": (
        "write",
        "writes a file outside the project",
        f"{LONG_FOLDER}/client.py\n" + "x = 1\n" * 40,
        f"file:{LONG_FOLDER}/client.py",
    ),
    "mcp tool": (
        "mcp__a-server-with-a-long-name__write_multiple_files_at_once_in_a_batch",
        "calls an MCP server's tool",
        LONG_COMMAND,
        "tool:mcp__a-server-with-a-long-name__write_multiple_files_at_once_in_a_batch",
    ),
}


@pytest.mark.parametrize("size", [(60, 15), (80, 24)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("question", list(QUESTIONS))
async def test_the_choices_and_the_hint_stay_on_screen(
    tmp_path: Path, question: str, size: tuple[int, int]
) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.push_screen(PermissionScreen(*QUESTIONS[question]))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        for _ in range(3):
            await pilot.pause()
        screen = app.screen
        hint = screen.query_one(".dialog-hint", Label)
        assert_on_screen(app, hint)
        assert_whole(app, hint, str(hint.render()))
        assert_on_screen(app, screen.query_one(OptionList))
        options = screen.query_one(OptionList)
        assert options.virtual_size.height <= options.size.height, "every choice is shown, none scrolled away"
        box = screen.query_one("#permission-call", VerticalScroll)
        assert_on_screen(app, box)
        assert box.size.height >= 1, "a line of the command is still shown"


@pytest.mark.parametrize(
    ("tool", "title"),
    [
        ("mcp__files__write_file", "Allow mcp__files__write_file? It calls an MCP server's tool:"),
        ("my_extension_tool", "Allow my_extension_tool? It may change things:"),
        ("bash", "Allow bash? It runs a shell command:"),
    ],
)
def test_the_question_reads_as_a_sentence(tmp_path: Path, tool: str, title: str) -> None:
    arguments = {"command": "ls"} if tool == "bash" else {"path": "x"}
    request = Permissions.describe(tool, arguments, str(tmp_path))
    screen = PermissionScreen(request.tool, request.reason, request.details(), request.scope)
    assert screen.title_text == title


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _question(pilot: Pilot[None], clock: _Clock, answers: list[str | None]) -> None:
    pilot.app.push_screen(
        PermissionScreen("bash", "runs a shell command", "rm -rf build", "bash:rm -rf build", clock=clock),
        answers.append,
    )
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, PermissionScreen), "the question")


async def test_an_allow_key_typed_as_the_question_appears_is_not_an_answer(tmp_path: Path) -> None:
    """Typing a message while the agent works ("yes, and..."), the question can appear under the
    fingers: a y or an a in its first moments must not run the command (they are typing: text for
    the composer, and the typing goes on until a pause); Escape still denies at once."""
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        clock = _Clock()
        answers: list[str | None] = []
        await _question(pilot, clock, answers)
        await pilot.press("1", "2")
        await pilot.press("up", "up", "enter")  # allow once chosen with the arrows: too soon as well
        await pilot.pause()
        assert answers == [] and isinstance(app.screen, PermissionScreen)
        clock.now += ANSWER_GRACE  # long enough on screen, but the keys before were typing
        await pilot.press("1")
        await pilot.pause()
        assert answers == [] and isinstance(app.screen, PermissionScreen)
        clock.now += TYPING_GAP  # a pause: the next key is an answer
        await pilot.press("1")
        await wait_for(pilot, lambda: answers == ["allow-once"], "allowed once")
        await _question(pilot, clock, answers)
        await pilot.press("escape")  # deny is never held back
        await wait_for(pilot, lambda: answers == ["allow-once", "deny"], "denied")

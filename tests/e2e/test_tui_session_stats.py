"""The app's ``/session`` and print mode's ``-p "/session"`` show the same figures for the same
session: both are the session core's ``SessionStats`` (``agent.session_stats``), in the same
lines (issue 23: the app built its own text from the entries)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.tui.screens.text_view import TextViewScreen
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.pilot import wait_for
from tests.support.print_env import Env
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.slow]  # three agent-tui processes


def _figures(shown: str) -> list[str]:
    """The lines of the session core's figures: messages, context and cost."""
    wanted = ("Messages:", "Context:", "cost of")
    return [line.strip() for line in shown.splitlines() if line.strip().startswith(wanted)]


async def test_the_apps_slash_session_shows_the_figures_print_mode_shows(
    tmp_path: Path, server: FakeModelServer
) -> None:
    env = Env(tmp_path, server)
    # priced calls of different sizes: a figure counted from another set of entries would differ
    server.push(anthropic_stream(text("first answer"), input_tokens=1_200, output_tokens=300))
    assert env.run("-p", "first question").returncode == 0
    (path,) = env.sessions()
    server.push(anthropic_stream(text("second answer"), input_tokens=2_500, output_tokens=40, cache_read=700))
    done = env.run("-p", "second question", "--session", str(path))
    assert done.returncode == 0, done.stderr
    printed = env.run("-p", "/session", "--session", str(path))
    assert printed.returncode == 0, printed.stderr
    print_figures = _figures(printed.stdout)
    assert [line.split(":")[0] for line in print_figures] == [
        "Messages",
        "Context",
        "cost of this branch",
        "cost of the whole file",
    ], printed.stdout
    assert print_figures[0].startswith("Messages: 2 user, 2 assistant, 0 tool calls")
    assert "2 calls" in print_figures[3] and "$" in print_figures[3]  # priced, not a token count

    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.index.entries) > 0, "the session")
        await app.run_slash("session", "")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, TextViewScreen) and app.screen.focused is not None,
            "/session, mounted",
        )
        assert isinstance(app.screen, TextViewScreen)
        shown = app.screen.text
        await pilot.press("escape")
    assert _figures(shown) == print_figures, shown

"""pi's "Summarize branch?" on the default move (Enter in the tree, /branch): pi's three answers in
pi's order, "No summary" the default, the custom prompt's Escape back to the question, and pi's
``skipPrompt`` as ``[branch_summary] skip_prompt`` (tui/branch_summary_offer.py)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agent_tui.store.session import BRANCH_MARKER
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.dialog import ANSWER_GRACE, SETTLE, TYPING_GAP
from agent_tui.tui.screens.prompt import PromptScreen
from tests.e2e.test_tui_e2e import app_command, entries, wait_until
from tests.support.fake_model_server import FakeModelServer, openai_stream
from tests.support.pilot import answer_branch_summary, select, wait_for
from tests.support.tmux import Tmux
from tests.support.tui_fixtures import SIZE, ScriptedFactory, last_entry, make_app, sample_session

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]  # a Textual app per test, a tmux run

GUARD = max(ANSWER_GRACE, TYPING_GAP) + 0.3


def _types(path: Path) -> list[str]:
    return [json.loads(line)["type"] for line in path.read_text().splitlines()]


async def test_enter_in_the_tree_asks_pi_s_question_and_no_summary_just_moves(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        before = _types(path)
        await select(pilot, app, "a2")  # leaves u3, a3, ... behind
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the question")
        screen = app.screen
        assert isinstance(screen, ChoiceScreen)
        assert screen.title_text.startswith("Summarize branch? (")
        assert [label for _, label in screen.choices] == [
            "No summary",
            "Summarize",
            "Summarize with custom prompt",
        ]
        assert screen.highlighted_id() == "no-summary"  # pi's default
        assert _types(path) == before  # nothing written before the answer
        await answer_branch_summary(pilot, app)  # Enter: No summary
        await wait_for(pilot, lambda: last_entry(path)["type"] == "custom", "the move")
        assert last_entry(path)["parentId"] == "a2"
        assert "branch_summary" not in _types(path)


async def test_summarize_writes_a_branch_summary_under_the_new_position(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        await pilot.press("enter")
        await answer_branch_summary(pilot, app, "down")  # Summarize
        await wait_for(
            pilot, lambda: not app.busy and last_entry(path)["type"] == "branch_summary", "the summary"
        )
        assert last_entry(path)["parentId"] == "a2"
        assert last_entry(path)["summary"] == "The abandoned branch explained the fix."


async def test_the_custom_prompt_escapes_back_to_the_question_then_keeps_its_focus(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        before = path.read_bytes()
        await select(pilot, app, "a2")
        await pilot.press("enter")
        await answer_branch_summary(pilot, app, "down", "down")  # Summarize with custom prompt
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the custom prompt")
        await pilot.press("escape")  # back to the question, as in pi
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the question again")
        assert app.screen.highlighted_id() == "custom"  # type: ignore[attr-defined]
        assert path.read_bytes() == before
        await answer_branch_summary(pilot, app)  # Enter: the custom prompt again
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the custom prompt again")
        await pilot.press(*"the parser fix")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: not app.busy and last_entry(path)["type"] == "branch_summary", "the summary"
        )
        assert last_entry(path)["summary"].endswith("Kept: the parser fix")


async def test_escape_on_the_question_moves_nothing_and_the_tree_keeps_the_focus(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        before = path.read_bytes()
        await select(pilot, app, "a2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the question")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ChoiceScreen), "the question closed")
        await pilot.pause()
        assert path.read_bytes() == before
        assert app.session_tree.has_focus and app.session_tree.cursor_entry_id == "a2"


async def test_slash_branch_asks_the_same_question(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("/branch a1")
        await pilot.press("enter")
        await answer_branch_summary(pilot, app, "down")  # Summarize
        await wait_for(
            pilot, lambda: not app.busy and last_entry(path)["type"] == "branch_summary", "the summary"
        )
        assert last_entry(path)["parentId"] == "a1"


async def test_skip_prompt_moves_without_asking(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[branch_summary]\nskip_prompt = true\n")
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: last_entry(path)["type"] == "custom", "the move")
        assert last_entry(path)["parentId"] == "a2"
        assert "branch_summary" not in _types(path)
        assert not isinstance(app.screen, ChoiceScreen)


async def test_skip_prompt_with_summarize_branches_summarizes_unasked(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        "[compaction]\nsummarize_branches = true\n\n[branch_summary]\nskip_prompt = true\n"
    )
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: not app.busy and last_entry(path)["type"] == "branch_summary", "the summary"
        )
        assert last_entry(path)["parentId"] == "a2"


# -- the real program, real bytes, at 80x24 ---------------------------------------------------


def _pi_messages(path: Path) -> list[dict[str, object]]:
    """pi 1.6's own projection of ``path`` (tests/support/pi_compat/pi_project.mjs, on a copy)."""
    import subprocess

    from tests.support.pi_install import pi_node

    node = pi_node()
    script = Path(__file__).resolve().parents[1] / "support" / "pi_compat" / "pi_project.mjs"
    proc = subprocess.run(
        [node, str(script), str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    messages: list[dict[str, object]] = json.loads(proc.stdout)
    return messages


@pytest.mark.timeout(600)  # the first test to need pi may install it (tests/support/pi_install)
def test_at_80x24_the_move_asks_no_summary_moves_and_summarize_writes_what_pi_reads(
    tmp_path: Path, server: FakeModelServer
) -> None:
    command, work, sessions = app_command(tmp_path, server)
    server.push(openai_stream("First answer."), openai_stream("Second answer."))
    tmux = Tmux(f"agent-tui-branch-offer-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("first question")
        tmux.keys("Enter")
        tmux.wait_text("First answer.")
        tmux.type("second question")
        tmux.keys("Enter")
        tmux.wait_text("Second answer.")
        tmux.wait(lambda s: "streaming…" not in s, "the turn's end", timeout=60)
        path = next(sessions.glob("*.jsonl"))
        first = next(
            e["id"]
            for e in entries(path)
            if e.get("message", {}).get("role") == "assistant"
            and e["message"]["content"][0].get("text") == "First answer."
        )
        requests = len(server.requests)

        # 1. the move asks pi's question, whole at 80x24; Enter takes pi's default, No summary
        tmux.type(f"/branch {first}")
        tmux.keys("Enter")
        screen = tmux.wait_text("Summarize branch? (2 messages left behind)")
        assert max(len(line) for line in screen.splitlines()) <= 80
        for label in ("No summary", "Summarize", "Summarize with custom prompt", "Escape to cancel"):
            assert label in screen, screen
        assert not any(e.get("customType") == BRANCH_MARKER for e in entries(path))
        time.sleep(GUARD)
        tmux.keys("-H", "0d")  # Enter, the byte a terminal sends (CR)
        wait_until(
            lambda: any(
                e.get("customType") == BRANCH_MARKER and e.get("parentId") == first for e in entries(path)
            ),
            "the move",
        )
        assert len(server.requests) == requests and not any(
            e.get("type") == "branch_summary" for e in entries(path)
        )

        # 2. a third turn on the new branch; moving back to the first answer leaves it behind:
        # Down (ESC [ B) and Enter take "Summarize": the model's summary is a branch_summary entry
        tmux.wait(lambda s: "Summarize branch?" not in s, "the question closed")
        server.push(openai_stream("Third answer."))
        tmux.keys("F2")
        tmux.type("third question")
        tmux.keys("Enter")
        tmux.wait_text("Third answer.")
        tmux.wait(lambda s: "streaming…" not in s, "the turn's end", timeout=60)
        summary = "## Goal\nAnswer the third question."
        server.push(openai_stream(summary), openai_stream(summary))
        requests = len(server.requests)
        tmux.type(f"/branch {first}")
        tmux.keys("Enter")
        tmux.wait_text("Summarize branch?")
        time.sleep(GUARD)
        tmux.keys("-H", "1b", "5b", "42")  # Down: ESC [ B
        time.sleep(SETTLE + 0.1)
        tmux.keys("-H", "0d")
        wait_until(lambda: any(e.get("type") == "branch_summary" for e in entries(path)), "the summary")
        (written,) = [e for e in entries(path) if e.get("type") == "branch_summary"]
        assert written["parentId"] == first and "Answer the third question." in written["summary"]
        assert len(server.requests) > requests  # the model wrote it
        tmux.wait(lambda s: "streaming…" not in s, "the summary's end", timeout=60)

        # pi 1.6 reads the file: the summary is in its context, the third turn is not
        messages = json.dumps(_pi_messages(path))
        assert "Answer the third question." in messages and "Third answer." not in messages
    finally:
        tmux.stop()

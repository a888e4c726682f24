"""Pilot tests of context surgery in the app: /prune and /undo, a span marked in the tree with v and
hidden with h, and e on a compaction editing its summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.projection.context import Status, project
from agent_tui.projection.surgery import SURGERY
from agent_tui.store.session import Session
from agent_tui.tui.screens.editor import EditorScreen
from agent_tui.tui.screens.prompt import PromptScreen
from tests.support.fake_model_server import FakeModelServer
from tests.support.pilot import notices, select, wait_for
from tests.support.session_builder import Builder, assistant, tool_result, user
from tests.support.tui_fixtures import SIZE, make_app, reopen

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

BIG = "y" * 14_000


def _session(tmp_path: Path) -> Path:
    b = Builder()
    b.message(user("run the tests"))  # e0001
    b.message(assistant("", [("c1", "bash", {"command": "pytest -x"})]))  # e0002
    b.message(tool_result("c1", BIG, name="bash"))  # e0003
    b.message(assistant("one failure"))  # e0004
    b.message(user("again"))  # e0005
    b.message(assistant("", [("c2", "bash", {"command": "pytest"})]))  # e0006
    b.message(tool_result("c2", BIG, name="bash"))  # e0007
    b.message(assistant("all pass"))  # e0008
    return b.write(tmp_path / "s.jsonl")


def _statuses(path: Path) -> dict[str, Status]:
    with reopen(path) as session:
        return {ce.entry.id: ce.status for ce in project(session.index).entries}


async def test_prune_and_undo_slash_commands(tmp_path: Path) -> None:
    path = _session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.run_slash("prune", "preview 1")
        await wait_for(
            pilot, lambda: any(n.startswith("Would prune 1 entry") for n in notices(app)), "preview"
        )
        assert _statuses(path)["e0003"] is Status.KEPT
        await app.run_slash("prune", "1")
        await wait_for(pilot, lambda: _statuses(path)["e0003"] is Status.REPLACED, "pruned")
        assert any("[by prune]" in label for label in app.session_tree.visible_labels())
        await app.run_slash("undo", "")
        await wait_for(pilot, lambda: _statuses(path)["e0003"] is Status.RESTORED, "undone")
        await app.run_slash("undo", "")
        await wait_for(
            pilot, lambda: any(n.startswith("Nothing to undo") for n in notices(app)), "nothing left"
        )


async def test_mark_a_span_with_v_and_hide_it_with_h(tmp_path: Path) -> None:
    path = _session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "e0003")
        await pilot.press("v")
        await pilot.press("down")
        await wait_for(pilot, lambda: app.session_tree.marked_span() == ("e0003", "e0004"), "span marked")
        assert sum("[marked]" in label for label in app.session_tree.visible_labels()) == 2
        # the panel's preview is of the span, in the figures the result will have
        await wait_for(
            pilot, lambda: any(x.startswith("h: hide 3 entries") for x in app.panel.edit_preview), "preview"
        )
        preview = next(x for x in app.panel.edit_preview if x.startswith("h: hide"))
        assert "   widened to e0002 to keep tool calls with their results" in app.panel.edit_preview
        assert any(x.startswith("Ctrl+G: the model summarizes 4 entries") for x in app.panel.edit_preview)
        after = int(preview.split("→ ")[1].split(" tokens")[0].replace(",", ""))
        await pilot.press("h")
        await wait_for(pilot, lambda: _statuses(path)["e0004"] is Status.HIDDEN, "span hidden")
        statuses = _statuses(path)
        assert [i for i, s in statuses.items() if s is Status.HIDDEN] == ["e0002", "e0003", "e0004"]
        assert app.session_tree.marked_span() is None  # the mark is cleared after the action
        assert app.panel.model is not None and app.panel.model.total == after
        with reopen(path) as session:
            assert session.index.entries[-1].data["customType"] == SURGERY


async def test_e_on_a_compaction_edits_its_summary(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("a"))
    b.message(assistant("b"))
    cid = b.add("compaction", summary="old summary", firstKeptEntryId="e0002", tokensBefore=10)
    b.message(user("c"))
    path = b.write(tmp_path / "c.jsonl")
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, cid)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditorScreen), "editor open")
        app.screen.dismiss("new summary")
        await wait_for(
            pilot, lambda: "new summary" in str(app.projection.messages[0].message), "summary edited"
        )
        with reopen(path) as session:
            edited = session.index.entries[-2]
            assert edited.type == "compaction" and edited.data["firstKeptEntryId"] == "e0002"
            assert session.index.entries[-1].data["data"]["action"] == "edit-summary"
        await app.run_slash("undo", "")
        await wait_for(pilot, lambda: "old summary" in str(app.projection.messages[0].message), "undone")


async def test_ctrl_g_on_a_marked_span_compacts_just_that_span(
    server: FakeModelServer, tmp_path: Path
) -> None:
    from agent_tui.agent.build import make_provider
    from agent_tui.agent.compaction import Summarizer
    from tests.support.agent_support import make_config
    from tests.support.fake_model_server import anthropic_stream, text
    from tests.support.tui_fixtures import ScriptedFactory, ScriptedTurns

    provider = make_provider(make_config(server))

    class Turns(ScriptedTurns):
        def summarizer(self) -> Summarizer:
            return Summarizer(provider, "claude-sonnet-5-5")

    class Factory(ScriptedFactory):
        def __call__(self, session: Session, choice: object) -> ScriptedTurns:
            turns = Turns(session)
            self.turns.append(turns)
            return turns

    path = _session(tmp_path)
    server.push(anthropic_stream(text("## Goal\nthe first run")))
    app = make_app(tmp_path, path, agent_factory=Factory())
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "e0002")
        await pilot.press("v")
        await pilot.press("down")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "focus prompt")
        prompt = app.screen
        assert isinstance(prompt, PromptScreen)
        assert "widened to whole turns: e0001..e0004" in prompt.hint
        prompt.dismiss("")
        await wait_for(pilot, lambda: _statuses(path)["e0004"] is Status.HIDDEN, "span compacted")
        with reopen(path) as session:
            first = project(session.index).messages[0].message
        assert first["content"] == "Summary of entries e0001..e0004:\n\n## Goal\nthe first run"
        assert "[User]: run the tests" in str(server.requests[0].body)
        await app.run_slash("undo", "")
        await wait_for(pilot, lambda: _statuses(path)["e0004"] is Status.RESTORED, "undone")
    await provider.aclose()

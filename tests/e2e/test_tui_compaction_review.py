"""Pilot tests of a compaction reviewed before it applies: Ctrl+G, then Ctrl+R in the preview has the
model (the fake server) write the summary, an editor shows it with a live token count, saving
appends the compaction with the edited text and Escape appends nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea

from agent_tui.agent.build import make_provider
from agent_tui.agent.compaction import Summarizer, preview
from agent_tui.projection.compaction import CompactionSettings
from agent_tui.projection.tokens import estimate_text
from agent_tui.providers.base import Provider
from agent_tui.store.session import Session
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.compaction_review import CANCELLED
from agent_tui.tui.screens.editor import EditorScreen
from agent_tui.tui.screens.prompt import PromptScreen
from tests.support.agent_support import make_config
from tests.support.fake_model_server import FakeModelServer, Hang, anthropic_stream, text
from tests.support.pilot import notices, panel_rows, wait_for
from tests.support.session_builder import Builder, assistant, user
from tests.support.tui_fixtures import SIZE, ScriptedFactory, ScriptedTurns, make_app, reopen

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

MODEL_SUMMARY = "## Goal\nfix the parser"
EDITED = "## Goal\nfix the parser (edited by hand, with the details that matter to the user)"


def _session(tmp_path: Path) -> Path:
    b = Builder()
    b.message(user("fix the parser"))  # e0001
    b.message(assistant("the bug is the missing strip"))  # e0002
    b.message(user("now add a test"))  # e0003
    b.message(assistant("added test_parse_strips"))  # e0004
    return b.write(tmp_path / "s.jsonl")


def _factory(server: FakeModelServer) -> tuple[ScriptedFactory, Provider]:
    provider = make_provider(make_config(server))

    class Turns(ScriptedTurns):
        def summarizer(self) -> Summarizer:
            return Summarizer(provider, "claude-sonnet-4-5")

        def compaction_settings(self) -> CompactionSettings:
            return CompactionSettings()

    class Factory(ScriptedFactory):
        def __call__(self, session: Session, choice: object) -> ScriptedTurns:
            turns = Turns(session)
            self.turns.append(turns)
            return turns

    return Factory(), provider


def _entries(path: Path) -> list[dict[str, object]]:
    with reopen(path) as session:
        return [dict(e.data) for e in session.index.entries]


async def _open_review(pilot: Pilot[None], app: AgentTuiApp) -> EditorScreen:
    await pilot.press("ctrl+g")
    await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "compaction preview")
    prompt = app.screen
    assert isinstance(prompt, PromptScreen) and "Ctrl+R" in prompt.hint
    await pilot.press(*"parser")
    await pilot.press("ctrl+r")
    await wait_for(pilot, lambda: isinstance(app.screen, EditorScreen), "the summary editor")
    editor = app.screen
    assert isinstance(editor, EditorScreen)
    await wait_for(pilot, lambda: editor.armed, "the editor's guard to pass")  # it appeared unasked
    return editor


async def test_review_edit_and_apply_the_summary(server: FakeModelServer, tmp_path: Path) -> None:
    path = _session(tmp_path)
    with reopen(path) as session:
        plan = preview(session, CompactionSettings())
    assert plan is not None
    factory, provider = _factory(server)
    server.push(anthropic_stream(text(MODEL_SUMMARY)))
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        editor = await _open_review(pilot, app)
        assert len(_entries(path)) == 4  # the model wrote the summary; nothing was appended yet
        area = editor.query_one(TextArea)
        assert area.text.startswith(MODEL_SUMMARY)
        assert "Additional focus: parser" in str(server.requests[0].body)
        before = editor.count_text
        assert "tokens (the model wrote" in before
        # a summary longer than what it replaces: the review says it grows the context (unreviewed,
        # such a compaction is not applied; here the user sees the figures and may apply it)
        area.text = EDITED + " padding" * 3_000
        await wait_for(pilot, lambda: "GROWS the context" in editor.count_text, "the growth said")
        area.text = EDITED
        await wait_for(pilot, lambda: editor.count_text != before, "the count follows the edit")
        assert editor.count_text.startswith(f"{estimate_text(EDITED):,} tokens")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: _entries(path)[-1]["type"] == "compaction", "compaction appended")
        entry = _entries(path)[-1]
        assert entry["summary"] == EDITED
        assert entry["firstKeptEntryId"] == plan.first_kept_entry_id == "e0003"
        assert entry["tokensBefore"] == plan.tokens_before
        assert entry["details"] == {
            "readFiles": plan.read_files,
            "modifiedFiles": plan.modified_files,
            "lost": [],
        }
        assert len(_entries(path)) == 5
        await wait_for(
            pilot, lambda: "edited by hand" in str(app.projection.messages[0].message), "the projection"
        )
        assert any("(compactionSummary)" in r for r in panel_rows(app))
        assert any("[compaction]" in x for x in app.session_tree.visible_labels())
        assert any("Compacted with the reviewed summary (edited)" in n for n in notices(app))
    await provider.aclose()


async def test_the_review_says_what_the_summary_leaves_out_and_ctrl_l_adds_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    b = Builder()
    b.message(user("the server must listen on 8080; never touch vendor/lib.py"))  # e0001
    b.message(assistant("noted"))  # e0002
    b.message(user("now add a test"))  # e0003
    b.message(assistant("added test_parse_strips"))  # e0004
    path = b.write(tmp_path / "s.jsonl")
    factory, provider = _factory(server)
    server.push(anthropic_stream(text(MODEL_SUMMARY)))
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        editor = await _open_review(pilot, app)
        assert "leaves out" in editor.count_text and "8080" in editor.count_text
        assert "vendor/lib.py" in editor.count_text
        await pilot.press("ctrl+l")
        area = editor.query_one(TextArea)
        await wait_for(pilot, lambda: "## Also from the summarized part" in area.text, "the losses added")
        assert "number: 8080 (e0001)" in area.text and "path: vendor/lib.py (e0001)" in area.text
        await wait_for(pilot, lambda: "leaves out" not in editor.count_text, "nothing left out now")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: _entries(path)[-1]["type"] == "compaction", "compaction appended")
        details = _entries(path)[-1]["details"]
        assert isinstance(details, dict) and details["lost"] == []
    await provider.aclose()


async def test_ctrl_n_pins_the_entries_that_hold_what_the_summary_leaves_out(
    server: FakeModelServer, tmp_path: Path
) -> None:
    b = Builder()
    b.message(user("the server must listen on 8080; never touch vendor/lib.py"))  # e0001
    b.message(assistant("noted"))  # e0002
    b.message(user("now add a test"))  # e0003
    b.message(assistant("added test_parse_strips"))  # e0004
    path = b.write(tmp_path / "s.jsonl")
    factory, provider = _factory(server)
    server.push(anthropic_stream(text(MODEL_SUMMARY)))
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        editor = await _open_review(pilot, app)
        assert "Ctrl+N pin lost" in editor._keys()
        before = editor.count_text
        assert "leaves out" in before and "8080" in before
        figure = int(before.split("→ ≈")[1].split()[0].replace(",", ""))
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: "leaves out" not in editor.count_text, "the review counted again")
        pins = [e for e in _entries(path) if e["type"] == "pin"]
        assert [(p["targetId"], p["pinned"]) for p in pins] == [("e0001", True)]
        assert app.screen is editor and editor.query_one(TextArea).text == MODEL_SUMMARY  # not edited
        # the pinned message is kept verbatim, so the context after compacting is larger
        assert int(editor.count_text.split("→ ≈")[1].split()[0].replace(",", "")) > figure
        assert any("Pinned e0001" in n for n in notices(app))
        await pilot.press("ctrl+n")  # nothing left out: nothing more is pinned
        await wait_for(pilot, lambda: any("nothing to pin" in n for n in notices(app)), "the notice")
        await pilot.press("ctrl+s")  # the pins moved the tip; the compaction still applies
        await wait_for(pilot, lambda: _entries(path)[-1]["type"] == "compaction", "compaction appended")
        entry = _entries(path)[-1]
        assert entry["summary"] == MODEL_SUMMARY
        assert isinstance(entry["details"], dict) and entry["details"]["lost"] == []
        assert len([e for e in _entries(path) if e["type"] == "pin"]) == 1
        sent = [m.message for m in app.projection.messages]
        assert any("8080" in str(m.get("content")) and m.get("role") == "user" for m in sent)
    await provider.aclose()


async def test_an_unreviewed_compaction_records_what_its_summary_lost(
    server: FakeModelServer, tmp_path: Path
) -> None:
    from agent_tui.agent.compaction import compact

    b = Builder()
    b.message(user("deploy with version 2.4.1 to staging"))  # e0001
    # long enough that the summary is shorter (a summary that grows the context is not applied)
    b.message(assistant("deployed" + "; the rollout went through each host" * 30))  # e0002
    b.message(user("now add a test"))  # e0003
    b.message(assistant("added test_parse_strips"))  # e0004
    path = b.write(tmp_path / "s.jsonl")
    server.push(anthropic_stream(text(MODEL_SUMMARY)))
    provider = make_provider(make_config(server))
    with Session.open(path) as session:
        outcome = await compact(session, Summarizer(provider, "claude-sonnet-4-5"), CompactionSettings())
    await provider.aclose()
    assert {"kind": "number", "text": "2.4.1", "entryId": "e0001"} in outcome.entry.data["details"]["lost"]


async def test_escape_in_the_review_appends_nothing(server: FakeModelServer, tmp_path: Path) -> None:
    path = _session(tmp_path)
    factory, provider = _factory(server)
    server.push(anthropic_stream(text(MODEL_SUMMARY)))
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await _open_review(pilot, app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: CANCELLED in notices(app), "the cancel line")
        assert not isinstance(app.screen, EditorScreen)
        assert len(_entries(path)) == 4 and len(server.requests) == 1
        assert not app.busy
    await provider.aclose()


async def test_escape_while_the_summary_is_written_stops_the_call(
    server: FakeModelServer, tmp_path: Path
) -> None:
    """Escape while the model wrote a reviewed compaction's summary said "Stopping the reply…" and
    stopped nothing (no turn runs: the agent's abort never reached the call); the editor opened
    when the summary came. Now the call is closed, nothing is appended and no editor opens."""
    path = _session(tmp_path)
    factory, provider = _factory(server)
    server.push(Hang(seconds=20))
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "compaction preview")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: len(server.requests) == 1 and app.busy, "the summary's call")
        await pilot.press("escape")
        await wait_for(pilot, lambda: CANCELLED in notices(app), "the cancel line")
        await wait_for(pilot, lambda: server.disconnects == 1, "the call closed")
        await wait_for(pilot, lambda: not app.busy, "idle again")
        assert not isinstance(app.screen, EditorScreen)
        assert len(_entries(path)) == 4 and len(server.requests) == 1
        assert not any("Stopping the reply" in n for n in notices(app))
    await provider.aclose()


async def test_plain_enter_still_compacts_without_a_review(tmp_path: Path) -> None:
    path = _session(tmp_path)
    factory = ScriptedFactory()
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "compaction preview")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _entries(path)[-1]["type"] == "compaction", "compaction appended")
        assert not isinstance(app.screen, EditorScreen)
        assert factory.turns[0].focuses == [None]

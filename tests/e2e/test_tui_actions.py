"""Pilot tests of every action: each asserts on the session file and on the live panel."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Label, OptionList

from agent_tui.agent.compaction import NOTHING_TO_COMPACT
from agent_tui.projection.context import project
from agent_tui.store.session import BRANCH_MARKER
from agent_tui.tui.screens.editor import EditorScreen
from agent_tui.tui.screens.prompt import PromptScreen
from agent_tui.tui.screens.session_picker import SessionPicker
from agent_tui.tui.widgets.chat_view import WINDOW
from tests.support.pilot import notices, panel_rows, row_for, select, wait_for
from tests.support.tui_fixtures import (
    SIZE,
    ScriptedFactory,
    last_entry,
    linear_session,
    make_app,
    reopen,
    sample_session,
    write_lines,
)

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


def entry_count(path: Path) -> int:
    with reopen(path) as session:
        return len(session.index.entries)


# -- opening --------------------------------------------------------------------------------


async def test_opens_a_session_into_all_three_panes(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        labels = app.session_tree.visible_labels()
        assert any("Fix the failing test" in label for label in labels)
        assert any("#fixed" in label and "⑂1" in label for label in labels), labels
        assert any("[hidden]" in label for label in labels)
        assert not any("Now add a test" in label for label in labels), "the other branch starts collapsed"
        assert app.chat.shown_ids == ["u1", "a1", "r1", "a2", "r2", "a3", "u3", "a5", "l1", "x1"]
        assert "hidden" in row_for(app, "r1")
        assert [r.split()[2] for r in panel_rows(app) if r.split()[0].isdigit()] == [
            "u1",
            "a1",
            "added",  # r1 is hidden: the request carries prepare's placeholder result for c1 instead
            "a2",
            "r2",
            "a3",
            "u3",
            "a5",
        ]
        assert app.panel.model is not None
        assert app.panel.model.window == 200_000
        assert app.panel.model.repairs, "the hidden result leaves c1 unanswered: the panel names the repair"


async def test_expanding_a_fork_shows_the_other_branch(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a3")
        await pilot.press("space")
        await wait_for(
            pilot,
            lambda: any("Now add a test" in x for x in app.session_tree.visible_labels()),
            "branch shown",
        )
        branch = next(x for x in app.session_tree.visible_labels() if "Now add a test" in x)
        assert "(2 entries)" in branch


async def test_pi_v1_file_opens_read_only_and_refuses_appends(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "old.jsonl",
        [
            {"type": "session", "id": "v1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/tmp"},
            {
                "type": "message",
                "timestamp": "2025-01-01T00:00:00.000Z",
                "message": {"role": "user", "content": "hi", "timestamp": 1},
            },
        ],
    )
    before = path.read_bytes()
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.session is not None and app.session.read_only
        assert "read-only" in str(app.query_one("#notice").render()) or "v1" in str(
            app.query_one("#notice").render()
        )
        await app.run_slash("rename", "new name")
        await pilot.pause()
        assert any("v1" in n or "read-only" in n for n in notices(app))
    assert path.read_bytes() == before


# -- branch ------------------------------------------------------------------------------------


async def test_enter_on_a_past_entry_branches_there(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.index.leaf_id not in (None, "x1"), "branch appended")
        entry = last_entry(path)
        assert entry["type"] == "custom" and entry["customType"] == BRANCH_MARKER
        assert entry["parentId"] == "a2"
        ids = [r.split()[2] for r in panel_rows(app) if r.split()[0].isdigit()]
        # r1 shows again (the hide is on the other branch); a2's call has no result yet: the request
        # carries prepare's placeholder, and so does the panel
        assert ids == ["u1", "a1", "r1", "a2", "added"]
        assert app.chat.shown_ids[-1] == entry["id"]


async def test_selecting_a_past_user_message_fills_the_composer_and_branches_to_its_parent(
    tmp_path: Path,
) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "u3")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: app.composer.text == "Actually, explain the fix instead", "composer filled"
        )
        await wait_for(pilot, lambda: last_entry(path)["type"] == "custom", "branch appended")
        assert last_entry(path)["parentId"] == "a3"
        assert app.focused is app.composer
        assert [r.split()[2] for r in panel_rows(app) if r.split()[0].isdigit()][-1] == "a3"


async def test_branch_slash_command(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("/branch a1")
        await pilot.press("enter")
        await wait_for(pilot, lambda: last_entry(path)["type"] == "custom", "branch appended")
        assert last_entry(path)["parentId"] == "a1"
        assert app.composer.text == ""


# -- hide / replace / restore ---------------------------------------------------------------


async def test_h_hides_the_selected_entry(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "u3")
        assert "kept" in row_for(app, "u3")
        await pilot.press("h")
        await wait_for(pilot, lambda: "hidden" in row_for(app, "u3"), "panel shows u3 hidden")
        entry = last_entry(path)
        assert entry["type"] == "context_edit" and entry["targetId"] == "u3" and entry["replacement"] is None
        with reopen(path) as session:
            assert "u3" not in [m.source_id for m in project(session.index).messages]
        assert any("[hidden] [by user] Actually, explain" in x for x in app.session_tree.visible_labels())


async def test_replace_opens_an_editor_prefilled_and_appends_the_replacement(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a5")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditorScreen), "editor open")
        editor = app.screen.query_one("#editor-text")
        assert editor.text == "The input had a trailing newline."  # type: ignore[attr-defined]
        editor.load_text("The input ended with a newline.")  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "replaced" in row_for(app, "a5"), "panel shows a5 replaced")
        assert "The input ended with a newline." in row_for(app, "a5")
        entry = last_entry(path)
        assert entry["type"] == "context_edit" and entry["targetId"] == "a5"
        assert entry["replacement"] == {
            "content": [{"type": "text", "text": "The input ended with a newline."}]
        }
        # replacing again starts from what the model sees now
        await select(pilot, app, "a5")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditorScreen), "editor open again")
        assert app.screen.query_one("#editor-text").text == "The input ended with a newline."  # type: ignore[attr-defined]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, EditorScreen), "editor closed")
    assert entry_count(path) == 13, "cancelling the editor appends nothing"


async def test_restore_undoes_a_hide(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "r1")
        await pilot.press("u")
        await wait_for(pilot, lambda: "restored" in row_for(app, "r1"), "panel shows r1 restored")
        entry = last_entry(path)
        assert entry["type"] == "context_edit" and entry["restore"] is True and entry["targetId"] == "r1"
        assert not app.panel.model or not app.panel.model.repairs, "with r1 back, no repair is needed"


async def test_hide_off_the_active_branch_is_refused_with_a_message(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.action_hide("u2")
        await pilot.pause()
        assert any("not on the active branch" in n for n in notices(app))
    assert entry_count(path) == 12


# -- pin / label / rename ----------------------------------------------------------------------


async def test_p_toggles_a_pin(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "u1")
        await pilot.press("p")
        await wait_for(pilot, lambda: app.index.is_pinned("u1"), "pinned")
        assert last_entry(path) == {**last_entry(path), "type": "pin", "targetId": "u1", "pinned": True}
        assert any("[pinned]" in x and "Fix the failing" in x for x in app.session_tree.visible_labels())
        await select(pilot, app, "u1")
        await pilot.press("p")
        await wait_for(pilot, lambda: not app.index.is_pinned("u1"), "unpinned")
        assert last_entry(path)["pinned"] is False


async def test_l_labels_the_selected_entry(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "u1")
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "prompt open")
        await pilot.press(*"start")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.index.labels.get("u1") == "start", "label appended")
        entry = last_entry(path)
        assert entry["type"] == "label" and entry["targetId"] == "u1" and entry["label"] == "start"
        assert any("#start" in x for x in app.session_tree.visible_labels())


async def test_ctrl_r_renames_the_session(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")  # in the composer Ctrl+R searches the prompt history
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "prompt open")
        await pilot.press(*"parser fix")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.index.name == "parser fix", "renamed")
        assert last_entry(path)["type"] == "session_info"
        assert "parser fix" in str(app.query_one("#sidebar-title").render())


# -- fork / export / resume / new -----------------------------------------------------------


async def test_fork_writes_a_new_file_and_opens_it(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a3")
        await pilot.press("f")
        await wait_for(pilot, lambda: app.session is not None and app.session.path != path, "fork opened")
        assert app.session is not None
        new_path = app.session.path
        assert new_path.parent == tmp_path / "sessions"
        header = json.loads(new_path.read_text().splitlines()[0])
        assert header["parentSession"] == str(path.resolve())
        ids = [r.split()[2] for r in panel_rows(app) if r.split()[0].isdigit()]
        # the fork carries the later hide of r1 (x1): its call's result is the placeholder, as in
        # the original's view (store.session.fork_entries)
        assert ids == ["u1", "a1", "added", "a2", "r2", "a3"]
    assert entry_count(path) == 12, "the original is untouched"


async def test_export_writes_the_active_branch_as_jsonl(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    out = tmp_path / "export.jsonl"
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "prompt open")
        field = app.screen.query_one("#prompt-input")
        field.value = str(out)  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_for(pilot, out.exists, "export written")
        await wait_for(
            pilot, lambda: any("Exported the active branch (jsonl)" in n for n in notices(app)), "notice"
        )
    with reopen(out) as exported, reopen(path) as original:
        mine = [(m.source_id, m.role) for m in project(exported.index).messages]
        theirs = [(m.source_id, m.role) for m in project(original.index).messages]
        assert mine == theirs


async def test_the_default_export_name_keeps_the_whole_session_file_name(tmp_path: Path) -> None:
    """pi's file names are 61 characters (``<time>_<uuid>``): the default name used to lose the
    uuid's last character to a 60-character cut meant for session names."""
    stem = "2026-12-02T04-21-25-060Z_21ff868d-6b15-4df4-b8f7-f68f4e9e8a8e"
    path = sample_session(tmp_path, f"{stem}.jsonl")
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "prompt open")
        value = str(app.screen.query_one("#prompt-input").value)  # type: ignore[attr-defined]
        assert value.endswith(f"/{stem}.html"), value


async def test_resume_picker_searches_and_opens(tmp_path: Path) -> None:
    first = sample_session(tmp_path, "2026-01-01_first.jsonl")
    other_lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "s2",
            "timestamp": "2026-01-02T00:00:00.000Z",
            "cwd": "/tmp/project",
        },
        {
            "type": "message",
            "id": "q1",
            "parentId": None,
            "timestamp": "2026-01-02T00:00:00.000Z",
            "message": {"role": "user", "content": "Write the release notes", "timestamp": 1},
        },
    ]
    second = write_lines(tmp_path / "sessions" / "2026-01-02_second.jsonl", other_lines)
    app = make_app(tmp_path, first)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), "picker open")
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        assert len(picker.shown) == 2
        await pilot.press(*"release")
        await wait_for(pilot, lambda: len(picker.shown) == 1, "filtered")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session is not None and app.session.path == second, "opened")
        assert app.chat.shown_ids == ["q1"]
        assert [r.split()[2] for r in panel_rows(app)] == ["q1"]


async def test_resume_picker_searches_full_text_and_groups_forks(tmp_path: Path) -> None:
    """The picker searches the library's index: tool output and "phrases", not only names; a
    fork (parentSession) is listed under the session it came from."""
    first = sample_session(tmp_path, "2026-01-01_first.jsonl")
    fork_lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "s3",
            "timestamp": "2026-01-03T00:00:00.000Z",
            "cwd": "/tmp/project",
            "parentSession": str(first),
        },
        {
            "type": "message",
            "id": "f1",
            "parentId": None,
            "timestamp": "2026-01-03T00:00:00.000Z",
            "message": {"role": "user", "content": "Carry on from the fork", "timestamp": 1},
        },
    ]
    fork = write_lines(tmp_path / "sessions" / "2026-01-03_fork.jsonl", fork_lines)
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), "picker open")
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        await wait_for(pilot, lambda: picker.searched == "" and len(picker.shown) == 2, "listed")
        options = picker.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [s.path for s in picker.shown] == [str(first), str(fork)]
        assert labels[1].startswith("   ⑂ Carry on from the fork")  # under its parent
        # "return int(x)" is only in a read tool's output, in the first session
        await pilot.press(*'"return int"')
        await wait_for(pilot, lambda: picker.searched == '"return int"', "searched")
        assert [s.path for s in picker.shown] == [str(first)]
        await pilot.press(*" -parser")
        await wait_for(pilot, lambda: picker.searched == '"return int" -parser', "excluded")
        assert picker.shown == []
        for _ in range(len(" -parser")):
            await pilot.press("backspace")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session is not None and app.session.path == first, "opened")


async def test_continue_opens_the_latest_session_and_new_starts_empty(tmp_path: Path) -> None:
    sample_session(tmp_path, "2026-01-01_first.jsonl")
    app = make_app(tmp_path, None, continue_last=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.session is not None and app.session.path.name == "2026-01-01_first.jsonl"
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: app.session is None, "new session")
        assert panel_rows(app) == []
        assert app.chat.shown_ids == []


# -- model / thinking / compact ------------------------------------------------------------------


async def test_model_switch_appends_model_change_and_updates_the_window(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    (tmp_path / "config.toml").write_text('[openai]\napi_key = "sk-test-not-a-real-key"\n')
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("/model openai/gpt-4o")
        await pilot.press("enter")
        await wait_for(pilot, lambda: last_entry(path)["type"] == "model_change", "model_change appended")
        assert last_entry(path)["modelId"] == "gpt-4o" and last_entry(path)["provider"] == "openai"
        await wait_for(
            pilot, lambda: app.panel.model is not None and app.panel.model.window == 128_000, "window"
        )
        assert "openai/gpt-4o" in str(app.panel.query_one("#context-summary").render())


async def test_thinking_level_from_the_key(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: app.screen.query("#choices").first() is not None, "choices open")
        await pilot.press("down", "down", "down", "down", "enter")  # off -> high
        await wait_for(pilot, lambda: last_entry(path)["type"] == "thinking_level_change", "appended")
        assert last_entry(path)["thinkingLevel"] == "high"
        assert app.projection.thinking_level == "high"
        assert "thinking high" in str(app.panel.query_one("#context-summary").render())


async def test_compact_asks_for_a_focus_and_appends_a_compaction(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    factory = ScriptedFactory()
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "focus prompt")
        # the preview: what would be folded, marked in the panel while the prompt is open
        assert "Folds" in app.screen.hint and "tokens" in app.screen.hint  # type: ignore[attr-defined]
        assert app.panel.folding and "→ summary" in row_for(app, "u1")
        await pilot.press(*"parser")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and last_entry(path)["type"] == "compaction", "compaction")
        assert factory.turns[0].focuses == ["parser"]
        assert not app.panel.folding
        rows = panel_rows(app)
        assert rows[0].split()[3] == "summarized" and "folded into the summary" in rows[0]
        assert any("summary" in r and "(compactionSummary)" in r for r in rows)
        assert any("[compaction]" in x for x in app.session_tree.visible_labels())
        assert any("Compacted" in n for n in notices(app))
        # now only the latest turn is left: the slash command and the key say so in the same words,
        # as a notice (no prompt, no model call, nothing appended)
        count = entry_count(path)
        app.composer.set_text("/compact keep the tests")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: any(NOTHING_TO_COMPACT in n for n in notices(app)), "nothing to compact"
        )
        await pilot.press("ctrl+g")
        await wait_for(
            pilot, lambda: sum(NOTHING_TO_COMPACT in n for n in notices(app)) == 2, "the same from the key"
        )
        assert not isinstance(app.screen, PromptScreen)
        assert factory.turns[0].focuses == ["parser"] and entry_count(path) == count


async def test_the_compact_slash_command_passes_its_focus_straight_through(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    factory = ScriptedFactory()
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("/compact keep the tests")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and last_entry(path)["type"] == "compaction", "compaction")
        assert factory.turns[0].focuses == ["keep the tests"]


async def test_compact_without_a_model_says_so_and_appends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("/compact")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "focus prompt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("ANTHROPIC_API_KEY" in n for n in notices(app)), "the reason")
    assert entry_count(path) == 12


# -- palette ---------------------------------------------------------------------------------


async def test_palette_runs_an_action(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a5")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Hide the selected")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "hidden" in row_for(app, "a5"), "hidden through the palette")
        assert last_entry(path)["targetId"] == "a5"


# -- sending -----------------------------------------------------------------------------------


async def test_enter_sends_and_the_reply_streams_into_the_chat_and_the_panel(tmp_path: Path) -> None:
    factory = ScriptedFactory(reply="Here is **the** answer.")
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "turn done")
        assert app.session is not None
        path = app.session.path
        assert path.parent == tmp_path / "sessions"
        with reopen(path) as session:
            roles = [e.role for e in session.index.entries]
            assert roles == ["user", "assistant"]
            assert session.index.entries[1].message["content"][0]["text"] == "Here is **the** answer."  # type: ignore[index]
        assert [r.split()[1] for r in panel_rows(app)] == ["user", "assistant"]
        assert len(app.chat.shown_ids) == 2 and app.chat.streaming is None
        assert app.composer.text == ""
        assert factory.turns[0].prompts == ["hello"]


async def test_escape_aborts_a_streaming_reply(tmp_path: Path) -> None:
    factory = ScriptedFactory(reply="a long reply that will be cut", hold=True)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set(), "streaming")
        assert app.busy
        await wait_for(pilot, lambda: app.chat.streaming is not None, "streaming widget")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.busy, "stopped")
        assert factory.turns[0].aborted
        assert app.session is not None
        assert last_entry(app.session.path)["message"]["stopReason"] == "aborted"


async def test_ctrl_c_aborts_and_actions_wait_while_streaming(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    factory = ScriptedFactory(hold=True)
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set(), "streaming")
        await app.action_hide("a5")
        await wait_for(pilot, lambda: any("streaming" in n for n in notices(app)), "refusal notice")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.busy, "stopped")
        assert factory.turns[0].aborted
    assert entry_count(path) == 14, "user + aborted assistant, no hide"


async def test_turn_error_is_visible(tmp_path: Path) -> None:
    factory = ScriptedFactory(error="overloaded: try again later")
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and app.last_error is not None, "turn done")
        assert "overloaded" in str(app.query_one("#notice").render())


async def test_without_a_model_the_app_says_how_to_configure_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.query_one("#notice").display, "notice shown at start")
        notice = str(app.query_one("#notice").render())
        assert "ANTHROPIC_API_KEY" in notice and "--base-url" in notice
        await pilot.press(*"hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("ANTHROPIC_API_KEY" in n for n in notices(app)), "cannot send")
        assert app.composer.text == "hello", "the draft is kept"
        assert app.session is None, "no empty session file is left behind"
    assert not list((tmp_path / "sessions").glob("*.jsonl"))


# -- composer -----------------------------------------------------------------------------------


async def test_composer_newlines_and_history(tmp_path: Path) -> None:
    factory = ScriptedFactory()
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"one")
        await pilot.press("ctrl+j")
        await pilot.press(*"two")
        assert app.composer.text == "one\ntwo"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "sent")
        assert factory.turns[0].prompts == ["one\ntwo"]
        await pilot.press("up")
        assert app.composer.text == "one\ntwo"
        await pilot.press("down", "down")
        assert app.composer.text == ""


# -- themes ------------------------------------------------------------------------------------


async def test_theme_switch_persists_in_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('# mine\nprovider = "openai"\n\n[models.local]\ncontext_window = 32000\n')
    app = make_app(tmp_path, None, theme=None)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "agent-dark"
        assert {"agent-dark", "agent-light"} <= set(app.available_themes)
        app.composer.set_text("/theme agent-light")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.theme == "agent-light", "theme switched")
    text = config.read_text()
    assert 'theme = "agent-light"' in text
    assert 'provider = "openai"' in text and "[models.local]" in text and "# mine" in text
    assert text.index("theme =") < text.index("[models.local]")
    again = make_app(tmp_path, None, theme=None)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == "agent-light"


# -- big sessions ----------------------------------------------------------------------------


async def test_a_20000_entry_session_opens_with_a_short_tree_and_a_pruned_chat(tmp_path: Path) -> None:
    path = linear_session(tmp_path / "big.jsonl", 20_000, forks_every=5000)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        lines = app.session_tree.visible_labels()
        assert len(lines) < 300
        assert sum("earlier entries" in x for x in lines) >= 30
        assert len(app.chat.shown_ids) == WINDOW
        await wait_for(
            pilot,
            lambda: len([r for r in panel_rows(app) if r.split()[0].isdigit()]) == 19_997,
            "the panel filled in the background",
        )
        # an old entry is revealed by expanding only its range
        assert app.session_tree.reveal("m000010")
        await wait_for(pilot, lambda: app.session_tree.cursor_entry_id == "m000010", "cursor on an old entry")
        assert len(app.session_tree.visible_labels()) < 900
        # a hide there updates the panel at once
        await app.action_hide("m000010")
        await wait_for(pilot, lambda: "hidden" in row_for(app, "m000010"), "hidden")


async def test_uncompact_continues_from_before_the_compaction(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    factory = ScriptedFactory()
    app = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("/compact the parser")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and last_entry(path)["type"] == "compaction", "compaction")
        compaction = last_entry(path)
        app.composer.set_text("/uncompact")
        await pilot.press("enter")
        await wait_for(pilot, lambda: last_entry(path)["type"] == "custom", "the leaf moved back")
        assert last_entry(path)["parentId"] == compaction["parentId"]
        assert not any("summarized" in r for r in panel_rows(app))
        assert "hidden" in row_for(app, "r1")


def test_serve_runs_the_app_in_a_browser(tmp_path: Path) -> None:
    from tests.support.serve_support import served

    with served(tmp_path) as server:
        port = server.port
        page = _get(server.url)
        assert "textual.js" in page, "textual-serve's page"
        # what the page's script does: open the websocket, and the app runs and draws through it
        screen = asyncio.run(
            _drive_served_app(
                f"ws://127.0.0.1:{port}/ws?width=160&height=50&token={server.token}",
                origin=f"http://127.0.0.1:{port}",
            )
        )
        assert "What the model sees" in screen and "typed in a browser" in screen


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


async def _drive_served_app(url: str, origin: str) -> str:
    """Connect as textual.js does, wait for the app's first screen, type a few keys; all it drew."""
    import aiohttp

    drawn = ""

    async def until(text: str) -> None:
        nonlocal drawn
        while text not in drawn:
            message = await asyncio.wait_for(ws.receive(), timeout=30)
            if message.type == aiohttp.WSMsgType.TEXT:
                drawn += message.data
            elif message.type == aiohttp.WSMsgType.BINARY:
                drawn += message.data.decode("utf-8", "replace")
            else:
                raise AssertionError(f"the websocket closed before {text!r} appeared: {message}")

    async with aiohttp.ClientSession() as client, client.ws_connect(url, origin=origin) as ws:
        await until("What the model sees")
        await ws.send_json(["stdin", "typed in a browser"])
        await until("typed in a browser")
        await ws.send_json(["stdin", "\x11"])  # ctrl+q
    return drawn


async def test_a_streamed_reply_becomes_the_messages_view_and_a_hide_redraws_it(tmp_path: Path) -> None:
    from agent_tui.tui.widgets.chat_entry import ChatEntry
    from agent_tui.tui.widgets.streaming_reply import StreamingReply

    factory = ScriptedFactory(reply="Streamed **once**.\n\nNot rendered twice.")
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "turn done")
        reply_id = app.index.leaf_id
        assert reply_id is not None
        last = list(app.chat.children)[-1]
        assert isinstance(last, StreamingReply) and last.entry is not None and last.entry.id == reply_id
        await app.action_hide(reply_id)
        await wait_for(pilot, lambda: "hidden" in row_for(app, reply_id), "hidden")
        await wait_for(
            pilot,
            lambda: any(isinstance(w, ChatEntry) and w.entry.id == reply_id for w in app.chat.children),
            "the message redrawn with its status",
        )
        assert not any(isinstance(w, StreamingReply) for w in app.chat.children)


async def test_branching_away_with_summarize_branches_offers_summarize_first(tmp_path: Path) -> None:
    from agent_tui.tui.screens.choice import ChoiceScreen

    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory(), summarize_branches=True)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the question")
        await wait_for(pilot, lambda: app.screen.answerable, "answerable")  # type: ignore[attr-defined]
        await pilot.press("enter")  # Summarize (the default with summarize_branches = true)
        await wait_for(
            pilot, lambda: not app.busy and last_entry(path)["type"] == "branch_summary", "summary"
        )
        assert last_entry(path)["parentId"] == "a2"
        assert any("(branchSummary)" in r for r in panel_rows(app))
        # "No summary" appends only the leaf move
        await select(pilot, app, "a1")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the question again")
        await wait_for(pilot, lambda: app.screen.answerable, "answerable")  # type: ignore[attr-defined]
        await pilot.press("up", "enter")
        await wait_for(pilot, lambda: last_entry(path)["type"] == "custom", "moved")
        assert last_entry(path)["parentId"] == "a1"


async def test_a_gated_tool_call_asks_in_a_modal(tmp_path: Path) -> None:
    import asyncio

    from agent_tui.agent.permissions import Permissions
    from agent_tui.tui.screens.dialog import SETTLE
    from agent_tui.tui.screens.permission import PermissionScreen

    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    request = Permissions().request_for("bash", {"command": "rm -rf build"}, str(tmp_path), "c1")
    assert request is not None
    async with app.run_test(size=SIZE) as pilot:
        answer = asyncio.create_task(app.approve(request))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        assert app.screen.shown_call == "rm -rf build"  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: app.screen.answerable, "answerable")  # type: ignore[attr-defined]
        await pilot.press("up")  # the cursor starts on deny
        await pilot.pause(SETTLE + 0.1)  # for the session: a choice the highlight has settled on
        await pilot.press("enter")
        assert await answer == "allow-session"
        enter = asyncio.create_task(app.approve(request))
        await wait_for(
            pilot, lambda: isinstance(app.screen, PermissionScreen), "the question, answered by Enter"
        )
        await wait_for(pilot, lambda: app.screen.answerable, "answerable")  # type: ignore[attr-defined]
        await pilot.press("enter")
        assert await enter == "deny"  # Deny is highlighted: an Enter runs nothing
        again = asyncio.create_task(app.approve(request))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question again")
        await pilot.press("escape")
        assert await again == "deny"
        cancelled = asyncio.create_task(app.approve(request))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "a third question")
        cancelled.cancel()  # an abort while asking closes the question
        await wait_for(pilot, lambda: not isinstance(app.screen, PermissionScreen), "the question closed")


def test_the_app_asks_by_default_and_follows_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_tui.agent.permissions import MODE_ENV, PermissionMode

    monkeypatch.delenv(MODE_ENV, raising=False)
    from agent_tui.agent.permissions import Decision, PermissionRequest
    from agent_tui.config import Config
    from agent_tui.tui.agent_bridge import ModelChoice, make_permissions

    async def approver(request: PermissionRequest) -> Decision:
        return Decision.DENY

    unset = Config(provider="openai", model="m")
    asked = make_permissions(unset, ModelChoice(approver=approver))
    assert asked.mode is PermissionMode.ASK and asked.approver is approver
    auto = make_permissions(unset, ModelChoice(permissions="auto"))
    assert auto.mode is PermissionMode.AUTO
    from_file = Config(provider="openai", model="m", permissions="read-only")
    assert make_permissions(from_file, ModelChoice()).mode is PermissionMode.READ_ONLY
    assert make_permissions(from_file, ModelChoice(permissions="auto")).mode is PermissionMode.AUTO


async def test_resume_picker_says_so_when_the_index_cannot_be_written(tmp_path: Path) -> None:
    sample_session(tmp_path, "2026-01-01_first.jsonl")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the index's folder should be")
    app = make_app(tmp_path, None, search_index=blocker / "index.sqlite3")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), "picker open")
        title = app.screen.query_one("#picker-title", Label)
        await wait_for(pilot, lambda: "cannot be used" in str(title.render()), "the error, in one line")
        assert str(blocker) in str(title.render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionPicker), "closed")
        assert app.is_running

"""The edit preview: what hide / replace / restore / pin would do, checked against doing it.

The honest check is the only one: the figures the preview shows before an action
are the figures the panel shows after it. Also the replace editor's live count, and
entries caught in a parentId cycle, which the tree shows under their own node.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from agent_tui.projection.context import project
from agent_tui.projection.preview import Change, compare, hypothetical
from agent_tui.projection.request import prepare
from agent_tui.projection.tokens import estimate_message
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.store.record import Entry
from agent_tui.store.session import DRAFT_ID, hide_fields, is_editable, pin_fields, restore_fields
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.editor import EditorScreen
from tests.support.pilot import row_for, select, wait_for
from tests.support.tui_fixtures import SIZE, make_app, sample_lines, sample_session, write_lines

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


def compacted_lines() -> list[dict[str, Any]]:
    """The sample session with a compaction after x1 that folds u1..a3 into its summary."""
    lines = sample_lines()
    lines.append(
        {
            "type": "compaction",
            "id": "k1",
            "parentId": "x1",
            "timestamp": lines[1]["timestamp"],
            "summary": "The parser bug was a missing strip; it is fixed.",
            "firstKeptEntryId": "u3",
            "tokensBefore": 120,
        }
    )
    return lines


def cycle_lines() -> list[dict[str, Any]]:
    """The sample session with a two-entry parentId cycle and an entry below it, mid-file."""
    lines = sample_lines()
    ts = lines[1]["timestamp"]

    def user(eid: str, parent: str, text: str) -> dict[str, Any]:
        message = {"role": "user", "content": text, "timestamp": 1}
        return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": message}

    cycle = [user("c1", "c2", "cycle one"), user("c2", "c1", "cycle two"), user("c3", "c2", "below it")]
    return lines[:4] + cycle + lines[4:]


def shown_ids(app: AgentTuiApp) -> list[str]:
    return [m.source_id for m in app.projection.messages]


def repairs(app: AgentTuiApp) -> Counter[str]:
    assert app.panel.model is not None
    return Counter(app.panel.model.repairs)


async def preview_shown(pilot: Pilot[None], app: AgentTuiApp, entry_id: str) -> list[str]:
    await wait_for(
        pilot,
        lambda: any(f" {entry_id}:" in line for line in app.panel.edit_preview),
        f"the preview of {entry_id}",
    )
    return app.panel.edit_preview


def assert_outcome(
    app: AgentTuiApp, change: Change, ids_before: list[str], repairs_before: Counter[str]
) -> None:
    """The panel after the action is what the preview said it would be."""
    model = app.panel.model
    assert model is not None
    assert model.total == change.tokens_after
    ids_after = shown_ids(app)
    assert [i for i in ids_before if i not in change.left_view] == [
        i for i in ids_after if i not in change.joined_view
    ]
    assert set(change.joined_view) <= set(ids_after)
    assert not set(change.left_view) & set(ids_after)
    expected = repairs_before + Counter(change.repairs_added)
    expected.subtract(Counter(change.repairs_removed))
    assert +expected == repairs(app)
    assert model.prepared is not None
    sent = {m.source_id for m in model.prepared.messages}
    assert not set(change.dropped) & sent
    assert set(change.returned) <= sent


async def test_hide_preview_equals_the_panel_after_hiding(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        lines = await preview_shown(pilot, app, "a2")
        change = app.edit_change("hide", "a2")
        assert isinstance(change, Change)
        assert change.delta < 0 and change.left_view == ["a2"]
        assert change.dropped == ["r2"], "hiding the call takes its result out of the request"
        assert (
            f"hide a2: −{-change.delta:,} tokens ({change.context_text()})"
            "; the request also leaves out 1 message (r2)" in lines
        )
        assert app.panel.model is not None and change.tokens_before == app.panel.model.total
        ids, before = shown_ids(app), repairs(app)
        await pilot.press("h")
        await wait_for(pilot, lambda: "hidden" in row_for(app, "a2"), "a2 hidden")
        assert_outcome(app, change, ids, before)
        assert any("left out r2" in r for r in change.repairs_added)
        summary = str(app.panel.query_one("#context-summary").render())
        assert f"{change.tokens_after:,} /" in summary
        # after the hide, the preview of a2 says a second hide changes nothing
        lines = await preview_shown(pilot, app, "a2")
        await wait_for(
            pilot, lambda: "hide a2: no change to the next request" in app.panel.edit_preview, "fresh preview"
        )


async def test_hiding_a_tool_result_previews_the_placeholder(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "r2")
        lines = await preview_shown(pilot, app, "r2")
        change = app.edit_change("hide", "r2")
        assert isinstance(change, Change) and change.placeholders == 1
        assert any(
            line.startswith("hide r2: −") and "adds 1 placeholder tool result" in line for line in lines
        )
        ids, before = shown_ids(app), repairs(app)
        await pilot.press("h")
        await wait_for(pilot, lambda: "hidden" in row_for(app, "r2"), "r2 hidden")
        assert_outcome(app, change, ids, before)


async def test_restore_preview_equals_the_panel_after_restoring(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "r1")  # hidden by x1: its call c1 has a placeholder result
        lines = await preview_shown(pilot, app, "r1")
        change = app.edit_change("restore", "r1")
        assert isinstance(change, Change)
        assert change.delta > 0 and change.joined_view == ["r1"] and change.placeholders == -1
        assert change.describe("restore", "r1") in lines
        assert "hide r1: no change to the next request" in lines
        unedited = app.edit_change("restore", "u1")
        assert isinstance(unedited, Change) and unedited.unchanged
        ids, before = shown_ids(app), repairs(app)
        await pilot.press("u")
        await wait_for(pilot, lambda: "restored" in row_for(app, "r1"), "r1 restored")
        assert_outcome(app, change, ids, before)


async def test_pin_preview_with_a_compaction_equals_the_panel_after_pinning(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "sessions" / "compacted.jsonl", compacted_lines())
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a1")  # folded into the summary; r1 answers its call, hidden by x1
        lines = await preview_shown(pilot, app, "a1")
        change = app.edit_change("pin", "a1")
        assert isinstance(change, Change)
        assert sorted(change.joined_view) == ["a1"], "r1 comes back with its call, but hidden by x1"
        assert change.placeholders == 1 and change.delta > 0
        assert change.describe("pin", "a1") in lines
        assert "hide / replace / restore a1" not in " ".join(lines)
        ids, before = shown_ids(app), repairs(app)
        await pilot.press("p")
        await wait_for(pilot, lambda: app.index.is_pinned("a1"), "a1 pinned")
        await wait_for(pilot, lambda: any(" a1 " in r for r in app.panel.row_lines()), "a1 in view")
        assert_outcome(app, change, ids, before)
        # outside what the compaction cuts, a pin changes nothing in the request
        nothing = app.edit_change("pin", "a5")
        assert isinstance(nothing, Change) and nothing.unchanged


async def test_the_replace_editor_counts_as_the_user_types(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a5")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditorScreen), "editor open")
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        assert app.panel.model is not None
        total = app.panel.model.total
        now = app.edit_change("replace", "a5", "The input had a trailing newline.")
        assert isinstance(now, Change) and now.delta == 0
        assert editor.count_text.startswith("replacement 10 tokens (now 10, ±0)")
        assert f"context {total:,} → {total:,}" in editor.count_text
        text = "The input had a trailing newline, which int() rejects; strip() removes it. " * 3
        area = editor.query_one("#editor-text")
        area.load_text("")  # type: ignore[attr-defined]
        await pilot.press(*"Short.")
        await wait_for(pilot, lambda: "replacement 2 tokens" in editor.count_text, "count of what was typed")
        area.load_text(text)  # type: ignore[attr-defined]
        change = app.edit_change("replace", "a5", text)
        assert isinstance(change, Change)
        expected = f"replacement {estimate_message({'content': text}):,} tokens (now 10, +"
        await wait_for(pilot, lambda: editor.count_text.startswith(expected), "count of the new text")
        assert f"context {total:,} → {change.tokens_after:,}" in editor.count_text
        ids, before = shown_ids(app), repairs(app)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "replaced" in row_for(app, "a5"), "a5 replaced")
        assert_outcome(app, change, ids, before)


def test_the_windowed_comparison_agrees_with_preparing_everything(tmp_path: Path) -> None:
    """``compare`` prepares only around the change: the same answer as the whole request."""
    for name, lines in (("plain", sample_lines()), ("compacted", compacted_lines())):
        path = write_lines(tmp_path / f"{name}.jsonl", lines)
        index = SessionIndex(read_file(path), name)
        before = project(index)
        total = sum(estimate_message(m.message) for m in before.messages)
        for target in [e for e in index.active_path() if e.id != index.leaf_id]:
            drafts = [pin_fields(target.id), pin_fields(target.id, False)]
            if is_editable(target):
                drafts += [hide_fields(target), restore_fields(target)]
            for fields in drafts:
                draft = Entry.from_data(
                    {**fields, "id": DRAFT_ID, "parentId": before.leaf_id, "timestamp": "t"}
                )
                after = hypothetical(before, draft)
                change = compare(before, after, total)
                assert change.tokens_after == sum(estimate_message(m.message) for m in after.messages)
                whole_before, whole_after = prepare(before.messages), prepare(after.messages)
                added = Counter(whole_after.repairs) - Counter(whole_before.repairs)
                removed = Counter(whole_before.repairs) - Counter(whole_after.repairs)
                assert Counter(change.repairs_added) == added, (name, target.id, fields)
                assert Counter(change.repairs_removed) == removed, (name, target.id, fields)
                synthetic = [
                    sum(1 for m in p.messages if m.source_id is None) for p in (whole_before, whole_after)
                ]
                assert change.placeholders == synthetic[1] - synthetic[0]


# -- parentId cycles -------------------------------------------------------------------------


def test_the_index_finds_a_cycle_and_what_hangs_below_it(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "cycle.jsonl", cycle_lines())
    index = SessionIndex(read_file(path), "cycle")
    assert index.detached() == {"c1", "c2", "c3"}
    assert [e.id for e in index.cycle_roots()] == ["c1"]
    assert {e.id for e in index.walk(index.cycle_roots()[0])} == {"c1", "c2", "c3"}
    index.add(
        Entry.from_data({"type": "label", "id": "c4", "parentId": "c3", "targetId": "c1", "label": "x"})
    )
    index.add(
        Entry.from_data({"type": "label", "id": "n1", "parentId": "x1", "targetId": "u1", "label": "y"})
    )
    assert index.detached() == {"c1", "c2", "c3", "c4"}, "appends below a cycle are kept track of"
    fresh = SessionIndex(read_file(path), "cycle")
    for e in index.entries[len(fresh.entries) :]:
        fresh.add(e)
    assert fresh.detached() == index.detached()


async def test_entries_in_a_parent_cycle_appear_under_a_cycle_node(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "sessions" / "cycle.jsonl", cycle_lines())
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        tree = app.session_tree
        labels = tree.visible_labels()
        assert "⚠ cycle" in labels[0], labels
        assert "3 entries in or below a parentId cycle" in labels[0]
        assert not any("cycle one" in label for label in labels), "the group starts collapsed"
        await pilot.press("f1")
        node = next(n for n in tree.root.children if n.data is not None and n.data.kind == "cycle")
        tree.move_cursor(node)
        await pilot.press("space")
        await wait_for(
            pilot, lambda: any("⑂" in x and "cycle one" in x for x in tree.visible_labels()), "cut"
        )
        branch = next(n for n in node.children)
        tree.move_cursor(branch)
        await pilot.press("space")
        await wait_for(
            pilot, lambda: any("below it" in x for x in tree.visible_labels()), "the run below the cut"
        )
        labels = tree.visible_labels()
        assert sum("cycle one" in x for x in labels) == 2, "the cut (a branch) and its entry"
        assert any("cycle two" in x and "⑂1" in x for x in labels), "c2's other child is c1: the cycle"
        await select(pilot, app, "c2")
        lines = await preview_shown(pilot, app, "c2")
        assert "not on the active branch" in lines[0]


async def test_a_preview_while_entries_arrive_says_so_and_never_raises(tmp_path: Path) -> None:
    """During a turn the session's leaf runs ahead of the view; a draft would hang below the new
    leaf. The preview must say so, not stop the app (the bench found this)."""
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        await preview_shown(pilot, app, "a2")
        assert app.session is not None
        app.session.append_message({"role": "user", "content": "arrived mid-turn", "timestamp": 5})
        assert app.index.leaf_id != app.projection.leaf_id
        change = app.edit_change("hide", "a2")
        assert isinstance(change, str) and "changing" in change
        app._show_edit_preview()
        await pilot.pause()
        assert app.is_running and any("changing" in line for line in app.panel.edit_preview)

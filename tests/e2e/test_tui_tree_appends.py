"""The session tree after a turn: appends at the leaf extend it in place, anything else rebuilds it,
and either way it shows what a fresh build shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.style import Style
from textual.cache import LRUCache
from textual.strip import Strip

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.tree_state import TreeState
from agent_tui.tui.widgets.session_tree import SessionTree
from tests.support.pilot import answer_branch_summary, select, wait_for
from tests.support.screen_text import screen_lines, visible_region
from tests.support.tui_fixtures import SIZE, ScriptedFactory, linear_session, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


Shown = tuple[list[str], dict[str, str], list[tuple[str, str | None]]]


def shown(tree: SessionTree) -> Shown:
    """The active run's entries in order (a folded range by its entries: where a tree folds may
    differ), the label of each entry shown at the top, and the other top-level nodes."""
    run: list[str] = []
    labels: dict[str, str] = {}
    others: list[tuple[str, str | None]] = []
    for node in tree.root.children:
        item = node.data
        assert item is not None
        if item.kind == "range":
            run.extend(item.ids)
        elif item.kind == "entry" and item.entry_id is not None:
            run.append(item.entry_id)
            labels[item.entry_id] = tree.render_label(node, Style(), Style()).plain
        else:
            others.append((item.kind, item.entry_id))
    return run, labels, others


def assert_same(got: Shown, want: Shown) -> None:
    assert got[0] == want[0], "the same entries, in the same order"
    assert got[2] == want[2], "the same other branches"
    common = got[1].keys() & want[1].keys()
    assert common
    assert {i: got[1][i] for i in common} == {i: want[1][i] for i in common}


def fresh(app: AgentTuiApp) -> Shown:
    """What the tree shows when built from scratch for the app's session."""
    tree = app.session_tree
    tree._rebuild(TreeState.build(app.index, app.projection))
    return shown(tree)


async def send(app: AgentTuiApp, pilot: object, text: str) -> None:
    leaf = app.index.leaf_id
    app.composer.load_text(text)
    await pilot.press("enter")  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: not app.busy and app.index.leaf_id != leaf, "the turn")  # type: ignore[arg-type]
    await wait_for(pilot, lambda: app.refreshed == (len(app.index), app.index.leaf_id), "the refresh")  # type: ignore[arg-type]


async def test_a_turn_extends_the_tree_in_place_and_shows_what_a_rebuild_shows(tmp_path: Path) -> None:
    path = linear_session(tmp_path / "sessions" / "long.jsonl", 400)  # the older entries fold into a range
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory(reply="Done."))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        tree = app.session_tree
        old_leaf = app.index.leaf_id
        assert old_leaf is not None
        kept = tree.node_for(old_leaf)
        assert kept is not None
        await send(app, pilot, "one more question")
        new_leaf = app.index.leaf_id
        assert new_leaf is not None
        # extended, not rebuilt: the old nodes are the same objects, the old leaf now continues
        assert tree.node_for(old_leaf) is kept
        assert kept.data is not None and kept.data.next_id == app.index.by_id[new_leaf].parent_id
        assert tree.cursor_entry_id == new_leaf
        extended = shown(tree)
        assert extended[0][-1] == new_leaf and "Done." in extended[1][new_leaf]
        assert_same(extended, fresh(app))


async def test_after_a_branch_the_next_turn_rebuilds_and_matches_a_fresh_tree(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory(reply="Done."))
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a3")  # a fork: a3 already has other children
        await pilot.press("enter")
        await answer_branch_summary(pilot, app)  # No summary
        await wait_for(pilot, lambda: app.index.leaf_id not in (None, "x1"), "branch appended")
        await send(app, pilot, "a question on the new branch")
        got = shown(app.session_tree)
        assert any("a question on the new branch" in label for label in got[1].values())
        assert_same(got, fresh(app))


class CountingCache(LRUCache[Any, Strip]):
    """The tree's line cache, counting the rows rendered afresh."""

    built = 0

    def set(self, key: Any, value: Strip) -> None:
        self.built += 1
        super().set(key, value)

    __setitem__ = set


def tree_rows(app: AgentTuiApp) -> list[str]:
    region = visible_region(app, app.session_tree)
    return [row[region.x : region.right] for row in screen_lines(app)[region.y : region.bottom]]


async def test_a_turn_renders_only_the_rows_it_changed_and_the_tree_reads_as_redrawn(tmp_path: Path) -> None:
    path = linear_session(tmp_path / "sessions" / "long.jsonl", 400)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory(reply="Done."))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        tree = app.session_tree
        cache = tree._line_cache = CountingCache(1024)
        tree.refresh()
        await wait_for(pilot, lambda: cache.built >= tree.size.height - 2, "the rows drawn once")
        for _ in range(4):
            await pilot.pause()
        cache.built = 0
        entries = len(app.index)
        await send(app, pilot, "one more question")
        for _ in range(4):
            await pilot.pause()
        added = len(app.index) - entries
        # the new rows, the old leaf's and the cursor's; Textual's add redrew every row shown
        assert 0 < cache.built <= added + 3 < tree.size.height - 10, cache.built
        shown_now = tree_rows(app)
        assert any("Done." in row for row in shown_now)
        tree._invalidate()  # everything drawn afresh
        await pilot.pause()
        await pilot.pause()
        assert tree_rows(app) == shown_now


async def test_a_hide_after_a_turn_shows_on_the_row(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory(reply="Done."))
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "a question")
        hidden = sum("[hidden]" in row for row in tree_rows(app))
        await select(pilot, app, "a2")
        await pilot.press("h")
        await wait_for(
            pilot, lambda: sum("[hidden]" in row for row in tree_rows(app)) == hidden + 1, "a2 marked"
        )

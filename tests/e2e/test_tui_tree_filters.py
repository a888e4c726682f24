"""pi 1.6's ``/tree`` in the session tree: filters cycled with ``t`` (all, no tools, user only,
labeled only), a search box on ``/``, label times on ``T``, and ``s`` (continue there, leaving a
branch summary), each named in the tree's bar. Snapshots at 80x24 (the tree as a drawer) and the
rows each view lists."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.widgets.tree_bar import TreeBar, TreeSearch
from tests.support.pilot import select, wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

SMALL = (80, 24)


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    """Label times are local times: one zone for every machine the snapshots are compared on."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


async def settle(pilot: Pilot[None]) -> None:
    await pilot.pause()
    pilot.app.clear_notifications()
    await pilot.pause()


def _rows(app: AgentTuiApp) -> list[str]:
    return app.session_tree.visible_labels()


def _keys(*keys: str, search: str | None = None, bar: str) -> Any:
    """Open the tree (F1), press ``keys`` in it, optionally type a search, then settle once the
    tree's bar says ``bar`` (a loaded machine draws late)."""

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: pilot.app.focused is pilot.app.session_tree, "the tree focused")  # type: ignore[attr-defined]
        await pilot.press(*keys)
        if search is not None:
            await pilot.press("slash")
            await pilot.press(*search)
            await pilot.press("enter")
        shown = pilot.app.screen.query_one(TreeBar)
        await wait_for(pilot, lambda: bar in str(shown.render()).replace("\u00a0", " "), repr(bar))
        await pilot.pause(0.2)
        await settle(pilot)

    return run_before


def _app(tmp_path: Path) -> AgentTuiApp:
    return make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())


def test_tree_filter_user_only(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(_app(tmp_path), terminal_size=SMALL, run_before=_keys("t", "t", bar="3 shown"))


def test_tree_filter_no_tools(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(_app(tmp_path), terminal_size=SMALL, run_before=_keys("t", bar="8 shown"))


def test_tree_filter_labeled_only(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(_app(tmp_path), terminal_size=SMALL, run_before=_keys("t", "t", "t", bar="1 shown"))


def test_tree_search(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(
        _app(tmp_path),
        terminal_size=SMALL,
        run_before=_keys(search="strip", bar='"strip"  T times  s/S summarize  3 shown'),
    )


def test_tree_label_times(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(_app(tmp_path), terminal_size=SMALL, run_before=_keys("T", bar="times on"))


async def test_each_filter_lists_what_it_says(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        tree = app.session_tree
        await wait_for(pilot, lambda: tree.has_focus, "the tree focused")
        bar = app.screen.query_one(TreeBar)

        def shown() -> str:
            return str(bar.render()).replace("\u00a0", " ")

        assert bar.display and "t all" in shown() and "/ search" in shown() and "s/S summarize" in shown()
        everything = _rows(app)
        await pilot.press("t")  # no tools: no tool results, no assistant message that only calls tools
        no_tools = _rows(app)
        assert not any("Edited parser.py" in r for r in no_tools) and any("Fixed:" in r for r in no_tools)
        assert not any("↳" in r for r in no_tools)  # tool results
        assert any("Now add a test" in r for r in no_tools)  # a flat list: the other branch too
        await pilot.press("t")  # user messages only, from every branch
        users = [r.split("❯ ", 1)[1] for r in _rows(app)]
        assert users == [
            "Fix the failing test in parser.py",
            "Now add a test",
            "Actually, explain the fix instead",
        ]
        assert "t user" in shown() and "3 shown" in shown()
        await pilot.press("t")  # labeled only
        (labeled,) = _rows(app)
        assert "#fixed" in labeled
        await pilot.press("t")  # all again: the tree with its branches
        assert _rows(app) == everything
        # the search box: every word, any case, across branches; Escape clears it
        await pilot.press("slash")
        search = app.screen.query_one(TreeSearch)
        await wait_for(pilot, lambda: search.has_focus, "the search box")
        await pilot.press(*"NOW test")
        await wait_for(pilot, lambda: len(_rows(app)) == 1, "one match")
        assert "Now add a test" in _rows(app)[0]
        await pilot.press("escape")
        await wait_for(pilot, lambda: tree.has_focus and _rows(app) == everything, "the search cleared")
        # label times
        await pilot.press("T")
        assert any("#fixed 1/1 00:00" in r or "#fixed 26/1/1 00:00" in r for r in _rows(app)), _rows(app)


async def test_s_continues_there_leaving_a_branch_summary(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())  # no summarize_branches: no question
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        await pilot.press("s")

        def last() -> dict[str, Any]:
            return dict(json.loads(path.read_text().splitlines()[-1]))

        await wait_for(pilot, lambda: not app.busy and last()["type"] == "branch_summary", "the summary")
        assert last()["parentId"] == "a2"


async def test_shift_s_asks_what_the_branch_summary_keeps(tmp_path: Path) -> None:
    from agent_tui.tui.screens.prompt import PromptScreen

    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "a2")
        await pilot.press("S")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the question")
        await pilot.press(*"the parser fix")
        await pilot.press("enter")

        def last() -> dict[str, Any]:
            return dict(json.loads(path.read_text().splitlines()[-1]))

        await wait_for(pilot, lambda: not app.busy and last()["type"] == "branch_summary", "the summary")
        assert last()["parentId"] == "a2" and last()["summary"].endswith("Kept: the parser fix")
        # Esc at the question moves nothing
        await select(pilot, app, "a1")
        await pilot.press("S")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the question again")
        before = path.read_bytes()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PromptScreen), "the question closed")
        assert path.read_bytes() == before

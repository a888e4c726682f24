"""The panel's two call-history views: what the latest call shared with the one before (and why
not more), and the rows sorted by carry cost on `c`."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from agent_tui.projection.call_history import calls_on_path, carry_costs
from agent_tui.store.session import Session
from tests.support.pilot import panel_rows, wait_for
from tests.support.tui_fixtures import SIZE, make_app, reopen
from tests.unit.test_call_history import reply, user

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


def _session(tmp_path: Path) -> tuple[Path, str]:
    with Session.create(tmp_path, tmp_path) as s:
        big = s.append_message(user("read this " + "q" * 2_000)).id
        s.append_message(reply("one", cache_write=500))
        s.append_message(user("short"))
        s.append_message(reply("two", cache_read=500))
        hidden = s.append_message(user("to hide " + "z" * 400)).id
        s.append_message(reply("three", cache_read=520))
        s.hide(hidden)
        s.append_message(user("four"))
        s.append_message(reply("four", cache_read=520))
        return Path(s.path), big


def _summary(app: object) -> str:
    return str(app.panel.query_one("#context-summary", Static).content)  # type: ignore[attr-defined]


async def test_the_panel_says_what_the_last_call_shared_and_sorts_by_carry_cost(tmp_path: Path) -> None:
    path, big = _session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "last call shared" in _summary(app), "the cache line")
        assert "then hidden" in _summary(app) and "cache read 520" in _summary(app)
        request_order = panel_rows(app)
        app.panel.rows_list.focus()
        await pilot.press("c")
        await wait_for(pilot, lambda: "sorted by carry cost" in _summary(app), "the carry sort")
        rows = panel_rows(app)
        with reopen(path) as session:
            carries = carry_costs(calls_on_path(session.index.active_path()))
        top = carries[0]
        assert (
            top.entry_id == big
            and f" {big} " in rows[0]
            and f"carried {top.carried_tokens:,} in 4" in rows[0]
        )
        assert rows != request_order
        await pilot.press("c")
        await wait_for(pilot, lambda: "sorted by carry cost" not in _summary(app), "back to request order")
        assert panel_rows(app) == request_order

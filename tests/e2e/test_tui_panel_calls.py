"""The panel's list of every model call on the branch (``m``): one row per call with the prefix it
shared with the call before, where they first differ, why, and the server's cache read/write; the
same reports ``agent-tui cache FILE`` prints (``projection.call_history.cache_reports``).

The session is fixed (ids, timestamps) so the 80x24 snapshot is stable. Its ids and model names
come from the file: one of each looks like Rich markup, or holds a terminal's escape, and shows as
written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from agent_tui.projection.call_history import cache_reports, calls_on_path
from agent_tui.tui.screens.text_view import TextViewScreen
from tests.support.pilot import panel_rows, wait_for
from tests.support.session_builder import TS
from tests.support.tui_fixtures import make_app, reopen, write_lines

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

MODEL = "claude-sonnet-4-5"
ODD_MODEL = "[red]evil[/red]\x1b[2J"  # a model name in the file: markup and an escape
HIDE_ID = "[b]hide"  # an entry id in the file that reads as markup


def _reply(text: str, *, model: str = MODEL, read: int = 0, write: int = 0) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "anthropic",
        "model": model,
        "usage": {"input": 40, "output": 5, "cacheRead": read, "cacheWrite": write, "totalTokens": 45},
        "stopReason": "stop",
        "timestamp": 2,
    }


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"the {name} tool", "parameters": {"type": "object"}}


def calls_lines() -> list[dict[str, Any]]:
    """Fourteen calls: a first, plain extensions, a hide, a tool added, a model change."""
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s-calls", "timestamp": TS, "cwd": "/tmp/project"}
    ]
    parent: str | None = None

    def add(eid: str, **fields: Any) -> None:
        nonlocal parent
        lines.append({"id": eid, "parentId": parent, "timestamp": TS, **fields})
        parent = eid

    def msg(eid: str, message: dict[str, Any]) -> None:
        add(eid, type="message", message=message)

    def user(eid: str, text: str) -> None:
        msg(eid, {"role": "user", "content": text, "timestamp": 1})

    msg(
        "sys1", {"role": "system", "content": "You are terse.", "toolsAdded": [_tool("read")], "timestamp": 1}
    )
    user("u1", "read this " + "q" * 2_000)
    msg("a1", _reply("one", write=560))
    user("u2", "short")
    msg("a2", _reply("two", read=560))
    user("u3", "to hide " + "z" * 400)
    msg("a3", _reply("three", read=580))
    add(HIDE_ID, type="context_edit", targetId="u3", replacement=None)
    user("u4", "four")
    msg("a4", _reply("four", read=570))
    msg("sys2", {"role": "system", "toolsAdded": [_tool("bash")], "timestamp": 1})
    user("u5", "five")
    msg("a5", _reply("five", write=600))
    user("u6", "six")
    msg("a6", _reply("six", model=ODD_MODEL))
    for n in range(7, 15):
        user(f"u{n}", f"question {n}")
        msg(f"a{n}", _reply(f"answer {n}", model=ODD_MODEL, read=600 + 10 * n))
    return lines


def calls_session(tmp_path: Path) -> Path:
    return write_lines(tmp_path / "sessions" / "calls.jsonl", calls_lines())


def _summary(app: Any) -> str:
    return str(app.panel.query_one("#context-summary", Static).content)


async def open_calls(pilot: Pilot[None]) -> None:
    """F3 opens the panel (a drawer at 80 columns) and focuses it; ``m`` lists the calls."""
    app: Any = pilot.app
    await pilot.pause()
    await pilot.press("f3")
    await wait_for(pilot, lambda: app.panel.model is not None, "the panel")
    app.panel.rows_list.focus()
    await pilot.press("m")
    await wait_for(pilot, lambda: "model calls on the branch" in _summary(app), "the calls' list")
    app.clear_notifications()
    await pilot.pause()


async def test_m_lists_every_call_as_the_cache_command_reports_it(tmp_path: Path) -> None:
    path = calls_session(tmp_path)
    app: Any = make_app(tmp_path, path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_calls(pilot)
        with reopen(path) as session:
            reports = cache_reports(calls_on_path(session.index.active_path()))
        rows = panel_rows(app)
        assert len(rows) == len(reports) == 14
        assert "14 model calls on the branch" in _summary(app)
        for number, (row, report) in enumerate(zip(rows, reports, strict=True), start=1):
            assert row.split()[:2] == [str(number), report.call.entry_id], row
            assert report.cause.kind in row
            usage = report.call.usage
            assert f" {usage.cache_read:,} {usage.cache_write:,} " in " ".join(row.split()), row
            if report.cause.kind != "first call":
                assert f"{report.shared_prefix_tokens:,} " in row, row
        kinds = [r.cause.kind for r in reports]
        assert kinds[:6] == ["first call", "none", "none", "hidden", "tool list", "model change"]
        assert set(kinds[6:]) == {"none"}
        # the hide's id and the odd model name are shown as written: no markup, no escape obeyed
        assert f"hidden ({HIDE_ID}): entry u3" in rows[3]
        assert "added bash" in rows[4]
        assert "[red]evil[/red]" in rows[5] and "\x1b" not in rows[5]
        # Enter on a row: all the report says of that call
        app.panel.rows_list.cursor = 3
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TextViewScreen), "the call's full view")
        text = app.screen.query_one(TextArea).text
        assert f"caused by the entry: {HIDE_ID}" in text and "first difference: u3" in text
        assert f"cache read {reports[3].call.usage.cache_read:,}" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TextViewScreen), "back to the panel")
        assert app.selected_id == "a4"  # the highlighted call's reply is the entry /hide... act on
        # c sorts the request's rows by carry cost instead; m again goes back to the request
        await pilot.press("c")
        await wait_for(pilot, lambda: "sorted by carry cost" in _summary(app), "the carry sort")
        await pilot.press("m")
        await wait_for(pilot, lambda: "model calls on the branch" in _summary(app), "the calls again")
        await pilot.press("m")
        await wait_for(pilot, lambda: "model calls on the branch" not in _summary(app), "the request")
        assert "sorted by carry cost" not in _summary(app)
        assert any(" u1 " in r for r in panel_rows(app))


def test_the_calls_list_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(tmp_path, calls_session(tmp_path))
    assert snap_compare(app, terminal_size=(80, 24), run_before=open_calls)


async def test_the_help_lists_the_panels_keys(tmp_path: Path) -> None:
    from agent_tui.tui.screens.help import help_rows

    app: Any = make_app(tmp_path, calls_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        panel = {r.keys: r.what for r in help_rows(app) if r.section == "In the panel"}
        assert "every model call" in panel["m"] and "what each entry cost" in panel["c"], panel

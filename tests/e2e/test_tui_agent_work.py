"""The plan (todo_write) above the composer, read from the branch when a session opens, at 80x24."""

from __future__ import annotations

from pathlib import Path

from agent_tui.store.session import Session
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import make_app


def plan_session(tmp_path: Path) -> Path:
    session = Session.create(tmp_path / "sessions", tmp_path)
    session.append_message({"role": "user", "content": "plan it", "timestamp": 1})
    todos = [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run \x1b[31mtests", "status": "pending"},
    ]
    call = {"type": "toolCall", "id": "toolu_t", "name": "todo_write", "arguments": {"todos": todos}}
    session.append_message(
        {
            "role": "assistant",
            "content": [call],
            "provider": "anthropic",
            "model": "m",
            "stopReason": "toolUse",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "timestamp": 2,
        }
    )
    session.append_message(
        {
            "role": "toolResult",
            "toolCallId": "toolu_t",
            "toolName": "todo_write",
            "content": [{"type": "text", "text": "ok"}],
            "details": {"todos": todos},
            "isError": False,
            "timestamp": 3,
        }
    )
    session.close()
    return session.path


async def test_a_resumed_sessions_plan_is_shown_above_the_composer(tmp_path: Path) -> None:
    app = make_app(tmp_path, plan_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        work = app.main_screen.agent_work
        await wait_for(pilot, lambda: work.has_class("-shown"), "the plan")
        assert work.lines() == ["[x] Read the code", "[>] Fixing the bug", "[ ] Run \\x1b[31mtests"]
        assert work.region.height == 3 and work.region.bottom <= app.main_screen.composer.region.y

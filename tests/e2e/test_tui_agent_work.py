"""The plan (todo_write) above the composer, read from the branch when a session opens, at 80x24."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_tui.agent.events import EntryAppended, Notice, SubagentEvent, TurnDone
from agent_tui.store.session import Session
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedTurns, make_app


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


@dataclass
class SubagentTurns(ScriptedTurns):
    """Two subagents report progress, then the turn waits until released."""

    subagent_done: asyncio.Event = field(default_factory=asyncio.Event)
    finish: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self, prompt: str) -> AsyncIterator[Any]:
        user = self.session.append_message({"role": "user", "content": prompt, "timestamp": 1})
        yield EntryAppended(user.id, "message")
        for call_id, about in (("toolu_a", "find the notes"), ("toolu_b", "read the \x1b[2Jlogs")):
            yield SubagentEvent(
                call_id, about, "general-purpose", f"/s/{call_id}.jsonl", Notice("x"), 1200, 0.0
            )
        self.holding.set()
        await self.release.wait()
        yield SubagentEvent(
            "toolu_a", "find the notes", "general-purpose", "/s/a", TurnDone("stop"), 1500, 0.0
        )
        self.subagent_done.set()
        await self.finish.wait()
        yield TurnDone("aborted" if self.aborted else "stop")


async def test_running_subagents_are_shown_above_the_composer_until_they_end(tmp_path: Path) -> None:
    turns: list[SubagentTurns] = []

    def factory(session: Session, choice: Any) -> SubagentTurns:
        turns.append(SubagentTurns(session))
        return turns[-1]

    app = make_app(tmp_path, agent_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(turns) and turns[0].holding.is_set(), "the subagents running")
        work = app.main_screen.agent_work
        await wait_for(pilot, lambda: len(work.lines()) == 2, "two rows")
        first, second = work.lines()
        assert "general-purpose: find the notes · 1,200 tokens" in first
        assert "\x1b" not in second and "read the \\x1b[2Jlogs" in second  # inert
        assert work.region.bottom <= app.main_screen.composer.region.y and work.region.height == 2
        turns[0].release.set()
        await wait_for(pilot, turns[0].subagent_done.is_set, "one ended")
        await wait_for(pilot, lambda: len(work.lines()) == 1, "its row gone")
        turns[0].finish.set()
        await wait_for(pilot, lambda: not app.busy, "the turn's end")
        assert work.lines() == [] and not work.has_class("-shown")  # none outlives its turn

"""Compacting a marked span (v, then Ctrl+G) runs the PreCompact hooks first, as every manual
compaction does: a hook that blocks it (a real script, exit 2) stops it before the model is asked
for a summary, the user reads why, and the session is untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.prompt import PromptScreen
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.pilot import notices, select, wait_for
from tests.support.precompact_hooks import blocking_agent, parser_session
from tests.support.tui_fixtures import SIZE, make_app, reopen

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app and a hook process


async def test_ctrl_g_on_a_marked_span_runs_precompact_hooks_that_block_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    factory, log = blocking_agent(server, tmp_path)

    path = parser_session(tmp_path / "s.jsonl", turns=3)
    before = path.read_bytes()
    server.push(anthropic_stream(text("## Goal\nthe first run")))  # what the model would say, were it asked
    app: AgentTuiApp = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "e0002")
        await pilot.press("v")
        await pilot.press("down")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the span's focus prompt")
        prompt = app.screen
        assert isinstance(prompt, PromptScreen) and "Compact e0001..e0004" in prompt.title_text
        prompt.dismiss("parser")
        blocked = "compaction blocked by a PreCompact hook: a release is being cut"
        await wait_for(pilot, lambda: blocked in notices(app), "the hook's refusal")
        await wait_for(pilot, lambda: not app.busy, "the worker done")
    assert server.requests == []  # the model was never asked for a summary
    (event,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert (event["hook_event_name"], event["trigger"], event["custom_instructions"]) == (
        "PreCompact",
        "manual",
        "parser",
    )
    assert event["transcript_path"] == str(path)
    assert path.read_bytes() == before
    with reopen(path) as session:
        assert not any(e.type == "custom" for e in session.index.entries)  # no surgery record

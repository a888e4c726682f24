"""A reviewed compaction (Ctrl+G, then Ctrl+R in the preview) runs the PreCompact hooks first, as
every manual compaction does: a hook that blocks it (a real script, exit 2) stops it before the
model is asked for a summary, and the user reads why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.editor import EditorScreen
from agent_tui.tui.screens.prompt import PromptScreen
from tests.support.fake_model_server import FakeModelServer
from tests.support.pilot import notices, wait_for
from tests.support.precompact_hooks import blocking_agent, parser_session
from tests.support.tui_fixtures import SIZE, make_app, reopen

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app and a hook process


async def test_ctrl_r_in_the_preview_runs_precompact_hooks_that_block_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    factory, log = blocking_agent(server, tmp_path)

    path = parser_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    app: AgentTuiApp = make_app(tmp_path, path, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "compaction preview")
        await pilot.press(*"parser")
        await pilot.press("ctrl+r")
        blocked = "compaction blocked by a PreCompact hook: a release is being cut"
        await wait_for(pilot, lambda: blocked in notices(app), "the hook's refusal")
        await pilot.pause()
        assert not isinstance(app.screen, EditorScreen)
        assert not app.busy
    assert server.requests == []  # the model was never asked for a summary
    (event,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert (event["hook_event_name"], event["trigger"], event["custom_instructions"]) == (
        "PreCompact",
        "manual",
        "parser",
    )
    assert path.read_bytes() == before
    with reopen(path) as session:
        assert not any(e.type == "compaction" for e in session.index.entries)

"""``/permissions`` in the app at 80x24: the rules and their files in a text view; remove one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.tui.screens.text_view import TextViewScreen
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app

pytestmark = pytest.mark.timeout(60)


async def test_permissions_lists_the_rules_and_removes_one(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    shared = project / ".claude" / "settings.json"
    shared.write_text(json.dumps({"permissions": {"allow": ["Bash(make:*)"], "deny": ["Read(.env)"]}}))
    (tmp_path / "config.toml").write_text('[permissions]\nask = ["Bash(git push:*)"]\n')
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await app.run_slash("permissions", "")
        await wait_for(pilot, lambda: isinstance(app.screen, TextViewScreen), "/permissions")
        assert isinstance(app.screen, TextViewScreen)
        text = app.screen.text
        assert f"deny   Read(.env)  {shared}" in text
        assert f"ask    Bash(git push:*)  {tmp_path / 'config.toml'}" in text
        assert "allow  Bash(make:*)" in text and "(not applied: this folder is not trusted)" in text
        await pilot.press("escape")
        await app.run_slash("permissions", "remove Read(.env)")
        await wait_for(pilot, lambda: any("removed deny Read(.env)" in n for n in notices(app)), "the notice")
        assert json.loads(shared.read_text()) == {"permissions": {"allow": ["Bash(make:*)"], "deny": []}}

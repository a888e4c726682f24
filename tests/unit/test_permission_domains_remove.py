"""/permissions lists Claude Code's sandbox.network.allowedDomains entries and removes one as it
removes a rule (agent.permission_rules.command_text: every face's /permissions)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_tui.agent.permission_rules import PermissionRules, command_text


def _rules(tmp_path: Path) -> tuple[PermissionRules, Path, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    (work / ".claude").mkdir(parents=True)
    user = home / ".claude" / "settings.json"
    user.write_text(
        json.dumps(
            {
                "theme": "dark",
                "permissions": {"allow": ["WebFetch(domain:pypi.org)"]},
                "sandbox": {"network": {"allowedDomains": ["registry.npmjs.org:443", "*.github.com"]}},
            }
        )
    )
    local = work / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"sandbox": {"network": {"allowedDomains": ["*.github.com"]}}}))
    found = PermissionRules.load(str(work), config_data={}, home=home, trusted=lambda: True)
    return found, user, local


def test_an_allowed_domains_entry_is_listed_and_removed_from_each_file(tmp_path: Path) -> None:
    found, user, local = _rules(tmp_path)
    listed = command_text(found, "")
    assert "allow  sandbox.network.allowedDomains registry.npmjs.org:443" in listed
    assert "remove HOST" in listed
    said = command_text(found, "remove *.github.com")
    assert said.count("removed sandbox.network.allowedDomains *.github.com from ") == 2
    kept = json.loads(user.read_text())
    assert kept["sandbox"]["network"]["allowedDomains"] == ["registry.npmjs.org:443"]
    assert kept["theme"] == "dark" and kept["permissions"]["allow"] == ["WebFetch(domain:pypi.org)"]
    assert json.loads(local.read_text())["sandbox"]["network"]["allowedDomains"] == []
    assert [d.text for d in found.domains] == ["registry.npmjs.org:443"]
    # as the listing writes it, too; a rule is still removed by its text
    said = command_text(found, "remove sandbox.network.allowedDomains registry.npmjs.org:443")
    assert said.startswith("removed sandbox.network.allowedDomains registry.npmjs.org:443 from ")
    assert found.domains == []
    assert command_text(found, "remove WebFetch(domain:pypi.org)").startswith("removed allow WebFetch")


def test_an_entry_that_is_not_there_is_one_line_naming_it(tmp_path: Path) -> None:
    found, user, _ = _rules(tmp_path)
    before = user.read_text()
    said = command_text(found, "remove example.org")
    assert (
        said
        == "not removed: no permission rule or allowedDomains entry 'example.org' (/permissions lists them)"
    )
    assert user.read_text() == before

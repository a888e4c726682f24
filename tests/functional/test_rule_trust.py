"""A permission rule that allows tool calls, written after the user accepted the rules (by a
``git pull``, a script, anyone), does not apply until the user accepts it: one line says so and
how (``agent-tui trust --yes``). ``~/.claude/settings.json`` gaining ``allow: ["Bash(rm:*)"]``
let ``rm -rf build`` run unasked at the next decision. Deny rules apply at once; a rule the user
keeps with "don't ask again" is accepted as written. (Issue 24, finding 2: permission rules among
the files that decide what runs.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.agent.permission_rules import PermissionRules, for_session
from agent_tui.agent.trust import TrustStore


def settings(path: Path, **rules: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": rules}))


def verdict(rules: PermissionRules, command: str, cwd: Path) -> str | None:
    ruling = rules.decide("bash", {"command": command}, str(cwd))
    return None if ruling is None else ruling.kind


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def test_a_users_allow_rule_written_since_waits_and_a_deny_applies_at_once(cwd: Path) -> None:
    user = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings(user, allow=["Bash(ls:*)"])
    first = for_session(str(cwd), None)  # the first screening accepts what is there
    assert verdict(first, "ls -la", cwd) == "allow" and first.take_warnings() == []
    settings(user, allow=["Bash(ls:*)", "Bash(rm:*)"], deny=["Bash(curl:*)"])
    for rules in (for_session(str(cwd), None), first):  # a new session, and the running one re-read
        assert verdict(rules, "rm -rf build", cwd) is None  # asked, not allowed
        assert verdict(rules, "ls -la", cwd) == "allow" and verdict(rules, "curl x", cwd) == "deny"
        (line,) = [w for w in rules.take_warnings() if "not applied" in w]
        assert "allow Bash(rm:*)" in line and "agent-tui trust --yes" in line and "\n" not in line
        assert "Bash(rm:*)" in rules.describe() and "(not applied: new since you accepted" in rules.describe()
    # accepted (what `agent-tui trust --yes` does): it applies
    from agent_tui.agent import rule_trust

    rule_trust.accept_all(TrustStore(), for_session(str(cwd), None))
    assert verdict(for_session(str(cwd), None), "rm -rf build", cwd) == "allow"


def test_a_trusted_folders_new_rule_waits_and_a_kept_rule_is_accepted(cwd: Path) -> None:
    TrustStore().remember(cwd, True)
    settings(cwd / ".claude" / "settings.json", allow=["Bash(make:*)"])
    rules = for_session(str(cwd), None)
    assert verdict(rules, "make", cwd) == "allow"
    rules.keep("Bash(npm test:*)")  # the user's "Yes, and don't ask again"
    assert verdict(rules, "npm test", cwd) == "allow"
    settings(cwd / ".claude" / "settings.json", allow=["Bash(make:*)", "Bash(git push:*)"])  # git pull
    fresh = for_session(str(cwd), None)
    assert verdict(fresh, "make", cwd) == "allow" and verdict(fresh, "npm test", cwd) == "allow"
    assert verdict(fresh, "git push --force", cwd) is None
    assert any("allow Bash(git push:*)" in w for w in fresh.take_warnings())
    TrustStore().forget(cwd)  # forgetting the folder drops its accepted rules too
    TrustStore().remember(cwd, True)
    assert verdict(for_session(str(cwd), None), "git push", cwd) == "allow"  # screened afresh


def test_agent_tui_trust_yes_accepts_them(cwd: Path, tmp_path: Path) -> None:
    user = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings(user, allow=["Bash(ls:*)"])
    for_session(str(cwd), None)
    settings(user, allow=["Bash(ls:*)", "Bash(rm:*)"])
    assert verdict(for_session(str(cwd), None), "rm x", cwd) is None
    out = subprocess.run(
        [sys.executable, "-m", "agent_tui", "trust", "--yes"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert verdict(for_session(str(cwd), None), "rm x", cwd) == "allow"


def test_a_sandbox_allowed_domain_written_since_waits_and_the_proxy_says_why(cwd: Path) -> None:
    """``sandbox.network.allowedDomains`` entries are allow rules: a new one is held (the network
    gate refuses the host, naming why), ``agent-tui trust --yes`` applies it; deny stays at once."""
    from agent_tui.agent import rule_trust
    from agent_tui.agent.sandbox_proxy import NetworkGate

    user = Path(os.environ["HOME"]) / ".claude" / "settings.json"

    def write(domains: list[str], deny: list[str] = []) -> None:  # noqa: B006
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text(
            json.dumps({"permissions": {"deny": deny}, "sandbox": {"network": {"allowedDomains": domains}}})
        )

    write(["pypi.org"])
    rules = for_session(str(cwd), None)  # the first screening accepts what is there
    gate = NetworkGate(lambda: rules)
    assert gate.decide("pypi.org", 443).allowed and rules.take_warnings() == []
    write(["pypi.org", "*.evil.example"], deny=["WebFetch(domain:pypi.org)"])
    refused = gate.decide("x.evil.example", 443)  # the running policy re-read: held, not applied
    assert not refused.allowed and "new since you accepted the rules" in refused.reason, refused
    assert not gate.decide("pypi.org", 443).allowed  # the deny rule applies at once
    assert "*.evil.example" not in gate.hosts()
    (line,) = [w for w in rules.take_warnings() if "not applied" in w]
    assert "sandbox.network.allowedDomains *.evil.example" in line and "agent-tui trust --yes" in line
    assert [w[2] for w in rules.waiting] == [
        "allow network to *.evil.example (sandbox.network.allowedDomains) — ~/.claude/settings.json"
    ]
    assert (
        "allowedDomains *.evil.example" in rules.describe() and "new since you accepted" in rules.describe()
    )
    rule_trust.accept_all(TrustStore(), for_session(str(cwd), None))
    assert NetworkGate(lambda: for_session(str(cwd), None)).decide("x.evil.example", 443).allowed

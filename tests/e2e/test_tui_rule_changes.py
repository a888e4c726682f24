"""Permission rules and sandbox allowed domains written after the user accepted the rules are held
and asked about in the app's question about changes (with hooks and MCP servers): each held rule
is listed with its file; yes applies them at once (the agent's policy reads them again), no keeps
them held and is not asked again in that session. Deny rules apply at once. (Issue 24, finding 2.)"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from agent_tui.agent import extensions, rule_trust
from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.permission_rules import PermissionRules, for_session
from agent_tui.agent.permissions import Permissions
from agent_tui.agent.trust import USER, TrustStore
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import ModelChoice, make_extensions
from agent_tui.tui.launch import start_loading
from agent_tui.tui.screens.dialog import ANSWER_GRACE, SETTLE, TYPING_GAP
from agent_tui.tui.screens.trust_changes import TrustChangesScreen
from tests.support.agent_support import make_config
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.files import write
from tests.support.pilot import wait_for
from tests.support.screen_text import screen_lines
from tests.support.tui_fixtures import make_app

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


async def send(pilot: Pilot[None], value: str) -> None:
    await pilot.press(*[{" ": "space", "/": "slash", ":": "colon"}.get(c, c) for c in value], "enter")


def user_settings(**settings: Any) -> None:
    path = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))


def app_with_rules(server: FakeModelServer, tmp_path: Path) -> tuple[Any, list[PermissionRules], Path]:
    """An app whose agents are gated by the rules of every file (the list gets each agent's)."""
    work = tmp_path / "project"
    work.mkdir()
    config_path = write(tmp_path / "config" / "config.toml", "")
    config = replace(make_config(server), config_path=config_path)
    args = argparse.Namespace()
    made: list[PermissionRules] = []

    def factory(session: Session, choice: ModelChoice) -> AgentLoop:
        assert choice.resources is not None
        permissions = Permissions()
        loop = AgentLoop(
            session,
            make_provider(config),
            [],
            config=config,
            cwd=str(work),
            resources=choice.resources.get(),
            extensions=make_extensions(config, choice, str(work)),
            permissions=permissions,
        )
        permissions.rules = for_session(str(work), config_path, lambda: loop.extensions)
        made.append(permissions.rules)
        return loop

    loading = start_loading(args, work, config_path)
    app = make_app(
        tmp_path,
        None,
        agent_factory=factory,
        resources=loading,
        model=ModelChoice(resources=loading),
        reload=lambda: start_loading(args, work, config_path),
    )
    return app, made, work


def verdict(rules: PermissionRules, command: str, cwd: Path) -> str | None:
    ruling = rules.decide("bash", {"command": command}, str(cwd))
    return None if ruling is None else ruling.kind


def domain_applies(rules: PermissionRules, entry: str) -> bool:
    return any(d.text == entry and rules.applies(d) for d in rules.domains)


async def held_question(
    server: FakeModelServer, tmp_path: Path, pilot: Pilot[None], app: Any, made: list[PermissionRules]
) -> tuple[PermissionRules, TrustChangesScreen]:
    """First turn (what is there accepted), then a rule and a domain written, then the question."""
    work = tmp_path / "project"
    await send(pilot, "hello")
    await wait_for(pilot, lambda: len(server.requests) == 1 and not app.busy, "the first turn", 30)
    (rules,) = made
    assert verdict(rules, "ls -la", work) == "allow" and domain_applies(rules, "pypi.org")
    user_settings(  # the model (or anyone) adds an allow rule, a domain and a deny rule
        permissions={"allow": ["Bash(ls:*)", "Bash(rm:*)"], "deny": ["Bash(curl:*)"]},
        sandbox={"network": {"allowedDomains": ["pypi.org", "*.evil.example"]}},
    )
    assert verdict(rules, "rm -rf build", work) is None  # held: asked, not allowed
    assert not domain_applies(rules, "*.evil.example") and domain_applies(rules, "pypi.org")
    assert verdict(rules, "curl x", work) == "deny"  # deny applies at once
    await send(pilot, "again")
    await wait_for(pilot, lambda: isinstance(app.screen, TrustChangesScreen), "the question", 30)
    await pilot.pause(0.3)
    question = app.screen
    assert isinstance(question, TrustChangesScreen)
    assert "allow Bash(rm:*) — ~/.claude/settings.json" in question.body_text, question.body_text
    assert "allow network to *.evil.example (sandbox.network.allowedDomains) — ~/.claude/settings.json" in (
        question.body_text
    )
    assert "curl" not in question.body_text and "pypi.org" not in question.body_text
    lines = screen_lines(app)
    shown = "\n".join(lines)
    assert len(lines) == 24 and "2 hooks, MCP servers or permission rules new or changed" in shown, shown
    assert "Bash(rm:*)" in shown and "Yes: load them" in shown and "No: leave them out" in shown, shown
    return rules, question


async def test_yes_applies_the_held_rule_and_domain_at_once(server: FakeModelServer, tmp_path: Path) -> None:
    extensions._shared.clear()
    user_settings(
        permissions={"allow": ["Bash(ls:*)"]}, sandbox={"network": {"allowedDomains": ["pypi.org"]}}
    )
    app, made, work = app_with_rules(server, tmp_path)
    server.push(anthropic_stream(text("hi")), anthropic_stream(text("again")))
    async with app.run_test(size=(80, 24)) as pilot:
        rules, _ = await held_question(server, tmp_path, pilot, app, made)
        await pilot.press("up", "enter")  # typed before the guard settled: no answer
        assert isinstance(app.screen, TrustChangesScreen)
        await pilot.pause(max(ANSWER_GRACE, TYPING_GAP) + 0.2)
        await pilot.press("up")
        await pilot.pause(SETTLE + 0.2)
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(server.requests) == 2 and not app.busy, "the second turn", 30)
        assert verdict(rules, "rm -rf build", work) == "allow"  # the same policy object, in force now
        assert domain_applies(rules, "*.evil.example") and not rules.held
    accepted = TrustStore().accepted(rule_trust.PREFIX + USER) or set()
    assert {"allow Bash(rm:*)", "allow sandbox.network.allowedDomains *.evil.example"} <= accepted
    assert verdict(for_session(str(work), None), "rm x", work) == "allow"  # a new session too


async def test_no_keeps_them_held_and_is_not_asked_again(server: FakeModelServer, tmp_path: Path) -> None:
    extensions._shared.clear()
    user_settings(
        permissions={"allow": ["Bash(ls:*)"]}, sandbox={"network": {"allowedDomains": ["pypi.org"]}}
    )
    app, made, work = app_with_rules(server, tmp_path)
    server.push(*[anthropic_stream(text(t)) for t in ("hi", "again", "third")])
    async with app.run_test(size=(80, 24)) as pilot:
        rules, _ = await held_question(server, tmp_path, pilot, app, made)
        await pilot.pause(max(ANSWER_GRACE, TYPING_GAP) + 0.2)
        await pilot.press("enter")  # "No" is the highlighted choice
        await wait_for(pilot, lambda: len(server.requests) == 2 and not app.busy, "the second turn", 30)
        assert verdict(rules, "rm -rf build", work) is None and not domain_applies(rules, "*.evil.example")
        await send(pilot, "third")
        await wait_for(pilot, lambda: len(server.requests) == 3 and not app.busy, "the third turn", 30)
        assert not isinstance(app.screen, TrustChangesScreen)
        assert verdict(rules, "rm -rf build", work) is None
    assert "allow Bash(rm:*)" not in (TrustStore().accepted(rule_trust.PREFIX + USER) or set())

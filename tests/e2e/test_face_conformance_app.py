"""The cross-face conformance suite's app half: the scenarios of
``tests/functional/test_face_conformance.py`` (its module docstring has the table of which scenario
runs on which face) typed into the app with Pilot, against the fake model server. The app's agent
is the session core every face drives (``create_agent_session``, as the app's default factory builds
it), its events recorded as the app is fed them; each run is compared with the scenario run through
the SDK in the same test: the same session file (modulo ids and timestamps), the same events in
the common vocabulary, the same request bodies.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from agent_tui.agent.agent_session import AgentSession, create_agent_session
from agent_tui.agent.events import AgentEvent
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import ModelChoice, load_agent_config, make_extensions, make_permissions
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.permission import PermissionScreen
from tests.functional.test_face_conformance import (
    ABORT_EVENTS,
    ABORT_PROMPT,
    BASH,
    BASH_EVENTS,
    CONFIG,
    MARKER,
    PERMISSION_PROMPT,
    PROMPT,
    PROMPT_EVENTS,
    SWITCH_EVENTS,
    THINK_EVENTS,
    THINK_PROMPT,
    Run,
    Sdk,
    check,
    permission_events,
    sdk_bash,
    sdk_mid_tool,
    sdk_permission,
    sdk_prompt,
    sdk_switch,
    sdk_thinking,
    thinking_sent,
)
from tests.support import conformance as c
from tests.support.fake_model_server import FakeModelServer
from tests.support.model_env import fake_anthropic_env
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

KEYS = {" ": "space", "/": "slash", ".": "full_stop", "?": "question_mark", "!": "exclamation_mark", "-": "minus"}


class Recording(AgentSession):
    """The session core, its runs' events kept (what the app was fed, in order)."""

    events: list[AgentEvent]

    def _tee(self, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        async def tee() -> AsyncIterator[AgentEvent]:
            async for event in events:
                self.events.append(event)
                yield event

        return tee()

    def run(self, prompt: Any) -> AsyncIterator[AgentEvent]:
        return self._tee(super().run(prompt))

    def compact(self, focus: str | None = None) -> AsyncIterator[AgentEvent]:
        return self._tee(super().compact(focus))


class AppFace:
    """The app on a project of its own (``tests.support.tui_fixtures.make_config``'s folders), its
    agent the session core built as the app's default factory builds it."""

    def __init__(
        self, server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_text: str = CONFIG
    ) -> None:
        self.server = server
        self.root = tmp_path / "app"
        self.root.mkdir()
        self.cwd = self.root / "project"
        self.cwd.mkdir()
        (self.cwd / "notes.txt").write_text(c.NOTES)
        self.config_path = self.root / "config.toml"
        self.config_path.write_text(config_text)
        fake_anthropic_env(monkeypatch, server, self.config_path)
        monkeypatch.chdir(self.cwd)
        self.start = len(server.requests)
        self.agents: list[Recording] = []

    def app(self, permissions: str = "auto", model: str | None = None) -> AgentTuiApp:
        def factory(session: Session, choice: ModelChoice) -> Recording:
            config = load_agent_config(choice)
            core = create_agent_session(
                session,
                config,
                permissions=make_permissions(config, choice),
                cwd=str(self.cwd),
                extensions=make_extensions(config, choice, str(self.cwd)),
            )
            agent = Recording(session, core.loop)
            agent.events = []
            self.agents.append(agent)
            return agent

        choice = ModelChoice(
            config_path=self.config_path, permissions=permissions, model=model, trust_file=self.root / "trust.json"
        )
        return make_app(self.root, None, agent_factory=factory, model=choice, config_path=self.config_path)

    def result(self) -> Run:
        (path,) = sorted((self.root / "sessions").rglob("*.jsonl"))
        events = [e for agent in self.agents for e in agent.events]
        return Run(path, c.agent_vocabulary(events, c.user_texts(path)), self.cwd, self.bodies())

    def bodies(self) -> list[Any]:
        return [r.body for r in self.server.requests[self.start :]]


async def type_in(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*[KEYS.get(ch, ch) for ch in text])


async def send(pilot: Pilot[None], app: AgentTuiApp, text: str) -> None:
    """Type ``text`` and Enter; until the turn it starts has ended."""
    await type_in(pilot, text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.busy, f"{text!r} to start", steps=20) if False else None
    await settled(pilot, app)


async def settled(pilot: Pilot[None], app: AgentTuiApp) -> None:
    await pilot.pause(0.1)
    await wait_for(pilot, lambda: not app.busy, "the turn to end")


@contextlib.asynccontextmanager
async def running(app: AgentTuiApp) -> AsyncIterator[Pilot[None]]:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield pilot


@pytest.fixture
def reference(server: FakeModelServer, tmp_path: Path) -> Sdk:
    return Sdk(server, tmp_path / "reference")


async def test_prompt(server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ref = await sdk_prompt(reference)
    face = AppFace(server, tmp_path, monkeypatch)
    server.push(*c.prompt_scenario())
    app = face.app()
    async with running(app) as pilot:
        await type_in(pilot, PROMPT)
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(server.requests) - face.start == 2 and not app.busy, "the turn")
    run = face.result()
    check("app", run, ref, PROMPT_EVENTS)
    assert run.bodies() == ref.bodies()

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
from agent_tui.tui.screens.dialog import ANSWER_GRACE, TYPING_GAP
from agent_tui.tui.screens.permission import PermissionScreen
from agent_tui.tui.screens.prompt import PromptScreen
from tests.functional.test_face_conformance import (
    ABORT_EVENTS,
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

KEYS = {
    " ": "space",
    "/": "slash",
    ".": "full_stop",
    "?": "question_mark",
    "!": "exclamation_mark",
    "-": "minus",
}


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
        self,
        server: FakeModelServer,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        config_text: str = CONFIG,
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
            config_path=self.config_path,
            permissions=permissions,
            model=model,
            trust_file=self.root / "trust.json",
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


async def send(pilot: Pilot[None], app: AgentTuiApp, face: AppFace, text: str, requests: int) -> None:
    """Type ``text`` and Enter; until the server has had ``requests`` requests in all and the app is idle."""
    await type_in(pilot, text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: len(face.bodies()) == requests and not app.busy, f"the turn of {text!r}")


@contextlib.asynccontextmanager
async def running(app: AgentTuiApp) -> AsyncIterator[Pilot[None]]:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield pilot


@pytest.fixture
def reference(server: FakeModelServer, tmp_path: Path) -> Sdk:
    return Sdk(server, tmp_path / "reference")


async def test_prompt(
    server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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


async def until_tool_runs(pilot: Pilot[None], face: AppFace) -> None:
    from agent_tui.agent.events import ToolStarted

    await wait_for(
        pilot,
        lambda: any(isinstance(e, ToolStarted) for a in face.agents for e in a.events),
        "the tool to start",
    )


@pytest.mark.parametrize("scenario", ["steer", "follow_up", "abort"])
async def test_mid_tool(
    scenario: str, server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.functional.test_face_conformance import FOLLOW_UP_EVENTS, MID_TOOL, STEER_EVENTS

    ref = await sdk_mid_tool(reference, scenario)
    face = AppFace(server, tmp_path, monkeypatch)
    responses, prompt, expected = MID_TOOL[scenario]
    server.push(*responses())
    app = face.app()
    async with running(app) as pilot:
        await type_in(pilot, prompt)
        await pilot.press("enter")
        await until_tool_runs(pilot, face)
        if scenario == "abort":
            await wait_for(pilot, lambda: (face.cwd / "started").exists(), "the command to run")
            await pilot.press("escape")
        else:
            await type_in(pilot, c.STEER if scenario == "steer" else c.FOLLOW_UP)
            await pilot.press("enter" if scenario == "steer" else "alt+enter")
            await wait_for(pilot, lambda: len(face.agents[-1].queue) == 1, "the message queued")
        (face.cwd / "go").touch()
        await wait_for(pilot, lambda: not app.busy and not len(face.agents[-1].queue), "the run to end")
        await pilot.pause(0.2)
    run = face.result()
    assert expected in (STEER_EVENTS, FOLLOW_UP_EVENTS, ABORT_EVENTS)
    check("app", run, ref, expected)
    assert run.bodies() == ref.bodies()


async def test_switch_model(
    server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = await sdk_switch(reference)
    face = AppFace(server, tmp_path, monkeypatch)
    server.push(*c.two_replies())
    app = face.app()
    async with running(app) as pilot:
        await type_in(pilot, "one")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: len(server.requests) - face.start == 1 and not app.busy, "the first turn"
        )
        await app.run_slash("model", c.SECOND_MODEL)
        await pilot.pause(0.2)
        await type_in(pilot, "two")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: len(server.requests) - face.start == 2 and not app.busy, "the second turn"
        )
    run = face.result()
    check("app", run, ref, SWITCH_EVENTS)
    assert [b["model"] for b in run.bodies()] == [c.FIRST_MODEL, c.SECOND_MODEL]
    assert run.bodies() == ref.bodies()


async def test_an_impossible_thinking_level_ends_as_off(
    server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = await sdk_thinking(reference)
    face = AppFace(server, tmp_path, monkeypatch)
    server.push(c.reply("Thought.", c.PLAIN_MODEL))
    app = face.app(model=c.PLAIN_MODEL)
    async with running(app) as pilot:
        await app.run_slash("thinking", "high")
        await wait_for(pilot, lambda: any("no thinking level high" in n for n in notices(app)), "the refusal")
        await type_in(pilot, THINK_PROMPT)
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(server.requests) - face.start == 1 and not app.busy, "the turn")
        assert " high" not in app.main_screen.status_line.text
    run = face.result()
    check("app", run, ref, THINK_EVENTS)
    assert thinking_sent(run.bodies()) == [(None, None)]
    assert run.bodies() == ref.bodies()


async def test_user_bash(
    server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = await sdk_bash(reference)
    face = AppFace(server, tmp_path, monkeypatch)
    server.push(c.reply("It printed hi there."))
    app = face.app()
    async with running(app) as pilot:
        await type_in(pilot, "!" + BASH)
        await pilot.press("enter")

        def ran() -> bool:
            files = list((face.root / "sessions").rglob("*.jsonl"))
            return bool(files) and "bashExecution" in files[0].read_text()

        await wait_for(pilot, ran, "the command's message")
        await type_in(pilot, "what did it print?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(server.requests) - face.start == 1 and not app.busy, "the turn")
    run = face.result()
    check("app", run, ref, BASH_EVENTS)
    assert run.bodies() == ref.bodies()


@pytest.mark.parametrize("case", ["allowed", "denied"])
async def test_permission(
    case: str, server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_tui.agent.permissions import Decision

    ref = await sdk_permission(reference, Decision.ALLOW_ONCE if case == "allowed" else Decision.DENY)
    face = AppFace(server, tmp_path, monkeypatch)
    server.push(*c.permission_scenario(MARKER))
    app = face.app(permissions="ask")
    async with running(app) as pilot:
        await type_in(pilot, PERMISSION_PROMPT)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        # no key answers in the question's first moments, nor one pressed less than TYPING_GAP after
        # the key before (it is text typed on): a pause longer than both before each press
        for _ in range(20):
            if not isinstance(app.screen, PermissionScreen):
                break
            await pilot.pause(max(ANSWER_GRACE, TYPING_GAP) + 0.3)
            await pilot.press("1" if case == "allowed" else "escape")  # 1 Yes; Esc is always No
        await wait_for(pilot, lambda: len(server.requests) - face.start == 2 and not app.busy, "the turn")
    run = face.result()
    check("app", run, ref, permission_events(case == "allowed"))
    assert (face.cwd / MARKER).exists() == (case == "allowed")
    assert run.bodies() == ref.bodies()


async def test_compact(
    server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.functional.test_face_conformance import COMPACT_EVENTS, compact_replies, sdk_compact

    ref = await sdk_compact(reference)
    face = AppFace(server, tmp_path, monkeypatch)
    server.push(*compact_replies())
    app = face.app()
    async with running(app) as pilot:
        await send(pilot, app, face, "one", 1)
        await send(pilot, app, face, "two", 2)
        await type_in(pilot, "/compact")
        await pilot.press("enter")
        # the preview asks what to focus the summary on: Enter, nothing
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the compaction preview")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(face.bodies()) == 3 and not app.busy, "the compaction")
        assert face.result().normalized()[-1]["type"] == "compaction"
    run = face.result()
    check("app", run, ref, COMPACT_EVENTS)
    assert run.bodies() == ref.bodies()


async def test_slow_mcp_server(
    server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from agent_tui.agent import extensions
    from tests.functional.test_face_conformance import MCP_EVENTS, SLOW_SERVER, sdk_mcp

    ref = await sdk_mcp(reference)
    monkeypatch.setattr(extensions, "_shared", {})  # the app's shared servers: this test's own
    face = AppFace(server, tmp_path, monkeypatch, CONFIG + c.mcp_config(SLOW_SERVER, sys.executable, 60))
    server.push(c.reply("Hi."))
    app = face.app()
    try:
        async with running(app) as pilot:
            await send(pilot, app, face, "hello", 1)
            assert [n for n in notices(app) if "MCP server" in n] == [c.SLOW_MCP_LINE]
    finally:
        manager = extensions._shared.get("app")
        if manager is not None:
            await manager.close()
    run = face.result()
    check("app", run, ref, MCP_EVENTS)
    assert run.bodies() == ref.bodies()


async def test_fork(
    server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.functional.test_face_conformance import first_reply, same_session, sdk_fork

    ref = await sdk_fork(reference)
    face = AppFace(server, tmp_path, monkeypatch)
    server.push(*c.two_replies(model=c.FIRST_MODEL))
    app = face.app()
    async with running(app) as pilot:
        await send(pilot, app, face, "one", 1)
        await send(pilot, app, face, "two", 2)
        (original,) = sorted((face.root / "sessions").rglob("*.jsonl"))
        await type_in(pilot, f"/fork {first_reply(original)}")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(n.startswith("Forked at") for n in notices(app)), "the fork")
    (fork,) = [p for p in (face.root / "sessions").rglob("*.jsonl") if p != original]
    run = Run(
        original,
        c.agent_vocabulary([e for a in face.agents for e in a.events], c.user_texts(original)),
        face.cwd,
        face.bodies(),
    )
    check("app", run, ref, SWITCH_EVENTS)
    same_session(run, ref, fork, ref.extra["fork"])
    assert c.header(fork)["parentSession"] == str(original.resolve())


async def test_a_one_line_reply_streams_in_pieces(
    server: FakeModelServer, reference: Sdk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_tui.agent.events import TextDelta
    from tests.functional.test_face_conformance import STREAM_EVENTS, one_line_reply, sdk_stream

    ref = await sdk_stream(reference)
    face = AppFace(server, tmp_path, monkeypatch)
    server.push(one_line_reply())
    app = face.app()
    async with running(app) as pilot:
        await send(pilot, app, face, "stream it", 1)
    run = face.result()
    check("app", run, ref, STREAM_EVENTS)
    pieces = sum(1 for a in face.agents for e in a.events if isinstance(e, TextDelta))
    assert pieces >= 10, f"the reply came in {pieces} pieces"

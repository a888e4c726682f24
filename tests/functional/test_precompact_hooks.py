"""PreCompact hooks block a compaction as Claude Code documents it (exit 2, or ``decision: "block"``):
the threshold's is skipped, a manual one is not made, and an overflow's recovery fails the request."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.events import CompactionFailed, CompactionStarted, TurnDone, TurnError
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.trust import TrustStore
from agent_tui.config import CompactionConfig
from agent_tui.projection.compaction import CompactionSettings
from agent_tui.projection.models import ModelInfo, register
from tests.support.agent_support import Harness
from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_error,
    anthropic_stream,
    text,
    tool_use,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]  # each hook is a shell process


@pytest.fixture(autouse=True)
def _small_windows() -> None:
    """The small-window models these tests use, for each test only (the model table is
    restored after every test; registered at import, they were in every other test's too)."""
    register(ModelInfo("anthropic", "precompact-window", 8_000, 1_000))


SUMMARY = "## Goal\nRead the files."


def blocker(tmp: Path, *, json_reply: bool = False) -> tuple[str, Path]:
    """A PreCompact hook that logs each event it gets and blocks: by exit 2 with a reason on stderr,
    or by printing ``{"decision": "block", "reason": ...}``. Returns (command, the log)."""
    log = tmp / "precompact.jsonl"
    block = (
        "print(json.dumps({'decision': 'block', 'reason': 'keep every detail'}))\n"
        if json_reply
        else "print('not in the middle of a refactor', file=sys.stderr); sys.exit(2)\n"
    )
    path = tmp / "precompact.py"
    path.write_text(
        "import json, sys\nevent = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(json.dumps(event) + '\\n')\n" + block
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}", log


def events_of(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def use(anthropic_harness: Harness, command: str) -> None:
    hooks = {"PreCompact": [{"hooks": [{"type": "command", "command": command}]}]}
    anthropic_harness.loop.extensions = Extensions(
        str(anthropic_harness.workdir),
        {"hooks": hooks},
        home=anthropic_harness.tmp / "home",
        trust_store=TrustStore(anthropic_harness.tmp / "trust.json"),
    )


@pytest.fixture
async def anthropic_harness(server: FakeModelServer, tmp_path: Path) -> AsyncIterator[Harness]:
    harness = Harness(server, tmp_path, model="precompact-window")
    settings = CompactionSettings(reserve_tokens=1_000, keep_recent_tokens=400)
    harness.config = replace(harness.config, compaction=CompactionConfig(settings))
    harness.loop = harness.new_loop()
    (harness.workdir / "a.txt").write_text("alpha line\n" * 700)  # ~2,200 tokens as a tool result
    yield harness
    await harness.close()


def compactions(anthropic_harness: Harness) -> list[dict[str, Any]]:
    return [e for e in anthropic_harness.entries() if e["type"] == "compaction"]


async def test_a_blocked_threshold_compaction_is_skipped_once_per_turn(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    command, log = blocker(anthropic_harness.tmp)
    use(anthropic_harness, command)
    server.push(
        anthropic_stream(
            tool_use("c1", "read", {"path": "a.txt"}), input_tokens=300, model="precompact-window"
        ),
        anthropic_stream(text("a.txt holds alpha lines."), input_tokens=7_200, model="precompact-window"),
    )
    events = await anthropic_harness.run("read a.txt")
    assert events[-1] == TurnDone("stop")
    assert not any(isinstance(e, CompactionStarted) for e in events) and compactions(anthropic_harness) == []
    failed = [e for e in events if isinstance(e, CompactionFailed)]
    assert failed == [
        CompactionFailed(
            "compaction blocked by a PreCompact hook: not in the middle of a refactor", blocked=True
        )
    ]
    assert len(server.requests) == 2  # no summarization request
    (event,) = events_of(log)  # asked once: not again at the turn's end
    assert event["hook_event_name"] == "PreCompact" and event["trigger"] == "auto"
    assert event["session_id"] == anthropic_harness.session.id


async def test_a_manual_compaction_is_blocked_before_any_turn_ran(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("hello to you")), anthropic_stream(text("fine")))
    await anthropic_harness.run("hello")
    await anthropic_harness.run("how are you?")
    command, log = blocker(anthropic_harness.tmp, json_reply=True)
    anthropic_harness.loop = (
        anthropic_harness.new_loop()
    )  # a fresh loop, as after a restart: /compact first, no turn has loaded the hooks
    use(anthropic_harness, command)
    requests = len(server.requests)
    events = [e async for e in anthropic_harness.loop.compact("the parser")]
    assert [e for e in events if isinstance(e, CompactionFailed)] == [
        CompactionFailed("compaction blocked by a PreCompact hook: keep every detail", blocked=True)
    ]
    assert events[-1] == TurnDone("error")
    assert compactions(anthropic_harness) == [] and len(server.requests) == requests
    (event,) = events_of(log)
    assert (event["trigger"], event["custom_instructions"]) == ("manual", "the parser")


async def test_a_blocked_overflow_compaction_fails_the_request(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("read it"), model="precompact-window"))
    await anthropic_harness.run("hello")
    command, _ = blocker(anthropic_harness.tmp)
    use(anthropic_harness, command)
    server.push(
        anthropic_error(400, "invalid_request_error", "prompt is too long: 9000 tokens > 8000 maximum")
    )
    events = await anthropic_harness.run("and now?")
    assert events[-1] == TurnDone("error")
    (error,) = [e for e in events if isinstance(e, TurnError)]
    assert "prompt is too long" in error.message
    assert error.message.endswith("a PreCompact hook blocked the compaction that would make it fit")
    assert compactions(anthropic_harness) == [] and len(server.requests) == 2

"""``[compaction] prune_before_summarizing``: the threshold prunes old tool output first and
summarizes only when that is not enough (agent loop against the fake model server)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agent_tui.agent.events import CompactionStarted, TurnDone
from agent_tui.config import CompactionConfig
from agent_tui.projection.compaction import CompactionSettings
from agent_tui.projection.context import Status, project
from agent_tui.projection.models import ModelInfo, register
from agent_tui.projection.surgery import SURGERY
from agent_tui.projection.tokens import context_tokens
from tests.support.agent_support import Harness
from tests.support.fake_model_server import Block, FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.timeout(30)


@pytest.fixture(autouse=True)
def _small_windows() -> None:
    """The small-window models these tests use, for each test only (the model table is
    restored after every test; registered at import, they were in every other test's too)."""
    register(ModelInfo("anthropic", "prune-window", 9_000, 1_000))


SETTINGS = CompactionSettings(reserve_tokens=1_000, keep_recent_tokens=400, prune_before_summarizing=True)
SUMMARY = "## Goal\nRead the files."


def _harness(
    server: FakeModelServer, tmp_path: Path, lines: int, settings: CompactionSettings = SETTINGS
) -> Harness:
    h = Harness(server, tmp_path, model="prune-window")
    h.config = replace(h.config, compaction=CompactionConfig(settings))
    h.loop = h.new_loop()
    for name in "abcde":
        (h.workdir / f"{name}.txt").write_text(f"{name} line\n" * lines)
    return h


def _reads() -> list[Block]:
    return [tool_use(f"c{i}", "read", {"path": f"{n}.txt"}) for i, n in enumerate("abcde")]


async def test_pruning_is_enough_so_nothing_is_summarized(server: FakeModelServer, tmp_path: Path) -> None:
    h = _harness(server, tmp_path, lines=600)  # five results of about 1,200 tokens
    server.push(
        anthropic_stream(*_reads(), input_tokens=300, model="prune-window"),
        anthropic_stream(text("read them all"), input_tokens=8_500, model="prune-window"),
    )
    events = await h.run("read the five files")
    assert isinstance(events[-1], TurnDone)
    assert not [e for e in events if isinstance(e, CompactionStarted)]
    assert server.pending == 0 and len(server.requests) == 2  # no summarization call
    record = next(e for e in h.entries() if e.get("customType") == SURGERY)
    assert record["data"]["author"] == "prune" and record["data"]["action"] == "prune"
    view = project(h.session.index)
    pruned = [ce.entry.id for ce in view.entries if ce.status is Status.REPLACED]
    assert pruned == record["data"]["targets"] and len(pruned) == 2  # all but the last three
    assert context_tokens(view).tokens < 9_000 - 1_000
    await h.close()


async def test_pruning_is_not_enough_so_it_summarizes_too(server: FakeModelServer, tmp_path: Path) -> None:
    h = _harness(server, tmp_path, lines=900)  # five results of about 2,300 tokens
    server.push(
        anthropic_stream(*_reads(), input_tokens=300, model="prune-window"),
        anthropic_stream(text("read them all"), input_tokens=8_500, model="prune-window"),
        anthropic_stream(text(SUMMARY), model="prune-window"),
        anthropic_stream(text("turn prefix"), model="prune-window"),
    )
    events = await h.run("read the five files")
    assert isinstance(events[-1], TurnDone)
    assert [e.reason for e in events if isinstance(e, CompactionStarted)] == ["threshold"]
    types = [e["type"] for e in h.entries()]
    assert types.index("custom", types.index("context_edit")) < types.index("compaction")
    await h.close()


async def test_without_the_setting_the_threshold_only_summarizes(
    server: FakeModelServer, tmp_path: Path
) -> None:
    h = _harness(server, tmp_path, lines=600, settings=replace(SETTINGS, prune_before_summarizing=False))
    server.push(
        anthropic_stream(*_reads(), input_tokens=300, model="prune-window"),
        anthropic_stream(text("read them all"), input_tokens=8_500, model="prune-window"),
        anthropic_stream(text(SUMMARY), model="prune-window"),
        anthropic_stream(text("turn prefix"), model="prune-window"),
    )
    events = await h.run("read the five files")
    assert [e.reason for e in events if isinstance(e, CompactionStarted)] == ["threshold"]
    assert not [e for e in h.entries() if e.get("customType") == SURGERY]
    await h.close()

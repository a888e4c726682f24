"""The app's agent built in a thread (``agent_bridge.BuiltInThread``): the event loop is never
blocked by the build, the prompt is echoed until the agent writes it, an abort during the build
stops the run once it starts, and the built agent is what everything else reaches."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_tui.agent.events import AgentEvent, EntryAppended, TextDelta, TurnDone
from agent_tui.agent.resources import Resources
from agent_tui.tui.agent_bridge import BuiltInThread


class FakeAgent:
    """Writes a model_change, the user message, then replies until aborted (or 3 deltas); as the
    loop's, an abort counts only while it runs."""

    def __init__(self) -> None:
        self.aborted = False
        self.running = False
        self.queue = "the agent's queue"
        self.resources: Any = None
        self.thread = threading.get_ident()

    def abort(self) -> None:
        self.aborted = self.running

    async def run(self, prompt: Any) -> AsyncIterator[AgentEvent]:
        self.running, self.aborted = True, False
        try:
            async for event in self._run():
                yield event
        finally:
            self.running = False

    async def _run(self) -> AsyncIterator[AgentEvent]:
        yield EntryAppended("m1", "model_change")
        yield EntryAppended("u1", "message", "user")
        for i in range(3):
            if self.aborted:
                yield TurnDone("aborted")
                return
            yield TextDelta(f"t{i}")
            await asyncio.sleep(0)
        yield TurnDone("stop")


class Echo:
    def __init__(self, log: list[str], prompt: Any) -> None:
        self.log = log
        log.append(f"echo {prompt}")

    async def show(self) -> None:
        self.log.append("show")

    async def painted(self) -> None:
        self.log.append("painted")

    async def clear(self) -> None:
        self.log.append("clear")


def _kind(event: AgentEvent) -> str:
    if isinstance(event, EntryAppended):
        return f"appended {event.type}"
    if isinstance(event, TurnDone):
        return f"done {event.stop_reason}"
    return "delta"


async def test_the_build_runs_in_a_thread_while_the_loop_goes_on_and_the_prompt_is_echoed() -> None:
    release = threading.Event()
    agents: list[FakeAgent] = []

    def build() -> FakeAgent:
        release.wait(10)  # a slow build (imports, the SDK's client)
        agents.append(FakeAgent())
        return agents[-1]

    log: list[str] = []
    turns = BuiltInThread(build, lambda prompt: Echo(log, prompt))
    ticks = 0

    async def ticking() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(ticking())
    seen: list[str] = []

    async def consume() -> None:
        async for event in turns.run("hello"):
            seen.append(_kind(event))
            log.append(_kind(event))

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.3)
    assert log[:3] == ["echo hello", "show", "painted"]  # shown before the agent exists
    assert ticks > 10  # the loop kept running while the build waited
    assert not agents
    release.set()
    await asyncio.wait_for(consumer, 10)
    ticker.cancel()
    assert agents[0].thread != threading.get_ident()  # built in another thread
    # kept last after the model_change, taken away as the user message is written, never again
    after = ["appended model_change", "show", "clear", "appended message", "delta", "delta", "delta"]
    assert log[3:] == [*after, "done stop"]
    assert seen[-1] == "done stop"


async def test_an_abort_during_the_build_stops_the_run_once_it_starts() -> None:
    release = threading.Event()
    turns = BuiltInThread(lambda: (release.wait(10), FakeAgent())[1])
    events: list[str] = []

    async def consume() -> None:
        async for event in turns.run("hi"):
            events.append(_kind(event))

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    assert turns.queue is None  # nothing can be queued yet, and asking does not wait for the build
    turns.abort()
    release.set()
    await asyncio.wait_for(consumer, 10)
    assert events[-1] == "done aborted"
    assert turns.queue == "the agent's queue"  # built: the agent's own


async def test_an_abort_while_idle_does_not_stop_the_next_run() -> None:
    turns = BuiltInThread(FakeAgent)
    assert [_kind(e) async for e in turns.run("one")][-1] == "done stop"
    turns.abort()  # (a compaction's abort: the run is the agent's own)
    assert [_kind(e) async for e in turns.run("two")][-1] == "done stop"


async def test_attributes_are_the_built_agents_and_a_failed_build_is_tried_again() -> None:
    attempts: list[float] = []

    def build() -> FakeAgent:
        attempts.append(time.monotonic())
        if len(attempts) == 1:
            raise RuntimeError("no SDK")
        return FakeAgent()

    turns = BuiltInThread(build)
    with pytest.raises(RuntimeError, match="no SDK"):
        async for _ in turns.run("hi"):
            pass
    assert getattr(turns, "queue", "none") is None  # not built: no queue
    assert [_kind(e) async for e in turns.run("again")][-1] == "done stop"
    assert len(attempts) == 2
    fresh = Resources()
    turns.resources = fresh  # what reload sets lands on the agent
    assert turns.built.resources is fresh

"""Steering and follow-up queues in the agent loop (pi's semantics), against the fake model server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.events import AgentEvent, ToolStarted, TurnDone
from agent_tui.agent.queue import MessageQueue, restored_text
from agent_tui.agent.tools.base import JSONObject, Tool, ToolContext, ToolResult
from agent_tui.agent.tools.builtin import default_tools
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.timeout(30)


class GateTool(Tool):
    """A slow tool: it runs until the test opens its gate."""

    name = "wait"
    description = "Wait for the gate"
    parameters: JSONObject = {"type": "object", "properties": {}}  # noqa: RUF012

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.started = asyncio.Event()

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        self.started.set()
        await self.gate.wait()
        return ToolResult.text("waited")


@pytest.fixture
async def gh(server: FakeModelServer, tmp_path: Path) -> AsyncIterator[tuple[Harness, GateTool]]:
    tool = GateTool()
    harness = Harness(server, tmp_path, tools=[*default_tools(), tool])
    yield harness, tool
    await harness.close()


def user_texts(body: dict[str, Any]) -> list[str]:
    out = []
    for m in body["messages"]:
        if m["role"] != "user":
            continue
        for block in (
            m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        ):
            if block.get("type") == "text":
                out.append(block["text"])
    return out


async def collect(run: AsyncIterator[AgentEvent], on_tool: Any = None) -> list[AgentEvent]:
    events = []
    async for event in run:
        events.append(event)
        if on_tool is not None and isinstance(event, ToolStarted):
            on_tool()
    return events


async def test_steering_typed_mid_tool_lands_after_the_result_and_before_the_next_call(
    gh: tuple[Harness, GateTool], server: FakeModelServer
) -> None:
    h, tool = gh
    server.push(
        anthropic_stream(tool_use("toolu_w", "wait", {})),
        anthropic_stream(text("Noted the steer.")),
    )
    run = asyncio.ensure_future(collect(h.loop.run("start")))
    await asyncio.wait_for(tool.started.wait(), 10)
    h.loop.queue.steer("use the other file")
    assert len(server.requests) == 1  # nothing is sent while the tool runs
    tool.gate.set()
    events = await run
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "stop"

    roles = [(m["role"], m.get("toolCallId")) for m in h.messages()]
    # assistant(tool call) -> its result -> the steering message -> the model's answer
    tail = roles[-4:]
    assert tail == [("assistant", None), ("toolResult", "toolu_w"), ("user", None), ("assistant", None)]
    second = server.requests[1].body["messages"]
    # the tool result and the steering text reach the model after the call that asked for it
    assert second[-2]["role"] == "assistant" and second[-2]["content"][-1]["type"] == "tool_use"
    blocks = second[-1]["content"]
    assert [b["type"] for b in blocks] == ["tool_result", "text"], blocks
    assert blocks[1]["text"] == "use the other file"
    assert "use the other file" not in json.dumps(server.requests[0].body)
    assert len(h.loop.queue) == 0
    h.assert_requests_match_context()


async def test_a_follow_up_starts_another_call_once_the_agent_would_stop(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    gate = __import__("threading").Event()
    first = anthropic_stream(text("First answer."))
    first.gate, first.gate_at = gate, 1
    server.push(first, anthropic_stream(text("Second answer.")))
    run = asyncio.ensure_future(collect(anthropic_harness.loop.run("one")))
    while not server.requests:
        await asyncio.sleep(0.01)
    anthropic_harness.loop.queue.follow_up("and then two")
    gate.set()
    events = await run
    assert isinstance(events[-1], TurnDone)
    assert len(server.requests) == 2
    assert user_texts(server.requests[1].body)[-1] == "and then two"
    assert [m["role"] for m in anthropic_harness.messages()][-4:] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    anthropic_harness.assert_requests_match_context()


async def test_one_at_a_time_delivers_one_steering_message_per_model_call(
    gh: tuple[Harness, GateTool], server: FakeModelServer
) -> None:
    h, tool = gh
    server.push(
        anthropic_stream(tool_use("toolu_w", "wait", {})),
        anthropic_stream(text("got a")),
        anthropic_stream(text("got b")),
    )
    run = asyncio.ensure_future(collect(h.loop.run("go")))
    await asyncio.wait_for(tool.started.wait(), 10)
    h.loop.queue.steer("a")
    h.loop.queue.steer("b")
    tool.gate.set()
    await run
    assert len(server.requests) == 3
    assert user_texts(server.requests[1].body)[-1] == "a"
    assert user_texts(server.requests[2].body)[-1] == "b"


async def test_all_mode_delivers_every_steering_message_at_once(
    gh: tuple[Harness, GateTool], server: FakeModelServer
) -> None:
    h, tool = gh
    h.loop.queue.steering_mode = "all"
    server.push(anthropic_stream(tool_use("toolu_w", "wait", {})), anthropic_stream(text("got both")))
    run = asyncio.ensure_future(collect(h.loop.run("go")))
    await asyncio.wait_for(tool.started.wait(), 10)
    h.loop.queue.steer("a")
    h.loop.queue.steer("b")
    tool.gate.set()
    await run
    assert len(server.requests) == 2
    assert user_texts(server.requests[1].body)[-2:] == ["a", "b"]


async def test_abort_leaves_queued_messages_queued_for_the_face_to_return(
    gh: tuple[Harness, GateTool], server: FakeModelServer
) -> None:
    h, tool = gh
    server.push(anthropic_stream(tool_use("toolu_w", "wait", {})))
    run = asyncio.ensure_future(collect(h.loop.run("go")))
    await asyncio.wait_for(tool.started.wait(), 10)
    h.loop.queue.steer("steer me")
    h.loop.queue.follow_up("later")
    h.loop.abort()
    events = await run
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "aborted"
    assert len(server.requests) == 1
    assert "steer me" not in json.dumps(h.entries())
    taken = h.loop.queue.take_all()
    assert [m.text for m in taken] == ["steer me", "later"]
    assert restored_text(taken, "draft") == "steer me\n\nlater\n\ndraft"


def test_queue_modes_remove_and_order() -> None:
    q = MessageQueue()
    changes: list[int] = []
    q.on_change = lambda: changes.append(len(q))
    f = q.follow_up("f1")
    s1 = q.steer("s1")
    q.steer("s2")
    assert [m.text for m in q.items()] == ["s1", "s2", "f1"]
    assert q.remove(s1.id) is s1 and q.remove(s1.id) is None
    assert [m.text for m in q.drain("steer")] == ["s2"]
    assert q.drain("steer") == []
    assert [m.text for m in q.drain("follow_up")] == [f.text]
    assert changes == [1, 2, 3, 2, 1, 0]
    with pytest.raises(ValueError):
        MessageQueue("sometimes")

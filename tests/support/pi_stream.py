"""Checks that a list of records is a valid pi 1.6 JSON event stream (docs/JSON.md), as a tool written
for ``pi --mode json`` would read it: the order of the lifecycle records, and that the deltas
rebuild every assistant message's blocks."""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]

EVENT_TYPES = {
    "agent_start",
    "agent_end",
    "agent_settled",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "compaction_start",
    "compaction_end",
    "auto_retry_start",
    "auto_retry_end",
    "entry_appended",
    "queue_update",
    "session_info_changed",
    "thinking_level_changed",
    "bash_execution_update",
}
ASSISTANT_EVENTS = {
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "toolcall_start",
    "toolcall_delta",
    "toolcall_end",
}


def check_stream(records: list[Record]) -> None:
    """Raise AssertionError unless ``records`` (session events only: no header, no responses) are in
    a valid order: runs open with agent_start and close with agent_end then agent_settled; turns
    nest in runs; messages in turns; message_update only inside an assistant message, delta-only,
    and its deltas rebuild what ``*_end`` and ``message_end`` say, its ``message_start`` carries the
    message's timestamp; tool executions start before they end, and their toolResult message comes
    after the end."""
    in_agent = in_turn = False
    assistant: Record | None = None  # the assistant message being streamed: {index: text}
    blocks: dict[int, str] = {}
    started_blocks: set[int] = set()
    ended_blocks: dict[int, Any] = {}
    tools: set[str] = set()
    finished_tools: set[str] = set()
    settled_after_end = True
    for n, r in enumerate(records):
        kind = r["type"]
        where = f"record {n} ({kind})"
        assert kind in EVENT_TYPES, where
        if kind == "agent_start":
            assert not in_agent and settled_after_end, where
            in_agent, settled_after_end = True, False
        elif kind == "agent_end":
            assert in_agent and not in_turn and assistant is None, where
            assert isinstance(r["messages"], list) and isinstance(r["willRetry"], bool), where
            in_agent = False
            settled_after_end = r["willRetry"]  # a retry opens a new run without settling
        elif kind == "agent_settled":
            assert not in_agent and not settled_after_end, where
            assert isinstance(r["aborted"], bool), where
            settled_after_end = True
        elif kind == "turn_start":
            assert in_agent and not in_turn, where
            in_turn = True
        elif kind == "turn_end":
            assert in_turn and assistant is None, where
            assert isinstance(r["toolResults"], list), where
            in_turn = False
        elif kind == "message_start":
            assert in_turn and assistant is None, where
            if r["message"]["role"] == "assistant":
                assistant, blocks, started_blocks, ended_blocks = r["message"], {}, set(), {}
        elif kind == "message_update":
            assert assistant is not None, where
            assert set(r) == {"type", "usage", "assistantMessageEvent"}, where  # delta-only
            event = r["assistantMessageEvent"]
            assert event["type"] in ASSISTANT_EVENTS and "partial" not in event, where
            index = event["contentIndex"]
            if event["type"].endswith("_start"):
                assert index not in started_blocks, where
                started_blocks.add(index)
                blocks[index] = ""
            elif event["type"].endswith("_delta"):
                assert index in started_blocks and index not in ended_blocks, where
                blocks[index] += event["delta"]
            else:
                assert index in started_blocks and index not in ended_blocks, where
                ended_blocks[index] = event.get("content", event.get("toolCall"))
        elif kind == "message_end":
            message = r["message"]
            if message["role"] == "assistant":
                assert assistant is not None, where
                # message_start announced the message with the timestamp it has (pi's partial does)
                assert assistant["timestamp"] == message["timestamp"], (
                    f"{where}: message_start at {assistant['timestamp']}, the message at {message['timestamp']}"
                )
                content = message["content"]
                assert sorted(ended_blocks) == list(range(len(content))), where
                for index, block in enumerate(content):
                    if block["type"] == "toolCall":
                        assert ended_blocks[index] == block, where
                    else:
                        text = block.get("text", block.get("thinking"))
                        assert ended_blocks[index] == text, where
                        assert blocks[index] == text, (
                            f"{where}: deltas rebuild {blocks[index]!r}, not {text!r}"
                        )
                assistant = None
            else:
                assert assistant is None and in_turn, where
                if message["role"] == "toolResult":
                    assert message["toolCallId"] in finished_tools, where
        elif kind == "tool_execution_start":
            assert in_turn and assistant is None and r["toolCallId"] not in tools, where
            tools.add(r["toolCallId"])
        elif kind == "tool_execution_update":  # between its start and its end
            assert r["toolCallId"] in tools and r["toolCallId"] not in finished_tools, where
            assert isinstance(r["partialResult"]["content"], list) and isinstance(r["args"], dict), where
        elif kind == "tool_execution_end":
            assert r["toolCallId"] in tools and r["toolCallId"] not in finished_tools, where
            assert set(r["result"]) >= {"content", "details"} and isinstance(r["isError"], bool), where
            finished_tools.add(r["toolCallId"])
    assert not in_agent and not in_turn and assistant is None and settled_after_end, (
        "the stream did not settle"
    )
    assert tools == finished_tools, "a tool execution never ended"


def of_type(records: list[Record], kind: str) -> list[Record]:
    return [r for r in records if r.get("type") == kind]


def text_of(message: Record) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")

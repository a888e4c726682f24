"""What the editor is told: tool calls as ACP tool-call updates, a session's history as a replay.

Pure functions of the loop's events and the session's entries (no I/O). Tool calls keep the
model's call id as their ACP ``toolCallId``; their output is read back from the ``toolResult``
entry, so the editor shows what the session holds (redacted as every append is). Titles and
raw inputs come from the model's arguments and are redacted here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandInput,
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
    UnstructuredCommandInput,
    UserMessageChunk,
)

from agent_tui.projection.todos import TODO_TOOL, latest_todos
from agent_tui.projection.tool_facts import tool_facts
from agent_tui.store.index import SessionIndex
from agent_tui.store.record import JSONObject
from agent_tui.store.redact import redact_text, redact_value
from agent_tui.terminal_text import cut

Update = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
)
ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

TITLE_LIMIT = 160


def tool_kind(name: str) -> ToolKind:
    """What the editor shows the call as: the tool's ``acp_kind`` (``other`` for one with no facts)."""
    return tool_facts(name).acp_kind


def tool_title(name: str, arguments: Mapping[str, Any] | None) -> str:
    """One line: the tool and what it works on (``bash npm test``, ``read src/app.py``)."""
    args = arguments or {}
    key = tool_facts(name).title_argument
    detail = str(args.get(key, "")) if key else ""
    detail = cut(" ".join(detail.split()), TITLE_LIMIT, "...")
    return redact_text(f"{name} {detail}".rstrip())[0]


def tool_locations(name: str, arguments: Mapping[str, Any] | None, cwd: str) -> list[ToolCallLocation] | None:
    """The file a call reads or changes (editors follow it), as an absolute path."""
    args = arguments or {}
    facts = tool_facts(name)
    named = facts.path_argument if facts.reads_file or facts.file_effect == "path" else None
    if named is None or not isinstance(args.get(named), str):
        return None
    path = os.path.expanduser(str(args[named]))
    path = path if os.path.isabs(path) else os.path.join(cwd, path)
    offset = args.get(facts.line_argument) if facts.line_argument else None
    line = offset if isinstance(offset, int) else None
    return [ToolCallLocation(path=os.path.normpath(path), line=line)]


def call_started(call_id: str, name: str, arguments: Mapping[str, Any] | None, cwd: str) -> ToolCallStart:
    """The call as the model wrote it; ``pending`` until it runs (a gated one waits for the user)."""
    return start_tool_call(
        call_id,
        tool_title(name, arguments),
        kind=tool_kind(name),
        status="pending",
        locations=tool_locations(name, arguments, cwd),
        raw_input=redact_value(dict(arguments)) if arguments is not None else None,
    )


def call_running(call_id: str, name: str, arguments: Mapping[str, Any], cwd: str) -> ToolCallProgress:
    """The arguments are complete and the call is under way."""
    return update_tool_call(
        call_id,
        title=tool_title(name, arguments),
        kind=tool_kind(name),
        status="in_progress",
        locations=tool_locations(name, arguments, cwd),
        raw_input=redact_value(dict(arguments)),
    )


def call_finished(
    call_id: str, name: str, arguments: Mapping[str, Any] | None, result: JSONObject | None, cwd: str
) -> ToolCallProgress:
    """``completed`` or ``failed``, with what the tool returned (the ``toolResult`` message) and, for
    ``write`` and ``edit`` that succeeded, the change as a diff."""
    is_error = bool(result.get("isError")) if result is not None else True
    content: list[ToolContent] = []
    if not is_error:
        content.extend(diff_content(name, arguments or {}, cwd))
    text = result_text(result)
    if text:
        content.append(tool_content(text_block(text)))
    return update_tool_call(
        call_id,
        status="failed" if is_error else "completed",
        content=content,
        raw_output={"isError": is_error, "text": text},
    )


def call_output(call_id: str, partial: JSONObject) -> ToolCallProgress | None:
    """A running call's output so far (a tool's partial result): its complete lines, redacted (a
    secret still being written is not cut in two); None when there is nothing to show yet."""
    text = result_text(partial)
    text = text[: text.rfind("\n") + 1]
    if not text:
        return None
    return update_tool_call(
        call_id, status="in_progress", content=[tool_content(text_block(redact_text(text)[0]))]
    )


def result_text(result: JSONObject | None) -> str:
    """The text blocks of a tool result (an image is named, not sent)."""
    if result is None:
        return ""
    content = result.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "image":
            parts.append(f"[image {block.get('mimeType', '')}]".replace(" ]", "]"))
    return "\n".join(parts)


def diff_content(name: str, arguments: Mapping[str, Any], cwd: str) -> list[ToolContent]:
    """A call shown as a diff (``ToolFacts.diff``): a ``write`` as a new file's text, an ``edit``
    as each replacement (old -> new)."""
    locations = tool_locations(name, arguments, cwd)
    if not locations:
        return []
    path = locations[0].path
    style = tool_facts(name).diff
    if style == "content" and isinstance(arguments.get("content"), str):
        return [tool_diff_content(path, redact_text(str(arguments["content"]))[0])]
    if style == "edits" and isinstance(arguments.get("edits"), list):
        out: list[ToolContent] = []
        for edit in arguments["edits"]:
            if isinstance(edit, dict) and isinstance(edit.get("newText"), str):
                old = edit.get("oldText")
                out.append(
                    tool_diff_content(
                        path,
                        redact_text(str(edit["newText"]))[0],
                        redact_text(old)[0] if isinstance(old, str) else None,
                    )
                )
        return out
    return []


# -- a loaded session, replayed --------------------------------------------------------------


def replay(index: SessionIndex, cwd: str) -> Iterator[Update]:
    """The active branch as the editor would have seen it live: user and agent messages, thinking,
    and every tool call with its result."""
    calls: dict[str, tuple[str, JSONObject]] = {}
    for entry in index.active_path():
        if entry.type != "message":
            continue
        message = entry.message
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            continue
        if role == "user":
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "text" and block.get("text"):
                    yield update_user_message_text(str(block["text"]))
        elif role == "assistant":
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "thinking" and block.get("thinking"):
                    yield update_agent_thought_text(str(block["thinking"]))
                elif kind == "text" and block.get("text"):
                    yield update_agent_message_text(str(block["text"]))
                elif kind == "toolCall":
                    call_id, name = str(block.get("id")), str(block.get("name"))
                    arguments = block.get("arguments")
                    args: JSONObject = arguments if isinstance(arguments, dict) else {}
                    calls[call_id] = (name, args)
                    yield call_started(call_id, name, args, cwd)
        elif role == "toolResult":
            call_id = str(message.get("toolCallId"))
            name, args = calls.get(call_id, (str(message.get("toolName")), {}))
            yield call_finished(call_id, name, args, message, cwd)
            if name == TODO_TOOL:
                found = plan_of(entry)
                if found is not None:
                    yield found


# -- the plan ----------------------------------------------------------------------------------


def plan_of(entry: Any) -> AgentPlanUpdate | None:
    """A ``todo_write`` result entry's list as ACP's ``plan`` update (None: not one, or failed)."""
    todos = latest_todos([entry])
    if todos is None:
        return None
    return update_plan(
        [
            plan_entry(redact_text(t["content"])[0], status=t["status"])  # type: ignore[arg-type]
            for t in todos
        ]
    )


# -- slash commands ----------------------------------------------------------------------------


def command(name: str, description: str, hint: str | None = None) -> AvailableCommand:
    entry = AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description, input=entry)


__all__ = [
    "Update",
    "call_finished",
    "call_output",
    "call_running",
    "call_started",
    "command",
    "diff_content",
    "plan_of",
    "replay",
    "result_text",
    "tool_kind",
    "tool_locations",
    "tool_title",
]

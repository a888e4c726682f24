"""The projection pipeline, following pi 1.6's buildSessionProjection.

path -> context entries (latest compaction) -> settings -> latest edit per
target -> messages, converted to model roles as pi's ``convertToLlm`` does.
Every message keeps its provenance: source entry and status.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, assert_never

import msgspec

from agent_tui.store.index import SessionIndex
from agent_tui.store.kinds import entry_type
from agent_tui.store.record import Entry, JSONObject, decode_json

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"

MODEL_ROLES = frozenset({"user", "assistant", "toolResult", "system"})
_EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})


class Status(StrEnum):
    """How an entry reached the model's view."""

    KEPT = "kept"  # verbatim: no compaction on the path, or inside the latest compaction's kept range
    SUMMARY = "summary"  # a compaction or branch summary
    AFTER_COMPACTION = "after_compaction"  # verbatim, after the latest compaction
    REPLACED = "replaced"  # content swapped by a context_edit
    RESTORED = "restored"  # a context_edit put the original content back
    HIDDEN = "hidden"  # removed from the view by a context_edit (still in the file)
    PINNED = "pinned"  # before the compaction's cut, but pinned: kept verbatim after the summary
    SUPERSEDED = "superseded"  # an older compaction inside the kept range: contributes nothing


_encode_message = msgspec.json.Encoder().encode


class ProjectedMessage(msgspec.Struct, gc=False):
    """One message of the model's view, and where it came from.

    ``message`` is the message as the model gets it (roles user, assistant,
    toolResult, system), in the session's message schema. For an unchanged
    message entry it is decoded from the file only when first read, and
    ``raw`` still holds the undecoded JSON; read from the entry (``_entry``) when
    first asked for, so projecting a session opened through its sidecar reads no
    message bytes: they are read when sent, shown or counted.
    """

    source_id: str
    status: Status
    kind: str  # the message's own role before conversion: user, compactionSummary, custom, bashExecution...
    role: str
    _message: JSONObject | None = None
    _raw: msgspec.Raw | None = None
    _entry: Entry | None = None  # an unchanged message entry: ``raw`` is its ``message_raw``

    @property
    def raw(self) -> msgspec.Raw | None:
        entry = self._entry
        if entry is not None:
            self._entry = None
            raw = entry.message_raw
            if raw is None:  # decoded since it was projected (the chat showed it): its JSON again
                raw = msgspec.Raw(_encode_message(entry.message or {"role": self.role, "content": []}))
            self._raw = raw
        return self._raw

    @property
    def message(self) -> JSONObject:
        if self._message is None:
            raw = self.raw
            assert raw is not None
            value = decode_json(raw)  # a damaged payload reads as an empty message
            self._message = value if isinstance(value, dict) else {"role": self.role, "content": []}
        return self._message

    def peek_message(self) -> JSONObject:
        """:attr:`message` for one look (a token count, a check), kept by neither this message nor
        its entry: the panel reads a 1 GB session's every message once, and keeping them all decoded
        (and their bytes) would hold the whole context in memory. Decoded again on the next look."""
        if self._message is not None:
            return self._message
        entry = self._entry
        raw = entry.peek_message_raw() if entry is not None else self._raw
        if raw is None:
            return self.message  # decoded since it was projected: read it as it is
        value = decode_json(raw)
        return value if isinstance(value, dict) else {"role": self.role, "content": []}


class ContextEntry(msgspec.Struct):
    entry: Entry
    status: Status
    messages: list[ProjectedMessage]
    edit_id: str | None = None
    pinned: bool = False
    origin: Status | None = None  # the status before any edit (None: same as ``status``)


class Projection(msgspec.Struct):
    leaf_id: str | None
    path: list[Entry]
    entries: list[ContextEntry]
    messages: list[ProjectedMessage]
    model: dict[str, Any] | None = None
    thinking_level: str = "off"
    compaction_id: str | None = None
    summarized_ids: list[str] = msgspec.field(default_factory=list)


def project(index: SessionIndex, leaf_id: str | None = None) -> Projection:
    """Project the branch ending at ``leaf_id`` (default: the session's leaf)."""
    leaf = leaf_id if leaf_id is not None else index.leaf_id
    return project_path(index.path_to(leaf), leaf)


def project_path(path: Sequence[Entry], leaf_id: str | None = None) -> Projection:
    model, thinking = _settings(path)
    compaction_index = -1
    for i in range(len(path) - 1, -1, -1):
        if path[i].type == "compaction":
            compaction_index = i
            break

    pins = _pins(path)
    selected: list[tuple[Entry, Status]] = []
    summarized: list[str] = []
    compaction_id = None
    if compaction_index < 0:
        selected = [(e, Status.KEPT) for e in path]
    else:
        compaction = path[compaction_index]
        compaction_id = compaction.id
        first_kept = compaction.data.get("firstKeptEntryId")
        selected.append((compaction, Status.SUMMARY))
        found = False
        cut: list[Entry] = []
        for entry in path[:compaction_index]:
            if entry.id == first_kept:
                found = True
            if not found:
                cut.append(entry)
            elif not (entry.type == "message" and entry.role == "system"):
                selected.append((entry, Status.KEPT))
        rescued = _pinned_before_cut(cut, pins) if pins else set()
        summarized = [e.id for e in cut if e.id not in rescued]
        # agent-tui: pinned entries the cut would fold into the summary follow it verbatim
        selected[1:1] = [(e, Status.PINNED) for e in cut if e.id in rescued]
        selected.extend((e, Status.AFTER_COMPACTION) for e in path[compaction_index + 1 :])

    edits: dict[str, Entry] = {}
    for entry, _ in selected:
        if entry.type == "context_edit":
            target = entry.data.get("targetId")
            if isinstance(target, str):
                edits[target] = entry

    entries: list[ContextEntry] = []
    messages: list[ProjectedMessage] = []
    add_entry, add_message = entries.append, messages.append
    for position, (entry, status) in enumerate(selected):
        eid = entry.id
        edit = edits.get(eid) if edits else None
        if edit is None and entry.type == "message":
            role = entry.plain_role()
            if role in MODEL_ROLES:  # the common case, inlined: an unedited message passes through undecoded
                message = ProjectedMessage(eid, status, role, role, None, None, entry)
                add_entry(ContextEntry(entry, status, [message], None, eid in pins, status))
                add_message(message)
                continue
        if entry.type == "compaction" and position > 0:
            add_entry(ContextEntry(entry, Status.SUPERSEDED, []))
            continue
        ce = _context_entry(entry, status, edit, eid in pins)
        add_entry(ce)
        messages.extend(ce.messages)
    return Projection(leaf_id, list(path), entries, messages, model, thinking, compaction_id, summarized)


def _context_entry(entry: Entry, status: Status, edit: Entry | None, pinned: bool) -> ContextEntry:
    if edit is None and entry.type == "message" and (role := entry.plain_role()) in MODEL_ROLES:
        # an unedited message passes through undecoded
        message = ProjectedMessage(entry.id, status, role, role, None, None, entry)
        return ContextEntry(entry, status, [message], None, pinned, status)
    produced = entry_messages(entry, status)
    origin = status
    if edit is not None:
        produced, status = _apply_edit(produced, edit, status)
    llm = [m for m in (to_model_message(m) for m in produced) if m is not None]
    return ContextEntry(entry, status, llm, edit.id if edit is not None else None, pinned, origin)


def extend(previous: Projection, entry: Entry) -> Projection | None:
    """``previous`` plus ``entry``, a new child of its leaf, without walking the whole branch.

    Constant time for the common appends (messages, labels, settings); an edit
    re-projects its target and rebuilds the flat message list. Returns None where
    only a full projection can answer: a compaction, or a pin (which may pull an
    entry back out of a summary).
    """
    if entry.parent_id != previous.leaf_id or entry.type in ("compaction", "pin"):
        return None
    entries = previous.entries.copy()
    model, thinking = previous.model, previous.thinking_level
    if entry.type == "model_change":
        model = _model_setting(entry.data.get("provider"), entry.data.get("modelId"))
    elif entry.type == "thinking_level_change":
        thinking = str(entry.data.get("thinkingLevel"))
    elif entry.type == "message" and entry.role == "assistant":
        head = _assistant_head(entry)
        model = _model_setting(head.provider, head.model)
    status = Status.AFTER_COMPACTION if previous.compaction_id is not None else Status.KEPT
    if entry.type == "context_edit":
        target = entry.data.get("targetId")
        for i in range(len(entries) - 1, -1, -1):
            old = entries[i]
            if old.entry.id == target and old.status is not Status.SUPERSEDED:
                entries[i] = _context_entry(old.entry, old.origin or old.status, entry, old.pinned)
                break
        entries.append(ContextEntry(entry, status, [], origin=status))
        messages = [m for ce in entries for m in ce.messages]
    else:
        ce = _context_entry(entry, status, None, False)
        entries.append(ce)
        messages = previous.messages + ce.messages if ce.messages else previous.messages.copy()
    return Projection(
        entry.id,
        [*previous.path, entry],
        entries,
        messages,
        model,
        thinking,
        previous.compaction_id,
        previous.summarized_ids,
    )


class Projector:
    """Projects a growing session, extending the last projection when the session only grew by appends.

    The projection after one more append costs microseconds instead of a walk of
    the whole branch; anything else (another leaf, a compaction) projects afresh.
    """

    MAX_EXTEND = 64

    def __init__(self, index: SessionIndex) -> None:
        self.index = index
        self._last: Projection | None = None

    def project(self, leaf_id: str | None = None) -> Projection:
        leaf = leaf_id if leaf_id is not None else self.index.leaf_id
        last = self._last
        if last is not None and last.leaf_id is not None and leaf is not None:
            if leaf == last.leaf_id and last.path and self.index.by_id.get(leaf) is last.path[-1]:
                return last
            grown = self._extend(last, leaf)
            if grown is not None:
                self._last = grown
                return grown
        self._last = project(self.index, leaf)
        return self._last

    def _extend(self, last: Projection, leaf: str) -> Projection | None:
        chain: list[Entry] = []
        current = self.index.by_id.get(leaf)
        while current is not None and current.id != last.leaf_id and len(chain) < self.MAX_EXTEND:
            chain.append(current)
            current = self.index.by_id.get(current.parent_id) if current.parent_id is not None else None
        if current is None or current.id != last.leaf_id or current is not last.path[-1]:
            return None
        grown: Projection | None = last
        for entry in reversed(chain):
            grown = extend(grown, entry) if grown is not None else None
        return grown


def _pins(path: Sequence[Entry]) -> set[str]:
    """Entries pinned by the latest ``pin`` entry for them on this path (branch-relative, like edits)."""
    state: dict[str, bool] = {}
    for entry in path:
        if entry.type == "pin":
            target = entry.data.get("targetId")
            if isinstance(target, str):
                state[target] = entry.data.get("pinned", True) is not False
    return {target for target, pinned in state.items() if pinned}


def _pinned_before_cut(cut: Sequence[Entry], pins: set[str]) -> set[str]:
    """Pinned entries among ``cut``, with their tool-call partners so the pair stays valid."""
    rescued = {e.id for e in cut if e.id in pins}
    if not rescued:
        return rescued
    calls: dict[str, str] = {}  # tool call id -> assistant entry id
    results: dict[str, list[str]] = {}  # tool call id -> result entry ids
    for e in cut:
        if e.type != "message":
            continue
        message = e.message or {}
        if e.role == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "toolCall"
                    and isinstance(block.get("id"), str)
                ):
                    calls[block["id"]] = e.id
        elif e.role == "toolResult" and isinstance(message.get("toolCallId"), str):
            results.setdefault(message["toolCallId"], []).append(e.id)
    for call_id, assistant_id in calls.items():
        if assistant_id in rescued or any(r in rescued for r in results.get(call_id, [])):
            rescued.add(assistant_id)
            rescued.update(results.get(call_id, []))
    return rescued


def _settings(path: Sequence[Entry]) -> tuple[dict[str, Any] | None, str]:
    """Model and thinking level: the latest setting along the whole path wins (scanned backwards)."""
    thinking: str | None = None
    model: dict[str, Any] | None = None
    for entry in reversed(path):
        if thinking is None and entry.type == "thinking_level_change":
            thinking = str(entry.data.get("thinkingLevel"))
        elif model is None and entry.type == "model_change":
            model = _model_setting(entry.data.get("provider"), entry.data.get("modelId"))
        elif model is None and entry.type == "message" and entry.role == "assistant":
            head = _assistant_head(entry)
            model = _model_setting(head.provider, head.model)
        if thinking is not None and model is not None:
            break
    return model, thinking or "off"


def _model_setting(provider: Any, model_id: Any) -> dict[str, Any]:
    """The model setting as pi reads it, with values that are not strings (a damaged file) read as unset."""
    return {
        "provider": provider if isinstance(provider, str) else None,
        "modelId": model_id if isinstance(model_id, str) else None,
    }


class _AssistantHead(msgspec.Struct):
    provider: Any = None
    model: Any = None


_decode_assistant_head = msgspec.json.Decoder(_AssistantHead).decode


def _assistant_head(entry: Entry) -> _AssistantHead:
    raw = entry.message_raw
    if raw is not None:
        try:
            return _decode_assistant_head(raw)
        except (msgspec.DecodeError, RecursionError):
            pass  # damaged: read it through ``entry.message``, which repairs what it can
    message = entry.message or {}
    return _AssistantHead(message.get("provider"), message.get("model"))


def entry_messages(entry: Entry, status: Status) -> list[ProjectedMessage]:
    """pi's sessionEntryToContextMessages, before conversion to model roles: what the model sees
    of each kind of entry (the other kinds change settings, or nothing)."""
    kind = entry_type(entry.type)
    if kind is None:
        return []  # a type we do not know: pi skips it too
    match kind:
        case "message":
            return _message_messages(entry, status)
        case "custom_message":
            return _custom_messages(entry, status)
        case "branch_summary":
            return _branch_summary_messages(entry)
        case "compaction":
            return _compaction_messages(entry)
        case (
            "context_edit"
            | "label"
            | "session_info"
            | "model_change"
            | "thinking_level_change"
            | "pin"
            | "usage"
            | "custom"
        ):
            return []  # settings and marks: read elsewhere on the path, no message of their own
        case _:
            assert_never(kind)


def _message_messages(entry: Entry, status: Status) -> list[ProjectedMessage]:
    if entry.is_plain_message:
        role = entry.role or ""
        return [ProjectedMessage(entry.id, status, role, role, None, None, entry)]
    message = entry.message
    if message is None:
        return []
    role = entry.role or ""
    if message.get("content") is None:
        if role == "system":
            message = {**message, "content": ""}
        elif role in ("user", "assistant", "toolResult"):
            message = {**message, "content": []}
    return [ProjectedMessage(entry.id, status, role, role, message)]


def _custom_messages(entry: Entry, status: Status) -> list[ProjectedMessage]:
    data = entry.data
    content = data.get("content")
    message = {
        "role": "custom",
        "customType": data.get("customType"),
        "content": content if content is not None else [],
        "display": data.get("display"),
        "details": data.get("details"),
        "timestamp": _entry_ms(data),
    }
    return [ProjectedMessage(entry.id, status, "custom", "custom", message)]


def _branch_summary_messages(entry: Entry) -> list[ProjectedMessage]:
    data = entry.data
    if not _js_truthy(data.get("summary")):
        return []
    message = {
        "role": "branchSummary",
        "summary": data["summary"],
        "fromId": data.get("fromId"),
        "timestamp": _entry_ms(data),
    }
    return [ProjectedMessage(entry.id, Status.SUMMARY, "branchSummary", "branchSummary", message)]


def _compaction_messages(entry: Entry) -> list[ProjectedMessage]:
    data = entry.data
    summary = {
        "role": "compactionSummary",
        "tokensBefore": data.get("tokensBefore"),
        "timestamp": _entry_ms(data),
    }
    if "summary" in data:  # a missing summary reads "undefined" in pi's text, a null one "null"
        summary["summary"] = data["summary"]
    out = [ProjectedMessage(entry.id, Status.SUMMARY, "compactionSummary", "compactionSummary", summary)]
    system = data.get("systemMessage")
    if isinstance(system, dict):  # pi: any object is truthy, even {}; convertToLlm then goes by its role
        system_role = system.get("role")
        role = system_role if isinstance(system_role, str) else ""
        out.insert(0, ProjectedMessage(entry.id, Status.SUMMARY, role, role, system))
    return out


def _apply_edit(
    messages: list[ProjectedMessage], edit: Entry, status: Status
) -> tuple[list[ProjectedMessage], Status]:
    """pi's projectContextEntry: ``null`` hides, a replacement swaps content of editable roles."""
    replacement = edit.data.get("replacement")
    if replacement is None:
        return [], Status.HIDDEN
    # pi reads ``replacement.content``: undefined (no content at all) when the key or the object is missing
    has_content = isinstance(replacement, dict) and "content" in replacement
    content = replacement.get("content") if has_content else None
    new_status = Status.RESTORED if edit.data.get("restore") is True else Status.REPLACED
    out: list[ProjectedMessage] = []
    for m in messages:
        if m.role not in _EDITABLE_ROLES:
            out.append(m)
            continue
        new_content = content
        if m.role in ("assistant", "toolResult") and isinstance(content, str):
            new_content = [{"type": "text", "text": content}]
        message = {**m.message, "content": new_content}
        if not has_content:
            del message["content"]
        out.append(ProjectedMessage(m.source_id, new_status, m.kind, m.role, message))
    return out, new_status


def to_model_message(m: ProjectedMessage) -> ProjectedMessage | None:
    """pi's convertToLlm: summaries, custom and bash messages become user messages; unknown roles drop."""
    role = m.role
    if role in MODEL_ROLES:
        return m
    msg = m.message
    text: str
    if role == "bashExecution":
        if _js_truthy(msg.get("excludeFromContext")):
            return None
        content: Any = [{"type": "text", "text": bash_execution_text(msg)}]
    elif role == "custom":
        content = msg.get("content", _UNDEFINED)
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
    elif role == "branchSummary":
        text = BRANCH_SUMMARY_PREFIX + _js_field(msg, "summary") + BRANCH_SUMMARY_SUFFIX
        content = [{"type": "text", "text": text}]
    elif role == "compactionSummary":
        text = COMPACTION_SUMMARY_PREFIX + _js_field(msg, "summary") + COMPACTION_SUMMARY_SUFFIX
        content = [{"type": "text", "text": text}]
    else:
        return None
    # JSON.stringify leaves out what is undefined: a custom message without content, a message without timestamp
    message: JSONObject = {"role": "user"}
    if content is not _UNDEFINED:
        message["content"] = content
    if "timestamp" in msg:
        message["timestamp"] = msg["timestamp"]
    return ProjectedMessage(m.source_id, m.status, m.kind, "user", message)


def bash_execution_text(msg: JSONObject) -> str:
    """pi's bashExecutionToText."""
    text = f"Ran `{_js_field(msg, 'command')}`\n"
    output = msg.get("output")
    text += f"```\n{_js_string(output)}\n```" if _js_truthy(output) else "(no output)"
    exit_code = msg.get("exitCode")
    if _js_truthy(msg.get("cancelled")):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and not (type(exit_code) in (int, float) and exit_code == 0):
        text += f"\n\nCommand exited with code {_js_string(exit_code)}"
    if _js_truthy(msg.get("truncated")) and _js_truthy(msg.get("fullOutputPath")):
        text += f"\n\n[Output truncated. Full output: {_js_string(msg.get('fullOutputPath'))}]"
    return text


# -- JavaScript semantics, where pi's output depends on them ---------------------------------

_UNDEFINED: Any = object()  # a key the JSON object does not have


def _js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value: every object and array is true, even an empty one."""
    return isinstance(value, dict | list) or bool(value)


def _js_string(value: Any) -> str:
    """``String(value)`` (what a template literal interpolates) for a JSON value."""
    if value is _UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, list):
        return ",".join("" if v is None else _js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _js_field(obj: JSONObject, key: str) -> str:
    return _js_string(obj.get(key, _UNDEFINED))


def _entry_ms(data: JSONObject) -> int | None:
    """``new Date(entry.timestamp).getTime()``; None where JavaScript gives NaN (a missing timestamp)."""
    return iso_to_ms(data["timestamp"]) if "timestamp" in data else None


_MAX_TIME_MS = 8.64e15  # the range of a JavaScript Date
_DATE_TIME_PATTERN = (
    r"([+-]\d{6}|\d{4})(?:-(\d\d)(?:-(\d\d))?)?"
    r"(?:[Tt ](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?([Zz]|[+-]\d\d:?\d\d)?)?"
)
_DAYS_BEFORE_MONTH = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


def iso_to_ms(value: Any) -> int | None:
    """``new Date(value).getTime()``, as V8 computes it; None where JavaScript gives NaN.

    Strings in the ISO 8601 forms JavaScript reads: milliseconds truncated (not
    rounded), a date alone in UTC, a date and time without an offset in local
    time, a day past the month's end (up to 31) rolled over into the next month,
    24:00 as the end of the day. Numbers are taken as milliseconds, null as 0.
    """
    if value is None or isinstance(value, bool):
        return int(bool(value))
    if isinstance(value, int | float):
        return int(value) if abs(value) <= _MAX_TIME_MS else None
    if not isinstance(value, str):
        return None
    match = re.fullmatch(_DATE_TIME_PATTERN, value, re.ASCII)  # re caches it; compiled on first use
    if match is None:
        return None
    year_s, month_s, day_s, hour_s, minute_s, second_s, fraction, offset = match.groups()
    if year_s == "-000000":
        return None
    year, month, day = int(year_s), int(month_s or 1), int(day_s or 1)
    hour, minute, second = int(hour_s or 0), int(minute_s or 0), int(second_s or 0)
    ms = int((fraction or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return None
    if hour > 24 or (hour == 24 and (minute or second or ms)):
        return None
    # days since 1970-01-01 in the proleptic Gregorian calendar, as JavaScript's MakeDay counts
    y = year - 1
    days = 365 * (year - 1970) + (y // 4 - y // 100 + y // 400) - (1969 // 4 - 1969 // 100 + 1969 // 400)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days += _DAYS_BEFORE_MONTH[month - 1] + (1 if leap and month > 2 else 0) + day - 1
    stamp = (((days * 24 + hour) * 60 + minute) * 60 + second) * 1000 + ms
    if offset is None and hour_s is not None:
        stamp -= _local_offset_ms(stamp)
    elif offset is not None and offset not in "Zz":
        sign = -1 if offset[0] == "-" else 1
        digits = offset[1:].replace(":", "")
        offset_hours, offset_minutes = int(digits[:2]), int(digits[2:])
        if offset_hours > 23 or offset_minutes > 59:
            return None
        stamp -= sign * (offset_hours * 60 + offset_minutes) * 60_000
    return stamp if abs(stamp) <= _MAX_TIME_MS else None


def _local_offset_ms(wall_ms: int) -> int:
    """The local zone's UTC offset at a wall-clock time (read as if it were UTC), in milliseconds."""
    try:
        wall = datetime(1970, 1, 1) + timedelta(milliseconds=wall_ms)
        offset = wall.astimezone().utcoffset()
    except (OverflowError, ValueError, OSError):
        return 0
    return int(offset.total_seconds() * 1000) if offset is not None else 0

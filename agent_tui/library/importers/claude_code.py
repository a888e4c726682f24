"""Claude Code transcripts (``~/.claude/projects/<slug>/<session uuid>.jsonl``) to agent-tui entries.

Claude Code writes one line per event: ``user`` / ``assistant`` / ``system``
lines linked by ``uuid`` and ``parentUuid`` (a tree: editing an earlier
message starts a branch), one line per content block of a streamed reply
(same ``message.id``), tool results as ``user`` lines of ``tool_result``
blocks, sub-agent conversations as ``isSidechain`` lines with roots of their
own, ``compact_boundary`` system lines (``parentUuid`` null,
``logicalParentUuid`` the last message before) followed by an
``isCompactSummary`` user message, ``summary`` lines titling a leaf, and
bookkeeping lines (``file-history-snapshot``...). What is kept and dropped is
listed in docs/FORMAT.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_tui.library.importers.common import (
    Converter,
    ImportResult,
    as_int,
    entry,
    image_block,
    import_record,
    iso,
    ms,
    session_cwd,
    usage,
)
from agent_tui.projection import registry
from agent_tui.store.kinds import BRANCH_MARKER
from agent_tui.store.record import JSONObject

FORMAT = "claude-code"
SUMMARY_PREAMBLE = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:"
)
STOP_REASONS = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length", "stop_sequence": "stop"}
#: Per-line fields every Claude Code line repeats; the importer does not keep them per entry.
LINE_FIELDS = frozenset(
    {
        "parentUuid",
        "isSidechain",
        "userType",
        "cwd",
        "sessionId",
        "version",
        "gitBranch",
        "type",
        "uuid",
        "timestamp",
    }
)


def looks_like(lines: list[JSONObject]) -> bool:
    return any(
        ("uuid" in obj and "sessionId" in obj)
        or (obj.get("type") == "summary" and "leafUuid" in obj)
        or obj.get("type") == "file-history-snapshot"
        for obj in lines
    )


def convert(path: Path, objects: list[tuple[int, Any]]) -> ImportResult:
    return _Converter(path, objects).run()


class _Converter(Converter):
    format = FORMAT

    def __init__(self, path: Path, objects: list[tuple[int, Any]]) -> None:
        super().__init__(path, objects)
        self.uuid_to_id: dict[str, str] = {}  # a source line's uuid -> the entry its children hang under
        self.by_id: dict[str, JSONObject] = {}
        self.reply_of: dict[str, str] = {}  # an assistant entry, or a result after it -> the assistant entry
        self.results_tail: dict[str, str] = {}  # an assistant entry -> the last result chained after it
        self.chain_uuids: dict[str, list[str]] = {}  # an assistant entry -> the result lines chained after it

    def run(self) -> ImportResult:
        lines: list[tuple[int, JSONObject]] = []
        summaries: list[tuple[str, str]] = []
        for number, obj in self.objects:
            if not isinstance(obj, dict):
                self.warnings.append(f"line {number}: not a JSON object; skipped")
                self.dropped["malformed lines"] += 1
                continue
            kind = obj.get("type")
            if kind == "summary":
                if isinstance(obj.get("leafUuid"), str) and isinstance(obj.get("summary"), str):
                    summaries.append((obj["leafUuid"], obj["summary"]))
                continue
            if not isinstance(obj.get("uuid"), str):
                self.dropped[f"{kind} lines" if isinstance(kind, str) else "lines without a type"] += 1
                continue
            lines.append((number, obj))
            if kind == "assistant":
                for block in _content(obj):
                    if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                        self.tool_names[block["id"]] = str(block.get("name") or "")

        first = next((o for _, o in lines), {})
        cwd = session_cwd(next((o["cwd"] for _, o in lines if isinstance(o.get("cwd"), str)), None), self)
        start = iso(first.get("timestamp"), "1970-01-01T00:00:00.000Z")
        session_id = next((o["sessionId"] for _, o in lines if isinstance(o.get("sessionId"), str)), None)
        version = next((o["version"] for _, o in lines if isinstance(o.get("version"), str)), None)
        self.record_id = self.ids.hashed(f"import:{session_id}:{self.path.name}")

        by_uuid = {obj["uuid"]: obj for _, obj in lines}
        self.stamp = start
        boundary: JSONObject | None = None  # a compact boundary waiting for its summary message
        active_leaf: str | None = None
        for number, obj in lines:
            self.stamp = iso(obj.get("timestamp"), self.stamp)
            kind = obj.get("type")
            parent_uuid = obj.get("parentUuid")
            if kind == "system" and obj.get("subtype") == "compact_boundary":
                if boundary is not None:
                    self._compaction(boundary, None)
                boundary = obj
                continue
            is_summary = kind == "user" and bool(obj.get("isCompactSummary") or _is_summary_text(obj))
            if boundary is not None and (is_summary or parent_uuid == boundary["uuid"]):
                self._compaction(boundary, obj if is_summary else None)
                boundary = None
                if is_summary:
                    active_leaf = self._track(obj, active_leaf)
                    continue
            elif is_summary:
                self._compaction(None, obj)
                active_leaf = self._track(obj, active_leaf)
                continue
            parent = self._parent(parent_uuid, number)
            if kind == "assistant" and isinstance(parent_uuid, str) and self._continues(obj, by_uuid):
                self._extend_assistant(obj, parent_uuid)
            elif kind == "user":
                self._user(obj, parent)
            elif kind == "assistant":
                self._assistant(obj, parent)
            elif kind == "attachment" and (prompt := _queued_prompt(obj)) is not None:
                self._queued(obj, parent, prompt)
            else:
                self._other(obj, parent)
            active_leaf = self._track(obj, active_leaf)
        if boundary is not None:
            self._compaction(boundary, None)
            active_leaf = self._track(boundary, active_leaf)

        names = {self.uuid_to_id[leaf]: text for leaf, text in summaries if leaf in self.uuid_to_id}
        if len(names) < len(summaries):
            self.dropped["summaries of leaves in other files"] += len(summaries) - len(names)
        name = names.get(active_leaf) if active_leaf else None
        if name is None and names:
            name = list(names.values())[-1]
        self._finish(active_leaf, names, name)

        result = self.result(cwd, start, source_session_id=session_id, name=name)
        result.entries = [import_record(result, self.record_id, {"version": version}), *self.out]
        return result

    # -- tree ------------------------------------------------------------------------------------

    def _parent(self, parent_uuid: Any, number: int) -> str:
        if parent_uuid is None:
            return self.record_id
        if isinstance(parent_uuid, str) and parent_uuid in self.uuid_to_id:
            return self.uuid_to_id[parent_uuid]
        self.warnings.append(f"line {number}: parent {parent_uuid} is not in this file; attached to the root")
        return self.record_id

    def _add(self, kind: str, key: str, parent: str, **fields: Any) -> JSONObject:
        return self._append(entry(kind, self.ids.make(key), parent, self.stamp, **fields))

    def _append(self, data: JSONObject) -> JSONObject:
        self.out.append(data)
        self.by_id[data["id"]] = data
        return data

    def _continues(self, obj: JSONObject, by_uuid: dict[str, JSONObject]) -> bool:
        """A later line of the same reply (one ``message.id``): its parent is the previous block of
        that reply. Parallel tool calls are such lines too, the results of the earlier calls their
        siblings: the reply is one message whatever else hangs under its lines."""
        parent = by_uuid.get(obj.get("parentUuid") or "")
        if parent is None or parent.get("type") != "assistant":
            return False
        mid = _message(obj).get("id")
        return bool(mid) and mid == _message(parent).get("id") and parent["uuid"] in self.uuid_to_id

    # -- lines ------------------------------------------------------------------------------------

    def _user(self, obj: JSONObject, parent: str) -> None:
        content = _message(obj).get("content")
        stamp_ms = ms(self.stamp)
        last = parent
        if isinstance(content, str):
            last = self._add(
                "message",
                obj["uuid"],
                parent,
                message={"role": "user", "content": content, "timestamp": stamp_ms},
            )["id"]
            self.kept["user messages"] += 1
            self.uuid_to_id[obj["uuid"]] = last
            return
        rest: list[JSONObject] = []
        n = 0
        reply = self.reply_of.get(parent)
        blocks = content if isinstance(content, list) else []
        if reply is not None and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
            last = self.results_tail.get(reply, parent)  # after the results of the reply's other calls
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id") or "")
                message = {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": self.tool_names.get(call_id, ""),
                    "content": self._result_content(block.get("content")),
                    "isError": bool(block.get("is_error")),
                    "timestamp": stamp_ms,
                }
                last = self._add("message", f"{obj['uuid']}:{n}", last, message=message)["id"]
                n += 1
                self.kept["tool results"] += 1
            elif block.get("type") == "text":
                rest.append({"type": "text", "text": str(block.get("text") or "")})
            elif block.get("type") == "image":
                image = _image(block)
                if image is not None:
                    rest.append(image)
                else:
                    self.dropped["images that are not inline base64"] += 1
            else:
                self.dropped[f"user {block.get('type')} blocks"] += 1
        if "toolUseResult" in obj:
            self.dropped["toolUseResult (UI copies of tool output)"] += 1
        if rest or n == 0:
            last = self._add(
                "message",
                f"{obj['uuid']}:{n}",
                last,
                message={"role": "user", "content": rest, "timestamp": stamp_ms},
            )["id"]
            self.kept["user messages"] += 1
        self.uuid_to_id[obj["uuid"]] = last
        if reply is not None and n and not rest:
            # parallel calls: each result line hangs under its own call's line; chain them in one
            # run after the reply, and let whatever follows any of them continue after the last
            self.results_tail[reply] = last
            self.reply_of[last] = reply
            chain = self.chain_uuids.setdefault(reply, [])
            chain.append(obj["uuid"])
            for member in chain:
                self.uuid_to_id[member] = last

    def _queued(self, obj: JSONObject, parent: str, prompt: str) -> None:
        """A prompt typed while Claude Code worked: it sent it with the next request, as the user's."""
        added = self._add(
            "message",
            obj["uuid"],
            parent,
            message={"role": "user", "content": prompt, "timestamp": ms(self.stamp)},
        )
        self.uuid_to_id[obj["uuid"]] = added["id"]
        self.kept["queued prompts (attachment lines, as user messages)"] += 1

    def _result_content(self, content: Any) -> list[JSONObject]:
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        out: list[JSONObject] = []
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "text":
                out.append({"type": "text", "text": str(block.get("text") or "")})
            elif (
                isinstance(block, dict)
                and block.get("type") == "image"
                and (image := _image(block)) is not None
            ):
                out.append(image)
            else:
                self.dropped["tool result blocks other than text and image"] += 1
        return out

    def _assistant(self, obj: JSONObject, parent: str) -> None:
        message = _message(obj)
        blocks = self._assistant_blocks(message)
        raw_usage: JSONObject = message["usage"] if isinstance(message.get("usage"), dict) else {}
        error = bool(obj.get("isApiErrorMessage"))
        data: JSONObject = {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": registry.anthropic.NAME,  # Claude Code calls Anthropic's models
            "model": str(message.get("model") or ""),
            "usage": usage(
                as_int(raw_usage.get("input_tokens")),
                as_int(raw_usage.get("output_tokens")),
                as_int(raw_usage.get("cache_read_input_tokens")),
                as_int(raw_usage.get("cache_creation_input_tokens")),
            ),
            "stopReason": self._stop(message, blocks, error),
            "timestamp": ms(self.stamp),
        }
        if error:
            data["errorMessage"] = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            self.kept["API error messages (stopReason error: never sent to a model)"] += 1
        else:
            self.kept["assistant messages"] += 1
        added = self._add("message", obj["uuid"], parent, message=data)
        self.uuid_to_id[obj["uuid"]] = added["id"]
        self.reply_of[added["id"]] = added["id"]
        if obj.get("requestId"):
            self.dropped["requestId"] += 1

    def _extend_assistant(self, obj: JSONObject, parent_uuid: str) -> None:
        """Fold one more streamed block into the reply it belongs to."""
        target_id = self.uuid_to_id[parent_uuid]
        target = self.by_id[target_id]
        message = _message(obj)
        data = target["message"]
        data["content"].extend(self._assistant_blocks(message))
        raw_usage = message.get("usage")
        if isinstance(raw_usage, dict):
            data["usage"] = usage(
                as_int(raw_usage.get("input_tokens")),
                as_int(raw_usage.get("output_tokens")),
                as_int(raw_usage.get("cache_read_input_tokens")),
                as_int(raw_usage.get("cache_creation_input_tokens")),
            )
        data["stopReason"] = self._stop(message, data["content"], False)
        self.uuid_to_id[obj["uuid"]] = target_id
        self.kept["streamed reply lines merged into their message"] += 1

    def _assistant_blocks(self, message: JSONObject) -> list[JSONObject]:
        out: list[JSONObject] = []
        content = message.get("content")
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                out.append({"type": "text", "text": str(block.get("text") or "")})
            elif kind == "thinking":
                thinking: JSONObject = {"type": "thinking", "thinking": str(block.get("thinking") or "")}
                if isinstance(block.get("signature"), str):
                    thinking["thinkingSignature"] = block["signature"]
                out.append(thinking)
            elif kind == "redacted_thinking":
                out.append(
                    {
                        "type": "thinking",
                        "thinking": "",
                        "redacted": True,
                        "thinkingSignature": str(block.get("data") or ""),
                    }
                )
            elif kind == "tool_use":
                args = block.get("input")
                out.append(
                    {
                        "type": "toolCall",
                        "id": str(block.get("id") or ""),
                        "name": str(block.get("name") or ""),
                        "arguments": args if isinstance(args, dict) else {"input": args},
                    }
                )
            else:
                self.dropped[f"assistant {kind} blocks"] += 1
        return out

    @staticmethod
    def _stop(message: JSONObject, blocks: list[JSONObject], error: bool) -> str:
        if error:
            return "error"
        reason = STOP_REASONS.get(str(message.get("stop_reason")))
        if reason is not None:
            return reason
        return "toolUse" if any(b.get("type") == "toolCall" for b in blocks) else "stop"

    def _track(self, obj: JSONObject, active_leaf: str | None) -> str | None:
        """The session resumes at the last main-conversation line (sidechains are sub-agents)."""
        if obj.get("isSidechain") or obj["uuid"] not in self.uuid_to_id:
            return active_leaf
        return self.uuid_to_id[obj["uuid"]]

    def _compaction(self, boundary: JSONObject | None, summary: JSONObject | None) -> None:
        """A compact boundary and the summary message after it become one ``compaction`` entry.

        It hangs under the last message before the boundary (``logicalParentUuid``),
        so the tree stays whole, and keeps nothing: Claude Code continues from the
        summary alone.
        """
        text = ""
        if summary is not None:
            content = _message(summary).get("content")
            if isinstance(content, str):
                text = content
            elif isinstance(content, list):
                text = "\n\n".join(
                    str(b.get("text") or "")
                    for b in content
                    if isinstance(b, dict) and b.get("type") == "text"
                )
        if text.startswith(SUMMARY_PREAMBLE):
            text = text[len(SUMMARY_PREAMBLE) :].lstrip("\n")
        tokens = 0
        trigger = None
        parent = self.record_id
        if boundary is not None:
            logical = boundary.get("logicalParentUuid")
            if isinstance(logical, str):
                parent = self.uuid_to_id.get(logical, self.record_id)
            meta = boundary.get("compactMetadata")
            if isinstance(meta, dict):
                tokens = as_int(meta.get("preTokens"))
                trigger = meta.get("trigger")
        elif summary is not None and isinstance(summary.get("parentUuid"), str):
            parent = self.uuid_to_id.get(summary["parentUuid"], self.record_id)
        source = boundary if boundary is not None else summary
        assert source is not None
        eid = self.ids.make(source["uuid"])
        data = entry(
            "compaction",
            eid,
            parent,
            self.stamp,
            summary=text or "(Claude Code recorded no summary)",
            firstKeptEntryId=eid,
            tokensBefore=tokens,
            details={"source": FORMAT, "trigger": trigger},
        )
        self._append(data)
        for obj in (boundary, summary):
            if obj is not None:
                self.uuid_to_id[obj["uuid"]] = eid
        self.kept["compactions"] += 1

    def _other(self, obj: JSONObject, parent: str) -> None:
        """System lines and line types this importer does not know: state entries, never in context."""
        kind = str(obj.get("type"))
        fields = {k: v for k, v in obj.items() if k not in LINE_FIELDS}
        added = self._add("custom", obj["uuid"], parent, customType=f"claude-code.{kind}", data=fields)
        self.uuid_to_id[obj["uuid"]] = added["id"]
        self.kept[f"{kind} lines (as custom entries, not in context)"] += 1

    def _finish(self, active_leaf: str | None, names: dict[str, str], name: str | None) -> None:
        """Labels from the summaries, the name, and the leaf: the active leaf must be the last entry."""
        parent = (
            active_leaf if active_leaf is not None else (self.out[-1]["id"] if self.out else self.record_id)
        )
        for target, text in names.items():
            parent = self._add("label", f"label:{target}", parent, targetId=target, label=text)["id"]
            self.kept["summaries (as labels of their leaf)"] += 1
        if name:
            parent = self._add("session_info", "name", parent, name=name)["id"]
        if active_leaf is not None and parent == active_leaf and self.out[-1]["id"] != active_leaf:
            self._add(
                "custom", "leaf", active_leaf, customType=BRANCH_MARKER, data={"fromId": self.out[-1]["id"]}
            )


def _message(obj: JSONObject) -> JSONObject:
    """A line's ``message`` object. Some lines hold a bare string there (``"message": "error"``):
    it is the text of the message."""
    message = obj.get("message")
    if isinstance(message, dict):
        return message
    if isinstance(message, str):
        return {"content": message}
    return {}


def _content(obj: JSONObject) -> list[JSONObject]:
    content = _message(obj).get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _queued_prompt(obj: JSONObject) -> str | None:
    """The text of a prompt the user queued while Claude Code worked (an ``attachment`` line of type
    ``queued_command``); None for other attachments, and for queued task notifications or meta text."""
    attachment = obj.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
        return None
    origin = attachment.get("origin")
    if attachment.get("isMeta") or attachment.get("commandMode", "prompt") != "prompt":
        return None
    if isinstance(origin, dict) and origin.get("kind", "human") != "human":
        return None
    prompt = attachment.get("prompt")
    if isinstance(prompt, list):
        prompt = "\n".join(
            str(b.get("text") or "") for b in prompt if isinstance(b, dict) and b.get("type") == "text"
        )
    return prompt if isinstance(prompt, str) and prompt.strip() else None


def _is_summary_text(obj: JSONObject) -> bool:
    """Older versions wrote the summary message without ``isCompactSummary``."""
    content = _message(obj).get("content")
    return isinstance(content, str) and content.startswith(SUMMARY_PREAMBLE) and obj.get("parentUuid") is None


def _image(block: JSONObject) -> JSONObject | None:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64":
        return image_block(source.get("media_type"), source.get("data"))
    return None

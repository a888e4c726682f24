"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) to agent-tui entries.

A rollout is linear: ``{"timestamp", "type", "payload"}`` lines of
``session_meta`` (id, cwd, cli version, instructions, git), ``turn_context``
(model, reasoning effort), ``response_item`` (what went to and came from the
model: ``message`` by role, ``reasoning``, ``function_call`` /
``function_call_output``, ``custom_tool_call`` / ``custom_tool_call_output``,
``local_shell_call``...), ``event_msg`` (UI events, mostly echoes of the items;
``token_count`` carries usage) and ``compacted`` (a summary that replaced the
history). Early rollouts (spring 2025) have a bare header line, bare items and
``{"record_type": "state"}`` lines. What is kept and dropped is listed in
docs/FORMAT.md.
"""

from __future__ import annotations

import base64
import binascii
import json
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
from agent_tui.store.record import JSONObject

FORMAT = "codex"
EFFORT = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "none": "off",
}
ASSISTANT_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call"})


def looks_like(lines: list[JSONObject]) -> bool:
    first = lines[0] if lines else {}
    return (
        first.get("type") == "session_meta"
        or any(
            o.get("type") in ("response_item", "turn_context", "event_msg") and "payload" in o for o in lines
        )
        or ("id" in first and "instructions" in first and "type" not in first)
        or any(o.get("record_type") == "state" for o in lines)
    )


def convert(path: Path, objects: list[tuple[int, Any]]) -> ImportResult:
    return _Converter(path, objects).run()


class _Converter(Converter):
    format = FORMAT

    def __init__(self, path: Path, objects: list[tuple[int, Any]]) -> None:
        super().__init__(path, objects)
        self.parent: str | None = None
        self.stamp = "1970-01-01T00:00:00.000Z"
        self.model: str | None = None
        self.effort: str | None = None
        self.reply: JSONObject | None = None  # the assistant message being gathered
        self.last_reply: JSONObject | None = None
        self.session_id: str | None = None
        self.last_input_tokens = 0
        self.line = 0

    def run(self) -> ImportResult:
        meta: JSONObject = {}
        cwd: str | None = None
        start: str | None = None
        for number, obj in self.objects:
            if not isinstance(obj, dict):
                self.warnings.append(f"line {number}: not a JSON object; skipped")
                self.dropped["malformed lines"] += 1
                continue
            self.line = number
            self.stamp = iso(obj.get("timestamp"), self.stamp)
            start = start or (self.stamp if "timestamp" in obj else None)
            kind = obj.get("type")
            payload = obj.get("payload")
            if kind == "session_meta" and isinstance(payload, dict):
                meta = payload
                self.session_id = payload.get("id") if isinstance(payload.get("id"), str) else None
                cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else cwd
                start = iso(payload.get("timestamp"), start or self.stamp)
            elif kind == "turn_context" and isinstance(payload, dict):
                cwd = cwd or (payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
                self._turn_context(payload)
            elif kind == "response_item" and isinstance(payload, dict):
                self._item(payload)
            elif kind == "event_msg" and isinstance(payload, dict):
                self._event(payload)
            elif kind == "compacted" and isinstance(payload, dict):
                self._compacted(payload)
            elif obj.get("record_type") == "state":
                self.dropped["state records"] += 1
            elif kind is None and "id" in obj and not self.out and not meta:  # the early header line
                meta = obj
                self.session_id = obj.get("id") if isinstance(obj.get("id"), str) else None
            elif isinstance(kind, str) and "payload" not in obj:  # an early bare item
                self._item(obj)
            else:
                self.dropped[f"{kind} lines"] += 1
        self._flush()
        result = self.result(session_cwd(cwd, self), start or self.stamp, source_session_id=self.session_id)
        record_id = self.ids.hashed(f"import:{self.session_id}:{self.path.name}")
        extra = {
            k: meta.get(k)
            for k in ("cli_version", "originator", "instructions", "git")
            if meta.get(k) is not None
        }
        if self.out:
            self.out[0]["parentId"] = record_id
        result.entries = [import_record(result, record_id, extra), *self.out]
        return result

    # -- building ------------------------------------------------------------------------------------

    def _add(self, kind: str, **fields: Any) -> JSONObject:
        data = entry(
            kind,
            self.ids.hashed(f"{self.session_id}:{self.line}:{len(self.out)}"),
            self.parent,
            self.stamp,
            **fields,
        )
        self.out.append(data)
        self.parent = data["id"]
        return data

    def _reply(self) -> JSONObject:
        if self.reply is None:
            self.reply = {
                "role": "assistant",
                "content": [],
                "api": "openai-responses",
                "provider": registry.openai.NAME,  # Codex calls OpenAI's models
                "model": self.model or "",
                "usage": usage(0, 0),
                "stopReason": "stop",
                "timestamp": ms(self.stamp),
            }
        return self.reply

    def _flush(self) -> None:
        reply = self.reply
        if reply is None:
            return
        self.reply = None
        if any(b.get("type") == "toolCall" for b in reply["content"]):
            reply["stopReason"] = "toolUse"
        self._add("message", message=reply)
        self.last_reply = reply
        self.kept["assistant messages (consecutive reply items merged)"] += 1

    # -- lines -------------------------------------------------------------------------------------

    def _turn_context(self, payload: JSONObject) -> None:
        model = payload.get("model")
        if isinstance(model, str) and model and model != self.model:
            self._flush()
            self.model = model
            self._add("model_change", provider=registry.openai.NAME, modelId=model)
            self.kept["model changes (from turn_context)"] += 1
        effort = EFFORT.get(str(payload.get("effort")))
        if effort is not None and effort != self.effort:
            self._flush()
            self.effort = effort
            self._add("thinking_level_change", thinkingLevel=effort)
            self.kept["reasoning effort changes (from turn_context)"] += 1
        self.dropped["turn_context approval and sandbox settings"] += 1

    def _item(self, item: JSONObject) -> None:
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            if role == "assistant":
                text = "".join(
                    str(b.get("text") or "")
                    for b in item.get("content") or []
                    if isinstance(b, dict) and b.get("type") in ("output_text", "text")
                )
                self._reply()["content"].append({"type": "text", "text": text})
                return
            self._flush()
            content = self._input_content(item.get("content"))
            if role in ("developer", "system"):
                text = "\n\n".join(b["text"] for b in content if b.get("type") == "text")
                self._add("message", message={"role": "system", "content": text, "timestamp": ms(self.stamp)})
                self.kept["developer messages (as system messages)"] += 1
            else:
                self._add(
                    "message", message={"role": "user", "content": content, "timestamp": ms(self.stamp)}
                )
                self.kept["user messages"] += 1
        elif kind == "reasoning":
            parts = [
                str(b.get("text") or "")
                for key in ("content", "summary")
                for b in (item.get(key) or [])
                if isinstance(b, dict) and b.get("text")
            ]
            if parts:
                self._reply()["content"].append({"type": "thinking", "thinking": "\n\n".join(parts)})
                self.kept["reasoning summaries (as thinking)"] += 1
            if item.get("encrypted_content"):
                self.dropped["encrypted reasoning"] += 1
            if not parts:
                self._reply()
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            call_id = str(item.get("call_id") or item.get("id") or "")
            name = str(item.get("name") or ("local_shell" if kind == "local_shell_call" else "tool"))
            if kind == "function_call":
                arguments = _arguments(item.get("arguments"))
            elif kind == "custom_tool_call":
                arguments = {"input": item.get("input")}
            else:
                action = item.get("action")
                arguments = action if isinstance(action, dict) else {"action": action}
            self.tool_names[call_id] = name
            self._reply()["content"].append(
                {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
            )
            self.kept["tool calls"] += 1
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            self._flush()
            call_id = str(item.get("call_id") or "")
            text, error = _output(item.get("output"))
            self._add(
                "message",
                message={
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": self.tool_names.get(call_id, ""),
                    "content": [{"type": "text", "text": text}],
                    "isError": error,
                    "timestamp": ms(self.stamp),
                },
            )
            self.kept["tool results"] += 1
        else:
            self.dropped[f"{kind} items"] += 1

    def _input_content(self, content: Any) -> list[JSONObject]:
        out: list[JSONObject] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") in ("input_text", "text", "output_text"):
                out.append({"type": "text", "text": str(block.get("text") or "")})
            elif block.get("type") == "input_image":
                image = _data_url_image(block.get("image_url"))
                if image is not None:
                    out.append(image)
                else:
                    out.append({"type": "text", "text": f"[image: {block.get('image_url')}]"})
                    self.dropped["images given by URL (kept as a text note)"] += 1
            else:
                self.dropped[f"{block.get('type')} content blocks"] += 1
        return out

    def _event(self, payload: JSONObject) -> None:
        kind = payload.get("type")
        if kind == "token_count":
            info = payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            target = self.reply or self.last_reply
            if isinstance(last, dict) and target is not None:
                cached = as_int(last.get("cached_input_tokens"))
                target["usage"] = usage(
                    max(as_int(last.get("input_tokens")) - cached, 0),
                    as_int(last.get("output_tokens")),
                    cached,
                )
                self.last_input_tokens = as_int(last.get("input_tokens"))
                self.kept["token counts (as usage of the reply)"] += 1
            else:
                self.dropped["token counts without a reply"] += 1
        else:
            self.dropped[f"{kind} events (UI echoes)"] += 1

    def _compacted(self, payload: JSONObject) -> None:
        self._flush()
        summary = payload.get("message")
        history = payload.get("replacement_history")
        if not isinstance(summary, str) or not summary.strip():
            summary = self._history_text(history) or "(Codex recorded no summary)"
        elif history:
            self.dropped["replacement_history (the messages Codex re-sent after compacting)"] += 1
        data = self._add(
            "compaction", summary=summary, firstKeptEntryId="", tokensBefore=self.last_input_tokens
        )
        data["firstKeptEntryId"] = data["id"]
        data["details"] = {"source": FORMAT}
        self.kept["compactions"] += 1

    def _history_text(self, history: Any) -> str:
        """A compaction's summary from the messages Codex kept in its place (``replacement_history``,
        when the item's own ``message`` is empty): each message's text after its role. Encrypted
        items (remote compaction, reasoning) are opaque to anyone but the provider: left out."""
        parts: list[str] = []
        for item in history if isinstance(history, list) else []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "message":
                text = "\n".join(
                    str(b.get("text") or "")
                    for b in item.get("content") or []
                    if isinstance(b, dict) and b.get("type") in ("input_text", "output_text", "text")
                ).strip()
                if text:
                    parts.append(f"{item.get('role') or 'user'}: {text}")
                    self.kept["replacement_history messages (as the compaction summary)"] += 1
            elif item.get("encrypted_content"):
                self.dropped["encrypted replacement_history items"] += 1
            else:
                self.dropped[f"replacement_history {item.get('type')} items"] += 1
        return "\n\n".join(parts)


def _arguments(raw: Any) -> JSONObject:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):  # arguments nested too deeply are kept as text
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": value}
    return {"input": raw}


def _output(raw: Any) -> tuple[str, bool]:
    """The text the model read and whether the call failed (a non-zero exit code)."""
    if isinstance(raw, list):
        return "\n".join(str(b.get("text") or "") for b in raw if isinstance(b, dict)), False
    if not isinstance(raw, str):
        return json.dumps(raw, ensure_ascii=False), False
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict) and isinstance(value.get("output"), str):
        metadata = value.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return value["output"], isinstance(code, int) and code != 0
    if raw.startswith("Exit code: "):
        first = raw.split("\n", 1)[0][len("Exit code: ") :].strip()
        return raw, first.isdigit() and first != "0"
    return raw, False


def _data_url_image(url: Any) -> JSONObject | None:
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        return None
    mime, data = url[5:].split(";base64,", 1)
    try:
        base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return image_block(mime, data)

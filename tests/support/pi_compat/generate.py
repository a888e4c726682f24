"""Random session files for comparing agent-tui's projection with pi's.

``generate(seed)`` builds one session as JSONL text from ``random.Random(seed)``:
a random tree (mostly a chain with branches off earlier entries, now and then
a second root or a dangling parent) of every entry type pi 1.6 projects or
ignores, with the awkward cases a hand-edited or old file can hold: messages
of every role (``system``, ``custom``, ``bashExecution``, unknown roles) with
null or missing content, tool calls and results, compactions at random points
whose ``firstKeptEntryId`` is an ancestor, the compaction itself, an entry of
another branch or a missing id, ``context_edit`` hides and replacements of
random earlier entries (on the path or not), labels, model and thinking-level
changes, ``custom_message``, ``branch_summary``, duplicate ids, a second header
line now and then, and timestamps in the forms JavaScript's ``Date`` parses
differently from Python.

About one file in twelve is an old format: v2 (``hookMessage`` role) or v1
(no ids, a linear chain, ``firstKeptEntryIndex``). Entries are only ever
generated so that pi can read them: every entry has a ``message`` when it is a
message, every edit has a ``replacement``, and the parent links have no cycle
(pi would loop forever on one).

agent-tui's own extension entries (``pin``) are left out: they change the
projection on purpose, and pi ignores them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

BASE_MS = 1_736_000_000_000  # 2025-01-04

_VOCABULARY = (
    "read the file fix the failing test in calc ops divide add parser argument flag verbose "
    "run pytest again check output error value zero branch commit diff import module helper "
    "rename update docs readme usage example edge case None raise return float string"
)
_WORDS = _VOCABULARY.split()
_UNICODE = ("naïve café", "✓ done", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "日本語", "emoji 🚀", "tab\there", 'quote " and \\ slash')
_TOOLS = ("read", "edit", "bash", "write", "ls", "grep", "find")


@dataclass
class GeneratedSession:
    seed: int
    version: int
    text: str
    ids: list[str] = field(default_factory=list)  # entry ids in file order (v1: none)
    entries: int = 0


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.clock = BASE_MS + self.rng.randint(0, 10**9)
        self.entries: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.leaf: str | None = None
        self.pending_calls: list[tuple[str, str]] = []  # (tool call id, tool name) waiting for a result
        self.counter = 0

    # -- small pieces ------------------------------------------------------------------

    def words(self, low: int = 2, high: int = 12) -> str:
        r = self.rng
        text = " ".join(r.choice(_WORDS) for _ in range(r.randint(low, high)))
        if r.random() < 0.08:
            text += " " + r.choice(_UNICODE)
        if r.random() < 0.1:
            text += "\n" + " ".join(r.choice(_WORDS) for _ in range(r.randint(1, 6)))
        return text.capitalize()

    def tick(self) -> int:
        self.clock += self.rng.randint(1, 40_000)
        return self.clock

    def iso(self, ms: int) -> str:
        """An entry timestamp: nearly always pi's toISOString form, sometimes one JavaScript reads differently."""
        r = self.rng
        stamp = datetime.fromtimestamp(ms / 1000, UTC)
        roll = r.random()
        if roll < 0.9:
            return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        variants = [
            # Python's isoformat: microseconds and +00:00 (JavaScript truncates to milliseconds)
            (stamp + timedelta(microseconds=r.randint(1, 999))).isoformat(),
            stamp.replace(microsecond=999_700).isoformat(),  # rounds up, but JavaScript truncates
            stamp.strftime("%Y-%m-%dT%H:%M:%S"),  # no zone: local time for JavaScript
            stamp.strftime("%Y-%m-%d"),  # date only: UTC for JavaScript
            stamp.strftime("%Y-%m-%d %H:%M:%S"),
            stamp.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+02:00",
            stamp.strftime("%Y%m%dT%H%M%SZ"),  # basic format: NaN for JavaScript
            "not a date",
        ]
        return r.choice(variants)

    def new_id(self) -> str:
        r = self.rng
        if self.entries and r.random() < 0.02:
            return str(r.choice(self.entries)["id"])  # a duplicate id: the later entry wins (if no cycle)
        self.counter += 1
        return f"{r.getrandbits(24):06x}{self.counter:02x}"[-8:] if r.random() < 0.9 else f"e{self.counter}"

    def text_block(self) -> dict[str, Any]:
        return {"type": "text", "text": self.words()}

    def user_content(self) -> Any:
        r = self.rng
        if r.random() < 0.5:
            return self.words(3, 20)
        blocks: list[dict[str, Any]] = [self.text_block()]
        if r.random() < 0.15:
            blocks.append({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
        return blocks

    def tool_call(self) -> dict[str, Any]:
        r = self.rng
        name = r.choice(_TOOLS)
        call_id = f"toolu_{r.getrandbits(40):010x}"
        args: dict[str, Any]
        if name == "bash":
            args = {"command": f"python -m pytest -q tests/test_{r.choice(_WORDS)}.py"}
            if r.random() < 0.3:
                args["timeout"] = r.randint(5, 120)
        elif name == "edit":
            args = {"path": "calc/ops.py", "edits": [{"oldText": self.words(), "newText": self.words()}]}
        elif name == "write":
            args = {"path": "notes.md", "content": self.words(5, 30)}
        else:
            args = {"path": f"calc/{r.choice(_WORDS)}.py"}
        self.pending_calls.append((call_id, name))
        return {"type": "toolCall", "id": call_id, "name": name, "arguments": args}

    # -- messages ----------------------------------------------------------------------

    def message(self) -> dict[str, Any]:
        r = self.rng
        ts = self.tick()
        roll = r.random()
        msg: dict[str, Any]
        if self.pending_calls and roll < 0.45:
            call_id, name = self.pending_calls.pop(0) if r.random() < 0.9 else ("toolu_gone", "read")
            content: Any = [self.text_block()]
            if r.random() < 0.1:
                content.append({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
            msg = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": content,
                "isError": r.random() < 0.1,
                "timestamp": ts,
            }
            if r.random() < 0.2:
                msg["details"] = {"diff": self.words()}
        elif roll < 0.62:
            msg = {"role": "user", "content": self.user_content(), "timestamp": ts}
            if r.random() < 0.03:
                msg["excludeFromContext"] = True  # only bashExecution honours it
        elif roll < 0.88:
            blocks: list[dict[str, Any]] = []
            if r.random() < 0.3:
                blocks.append({"type": "thinking", "thinking": self.words(), "thinkingSignature": "sig"})
            if r.random() < 0.7:
                blocks.append(self.text_block())
            for _ in range(r.choice((0, 0, 1, 1, 1, 2, 3))):
                blocks.append(self.tool_call())
            msg = {
                "role": "assistant",
                "content": blocks,
                "api": "anthropic-messages",
                "provider": r.choice(("anthropic", "openai")),
                "model": r.choice(("claude-sonnet-4-5", "gpt-4.1")),
                "usage": {
                    "input": r.randint(0, 9000),
                    "output": r.randint(0, 900),
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": r.randint(0, 9900),
                },
                "stopReason": "toolUse" if any(b["type"] == "toolCall" for b in blocks) else "stop",
                "timestamp": ts,
            }
        elif roll < 0.92:
            msg = {
                "role": "bashExecution",
                "command": f"make {r.choice(_WORDS)}",
                "output": r.choice(("", self.words(), self.words(1, 3) + "\n" + self.words())),
                "exitCode": r.choice((0, 0, 1, 2, None)),
                "cancelled": r.random() < 0.15,
                "truncated": r.random() < 0.2,
                "timestamp": ts,
            }
            if r.random() < 0.5:
                msg["fullOutputPath"] = f"/tmp/pi-bash-{r.getrandbits(16):04x}.log"
            if r.random() < 0.25:
                msg["excludeFromContext"] = r.choice((True, 1, False))
            for key in ("output", "exitCode", "command"):
                if r.random() < 0.04:
                    del msg[key]
        elif roll < 0.95:
            msg = {"role": "system", "content": self.words(5, 20), "timestamp": ts}
        elif roll < 0.98:
            msg = {
                "role": "custom",
                "customType": "ext",
                "content": r.choice((self.words(), [self.text_block()])),
                "display": r.random() < 0.5,
                "timestamp": ts,
            }
        else:
            msg = {
                "role": r.choice(("tool", "developer", "branchSummary")),
                "content": self.words(),
                "timestamp": ts,
            }
            if msg["role"] == "branchSummary":
                msg["summary"] = self.words()
        # awkward payloads pi repairs or passes on as they are
        if r.random() < 0.05:
            if r.random() < 0.6:
                msg["content"] = None
            else:
                msg.pop("content", None)
        if r.random() < 0.02:
            msg.pop("timestamp", None)
        return msg

    # -- entries -----------------------------------------------------------------------

    def ancestors(self, entry_id: str | None) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()
        current = self.by_id.get(entry_id) if entry_id is not None else None
        while current is not None and current["id"] not in seen:
            seen.add(current["id"])
            out.append(current["id"])
            parent = current.get("parentId")
            current = self.by_id.get(parent) if isinstance(parent, str) else None
        out.reverse()
        return out

    def some_target(self, parent: str | None) -> str:
        """An entry id for an edit or a label: mostly on the path, sometimes elsewhere or missing."""
        r = self.rng
        path = self.ancestors(parent)
        roll = r.random()
        if path and roll < 0.75:
            return r.choice(path)
        if self.entries and roll < 0.93:
            return str(r.choice(self.entries)["id"])
        return "nothere1"

    def entry(self, parent: str | None, eid: str) -> dict[str, Any]:
        r = self.rng
        kinds = (
            ("message", 60),
            ("compaction", 5),
            ("context_edit", 9),
            ("label", 3),
            ("model_change", 2),
            ("thinking_level_change", 2),
            ("session_info", 1),
            ("custom", 2),
            ("custom_message", 4),
            ("branch_summary", 3),
            ("usage", 1),
            ("mystery", 1),
        )
        kind = r.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0]
        ts_ms = self.tick()
        head: dict[str, Any] = {"type": kind, "id": eid, "parentId": parent, "timestamp": self.iso(ts_ms)}
        if r.random() < 0.01:
            del head["timestamp"]
        if kind == "message":
            head["message"] = self.message()
        elif kind == "compaction":
            path = self.ancestors(parent)
            roll = r.random()
            if path and roll < 0.75:
                first_kept = r.choice(path)
            elif roll < 0.85:
                first_kept = eid  # nothing kept
            elif self.entries and roll < 0.95:
                first_kept = str(r.choice(self.entries)["id"])  # maybe on another branch
            else:
                first_kept = "nothere2"
            head.update(
                summary=self.words(5, 30), firstKeptEntryId=first_kept, tokensBefore=r.randint(0, 90_000)
            )
            if r.random() < 0.05:
                head["summary"] = r.choice((None, "", 42, True))
            if r.random() < 0.03:
                del head["summary"]
            if r.random() < 0.4:
                head["systemMessage"] = {"role": "system", "content": self.words(5, 15), "timestamp": ts_ms}
                if r.random() < 0.1:
                    head["systemMessage"] = r.choice(({}, {"role": "user", "content": self.words()}))
            if r.random() < 0.3:
                head["details"] = {"readFiles": ["calc/ops.py"], "modifiedFiles": []}
        elif kind == "context_edit":
            head["targetId"] = self.some_target(parent)
            roll = r.random()
            if roll < 0.4:
                head["replacement"] = None
            elif roll < 0.7:
                head["replacement"] = {"content": self.words()}
            elif roll < 0.95:
                head["replacement"] = {"content": [self.text_block()]}
            else:
                head["replacement"] = r.choice(({}, {"content": None}))
            if head["replacement"] is not None and r.random() < 0.2:
                head["restore"] = True
        elif kind == "label":
            head["targetId"] = self.some_target(parent)
            head["label"] = r.choice((self.words(1, 2), None, ""))
        elif kind == "model_change":
            head.update(provider="openai", modelId=r.choice(("gpt-4.1", "o3")))
        elif kind == "thinking_level_change":
            head["thinkingLevel"] = r.choice(("off", "low", "high"))
        elif kind == "session_info":
            head["name"] = self.words(1, 4)
        elif kind == "custom":
            n = r.randint(0, 9)
            if n < 3:  # a learned context window (same draw: the other sessions stay as they were)
                window = {"provider": "openai", "modelId": "gpt-4.1", "contextWindow": 4096 * (n + 1)}
                head.update(customType="agent-tui.window", data=window)
            else:
                head.update(customType="state", data={"n": n})
        elif kind == "custom_message":
            head["customType"] = "ext"
            roll = r.random()
            if roll < 0.45:
                head["content"] = self.words()
            elif roll < 0.9:
                head["content"] = [self.text_block()]
            elif roll < 0.95:
                head["content"] = None
            head["display"] = r.random() < 0.5
            if r.random() < 0.3:
                head["details"] = {"k": r.randint(0, 9)}
        elif kind == "branch_summary":
            head["fromId"] = self.some_target(parent)
            head["summary"] = r.choice((self.words(5, 20), self.words(5, 20), self.words(5, 20), ""))
        elif kind == "usage":
            head.update(
                kind="compaction", provider="anthropic", model="claude-sonnet-4-5", usage={"input": 1}
            )
        else:
            head["whatever"] = r.randint(0, 9)
        return head

    def parent_for_next(self) -> str | None:
        r = self.rng
        roll = r.random()
        if not self.entries or roll < 0.03:
            return None
        if roll < 0.2:
            self.pending_calls.clear()
            return str(r.choice(self.entries)["id"])
        if roll < 0.22:
            return "dangling"
        return self.leaf

    def creates_cycle(self, entry: dict[str, Any]) -> bool:
        by_id = {**self.by_id, entry["id"]: entry}
        for start in by_id:
            seen: set[str] = set()
            current: dict[str, Any] | None = by_id[start]
            while current is not None:
                if current["id"] in seen:
                    return True
                seen.add(current["id"])
                parent = current.get("parentId")
                current = by_id.get(parent) if isinstance(parent, str) and parent else None
        return False

    def add(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)
        self.by_id[entry["id"]] = entry
        self.leaf = entry["id"]


def _header(gen: _Gen, version: int | None) -> dict[str, Any]:
    header: dict[str, Any] = {
        "type": "session",
        "id": f"0195{gen.rng.getrandbits(32):08x}-gen-{gen.seed}",
        "timestamp": gen.iso(BASE_MS),
        "cwd": "/home/dev/calc",
    }
    if version is not None:
        header = {"type": "session", "version": version, **{k: v for k, v in header.items() if k != "type"}}
    return header


def generate(seed: int) -> GeneratedSession:
    gen = _Gen(seed)
    r = gen.rng
    roll = r.random()
    version = 3 if roll < 0.84 else 2 if roll < 0.92 else 1
    if version == 1:
        return _generate_v1(gen)
    count = r.choice((r.randint(1, 8), r.randint(5, 45), r.randint(5, 45)))
    for _ in range(count):
        parent = gen.parent_for_next()
        entry = gen.entry(parent, gen.new_id())
        if entry["id"] in gen.by_id and gen.creates_cycle(entry):
            gen.counter += 1
            entry["id"] = f"u{gen.counter}"
        if version == 2 and entry["type"] == "message" and entry["message"].get("role") == "custom":
            entry["message"]["role"] = "hookMessage"
        gen.add(entry)
    lines = [_header(gen, version), *gen.entries]
    if r.random() < 0.04:  # files joined together: pi skips every header but the first
        lines.insert(r.randint(1, len(lines)), _header(gen, version))
    return GeneratedSession(seed, version, _jsonl(lines), [e["id"] for e in gen.entries], len(gen.entries))


def _generate_v1(gen: _Gen) -> GeneratedSession:
    """pi v1: no ids, one chain in file order, compactions point at a line index (header = 0)."""
    r = gen.rng
    count = r.randint(1, 30)
    lines: list[dict[str, Any]] = [_header(gen, r.choice((None, 1)))]
    for _ in range(count):
        roll = r.random()
        ts_ms = gen.tick()
        entry: dict[str, Any]
        if roll < 0.8:
            entry = {"type": "message", "timestamp": gen.iso(ts_ms), "message": gen.message()}
        elif roll < 0.9:
            # the header (0, nothing kept) up to this compaction's own index; now and then a later line
            index = r.randint(0, len(lines)) if r.random() < 0.95 else len(lines) + 2
            entry = {
                "type": "compaction",
                "timestamp": gen.iso(ts_ms),
                "summary": gen.words(5, 20),
                "firstKeptEntryIndex": index,
                "tokensBefore": r.randint(0, 50_000),
            }
        elif roll < 0.95:
            entry = {"type": "thinking_level_change", "timestamp": gen.iso(ts_ms), "thinkingLevel": "low"}
        else:
            entry = {
                "type": "model_change",
                "timestamp": gen.iso(ts_ms),
                "provider": "openai",
                "modelId": "o3",
            }
        lines.append(entry)
    return GeneratedSession(gen.seed, 1, _jsonl(lines), [], count)


def _jsonl(objects: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n" for o in objects)

"""A deterministic ~1 GiB pi v3 session for the open-cost benchmark (``big_session_bench.py``).

Streamed to disk line by line (never held in memory): about 150,000 entries of long coding
turns. A user prompt, then rounds of an assistant message (thinking, text, one to three tool
calls, usage) each followed by its tool results, then a final answer. Tool results hold most of
the bytes: text sizes follow a log-normal law capped at pi's 50 KB output limit, about one read
in 50 is an image (a PNG screenshot as a base64 ``image`` block, 150 KB to 1.5 MB), and about one
result in 1,500 is an untruncated 2-8 MB output (an extension tool without pi's limit). Every
~4,000 entries a compaction (summary, ``firstKeptEntryId`` some 40 entries back); four abandoned
branches (two with a pi ``branch_summary``); labels, a session name, model and thinking changes.

``ensure_big_session(dir)`` writes ``dir/big-session-<seed>.jsonl`` unless the file a previous run
wrote (same generator version, seed and size, per its ``.meta.json``: size and mtime) is there.
Everything comes from one ``random.Random(seed)``; writing it takes 20-60 s.

    .venv/bin/python bench/gen_big_session.py [--dir /tmp/agent-tui-bench] [--bytes N]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

GENERATOR_VERSION = 2
DEFAULT_SEED = 20250311
DEFAULT_BYTES = 1 << 30  # 1 GiB
DEFAULT_DIR = Path("/tmp/agent-tui-bench")
TOOL_OUTPUT_CAP = 50 * 1024
#: The last answer's last line: the app's first frame shows the conversation's tail when it shows this.
TAIL_MARKER = "All done: TAILMARK1GB"
COMPACT_EVERY = 4000  # entries
BRANCH_AT = (0.2, 0.45, 0.7, 0.9)  # fractions of the size target

_encode = msgspec.json.Encoder().encode

_WORDS = [
    "session",
    "entry",
    "index",
    "parent",
    "leaf",
    "branch",
    "tree",
    "projection",
    "context",
    "message",
    "model",
    "tool",
    "result",
    "file",
    "line",
    "byte",
    "cache",
    "writer",
    "reader",
    "append",
    "lock",
    "fsync",
    "path",
    "node",
    "child",
    "root",
    "label",
    "summary",
    "compaction",
    "token",
    "budget",
    "request",
    "provider",
    "stream",
    "event",
    "handler",
    "state",
    "config",
    "option",
    "value",
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "for",
    "with",
    "on",
    "is",
    "it",
    "this",
    "that",
    "we",
    "should",
    "will",
    "can",
    "not",
    "but",
    "when",
    "then",
    "also",
    "first",
    "last",
    "next",
    "previous",
    "new",
    "old",
    "current",
    "active",
    "hidden",
    "replaced",
    "kept",
    "restored",
    "pinned",
]


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Pools:
    """Text to slice from: prose words, code-ish lines, base64 image bytes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        lines: list[str] = []
        for i in range(40_000):
            indent = " " * (4 * rng.randint(0, 3))
            words = " ".join(rng.choices(_WORDS, k=rng.randint(2, 12)))
            kind = i % 4
            if kind == 0:
                lines.append(f"{indent}def {rng.choice(_WORDS)}_{i}(self, value: int) -> str:  # {words}")
            elif kind == 1:
                lines.append(f"{indent}self.{rng.choice(_WORDS)} = {rng.choice(_WORDS)}[{i}]  # {words}")
            elif kind == 2:
                lines.append(f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py:{i}: {words}")
            else:
                lines.append(f"{indent}{words}")
        self.text = "\n".join(lines)  # ~1.7 MB
        self.b64 = base64.b64encode(rng.randbytes(3 << 20)).decode()  # 4 MiB of base64

    def prose(self, chars: int) -> str:
        words: list[str] = []
        n = 0
        choice = self.rng.choice
        while n < chars:
            w = choice(_WORDS)
            words.append(w)
            n += len(w) + 1
        return " ".join(words)

    def output(self, chars: int) -> str:
        """``chars`` characters of output, from a random line start (repeating the pool if needed)."""
        out: list[str] = []
        text = self.text
        while chars > 0:
            start = text.find("\n", self.rng.randrange(len(text) - 1)) + 1
            piece = text[start : start + chars]
            out.append(piece)
            chars -= len(piece)
        return "".join(out)

    def image(self, size: int) -> str:
        size -= size % 4
        start = self.rng.randrange(0, len(self.b64) - size) // 4 * 4 if size < len(self.b64) else 0
        data = self.b64[start : start + size]
        while len(data) < size:
            data += self.b64[: size - len(data)]
        return data


class _Writer:
    def __init__(self, path: Path, seed: int, target: int) -> None:
        self.rng = random.Random(seed)
        self.pools = _Pools(self.rng)
        self.f = open(path, "wb", buffering=1 << 22)  # noqa: SIM115
        self.target = target
        self.bytes = 0
        self.entries = 0
        self.counts: dict[str, int] = {}
        self.clock = 1741683600000  # 2025-03-11T09:00:00Z
        self.leaf: str | None = None
        self.path: list[str] = []  # the current branch's ids since the last compaction
        self.turn_ends: list[int] = []  # positions in ``path`` where a turn ended
        self.users: list[int] = []  # positions in ``path`` of user messages
        self.ids: set[str] = set()
        self.context_tokens = 12_000
        self.compactions = 0
        self.branches = 0
        self.images = 0
        self.huge = 0
        self.tool_bytes = 0

    def new_id(self) -> str:
        while True:
            eid = f"{self.rng.getrandbits(32):08x}"
            if eid not in self.ids:
                self.ids.add(eid)
                return eid

    def tick(self, lo: int = 20, hi: int = 4000) -> int:
        self.clock += self.rng.randint(lo, hi)
        return self.clock

    def line(self, obj: dict[str, Any]) -> None:
        data = _encode(obj) + b"\n"
        self.f.write(data)
        self.bytes += len(data)

    def append(self, etype: str, payload: dict[str, Any], parent: str | bool | None = False) -> str:
        eid = self.new_id()
        parent_id = self.leaf if parent is False else parent
        if parent is not False:  # a leaf move: the tracked path is cut back to the new parent
            cut = self.path.index(parent_id) + 1 if parent_id in self.path else 0  # type: ignore[arg-type]
            del self.path[cut:]
            self.turn_ends = [p for p in self.turn_ends if p < cut]
            self.users = [p for p in self.users if p < cut]
        self.line(
            {"type": etype, "id": eid, "parentId": parent_id, "timestamp": _iso(self.tick()), **payload}
        )
        self.path.append(eid)
        self.leaf = eid
        self.entries += 1
        key = etype if etype != "message" else f"message/{payload['message']['role']}"
        self.counts[key] = self.counts.get(key, 0) + 1
        return eid

    def message(self, message: dict[str, Any], parent: str | bool | None = False) -> str:
        message["timestamp"] = self.clock
        return self.append("message", {"message": message}, parent)

    def usage(self) -> dict[str, Any]:
        rng = self.rng
        self.context_tokens = min(190_000, self.context_tokens + rng.randint(200, 3000))
        output = rng.randint(40, 3500)
        cache_read = int(self.context_tokens * rng.uniform(0.7, 0.98))
        fresh = max(1, self.context_tokens - cache_read)
        cost = {
            "input": fresh * 3e-6,
            "output": output * 15e-6,
            "cacheRead": cache_read * 3e-7,
            "cacheWrite": 0.0,
        }
        cost["total"] = sum(cost.values())
        return {
            "input": fresh,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": 0,
            "totalTokens": fresh + output + cache_read,
            "cost": cost,
        }

    def user(self, parent: str | bool | None = False) -> None:
        text = self.pools.prose(self.rng.randint(40, 1200))
        self.tick(20_000, 400_000)
        self.users.append(len(self.path))
        self.message({"role": "user", "content": [{"type": "text", "text": text}]}, parent)

    def assistant(self, calls: int, final: bool = False, tail: str = "") -> list[tuple[str, str]]:
        rng = self.rng
        p = self.pools
        content: list[dict[str, Any]] = []
        if rng.random() < 0.3:
            content.append(
                {
                    "type": "thinking",
                    "thinking": p.prose(rng.randint(150, 1500)),
                    "thinkingSignature": base64.b64encode(rng.randbytes(300)).decode(),
                }
            )
        if final or rng.random() < 0.55:
            text = p.prose(rng.randint(200, 2500) if final else rng.randint(40, 500))
            content.append({"type": "text", "text": text + tail})
        made: list[tuple[str, str]] = []
        for _ in range(calls):
            name = rng.choices(("read", "bash", "edit", "grep"), weights=(40, 35, 15, 10))[0]
            call_id = f"toolu_{rng.getrandbits(64):016x}"
            args: dict[str, Any] = {"path": f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"}
            if name == "bash":
                args = {"command": f"cd /home/dev/proj && .venv/bin/pytest -q -k {rng.choice(_WORDS)}"}
            elif name == "edit":
                args |= {"oldText": p.output(rng.randint(40, 400)), "newText": p.output(rng.randint(40, 400))}
            content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
            made.append((call_id, name))
        self.tick(2000, 40_000)
        self.message(
            {
                "role": "assistant",
                "content": content,
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": self.usage(),
                "stopReason": "stop" if final else "toolUse",
            }
        )
        return made

    def tool_result(self, call_id: str, name: str) -> None:
        rng = self.rng
        before = self.bytes
        blocks: list[dict[str, Any]]
        if name == "edit":
            blocks = [{"type": "text", "text": "Successfully replaced text."}]
        elif name == "read" and rng.random() < 0.02:
            self.images += 1
            size = int(rng.uniform(150_000, 1_500_000))
            blocks = [
                {"type": "text", "text": "Read image file [image/png]"},
                {"type": "image", "data": self.pools.image(size), "mimeType": "image/png"},
            ]
        elif rng.random() < 1 / 1500:
            self.huge += 1
            blocks = [{"type": "text", "text": self.pools.output(rng.randint(2 << 20, 8 << 20))}]
        else:
            size = min(TOOL_OUTPUT_CAP, int(2500 * rng.lognormvariate(0.0, 1.2)))
            blocks = [{"type": "text", "text": self.pools.output(max(16, size))}]
        self.tick(100, 6000)
        self.message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": blocks,
                "isError": False,
            }
        )
        self.tool_bytes += self.bytes - before

    def turn(self, parent: str | bool | None = False, tail: str = "") -> None:
        rng = self.rng
        self.user(parent)
        rounds = rng.choices((1, 2, 4, 6, 9, 12, 16), weights=(4, 5, 6, 6, 5, 4, 2))[0]
        for _ in range(rounds):
            calls = rng.choices((1, 2, 3), weights=(75, 18, 7))[0]
            for call_id, name in self.assistant(calls):
                self.tool_result(call_id, name)
        self.assistant(0, final=True, tail=tail)
        self.turn_ends.append(len(self.path) - 1)

    def compact(self) -> None:
        kept = [p for p in self.users if p >= len(self.path) - 60]
        first_kept = self.path[kept[0]] if kept else self.leaf
        p = self.pools
        summary = "## Goal\n" + p.prose(400) + "\n\n## Progress\n"
        summary += "\n".join(f"- [x] {p.prose(80)}" for _ in range(12))
        summary += "\n\n## Next steps\n" + p.prose(500)
        self.append(
            "compaction",
            {
                "summary": summary,
                "firstKeptEntryId": first_kept,
                "tokensBefore": self.context_tokens,
                "details": {
                    "readFiles": [f"src/{w}.py" for w in self.rng.sample(_WORDS, 6)],
                    "modifiedFiles": [],
                },
            },
        )
        self.compactions += 1
        self.context_tokens = 24_000
        # keep the path from the first kept entry on: branches never go back past a compaction
        cut = self.path.index(first_kept) if first_kept in self.path else len(self.path) - 1
        del self.path[:cut]
        self.turn_ends = [e - cut for e in self.turn_ends if e >= cut]
        self.users = [u - cut for u in self.users if u >= cut]

    def branch(self, summarized: bool) -> None:
        """Leave the current branch: go back a few turns and continue from there."""
        if len(self.turn_ends) < 4:
            return
        target = self.path[self.turn_ends[-4]]
        old_leaf = self.leaf
        if summarized:
            self.append(
                "branch_summary",
                {"fromId": old_leaf, "summary": "## Abandoned approach\n\n" + self.pools.prose(900)},
                parent=target,
            )
            self.turn()
        else:
            self.turn(parent=target)
        self.branches += 1

    def run(self) -> None:
        self.line(
            {
                "type": "session",
                "version": 3,
                "id": "0195d2a0-7c1e-7000-8000-000001000001",
                "timestamp": _iso(self.clock),
                "cwd": "/home/dev/proj",
            }
        )
        self.append("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"})
        self.append("thinking_level_change", {"thinkingLevel": "medium"})
        self.turn()
        self.append("session_info", {"name": "One gigabyte of session"})
        since_compaction = 0
        branches = list(BRANCH_AT)
        while self.bytes < self.target - (4 << 20):
            before = self.entries
            if branches and self.bytes >= branches[0] * self.target:
                branches.pop(0)
                self.branch(summarized=len(branches) % 2 == 0)
            elif since_compaction >= COMPACT_EVERY:
                self.compact()
                since_compaction = 0
            elif self.rng.random() < 0.01 and self.users:
                target = self.path[self.rng.choice(self.users)]
                self.append("label", {"targetId": target, "label": f"checkpoint {self.entries}"})
            else:
                self.turn()
            since_compaction += self.entries - before
        self.turn(tail=f"\n\n{TAIL_MARKER}")  # the conversation's tail: the first frame shows it
        self.f.close()


def generate(path: Path, seed: int = DEFAULT_SEED, size: int = DEFAULT_BYTES) -> dict[str, Any]:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    w = _Writer(tmp, seed, size)
    w.run()
    os.replace(tmp, path)
    st = path.stat()
    return {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "target_bytes": size,
        "bytes": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "entries": w.entries,
        "tool_result_bytes": w.tool_bytes,
        "images": w.images,
        "huge_outputs": w.huge,
        "compactions": w.compactions,
        "branches": w.branches,
        "counts": dict(sorted(w.counts.items())),
    }


def ensure_big_session(
    data_dir: Path = DEFAULT_DIR, seed: int = DEFAULT_SEED, size: int = DEFAULT_BYTES
) -> tuple[Path, dict[str, Any], bool]:
    """The big session, generated unless the one written before is there. Returns (path, meta, reused)."""
    path = data_dir / f"big-session-{seed}.jsonl"
    meta_path = data_dir / f"big-session-{seed}.meta.json"
    want = {"generator_version": GENERATOR_VERSION, "seed": seed, "target_bytes": size}
    try:
        meta = json.loads(meta_path.read_text())
        st = path.stat()
        if all(meta.get(k) == v for k, v in want.items()) and (st.st_size, st.st_mtime_ns) == (
            meta["bytes"],
            meta["mtime_ns"],
        ):
            return path, meta, True
    except (OSError, ValueError, KeyError):
        pass
    meta = generate(path, seed, size)
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return path, meta, False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--bytes", type=int, default=DEFAULT_BYTES)
    args = parser.parse_args(argv)
    path, meta, reused = ensure_big_session(args.dir, args.seed, args.bytes)
    print(f"{path}: {'reused' if reused else 'written'}")
    print(json.dumps(meta, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

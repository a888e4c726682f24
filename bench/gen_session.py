"""A deterministic, realistic pi v3 session for the benchmarks.

``ensure_session`` writes ``bench/data/session-<seed>.jsonl`` (50 MiB, 20,000
entries by default) unless a file made by the same generator version, seed,
entry count and size target is already there. Everything comes from one
``random.Random(seed)``: the same arguments give the same bytes.

What the file holds, in the proportions of a long coding session:

* a system message (prompt + tool declarations), model and thinking-level
  settings, a session name;
* about a thousand turns: a user prompt, then rounds of an assistant message
  (thinking, text, one to three tool calls, usage with costs) followed by
  one tool result per call (file reads, bash output, grep hits, edit diffs),
  then a final assistant answer. Tool results hold most of the bytes; their
  sizes follow a log-normal law capped at pi's 50 KB output limit;
* four abandoned branches (a plain leaf move, a pi ``branch_summary``, an
  agent-tui branch marker, a short one near the end);
* one compaction with a kept range and a system-message snapshot, a
  mid-session tool change, two model changes, a thinking-level change;
* labels (one cleared), a pin, extension ``custom`` and ``custom_message``
  entries, ``!`` bash executions (one excluded from context), a ``usage``
  entry, an aborted and an errored assistant message;
* six ``context_edit`` entries: hides, replacements, a restore, and one
  targeting a compacted-away entry (no effect).
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import itertools
import json
import os
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

GENERATOR_VERSION = 1
DEFAULT_SEED = 20250310
DEFAULT_ENTRIES = 20_000
DEFAULT_BYTES = 50 * 1024 * 1024
TOOL_OUTPUT_CAP = 50 * 1024  # pi truncates read/bash output at 50 KB

_encode = msgspec.json.Encoder().encode

_WORDS = (
    "session entry index parent leaf branch tree projection context message model tool result "
    "file line byte cache writer reader append lock fsync path node child root label summary "
    "compaction token budget request provider stream event handler state config option value "
    "error warning retry timeout buffer queue worker thread async await future task test fixture "
    "assert mock patch module package import export class function method argument parameter "
    "return yield generator iterator decorator property field schema validate parse encode decode "
    "json bytes string integer float list dict set tuple record struct union literal optional "
    "the a of to and in for with on is it this that we should will can not but when then also "
    "first last next previous new old current active hidden replaced kept restored pinned"
)

_IDENTS = (
    "session entry index parent leaf branch tree node child root label summary cache writer reader "
    "buffer queue worker state config option value handler request response stream event token "
    "budget model provider message result path line offset size count total item key data raw "
    "text content block chunk frame header footer panel view widget screen theme style"
)

WORDS = _WORDS.split()
IDENTS = _IDENTS.split()
TYPES = ("str", "int", "bytes", "bool", "float", "Path", "Entry", "Session", "dict[str, Any]", "list[str]")
ERRORS = ("ValueError", "KeyError", "StoreError", "RuntimeError", "TypeError", "OSError")
PACKAGES = ("agent_tui", "store", "projection", "providers", "tui", "cli", "agent", "utils")
UNICODE_BITS = ("café", "naïve", "“smart quotes”", "— em dash", "→", "✓", "≥ 0", "µs", "日本語", "Ω")


def _now_iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _cost(text: str) -> int:
    """Bytes ``text`` takes inside a JSON string (without the quotes)."""
    return len(_encode(text)) - 2


class _Pools:
    """Precomputed line pools, so that 40 MB of tool output costs slicing, not random calls."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sentences = [self._sentence() for _ in range(4000)]
        self.files: list[tuple[str, int, int]] = []  # path, first line, line count (in code_lines)
        self.code_lines: list[str] = []
        while len(self.code_lines) < 40_000:
            path = f"src/{rng.choice(PACKAGES)}/{rng.choice(IDENTS)}_{rng.choice(IDENTS)}.py"
            lines = self._code_file(rng.randint(80, 1600))
            self.files.append((path, len(self.code_lines), len(lines)))
            self.code_lines.extend(lines)
        self.paths = [f[0] for f in self.files]
        self.output_lines = self._output_lines(40_000)
        self.code = _LinePool(self.code_lines)
        self.output = _LinePool(self.output_lines)
        self.grep = _LinePool(
            [
                f"{rng.choice(self.paths)}:{rng.randint(1, 1500)}:{rng.choice(self.code_lines).strip()}"
                for _ in range(20_000)
            ]
        )
        self.listing = _LinePool(self._listing_lines(10_000))

    def _sentence(self) -> str:
        rng = self.rng
        words = [rng.choice(WORDS) for _ in range(rng.randint(5, 22))]
        if rng.random() < 0.15:
            words.insert(rng.randrange(len(words)), f"`{rng.choice(IDENTS)}_{rng.choice(IDENTS)}()`")
        if rng.random() < 0.05:
            words.insert(rng.randrange(len(words)), rng.choice(UNICODE_BITS))
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice(".....?:")

    def prose(self, chars: int) -> str:
        rng = self.rng
        out: list[str] = []
        size = 0
        i = rng.randrange(len(self.sentences))
        while size < chars:
            s = self.sentences[i % len(self.sentences)]
            i += 1
            if out and rng.random() < 0.12:
                out.append("\n\n")
            out.append(s)
            size += len(s) + 1
        return " ".join(out).replace(" \n\n ", "\n\n")

    def _code_file(self, n: int) -> list[str]:
        rng = self.rng
        name = lambda: rng.choice(IDENTS)  # noqa: E731
        lines = [
            f'"""{self._sentence()}"""',
            "",
            "from __future__ import annotations",
            "",
            f"import {rng.choice(('os', 're', 'json', 'msgspec', 'asyncio', 'hashlib'))}",
            f"from {rng.choice(PACKAGES)}.{name()} import {name().title()}, {name()}_{name()}",
            "",
        ]
        indent = ""
        while len(lines) < n:
            r = rng.random()
            if r < 0.06:
                lines += [
                    "",
                    "",
                    f"class {name().title()}{name().title()}({rng.choice(('object', 'Base', 'msgspec.Struct'))}):",
                ]
                lines.append(f'    """{self._sentence()}"""')
                indent = "    "
            elif r < 0.16:
                a, b = name(), name()
                lines += [
                    "",
                    f"{indent}def {name()}_{name()}(self, {a}: {rng.choice(TYPES)}, {b}: {rng.choice(TYPES)} = None) -> {rng.choice(TYPES)}:",
                    f'{indent}    """{self._sentence()}"""',
                    f"{indent}    if {a} is None:",
                    f'{indent}        raise {rng.choice(ERRORS)}(f"{{self.path}}: {name()} {{{a}!r}} is not {name()}")',
                ]
            elif r < 0.30:
                lines.append(f"{indent}    {name()} = self.{name()}.get({name()}, {rng.randint(0, 4096)})")
            elif r < 0.40:
                lines += [
                    f"{indent}    for {name()} in self.{name()}s:",
                    f"{indent}        {name()}.{name()}({name()}={name()})",
                ]
            elif r < 0.48:
                lines.append(f"{indent}    # {self._sentence()}")
            elif r < 0.54:
                lines.append(f'{indent}    pattern = re.compile(r"^\\s*(\\w+)\\s*=\\s*\\"(.*)\\"$")')
            elif r < 0.60:
                lines.append(
                    f"{indent}\treturn {name()}[{rng.randint(0, 9)}:] + {name()}  # tab-indented legacy"
                )
            elif r < 0.63:
                lines.append(f"{indent}    label = {rng.choice(UNICODE_BITS)!r}")
            elif r < 0.75:
                lines.append(f"{indent}    return {{{name()!r}: self.{name()}, {name()!r}: len({name()})}}")
            elif r < 0.85:
                lines.append(f"{indent}    if not {name()} or {name()}.{name()} > {rng.randint(1, 100)}:")
                lines.append(f"{indent}        continue")
            else:
                lines.append(
                    f"{indent}    self.{name()}_{name()} = await self.{name()}.{name()}({name()}, timeout={rng.randint(1, 60)}.0)"
                )
        return lines[:n]

    def _output_lines(self, n: int) -> list[str]:
        rng = self.rng
        out: list[str] = []
        while len(out) < n:
            r = rng.random()
            if r < 0.35:  # pytest -v
                for _ in range(rng.randint(5, 60)):
                    verdict = "PASSED" if rng.random() < 0.93 else rng.choice(("FAILED", "SKIPPED", "XFAIL"))
                    out.append(
                        f"tests/test_{rng.choice(IDENTS)}.py::test_{rng.choice(IDENTS)}_{rng.choice(IDENTS)} {verdict}"
                        f"{' ' * rng.randint(1, 20)}[{rng.randint(0, 100):3d}%]"
                    )
            elif r < 0.50:  # a traceback
                out.append("Traceback (most recent call last):")
                for _ in range(rng.randint(2, 8)):
                    out.append(
                        f'  File "/home/dev/proj/{rng.choice(self.paths)}", line {rng.randint(1, 900)}, in {rng.choice(IDENTS)}'
                    )
                    out.append(f"    {rng.choice(self.code_lines).strip()}")
                out.append(f"{rng.choice(ERRORS)}: {self._sentence()}")
            elif r < 0.65:  # git log / status
                for _ in range(rng.randint(3, 25)):
                    out.append(
                        f"{rng.getrandbits(28):07x} {rng.choice(('fix', 'feat', 'refactor', 'test', 'docs'))}: {self._sentence()}"
                    )
            elif r < 0.80:  # a diff
                out.append(f"diff --git a/{(p := rng.choice(self.paths))} b/{p}")
                out.append(
                    f"@@ -{rng.randint(1, 500)},{rng.randint(3, 20)} +{rng.randint(1, 500)},{rng.randint(3, 20)} @@"
                )
                for _ in range(rng.randint(4, 30)):
                    out.append(rng.choice(" +-") + rng.choice(self.code_lines))
            elif r < 0.90:  # npm / build log
                for _ in range(rng.randint(3, 20)):
                    out.append(
                        rng.choice(("npm warn deprecated ", "  ✓ built ", "  → compiling ", "  ✗ "))
                        + self._sentence()
                    )
            else:  # ruff / mypy
                for _ in range(rng.randint(2, 15)):
                    out.append(
                        f"{rng.choice(self.paths)}:{rng.randint(1, 900)}:{rng.randint(1, 80)}: {rng.choice(('E501', 'F401', 'B008', 'error', 'note'))} {self._sentence()}"
                    )
        return out[:n]

    def _listing_lines(self, n: int) -> list[str]:
        rng = self.rng
        return [
            f"{rng.choice(('-rw-r--r--', 'drwxr-xr-x', '-rwxr-xr-x'))} 1 dev dev {rng.randint(0, 90000):7d} "
            f"Mar {rng.randint(1, 28):2d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {rng.choice(self.paths)}"
            for _ in range(n)
        ]


class _LinePool:
    """A circular pool of lines with prefix sums of their JSON cost, for slicing by byte target."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines + lines  # doubled: slices may wrap
        costs = [_cost(line) + 2 for line in self.lines]  # + the escaped newline
        self.prefix = [0, *itertools.accumulate(costs)]
        self.n = len(lines)

    def take(self, start: int, target: int) -> tuple[str, int]:
        """Lines from ``start`` whose joined JSON cost is about ``target`` (at least one line)."""
        start %= self.n
        base = self.prefix[start]
        end = bisect.bisect_left(self.prefix, base + target, lo=start + 1)
        end = min(max(end, start + 1), start + self.n)
        text = "\n".join(self.lines[start:end])
        return text, self.prefix[end] - base - 2


@dataclass
class _Filler:
    """A tool result whose text is written once the byte budget is known."""

    block: dict[str, Any]
    kind: str
    weight: float
    extra: str = ""  # text appended after the generated body (a truncation notice, an exit code)


@dataclass
class _State:
    rng: random.Random
    pools: _Pools
    entries: list[dict[str, Any]] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    path: list[str] = field(default_factory=list)  # ids from the root to the leaf
    roles: dict[str, str] = field(default_factory=dict)  # id -> kind of entry (for picking targets)
    turn_ends: list[int] = field(default_factory=list)  # positions in ``path`` that end a turn
    fillers: list[_Filler] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)  # toolResult id -> relative output size
    clock: int = 1741597200000  # 2025-03-10T09:00:00Z
    leaf: str | None = None
    model: tuple[str, str, str] = ("anthropic", "claude-sonnet-4-5", "anthropic-messages")
    context_tokens: int = 12_000
    compaction_pos: int = -1


class _Generator:
    def __init__(self, seed: int, total_entries: int) -> None:
        self.rng = random.Random(seed)
        self.s = _State(self.rng, _Pools(self.rng))
        self.total = total_entries

    # -- primitives -----------------------------------------------------------------

    def new_id(self) -> str:
        while True:
            eid = f"{self.rng.getrandbits(32):08x}"
            if eid not in self.s.ids:
                self.s.ids.add(eid)
                return eid

    def tick(self, lo: int = 400, hi: int = 9000) -> int:
        self.s.clock += self.rng.randint(lo, hi)
        return self.s.clock

    def append(
        self, etype: str, payload: dict[str, Any], kind: str = "", parent: str | bool | None = False
    ) -> str:
        s = self.s
        eid = self.new_id()
        parent_id = s.leaf if parent is False else parent
        if parent is not False:  # a leaf move: cut the tracked path back to the new parent
            cut = s.path.index(parent_id) + 1 if parent_id is not None else 0
            del s.path[cut:]
            s.turn_ends = [p for p in s.turn_ends if p < cut]
        entry = {
            "type": etype,
            "id": eid,
            "parentId": parent_id,
            "timestamp": _now_iso(self.tick(20, 400)),
            **payload,
        }
        s.entries.append(entry)
        s.path.append(eid)
        s.roles[eid] = kind or etype
        s.leaf = eid
        return eid

    def message(self, message: dict[str, Any], parent: str | bool | None = False) -> str:
        message["timestamp"] = self.s.clock
        return self.append("message", {"message": message}, message["role"], parent)

    def tool_call_id(self) -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return "toolu_01" + "".join(self.rng.choices(alphabet, k=22))

    def usage(self) -> dict[str, Any]:
        rng = self.rng
        s = self.s
        s.context_tokens = min(190_000, s.context_tokens + rng.randint(200, 3000))
        output = rng.randint(40, 3500)
        cache_read = int(s.context_tokens * rng.uniform(0.7, 0.98))
        cache_write = rng.randint(0, 4000)
        fresh = max(1, s.context_tokens - cache_read)
        price_in, price_out = (15.0, 75.0) if "opus" in s.model[1] else (3.0, 15.0)
        cost = {
            "input": fresh * price_in / 1e6,
            "output": output * price_out / 1e6,
            "cacheRead": cache_read * price_in * 0.1 / 1e6,
            "cacheWrite": cache_write * price_in * 1.25 / 1e6,
        }
        cost["total"] = sum(cost.values())
        return {
            "input": fresh,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": fresh + output + cache_read + cache_write,
            "cost": cost,
        }

    def system_message(self, tools: list[dict[str, Any]], content: str) -> dict[str, Any]:
        return {"role": "system", "content": content, "toolsAdded": tools, "timestamp": self.s.clock}

    # -- building blocks --------------------------------------------------------------

    def tool_declarations(self) -> list[dict[str, Any]]:
        p = self.s.pools
        tools = []
        for name, params in (
            ("read", {"path": "string", "offset": "number", "limit": "number"}),
            ("bash", {"command": "string", "timeout": "number"}),
            ("edit", {"path": "string", "oldText": "string", "newText": "string"}),
            ("write", {"path": "string", "content": "string"}),
            ("grep", {"pattern": "string", "path": "string", "glob": "string"}),
            ("find", {"pattern": "string", "path": "string"}),
            ("ls", {"path": "string", "limit": "number"}),
        ):
            tools.append(
                {
                    "name": name,
                    "description": p.prose(self.rng.randint(200, 700)),
                    "parameters": {
                        "type": "object",
                        "properties": {k: {"type": v, "description": p.prose(60)} for k, v in params.items()},
                        "required": [next(iter(params))],
                    },
                }
            )
        return tools

    def tool_call(self) -> tuple[dict[str, Any], str, float]:
        """A toolCall block, the tool's name, and the relative size of its result."""
        rng = self.rng
        p = self.s.pools
        r = rng.random()
        path = rng.choice(p.paths)
        if r < 0.36:
            name, args, weight = "read", {"path": path}, 2.2
            if rng.random() < 0.3:
                args |= {"offset": rng.randint(1, 800), "limit": rng.choice((100, 200, 400))}
        elif r < 0.68:
            cmd = rng.choice(
                (
                    "cd /home/dev/proj && .venv/bin/pytest -q tests/ 2>&1 | tail -80",
                    "git status --short && git log --oneline -20",
                    "git diff HEAD~1 -- src/",
                    ".venv/bin/ruff check . && .venv/bin/mypy",
                    "npm run build 2>&1",
                    f"grep -rn '{rng.choice(IDENTS)}' src/ | head -50",
                    f"python -c 'import {rng.choice(PACKAGES)}; print(\"ok\")'",
                )
            )
            name, args, weight = "bash", {"command": cmd}, 1.3
            if rng.random() < 0.2:
                args["timeout"] = rng.choice((60, 120, 600))
        elif r < 0.84:
            start = rng.randrange(len(p.code_lines) - 20)
            old = "\n".join(p.code_lines[start : start + rng.randint(1, 12)])
            new = old.replace("self.", "self._", 2) + "\n" + rng.choice(p.code_lines)
            name, args, weight = "edit", {"path": path, "oldText": old, "newText": new}, 0.02
        elif r < 0.91:
            name, args, weight = (
                "grep",
                {"pattern": f"{rng.choice(IDENTS)}_{rng.choice(IDENTS)}", "path": "src"},
                0.5,
            )
        elif r < 0.94:
            start = rng.randrange(len(p.code_lines) - 200)
            content = "\n".join(p.code_lines[start : start + rng.randint(20, 160)])
            name, args, weight = "write", {"path": path, "content": content}, 0.01
        elif r < 0.97:
            name, args, weight = "find", {"pattern": "*.py", "path": rng.choice(("src", "tests", "."))}, 0.35
        else:
            name, args, weight = "ls", {"path": rng.choice(("src", "tests", ".", "docs"))}, 0.3
        block = {"type": "toolCall", "id": self.tool_call_id(), "name": name, "arguments": args}
        return block, name, weight

    def assistant(
        self, calls: int, final: bool = False, stop: str | None = None
    ) -> tuple[str, list[dict[str, Any]]]:
        rng = self.rng
        p = self.s.pools
        content: list[dict[str, Any]] = []
        if rng.random() < 0.3:
            signature = base64.b64encode(rng.randbytes(rng.randint(250, 900))).decode()
            content.append(
                {
                    "type": "thinking",
                    "thinking": p.prose(rng.randint(150, 1500)),
                    "thinkingSignature": signature,
                }
            )
        if final:
            content.append({"type": "text", "text": p.prose(rng.randint(200, 2500))})
        elif rng.random() < 0.55:
            content.append({"type": "text", "text": p.prose(rng.randint(40, 500))})
        calls_made = []
        for _ in range(calls):
            block, name, weight = self.tool_call()
            content.append(block)
            calls_made.append({"block": block, "name": name, "weight": weight})
        provider, model, api = self.s.model
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": api,
            "provider": provider,
            "model": model,
            "responseId": "msg_01" + base64.b32encode(rng.randbytes(15)).decode().lower()[:22],
            "usage": self.usage(),
            "stopReason": stop or ("stop" if final else "toolUse"),
        }
        if stop == "error":
            message["errorMessage"] = "529 overloaded_error: Overloaded"
        self.tick(2000, 40_000)
        eid = self.message(message)
        if final:
            self.s.roles[eid] = "assistant/final"
        return eid, calls_made

    def tool_result(self, call: dict[str, Any]) -> str:
        rng = self.rng
        name = call["name"]
        block = {"type": "text", "text": ""}
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["block"]["id"],
            "toolName": name,
            "content": [block],
            "isError": False,
        }
        weight = call["weight"] * rng.lognormvariate(0.0, 1.0)
        extra = ""
        if name == "edit":
            args = call["block"]["arguments"]
            block["text"] = f"Successfully replaced text in {args['path']}."
            diff = "\n".join(
                [f"-{line}" for line in args["oldText"].split("\n")]
                + [f"+{line}" for line in args["newText"].split("\n")]
            )
            message["details"] = {"diff": diff, "firstChangedLine": rng.randint(1, 900)}
            weight = 0.0
        elif name == "write":
            args = call["block"]["arguments"]
            block["text"] = f"Successfully wrote {len(args['content'].encode())} bytes to {args['path']}"
            weight = 0.0
        elif name == "bash" and rng.random() < 0.12:
            message["isError"] = True
            extra = f"\n\nCommand exited with code {rng.choice((1, 1, 2, 127))}"
        elif name == "read" and rng.random() < 0.25:
            first = rng.randint(1, 400)
            extra = f"\n\n[Showing lines {first}-{first + 1999} of {first + 2000 + rng.randint(1, 3000)}. Use offset={first + 2000} to continue.]"
        self.tick(100, 6000)
        eid = self.message(message)
        if weight > 0:
            self.s.fillers.append(_Filler(block, name, weight, extra))
            self.s.weights[eid] = weight
        return eid

    def user(self, parent: str | bool | None = False) -> str:
        rng = self.rng
        text = self.s.pools.prose(rng.randint(40, 1200))
        if rng.random() < 0.1:
            text += (
                "\n\n```\n"
                + "\n".join(rng.choice(self.s.pools.output_lines) for _ in range(rng.randint(3, 25)))
                + "\n```"
            )
        self.tick(20_000, 400_000)
        content: str | list[dict[str, Any]] = (
            [{"type": "text", "text": text}] if rng.random() < 0.85 else text
        )
        return self.message({"role": "user", "content": content}, parent)

    def turn(self, budget: int, parent: str | bool | None = False) -> None:
        """One user prompt and the agent's work on it, in at most ``budget`` entries (>= 2)."""
        rng = self.rng
        s = self.s
        self.user(parent)
        left = budget - 2  # keep room for the final answer
        rounds = rng.choices((1, 2, 4, 6, 9, 12, 16, 22), weights=(4, 5, 6, 6, 5, 4, 2, 1))[0]
        for _ in range(rounds):
            if left < 2:
                break
            calls = min(rng.choices((1, 2, 3), weights=(75, 18, 7))[0], left - 1)
            if left - 1 - calls == 1:  # never leave exactly one entry over
                calls += 1
            stop = None
            if rng.random() < 0.004 and left > 2:
                stop = rng.choice(("aborted", "error"))
                calls = 0
            _, made = self.assistant(calls, stop=stop)
            for call in made:
                self.tool_result(call)
            left -= 1 + len(made)
        self.assistant(0, final=True)
        s.turn_ends.append(len(s.path) - 1)

    # -- events -------------------------------------------------------------------------

    def branch_back(self, min_back: int, max_back: int, style: str) -> None:
        """Leave the current branch: continue from the end of a turn some entries back."""
        s = self.s
        here = len(s.path) - 1
        candidates = [p for p in s.turn_ends if min_back <= here - p <= max_back and p > s.compaction_pos + 5]
        if not candidates:
            return
        target = s.path[self.rng.choice(candidates)]
        old_leaf = s.leaf
        p = s.pools
        if style == "summary":
            self.append(
                "branch_summary",
                {
                    "fromId": old_leaf,
                    "summary": "## Abandoned approach\n\n" + p.prose(self.rng.randint(600, 1600)),
                    "details": {
                        "readFiles": self.rng.sample(p.paths, 4),
                        "modifiedFiles": self.rng.sample(p.paths, 2),
                    },
                },
                parent=target,
            )
        elif style == "marker":
            self.append(
                "custom", {"customType": "agent-tui.branch", "data": {"fromId": old_leaf}}, parent=target
            )
        else:  # a plain leaf move: the next prompt continues from the target
            self.turn(self.rng.randint(12, 30), parent=target)

    def compact(self, tools: list[dict[str, Any]], prompt: str) -> None:
        s = self.s
        rng = self.rng
        p = s.pools
        users = [pos for pos in range(len(s.path) - 90, len(s.path)) if s.roles[s.path[pos]] == "user"]
        first_kept = s.path[users[0]] if users else s.leaf
        summary = "## Goal\n" + p.prose(400) + "\n\n## Progress\n"
        summary += "\n".join(f"- [x] {p.prose(80)}" for _ in range(12))
        summary += "\n\n## Key decisions\n" + p.prose(1500) + "\n\n## Next steps\n" + p.prose(500)
        tokens_before = s.context_tokens
        self.tick(10_000, 30_000)
        system = self.system_message(tools, prompt)
        system["timestamp"] = s.clock
        self.append(
            "compaction",
            {
                "summary": summary,
                "firstKeptEntryId": first_kept,
                "tokensBefore": tokens_before,
                "details": {"readFiles": rng.sample(p.paths, 12), "modifiedFiles": rng.sample(p.paths, 7)},
                "usage": self.usage(),
                "systemMessage": system,
            },
        )
        s.compaction_pos = len(s.path) - 1
        s.turn_ends = []
        s.context_tokens = 24_000

    def label(self, clear: str | None = None) -> None:
        s = self.s
        if clear is not None:
            self.append("label", {"targetId": clear})  # pi leaves ``label`` out when it clears one
            return
        users = [eid for eid in s.path[-400:] if s.roles[eid] == "user"] or s.path[-1:]
        target = self.rng.choice(users)
        name = self.rng.choice(
            ("checkpoint", "tests green", "before refactor", "bug repro", "good state", "✓ reviewed")
        )
        self.append("label", {"targetId": target, "label": f"{name} {len(s.entries)}"})

    def context_edits(self) -> str:
        """Five edits on the active branch after the compaction, one on a compacted-away entry.

        Returns the id of the hidden entry that is restored later.
        """
        s = self.s
        rng = self.rng
        kept = s.path[s.compaction_pos + 1 :]
        outputs = sorted((eid for eid in kept if eid in s.weights), key=lambda eid: -s.weights[eid])
        big = outputs[:3]  # the largest outputs (sizes follow the weights)
        users = [eid for eid in kept if s.roles[eid] == "user"]
        finals = [eid for eid in kept if s.roles[eid] == "assistant/final"]
        summarized = next(eid for eid in s.path[: s.compaction_pos] if s.roles[eid] == "toolResult")
        self.append("context_edit", {"targetId": big[0], "replacement": None})
        self.append(
            "context_edit",
            {"targetId": big[1], "replacement": {"content": "[48 KB of test output elided by the user]"}},
        )
        self.append(
            "context_edit",
            {"targetId": rng.choice(users), "replacement": {"content": "Fix the flaky lock test first."}},
        )
        self.append(
            "context_edit", {"targetId": rng.choice(finals), "replacement": {"content": "(answer shortened)"}}
        )
        self.append("context_edit", {"targetId": summarized, "replacement": None})
        self.append("context_edit", {"targetId": big[2], "replacement": None})
        return big[2]

    # -- the whole session ----------------------------------------------------------------

    def run(self) -> tuple[dict[str, Any], list[dict[str, Any]], list[_Filler]]:
        s = self.s
        rng = self.rng
        p = s.pools
        header = {
            "type": "session",
            "version": 3,
            "id": "0195d2a0-7c1e-7000-8000-00000000b3c5",
            "timestamp": _now_iso(s.clock),
            "cwd": "/home/dev/proj",
        }
        tools = self.tool_declarations()
        prompt = "You are an expert coding assistant.\n\n" + p.prose(5000)
        self.append("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"})
        self.append("thinking_level_change", {"thinkingLevel": "medium"})
        self.message(self.system_message(tools, prompt))
        self.turn(14)
        self.append("session_info", {"name": "Append-only session store and projection"})

        done: set[str] = set()
        total = self.total
        reserve = 60  # entries kept for the closing events

        def due(name: str, at: float) -> bool:
            if name not in done and len(s.entries) >= at * total:
                done.add(name)
                return True
            return False

        while len(s.entries) < total - reserve:
            left = total - reserve - len(s.entries)
            if due("branch1", 0.15):
                self.branch_back(150, 400, "plain")
            elif due("tools", 0.30):
                extra = [
                    {
                        "name": "web_fetch",
                        "description": p.prose(300),
                        "parameters": {"type": "object", "properties": {"url": {"type": "string"}}},
                    }
                ]
                self.message({"role": "system", "content": "", "toolsAdded": extra})
                tools = tools + extra
            elif due("branch2", 0.35):
                self.branch_back(200, 500, "summary")
            elif due("model1", 0.40):
                s.model = ("anthropic", "claude-opus-4-1", "anthropic-messages")
                self.append("model_change", {"provider": "anthropic", "modelId": "claude-opus-4-1"})
            elif due("compaction", 0.50):
                self.compact(tools, prompt)
                self.append(
                    "usage",
                    {
                        "kind": "compaction",
                        "provider": s.model[0],
                        "model": s.model[1],
                        "usage": self.usage(),
                    },
                )
            elif due("pin", 0.55):
                self.append(
                    "pin",
                    {"targetId": next(e for e in reversed(s.path) if s.roles[e] == "user"), "pinned": True},
                )
            elif due("thinking", 0.60):
                self.append("thinking_level_change", {"thinkingLevel": "high"})
            elif due("branch3", 0.70):
                self.branch_back(150, 450, "marker")
            elif due("rename", 0.75):
                self.append("session_info", {"name": "Append-only store, projection and benchmarks"})
            elif due("model2", 0.80):
                s.model = ("anthropic", "claude-sonnet-4-5", "anthropic-messages")
                self.append("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"})
            elif due("branch4", 0.90):
                self.branch_back(30, 120, "plain")
            elif rng.random() < 0.012:
                self.label()
            elif rng.random() < 0.012:
                self.append(
                    "custom",
                    {
                        "customType": "todo",
                        "data": {
                            "items": [
                                {"text": p.prose(60), "done": rng.random() < 0.5}
                                for _ in range(rng.randint(2, 8))
                            ]
                        },
                    },
                )
            elif rng.random() < 0.02:
                start = rng.randrange(30000)
                output = "\n".join(p.output_lines[start : start + rng.randint(0, 40)])
                message = {
                    "role": "bashExecution",
                    "command": rng.choice(("git status", "ls -la src", "make test")),
                    "output": output,
                    "exitCode": rng.choice((0, 0, 0, 1)),
                    "cancelled": False,
                    "truncated": False,
                }
                if rng.random() < 0.15:
                    message["excludeFromContext"] = True
                self.tick(5000, 60_000)
                self.message(message)
            elif rng.random() < 0.004:
                self.append(
                    "custom_message",
                    {
                        "customType": "reminder",
                        "content": p.prose(rng.randint(100, 600)),
                        "display": True,
                        "details": {"source": "todo-extension"},
                    },
                )
            else:
                self.turn(max(2, min(left, 400)))

        # Closing events: a cleared label, the context edits, a restore, then turns to the exact count.
        labelled = next(e for e in s.entries if e["type"] == "label")
        self.label(clear=labelled["targetId"])
        restored = self.context_edits()
        self.turn(30)
        original = next(e for e in reversed(s.entries) if e["id"] == restored)["message"]["content"]
        self.append(
            "context_edit", {"targetId": restored, "replacement": {"content": original}, "restore": True}
        )
        while len(s.entries) < total:
            left = total - len(s.entries)
            if left == 1:
                self.label()
            else:
                self.turn(min(left, 30))
        return header, s.entries, s.fillers


def _fill(fillers: list[_Filler], pools: _Pools, rng: random.Random, budget: int) -> None:
    """Write every tool result's text so that together they cost ``budget`` bytes of JSON."""
    extras = sum(_cost(f.extra) for f in fillers)
    budget -= extras
    if budget <= 0:
        raise ValueError("the non-tool-output part of the session already exceeds the size target")
    weights = [f.weight for f in fillers]
    lo, hi = 0.0, float(budget)
    for _ in range(60):  # the scale at which the capped sizes add up to the budget
        mid = (lo + hi) / 2
        if sum(min(w * mid, TOOL_OUTPUT_CAP) for w in weights) < budget:
            lo = mid
        else:
            hi = mid
    carry = 0.0
    for f in fillers:
        target = min(f.weight * hi, TOOL_OUTPUT_CAP) + carry
        pool = _pool_for(pools, f.kind)
        text, cost = pool.take(rng.randrange(pool.n), max(1, round(target)))
        carry = target - cost
        f.block["text"] = text + f.extra


def _restored_blocks(edit: dict[str, Any]) -> list[Any]:
    replacement = edit.get("replacement")
    content = replacement.get("content") if isinstance(replacement, dict) else None
    return content if isinstance(content, list) else []


def _adjust(fillers: list[_Filler], pools: _Pools, rng: random.Random, gap: int, skip: set[int]) -> None:
    """Grow or shrink the latest tool outputs by ``gap`` bytes of JSON in all."""
    for f in reversed(fillers):
        if abs(gap) < 64:
            return
        if id(f.block) in skip:
            continue
        body = f.block["text"][: len(f.block["text"]) - len(f.extra)]
        cost = _cost(body)
        target = min(max(cost + gap, 256), TOOL_OUTPUT_CAP)
        if target == cost:
            continue
        pool = _pool_for(pools, f.kind)
        text, new_cost = pool.take(rng.randrange(pool.n), target)
        f.block["text"] = text + f.extra
        gap -= new_cost - cost


def _pool_for(pools: _Pools, kind: str) -> _LinePool:
    return {"read": pools.code, "grep": pools.grep, "find": pools.listing, "ls": pools.listing}.get(
        kind, pools.output
    )


def generate(
    path: Path, seed: int = DEFAULT_SEED, entries: int = DEFAULT_ENTRIES, size: int = DEFAULT_BYTES
) -> dict[str, Any]:
    """Write the session to ``path`` (replacing it) and return its description."""
    gen = _Generator(seed, entries)
    header, body, fillers = gen.run()
    base = len(_encode(header)) + 1 + sum(len(_encode(e)) + 1 for e in body)
    _fill(fillers, gen.s.pools, gen.rng, size - base)
    shared = {id(b) for e in body if e["type"] == "context_edit" for b in _restored_blocks(e)}
    for _ in range(3):  # the restore duplicates one output, and texts end on whole lines: close the gap
        data = b"\n".join([_encode(header)] + [_encode(e) for e in body]) + b"\n"
        gap = size - len(data)
        if abs(gap) < 64:
            break
        _adjust(fillers, gen.s.pools, gen.rng, gap, shared)
    tmp = path.with_suffix(".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_bytes(data)
    os.replace(tmp, path)
    counts: dict[str, int] = {}
    for e in body:
        key = e["type"] if e["type"] != "message" else f"message/{e['message']['role']}"
        counts[key] = counts.get(key, 0) + 1
    tool_bytes = sum(
        len(_encode(e)) + 1 for e in body if e["type"] == "message" and e["message"]["role"] == "toolResult"
    )
    return {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "entries": len(body),
        "target_bytes": size,
        "bytes": len(data),
        "tool_result_bytes": tool_bytes,
        "sha256": hashlib.sha256(data).hexdigest(),
        "counts": dict(sorted(counts.items())),
    }


def ensure_session(
    data_dir: Path, seed: int = DEFAULT_SEED, entries: int = DEFAULT_ENTRIES, size: int = DEFAULT_BYTES
) -> tuple[Path, dict[str, Any], bool]:
    """The benchmark session, generated unless an identical one is present. Returns (path, meta, reused)."""
    path = data_dir / f"session-{seed}.jsonl"
    meta_path = data_dir / f"session-{seed}.meta.json"
    want = {"generator_version": GENERATOR_VERSION, "seed": seed, "entries": entries, "target_bytes": size}
    try:
        meta = json.loads(meta_path.read_text())
        if all(meta.get(k) == v for k, v in want.items()) and path.stat().st_size == meta["bytes"]:
            with open(path, "rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            if digest == meta["sha256"]:
                return path, meta, True
    except (OSError, ValueError, KeyError):
        pass
    meta = generate(path, seed, entries, size)
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return path, meta, False

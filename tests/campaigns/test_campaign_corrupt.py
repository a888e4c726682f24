"""Corrupt input campaign: damaged session files never crash loading, projection or the CLI.

Random sessions (branches, tool calls, edits, compactions; see
``test_properties.random_session``) are damaged by a seeded mutation loop:
byte flips, truncations, duplicated, reordered, joined and dropped lines,
unknown entries, huge lines, invalid UTF-8, deep nesting, wrong types in any
field, broken headers, CRLF and blank lines. For each result:

- loading raises nothing but a ``StoreError`` (no header: one clear line);
- the projection of the leaf and of other entries is a valid Anthropic and
  OpenAI request (``tests/request_validity.py``);
- ``agent-tui context`` (every format) and ``agent-tui tree`` exit 0 (with
  warnings) or 1 with one line, never an exception; a sample runs as real
  subprocesses, checked for tracebacks.

Hypothesis drives a second pass that puts arbitrary JSON in any field of any entry.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.cli.main import main
from agent_tui.store.errors import StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import parse_session
from tests.support.campaign_support import SEED, report, request_problems, scale
from tests.support.random_sessions import random_session

MUTATIONS = scale(4000, 100_000)
SUBPROCESS_SAMPLE = scale(6, 120)
pytestmark = [pytest.mark.timeout(scale(120, 3600)), pytest.mark.slow]

Mutator = Callable[[random.Random, bytes], bytes]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if buf:
            buf[rng.randrange(len(buf))] ^= rng.randint(1, 255)
    return bytes(buf)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def duplicate_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return b"\n".join(lines)


def reorder_lines(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    if rng.random() < 0.5:
        body = lines[1:]
        rng.shuffle(body)
        lines[1:] = body
    else:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def drop_or_join_lines(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    if rng.random() < 0.5:
        del lines[i]
    elif i + 1 < len(lines):
        lines[i : i + 2] = [lines[i] + lines[i + 1]]
    return b"\n".join(lines)


def unknown_entry(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    entry = {
        "type": rng.choice(["mystery", "message", "compaction", "context_edit", "custom", "session", ""]),
        "id": rng.choice([f"u{rng.randrange(10**6)}", "e0001", "", None, 7]),
        "parentId": rng.choice([None, "e0001", "e0002", "nowhere", 3, ["x"]]),
        "timestamp": rng.choice(["2026-01-01T00:00:00.000Z", None, 1, "yesterday"]),
        rng.choice(["message", "summary", "targetId", "data", "weird"]): rng.choice(
            [None, "text", 5, [], {}, {"role": "user"}, {"role": "assistant", "content": 5}, [1, "a"]]
        ),
    }
    lines.insert(rng.randrange(1, len(lines) + 1), json.dumps(entry).encode())
    return b"\n".join(lines)


def huge_line(rng: random.Random, data: bytes) -> bytes:
    size = rng.choice([1, 5, 20]) * 1024 * 1024
    entry = {
        "type": "message",
        "id": "huge0001",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": rng.choice(["user", "toolResult"]), "content": "x" * size, "timestamp": 1},
    }
    if rng.random() < 0.5:  # or a huge line that is not even JSON
        return data + b"{" + b"y" * size + b"\n"
    return data + json.dumps(entry).encode() + b"\n"


def invalid_utf8(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    bad = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80\x80", b"\xfe\xfe"])
    quotes = [i for i, b in enumerate(buf) if b == ord('"')]
    at = rng.choice(quotes) + 1 if quotes and rng.random() < 0.8 else rng.randrange(len(buf) + 1)
    buf[at:at] = bad
    return bytes(buf)


def deep_nesting(rng: random.Random, data: bytes) -> bytes:
    depth = rng.choice([100, 1000, 10_000, 200_000])
    open_, close = (b"[", b"]") if rng.random() < 0.5 else (b'{"a":', b"}")
    nested = open_ * depth + b"1" + close * depth
    line = (
        b'{"type":"message","id":"deep0001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
        b'"message":{"role":"user","content":' + nested + b',"timestamp":1}}'
    )
    lines = _lines(data)
    lines.insert(rng.randrange(1, len(lines) + 1), line)
    return b"\n".join(lines)


JSON_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    "",
    "x",
    [],
    {},
    [None],
    {"type": "text"},
    [{"type": "text"}],
]


def wrong_types(rng: random.Random, data: bytes) -> bytes:
    """Replace a random field (at any depth) of a random entry with a value of another type."""
    lines = _lines(data)
    candidates = [i for i, line in enumerate(lines) if line.startswith(b"{")]
    if not candidates:
        return data
    i = rng.choice(candidates)
    try:
        obj = json.loads(lines[i])
    except (ValueError, RecursionError):
        return data
    paths: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                paths.append((node, k))
                walk(v)
        elif isinstance(node, list):
            for k, v in enumerate(node):
                paths.append((node, k))
                walk(v)

    walk(obj)
    if not paths:
        return data
    for _ in range(rng.randint(1, 3)):
        parent, key = rng.choice(paths)
        with contextlib.suppress(IndexError, KeyError):
            parent[key] = rng.choice(JSON_VALUES)
    lines[i] = json.dumps(obj).encode()
    return b"\n".join(lines)


def broken_header(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    choice = rng.randrange(5)
    if choice == 0:
        del lines[0]
    elif choice == 1:
        lines[0] = json.dumps(
            {"type": "session", "id": "s", "version": rng.choice(["3", 99, -1, None, 2.5])}
        ).encode()
    elif choice == 2:
        lines.insert(rng.randrange(len(lines) + 1), lines[0])  # a second header
    elif choice == 3:
        lines[0] = b""
    else:
        lines[0] = b'{"type":"session","id":5}'
    return b"\n".join(lines)


def line_endings(rng: random.Random, data: bytes) -> bytes:
    if rng.random() < 0.5:
        return data.replace(b"\n", b"\r\n")
    lines = _lines(data)
    lines.insert(
        rng.randrange(len(lines) + 1), rng.choice([b"", b"   ", b"\t", b"\x00", b"null", b"[]", b"42"])
    )
    return b"\n".join(lines)


MUTATORS: list[tuple[Mutator, int]] = [
    (flip_bytes, 6),
    (truncate, 4),
    (duplicate_line, 4),
    (reorder_lines, 4),
    (drop_or_join_lines, 4),
    (unknown_entry, 5),
    (invalid_utf8, 5),
    (wrong_types, 10),
    (broken_header, 2),
    (line_endings, 3),
    (deep_nesting, 1),
]
WEIGHTS = [w for _, w in MUTATORS]


def check_loaded(data: bytes, rng: random.Random) -> str:
    """Load, project a few leaves, check the requests. Returns how it went: loaded or refused."""
    try:
        loaded = parse_session(data, "mutated.jsonl")
    except StoreError as e:
        assert "\n" not in str(e)
        return "refused (no header)"
    index = SessionIndex(loaded, "mutated.jsonl")
    leaves: list[str | None] = [None]
    if index.entries:
        leaves += [rng.choice(index.entries).id for _ in range(2)]
    for leaf in leaves:
        problems = request_problems(index, leaf)
        assert problems == [], problems
    return "loaded with warnings" if index.warnings else "loaded clean"


def run_cli(args: list[str]) -> tuple[int, str]:
    """``agent-tui ARGS`` in this process: any exception escapes (that would be a traceback)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, err.getvalue()


def check_cli(path: Path) -> None:
    for args in (
        ["tree", str(path)],
        ["tree", str(path), "--json"],
        ["context", str(path), "--format", "json"],
        ["context", str(path), "--format", "text"],
        ["context", str(path), "--format", "anthropic"],
        ["context", str(path), "--format", "openai"],
    ):
        code, err = run_cli(args)
        assert code in (0, 1), (args, code)
        if code == 1:
            errors = [line for line in err.splitlines() if not line.startswith("agent-tui: warning:")]
            assert len(errors) == 1, (args, err)


def test_seeded_mutation_loop(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    rng = random.Random(SEED)
    outcomes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    path = tmp_path / "mutated.jsonl"
    started = time.monotonic()
    samples: list[bytes] = []
    lines_checked = 0
    big = 0
    for number in range(MUTATIONS):
        data = random_session(rng.randrange(2**32), rng.randint(0, 40)).text().encode()
        for _ in range(rng.choice([1, 1, 2, 3])):
            mutator = rng.choices([m for m, _ in MUTATORS], WEIGHTS)[0]
            if mutator is deep_nesting and rng.random() < 0.5:
                continue
            data = mutator(rng, data)
            kinds[mutator.__name__] += 1
        if number % max(1, MUTATIONS // 8) == 0:  # a few huge lines (20 MB among them) per run
            data = huge_line(rng, data)
            kinds["huge_line"] += 1
            big += 1
        lines_checked += data.count(b"\n") + 1
        try:
            outcomes[check_loaded(data, rng)] += 1
        except AssertionError:
            failing = tmp_path / f"failing-{number}.jsonl"
            failing.write_bytes(data)
            raise AssertionError(f"mutation {number} (seed {SEED}) failed; the file is {failing}") from None
        if number % 25 == 0:
            path.write_bytes(data)
            check_cli(path)
            outcomes["CLI runs"] += 6
        if len(samples) < SUBPROCESS_SAMPLE and rng.random() < 0.05 and len(data) < 1_000_000:
            samples.append(data)
    for i, data in enumerate(samples):  # the real command: no traceback, whatever the file
        sample = tmp_path / f"sample{i}.jsonl"
        sample.write_bytes(data)
        for args in (["context", str(sample), "--format", "anthropic"], ["tree", str(sample)]):
            result = subprocess.run(
                [sys.executable, "-m", "agent_tui", *args], capture_output=True, text=True, timeout=60
            )
            assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
            if result.returncode == 1:
                assert len([x for x in result.stderr.splitlines() if "warning:" not in x]) == 1
            outcomes["subprocess runs"] += 1
    report(
        request,
        "corrupt",
        {
            "mutations tried": MUTATIONS,
            "lines checked": lines_checked,
            "huge lines": big,
            **outcomes,
            "crashes": 0,
            "seed": SEED,
            "seconds": f"{time.monotonic() - started:.1f}",
            "by kind": ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())),
        },
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = [
    "type", "id", "parentId", "message", "role", "content", "summary", "firstKeptEntryId", "targetId",
    "replacement", "restore", "arguments", "toolCallId", "toolName", "stopReason", "errorMessage", "text",
    "thinking", "thinkingSignature", "redacted", "data", "mimeType", "usage", "systemMessage", "fromId",
    "sections", "toolsAdded", "toolsRemoved", "name", "customType", "display", "details", "command",
    "output", "exitCode", "cancelled", "truncated", "excludeFromContext", "isError", "provider", "model",
    "modelId", "thinkingLevel", "pinned", "label", "tokensBefore", "timestamp", "version", "cwd",
]  # fmt: skip


@settings(max_examples=scale(150, 3000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    size=st.integers(1, 30),
    edits=st.lists(
        st.tuples(st.integers(0, 10**6), st.sampled_from(FIELDS), json_values), min_size=1, max_size=6
    ),
)
def test_any_json_in_any_field(seed: int, size: int, edits: list[tuple[int, str, Any]]) -> None:
    lines = random_session(seed, size).lines
    for position, name, value in edits:
        entry = lines[position % len(lines)]
        targets: list[dict[str, Any]] = [entry]
        message = entry.get("message")
        if isinstance(message, dict):
            targets.append(message)
            content = message.get("content")
            if isinstance(content, list):
                targets += [b for b in content if isinstance(b, dict)]
        target = targets[position % len(targets)]
        target[name] = value
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    check_loaded(data, random.Random(seed))


# -- what the campaign found, pinned down ----------------------------------------------------------


def _session_bytes(*entries: bytes) -> bytes:
    head = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}\n'
    return head + b"".join(e + b"\n" for e in entries)


def test_invalid_utf8_inside_a_message_is_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        _session_bytes(
            b'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"caf\xc3 ok","timestamp":1}}'
        )
    )
    code, err = run_cli(["context", str(path), "--format", "json"])
    assert code == 0 and err == ""
    result = subprocess.run(
        [sys.executable, "-m", "agent_tui", "context", str(path)], capture_output=True, timeout=60, check=True
    )
    assert json.loads(result.stdout.decode("utf-8")) == [
        {"role": "user", "content": "caf\ufffd ok", "timestamp": 1}
    ]


def test_deep_nesting_is_a_malformed_line(tmp_path: Path) -> None:
    deep = b"[" * 5000 + b"]" * 5000
    data = _session_bytes(
        b'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}',
        b'{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":'
        + deep
        + b"}}",
    )
    index = SessionIndex(parse_session(data))
    assert [e.id for e in index.entries] == ["a"] and "line 3: malformed" in str(index.warnings[0])
    assert request_problems(index) == []


def test_a_self_parent_does_not_hang_the_tree(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        _session_bytes(
            b'{"type":"message","id":"x","parentId":"x","timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}'
        )
    )
    code, err = run_cli(["tree", str(path)])
    assert code == 0 and "cycle" in err


def test_system_sections_and_tools_of_the_wrong_type() -> None:
    data = _session_bytes(
        b'{"type":"message","id":"s","parentId":null,"timestamp":"t","message":{"role":"system","content":"sys","sections":true,"toolsAdded":{"a":1},"toolsRemoved":5,"timestamp":1}}',
        b'{"type":"message","id":"t","parentId":"s","timestamp":"t","message":{"role":"system","content":"","toolsAdded":[{"name":"read","description":7,"parameters":"x"},{"name":3}],"timestamp":1}}',
        b'{"type":"message","id":"a","parentId":"t","timestamp":"t","message":{"role":"user","content":[{"type":"image","data":5},{"type":"text","text":"hi"}],"timestamp":1}}',
        b'{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"thinking","thinking":5,"thinkingSignature":["x"]},{"type":"toolCall","id":"c","name":7,"arguments":{}},{"type":"text","text":"ok"}],"stopReason":"stop","timestamp":1}}',
    )
    index = SessionIndex(parse_session(data))
    assert request_problems(index) == []
    from agent_tui.projection.context import project
    from agent_tui.projection.request import prepare
    from agent_tui.projection.wire.anthropic_messages import anthropic_request

    body = anthropic_request(prepare(project(index).messages), "claude-sonnet-4-5")
    assert body["tools"] == [
        {"name": "read", "description": "", "input_schema": {"type": "object", "properties": {}}}
    ]
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "ok", "cache_control": {"type": "ephemeral"}}
    ]

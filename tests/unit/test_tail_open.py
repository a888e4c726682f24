"""Reading a session from its end (store/tail.py): the leaf and the branch up from it are what a
full parse's index says they are, whatever the file's last lines are (torn, blank, malformed, a
second header, pi's appends, a later duplicate id, a parent written after its child)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import msgspec
import pytest

from agent_tui.projection.context import Projection, project, project_path
from agent_tui.store import tail
from agent_tui.store.index import SessionIndex
from agent_tui.store.listing import last_activity
from agent_tui.store.reader import read_file
from agent_tui.store.record import Entry
from tests.support.random_sessions import random_session
from tests.support.session_builder import Builder, assistant, header, tool_result, user

_encode = msgspec.json.Encoder().encode


def _shape(entries: list[Entry]) -> list[object]:
    return [(e.id, e.parent_id, e.type, e.line, e.data) for e in entries]


def _context_shape(projection: Projection) -> list[object]:
    """The projection from the latest compaction on: what the model is sent, entry by entry."""
    return [
        (
            ce.entry.id,
            ce.status,
            ce.edit_id,
            [(m.source_id, m.status, m.role, _encode(m.message)) for m in ce.messages],
        )
        for ce in projection.entries
    ] + [projection.leaf_id, projection.compaction_id]


def _line(entry: dict[str, object]) -> bytes:
    return json.dumps(entry).encode() + b"\n"


def _id_of(line: bytes) -> object:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value.get("id") if isinstance(value, dict) else None


def _damage(path: Path, rng: random.Random, step: int) -> None:
    data = path.read_bytes()
    ids = [i for x in data.splitlines()[1:] if isinstance(i := _id_of(x), str)] or ["none"]
    action = rng.choice(
        ["pi", "dup", "tear", "blank", "bad", "header", "edit", "later_parent", "spaces", "setting", "pin"]
    )
    with open(path, "ab") as f:
        if not data.endswith(b"\n") and action not in ("tear", "edit"):
            f.write(b"\n")  # after a torn line pi's next append starts a line of its own
        msg = {"role": "user", "content": f"pi {step}", "timestamp": 1}
        base = {"type": "message", "timestamp": "2026-01-01T00:00:00.000Z", "message": msg}
        if action == "pi":  # pi appends a child of the leaf (or of a random entry)
            f.write(_line({**base, "id": f"pi{step}", "parentId": rng.choice([ids[-1], rng.choice(ids)])}))
        elif action == "dup":  # a later line with an existing id shadows the earlier one
            f.write(_line({**base, "id": rng.choice(ids), "parentId": rng.choice([*ids, None])}))
        elif action == "tear":
            f.write(b'{"type":"message","id":"torn' + str(step).encode())
        elif action == "blank":
            f.write(b"\n\n")
        elif action == "bad":
            f.write(b'{"type": 3, "id": "x"}\n{"id": "noType"}\n{"type":"message"}\nnot json\n[1,2]\n')
        elif action == "header":
            f.write(_line(header("again")))
        elif action == "setting":  # pi's model and thinking changes, children of the leaf
            kind = rng.choice(["model_change", "thinking_level_change"])
            extra = {"provider": "openai", "modelId": f"m{step}"} if kind == "model_change" else {}
            extra = extra or {"thinkingLevel": rng.choice(["low", "high"])}
            f.write(_line({"type": kind, "id": f"s{step}", "parentId": ids[-1], **extra}))
        elif action == "pin":  # agent-tui's pin: may pull an entry back out of a summary
            f.write(
                _line({"type": "pin", "id": f"n{step}", "parentId": ids[-1], "targetId": rng.choice(ids)})
            )
        elif action == "spaces":
            f.write(b"   \n\t\n")
        elif action == "later_parent":  # a child, then its parent on a later line
            f.write(_line({**base, "id": f"c{step}", "parentId": f"p{step}"}))
            f.write(_line({**base, "id": f"p{step}", "parentId": ids[-1]}))
            f.write(
                _line(
                    {
                        "type": "label",
                        "id": f"l{step}",
                        "parentId": f"c{step}",
                        "targetId": ids[0],
                        "label": "x",
                    }
                )
            )
    if action == "edit":
        lines = data.splitlines(keepends=True)
        if len(lines) > 2:
            i = rng.randrange(1, len(lines))
            lines[i] = lines[i].replace(b'"', b"'", 1)
            path.write_bytes(b"".join(lines))


def _check(path: Path) -> None:
    full = SessionIndex(read_file(path), str(path))
    expected = full.active_path()

    got = tail.last_entry(path)
    assert got is not None
    head, last = got
    assert head == full.header
    assert (last.id if last else None) == full.leaf_id
    if last is not None:
        assert last.data == full.entries[-1].data
    stamp = full.entries[-1].data.get("timestamp") if full.entries else None
    assert last_activity(path) == (stamp if isinstance(stamp, str) else full.header["timestamp"])

    with tail.TailReader.open(path) as reader:  # type: ignore[union-attr]
        whole = tail.leaf_path(reader, to_root=True)
        whole.number(reader)
        assert whole.complete
        assert whole.leaf_id == full.leaf_id
        assert _shape(whole.entries) == _shape(expected)

        part = tail.leaf_path(reader)
        part.number(reader)
    assert part.leaf_id == full.leaf_id
    assert _shape(part.entries) == _shape(expected[len(expected) - len(part.entries) :])
    if part.complete:
        assert len(part.entries) == len(expected)
    else:  # stopped at the latest compaction's first kept entry: what the projection keeps
        compaction = next(e for e in reversed(part.entries) if e.type == "compaction")
        assert part.entries[0].id == compaction.data["firstKeptEntryId"]
        assert part.entries[0].parent_id is not None
    # the context from the latest compaction on equals the full parse's, unless a pin above the
    # kept entry pulls a cut one back (what the rest of the path decides)
    if part.complete or not any(e.type == "pin" for e in expected):
        assert _context_shape(project_path(part.entries, part.leaf_id)) == _context_shape(project(full))
    # and a walk that reached the root gives the whole projection: path, settings, summarized ids
    tail_projection, full_projection = project_path(whole.entries, whole.leaf_id), project(full)
    assert _context_shape(tail_projection) == _context_shape(full_projection)
    assert [e.id for e in tail_projection.path] == [e.id for e in full_projection.path]
    assert (tail_projection.model, tail_projection.thinking_level, tail_projection.summarized_ids) == (
        full_projection.model,
        full_projection.thinking_level,
        full_projection.summarized_ids,
    )


@pytest.mark.parametrize("seed", range(60))
def test_property_tail_first_branch_equals_the_full_parse(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = random_session(seed, rng.randint(3, 80)).write(tmp_path / "r.jsonl")
    _check(path)
    for step in range(rng.randint(1, 5)):
        _damage(path, rng, step)
        _check(path)


def test_no_compaction_and_a_leaf_before_the_last_lines(tmp_path: Path) -> None:
    b = Builder()
    for i in range(5):
        b.message(user(f"q{i}"))
        b.message(assistant(f"a{i}", [(f"c{i}", "read", {"path": "f"})]))
        b.message(tool_result(f"c{i}", "out"))
    path = b.write(tmp_path / "s.jsonl")
    with open(path, "ab") as f:
        f.write(b"\n  \nnot json\n" + _line(header("second")) + b'{"type":"message","id":"torn')
    _check(path)
    with tail.TailReader.open(path) as reader:  # type: ignore[union-attr]
        part = tail.leaf_path(reader)
    assert part.complete and len(part.entries) == 15


def test_a_compaction_near_the_end_reads_only_the_tail(tmp_path: Path) -> None:
    b = Builder()
    for i in range(200):
        b.message(user(f"question {i} " + "x" * 2000))
    keep = b.message(user("kept"))
    b.add("compaction", summary="s", firstKeptEntryId=keep, tokensBefore=10)
    b.message(user("after"))
    path = b.write(tmp_path / "s.jsonl")
    _check(path)
    with tail.TailReader.open(path) as reader:  # type: ignore[union-attr]
        part = tail.leaf_path(reader)
        assert not part.complete
        assert part.entries[0].id == keep
        assert part.start > reader.size - 1000  # the 400 KB before it were not read as lines
        part.number(reader)
    assert [e.line for e in part.entries] == [202, 203, 204]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\xef\xbb\xbf" + _line(header()),
        _line(header(version=2)),
        _line(header(version=None)),
        b"not json\n" + _line(header()),
        b'{"type":"session","id":"s","version":3.0}\n',
    ],
)
def test_what_it_does_not_read_goes_to_the_reader(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    assert tail.TailReader.open(path) is None
    assert tail.last_entry(path) is None


def test_a_header_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(_line(header()))
    assert tail.last_entry(path) == (header(), None)
    with tail.TailReader.open(path) as reader:  # type: ignore[union-attr]
        part = tail.leaf_path(reader)
    assert part.entries == [] and part.leaf_id is None and part.complete
    assert last_activity(path) == header()["timestamp"]


def test_a_line_longer_than_the_read_block(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("first"))
    b.message(tool_result("c", "y" * (3 * tail.BLOCK + 17)))
    b.message(user("last"))
    path = b.write(tmp_path / "s.jsonl")
    _check(path)


def test_the_leaf_of_a_big_file_is_read_from_its_last_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = Builder()
    for i in range(40):
        b.message(tool_result(f"c{i}", "z" * 200_000))
    b.message(user("the last"))
    path = b.write(tmp_path / "s.jsonl")
    read: list[int] = []
    real = os.pread

    def counting(fd: int, n: int, at: int) -> bytes:
        data = real(fd, n, at)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", counting)
    got = tail.last_entry(path)
    assert got is not None and got[1] is not None and got[1].message == user("the last")
    assert path.stat().st_size > 8_000_000
    assert sum(read) <= (1 << 16) + 1 + tail.BLOCK  # the header's 64 KiB, the last byte, one block

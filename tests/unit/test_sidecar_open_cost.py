"""Opening through the sidecar reads only what is shown: a tool result's tool name comes from its
record, so finding the branch's plan (``latest_todos``) reads no other tool's output."""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path
from typing import Any

import pytest

from agent_tui.projection.todos import latest_todos
from agent_tui.store import sidecar
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.store.record import Entry
from tests.support.random_sessions import random_session
from tests.support.session_builder import Builder, assistant, tool_result, user
from tests.unit import test_sidecar_index as full_parse_checks
from tests.unit.test_sidecar_index import _mapped, assert_same_as_full_parse

PLAN = {"todos": [{"content": "write the test", "status": "in_progress", "activeForm": "Writing the test"}]}


def _session(path: Path) -> Path:
    b = Builder()
    b.message(user("plan it"))
    b.message(assistant("", [("t0", "todo_write", {"todos": PLAN["todos"]})]))
    plan = tool_result("t0", "ok", name="todo_write")
    plan["details"] = PLAN
    b.message(plan)
    for i in range(1, 6):
        b.message(assistant("", [(f"c{i}", "read", {"path": "f"})]))
        b.message(tool_result(f"c{i}", "x" * 5000 + " todo_write"))  # names the tool in its text
    return b.write(path)


def _unread(entry: Entry) -> bool:
    return entry.raw is None and entry._message_raw is None and entry._data is None


def test_tool_names_come_from_the_records(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    assert_same_as_full_parse(path)  # builds the sidecar, and the tool names agree with a full parse
    loaded, _ = sidecar.load(path)
    assert _mapped(loaded)
    names = [e.tool_name for e in loaded.entries]
    assert names == [None, None, "todo_write"] + [None, "read"] * 5
    assert all(_unread(e) for e in loaded.entries)  # known without reading a line


def test_the_plan_is_found_without_reading_other_tool_results(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    loaded, _ = sidecar.load(path)
    index = SessionIndex(loaded, str(path))
    assert latest_todos(index.active_path()) == PLAN["todos"]
    reads = [e for e in loaded.entries if e.tool_name == "read"]
    assert reads and all(_unread(e) for e in reads)


def _without_tool_fields(path: Path) -> None:
    """The sidecar as the version before tool names wrote it: records one field shorter."""
    side = sidecar.sidecar_path(path)
    lines = side.read_bytes().splitlines(keepends=True)
    out = [lines[0]]
    for line in lines[1:-1]:
        record = json.loads(line)
        if record[0] == 0:
            assert len(record) == 13  # the kind, then the fields up to tool names and UTF-8
            record = record[:-2]
        out.append(json.dumps(record, separators=(",", ":")).encode() + b"\n")
    seal = json.loads(lines[-1])
    body = b"".join(out)
    seal[6] = zlib.crc32(body)
    side.write_bytes(body + json.dumps(seal, separators=(",", ":")).encode() + b"\n")


def test_an_older_sidecar_without_tool_names_reads_them_from_the_lines(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    _without_tool_fields(path)
    loaded, _ = sidecar.load(path)
    assert _mapped(loaded), "the older sidecar was not used"
    assert all(e._tool is False for e in loaded.entries)
    assert latest_todos(SessionIndex(loaded, str(path)).active_path()) == PLAN["todos"]
    assert [e.tool_name for e in loaded.entries] == [None, None, "todo_write"] + [None, "read"] * 5
    assert_same_as_full_parse(path)


def test_usage_totals_read_no_tool_output_and_keep_no_message(tmp_path: Path) -> None:
    from agent_tui.projection.pricing import session_usage

    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    loaded, _ = sidecar.load(path)
    totals = session_usage(loaded.entries)
    assert totals.calls == 6  # every assistant message reports usage (the builder's)
    assert all(_unread(e) for e in loaded.entries)  # each read once and not kept
    full = session_usage(read_file(path).entries)
    assert (totals.input, totals.output, totals.calls) == (full.input, full.output, full.calls)


def test_projecting_reads_no_message_until_it_is_used(tmp_path: Path) -> None:
    from agent_tui.projection.context import project

    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    loaded, _ = sidecar.load(path)
    projection = project(SessionIndex(loaded, str(path)))
    read = [e.id for e in loaded.entries if not _unread(e)]
    assert projection.messages and read == [loaded.entries[-2].id]  # the last reply: its model
    full = project(SessionIndex(read_file(path), str(path)))
    assert [m.message for m in projection.messages] == [m.message for m in full.messages]
    # an entry decoded after it was projected (the chat showed it) still gives its message
    again = project(SessionIndex(sidecar.load(path)[0], str(path)))
    last = again.messages[-1]
    assert last._entry is not None
    last._entry.data  # noqa: B018
    assert last.raw is not None and last.message == full.messages[-1].message


@pytest.mark.parametrize("seed", range(25))
def test_a_big_files_sidecar_is_built_a_chunk_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Files over REBUILD_CHUNK are parsed in chunks of whole lines (a 1 GB file never in memory):
    the random files and damage of the property test, with chunks of 40 bytes to 2 KB (lines longer
    than a chunk included), open as a full parse does."""
    monkeypatch.setattr(sidecar, "REBUILD_CHUNK", random.Random(seed).choice((40, 300, 2048)))
    full_parse_checks.test_property_random_sessions_and_damage(tmp_path, seed)


def test_a_chunked_build_opens_through_the_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sidecar, "REBUILD_CHUNK", 500)
    path = _session(tmp_path / "s.jsonl")
    first = assert_same_as_full_parse(path)
    assert _mapped(first)  # not the parse's entries: the chunks' bytes are gone
    assert sidecar.sidecar_path(path).exists()
    assert _mapped(assert_same_as_full_parse(path))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("tail", ["ended", "unended", "torn"])
def test_a_chunked_build_writes_the_sidecar_a_whole_build_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, tail: str
) -> None:
    """The chunks' line counts, CRC and complete lines are taken from the chunks as parsed (not
    read again): the sidecar is the same bytes as one built from the whole file, a last line that
    lacks its newline or is torn included."""
    path = random_session(seed, random.Random(seed).randint(5, 60)).write(tmp_path / "r.jsonl")
    data = path.read_bytes()
    if tail == "unended":
        path.write_bytes(data.rstrip(b"\n"))
    elif tail == "torn":
        path.write_bytes(data + b'{"type":"message","id":"torn')
    side = sidecar.sidecar_path(path)
    sidecar.load(path)
    whole = side.read_bytes()
    side.unlink()
    monkeypatch.setattr(sidecar, "REBUILD_CHUNK", random.Random(seed).choice((40, 300, 2048)))
    called: list[int] = []
    chunked = sidecar._rebuild_in_chunks

    def counted(*args: Any) -> Any:
        called.append(1)
        return chunked(*args)

    monkeypatch.setattr(sidecar, "_rebuild_in_chunks", counted)
    sidecar.load(path)
    assert called and side.read_bytes() == whole

"""The sidecar offset index (store/sidecar.py): whatever happened to the session file or to the
sidecar, what an open through it gives equals a full parse (entries, warnings, projection), and
the session file itself is never changed."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agent_tui.projection.context import Projection, project
from agent_tui.store import sidecar
from agent_tui.store.index import SessionIndex
from agent_tui.store.listing import session_files
from agent_tui.store.reader import LoadedFile, read_file
from agent_tui.store.session import Session
from agent_tui.store.writer import FsyncPolicy
from tests.support.random_sessions import random_session
from tests.support.session_builder import Builder, assistant, tool_result, user

_encode = msgspec.json.Encoder().encode


def _projection_shape(projection: Projection) -> list[object]:
    return [
        (
            ce.entry.id,
            ce.status,
            ce.edit_id,
            ce.pinned,
            [(m.source_id, m.status, m.kind, m.role, _encode(m.message)) for m in ce.messages],
        )
        for ce in projection.entries
    ] + [projection.leaf_id, projection.model, projection.thinking_level, projection.summarized_ids]


def _loaded_shape(loaded: LoadedFile) -> list[object]:
    return [
        loaded.header,
        [(e.type, e.id, e.parent_id, e.line, e.role, e.tool_name, e.data) for e in loaded.entries],
        [str(w) for w in loaded.warnings],
        loaded.size,
        loaded.ends_with_newline,
        loaded.version,
        loaded.lines,
    ]


def assert_same_as_full_parse(path: Path) -> LoadedFile:
    """Open ``path`` through the sidecar and check it against a full parse; the session's bytes
    stay as they were."""
    before = path.read_bytes()
    via, _ = sidecar.load(path)
    full = read_file(path)
    assert path.read_bytes() == before
    via_index, full_index = SessionIndex(via, str(path)), SessionIndex(full, str(path))
    # the projection first: it must not need what the shape check below decodes
    assert _projection_shape(project(via_index)) == _projection_shape(project(full_index))
    assert [str(w) for w in via_index.warnings] == [str(w) for w in full_index.warnings]
    assert (via_index.leaf_id, via_index.labels, via_index.name, via_index.pins) == (
        full_index.leaf_id,
        full_index.labels,
        full_index.name,
        full_index.pins,
    )
    assert _loaded_shape(via) == _loaded_shape(full)
    return via


def _mapped(loaded: LoadedFile) -> bool:
    return bool(loaded.entries) and all(isinstance(e, sidecar.MappedEntry) for e in loaded.entries)


def _session(path: Path, turns: int = 6) -> Path:
    b = Builder()
    b.add("model_change", provider="openai", modelId="gpt-4o")
    for i in range(turns):
        b.message(user(f'question {i} ünïcode \\ " tab\t'))
        b.message(assistant(f"answer {i}", [(f"c{i}", "read", {"path": "f"})]))
        b.message(tool_result(f"c{i}", "x" * (50 * i)))
    b.add("label", targetId="e0002", label="start")
    b.add("session_info", name="demo")
    return b.write(path)


def _append_line(path: Path, entry: dict[str, object]) -> None:
    with open(path, "ab") as f:  # as pi appends: the session only, no sidecar
        f.write(json.dumps(entry).encode() + b"\n")


def _last_id(path: Path) -> str:
    try:
        return str(json.loads(path.read_bytes().splitlines()[-1])["id"])
    except (ValueError, KeyError, TypeError, IndexError):
        return "no-such-parent"


def _entry(eid: str, parent: str, text: str) -> dict[str, object]:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": user(text),
    }


def test_fresh_file_builds_then_opens_from_the_sidecar(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    side = sidecar.sidecar_path(path)
    assert not side.exists()
    first = assert_same_as_full_parse(path)
    assert side.exists() and not _mapped(first)  # built from the full parse it just did
    assert _mapped(assert_same_as_full_parse(path))
    second, _ = sidecar.load(path)
    # nothing decoded on open: each line is read when asked for
    assert all(e._data is None and e.raw is None and e._message_raw is None for e in second.entries)


def test_sidecar_is_never_listed_as_a_session(tmp_path: Path) -> None:
    path = _session(tmp_path / "2025-01-01T00-00-00-000Z_abc.jsonl")
    sidecar.load(path)
    assert sidecar.sidecar_path(path).exists()
    assert session_files(tmp_path) == [path]
    assert sorted(tmp_path.glob("*.jsonl")) == [path]  # pi's listing: files ending in .jsonl
    assert [p for p in tmp_path.iterdir() if p.name.endswith(".jsonl")] == [path]


def test_appends_through_session_keep_it_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session.create(tmp_path, tmp_path, fsync=FsyncPolicy.NEVER)
    path = session.path
    assert sidecar.sidecar_path(path).exists()
    first = session.append_message(user("hi"))
    session.append_message(assistant("hello"))
    session.label(first.id, "greeting")
    session.hide(first.id)
    session.rename("named")
    session.close()
    rebuilt: list[Path] = []
    real = sidecar._rebuild

    def counting(p: Path, *args: Any) -> Any:
        rebuilt.append(p)
        return real(p, *args)

    monkeypatch.setattr(sidecar, "_rebuild", counting)
    loaded = assert_same_as_full_parse(path)
    assert _mapped(loaded) and rebuilt == []
    with Session.open(path, fsync=FsyncPolicy.NEVER) as again:  # appends after a reopen, too
        again.append_message(user("more"))
        again.branch(first.id)
    assert _mapped(assert_same_as_full_parse(path)) and rebuilt == []


def test_plain_append_without_the_sidecar_is_extended(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    side = sidecar.sidecar_path(path)
    size = side.stat().st_size
    _append_line(path, _entry("pi000001", _last_id(path), "pi wrote this"))
    _append_line(
        path, {"type": "custom", "id": "pi000002", "parentId": "pi000001", "timestamp": "t", "data": {}}
    )
    assert _mapped(assert_same_as_full_parse(path))
    grown = side.stat().st_size
    assert grown > size  # the two lines are recorded: the next open parses nothing
    assert _mapped(assert_same_as_full_parse(path))
    assert side.stat().st_size == grown


def test_kill_between_the_session_append_and_the_sidecar_append(tmp_path: Path) -> None:
    session = Session.create(tmp_path, tmp_path, fsync=FsyncPolicy.NEVER)
    session.append_message(user("one"))
    recorder = session.sidecar
    session.sidecar = None  # the session line is written, its record never is (killed in between)
    session.append_message(user("two"))
    session.sidecar = recorder
    session.append_message(user("three"))  # a later run's record after the hole
    session.close()
    assert_same_as_full_parse(session.path)
    assert _mapped(assert_same_as_full_parse(session.path))


def test_torn_tail_and_truncation(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    data = path.read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 20
    with open(path, "r+b") as f:
        f.truncate(cut)  # shorter than the sidecar says, the last line torn
    loaded = assert_same_as_full_parse(path)
    assert any("torn" in str(w) for w in loaded.warnings)
    assert _mapped(assert_same_as_full_parse(path))  # rebuilt; the torn tail is parsed again each time
    with Session.open(path, fsync=FsyncPolicy.NEVER) as session:  # the writer starts a new line
        session.append_message(user("after the tear"))
    loaded = assert_same_as_full_parse(path)
    assert any("malformed" in str(w) for w in loaded.warnings)
    assert _mapped(assert_same_as_full_parse(path))


def test_hand_edited_middle_line(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[5] = lines[5].replace(b"question", b"QUESTION, longer now")
    path.write_bytes(b"".join(lines))
    assert_same_as_full_parse(path)
    # the same length, other links: only the mtime tells
    lines = path.read_bytes().splitlines(keepends=True)
    middle = json.loads(lines[7])
    old = lines[7]
    middle["parentId"] = None
    new = json.dumps(middle).encode() + b"\n"
    new = new[:-2] + b" " * (len(old) - len(new)) + b"}\n" if len(new) <= len(old) else new
    lines[7] = new
    st = path.stat()
    path.write_bytes(b"".join(lines))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert_same_as_full_parse(path)
    # a line broken in the middle, and blank lines
    lines = path.read_bytes().splitlines(keepends=True)
    lines[9] = b"{not json\n"
    lines.insert(10, b"\n")
    path.write_bytes(b"".join(lines) + b"\n\n")
    assert len(assert_same_as_full_parse(path).warnings) >= 1
    assert _mapped(assert_same_as_full_parse(path))


def test_stale_sidecar_from_another_file(tmp_path: Path) -> None:
    a = _session(tmp_path / "a.jsonl", turns=3)
    b = Builder()
    b.lines[0]["id"] = "other"
    b.message(user("b's only question"))
    b.write(tmp_path / "b.jsonl")
    sidecar.load(a)
    sidecar.sidecar_path(a).replace(sidecar.sidecar_path(tmp_path / "b.jsonl"))
    assert_same_as_full_parse(tmp_path / "b.jsonl")
    # the same header, another body (a copy of the file that went its own way)
    sidecar.load(a)
    c = tmp_path / "c.jsonl"
    c.write_bytes(
        a.read_bytes().splitlines(keepends=True)[0] + b"".join(a.read_bytes().splitlines(keepends=True)[3:])
    )
    sidecar.sidecar_path(a).replace(sidecar.sidecar_path(c))
    assert_same_as_full_parse(c)


@pytest.mark.parametrize(
    "garbage",
    [
        b"",
        b"\x00\xff garbage",
        b'{"agentTuiSidecar":1}\n',
        b"not json\n[0,2,0,5]\n",
        None,  # a valid header, then records with offsets past the end
        "torn",  # the last record cut short
        "shuffled",
        "doubled",
    ],
)
def test_garbage_sidecar(tmp_path: Path, garbage: bytes | str | None) -> None:
    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    side = sidecar.sidecar_path(path)
    text = side.read_bytes()
    head, *records = text.splitlines(keepends=True)
    if garbage is None:
        bad = msgspec.json.decode(records[2])
        bad[3] = 10**9
        records[2] = msgspec.json.encode(bad) + b"\n"
        side.write_bytes(head + b"".join(records))
    elif garbage == "torn":
        side.write_bytes(text[:-7])
    elif garbage == "shuffled":
        random.Random(3).shuffle(records)
        side.write_bytes(head + b"".join(records))
    elif garbage == "doubled":  # two processes extended it at once
        side.write_bytes(head + b"".join(records[:5]) + b"".join(records))
    else:
        assert isinstance(garbage, bytes)
        side.write_bytes(garbage)
    assert_same_as_full_parse(path)
    assert_same_as_full_parse(path)


def test_unwritable_sidecar_falls_back_to_a_full_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _session(tmp_path / "s.jsonl")
    if os.geteuid() != 0:  # root writes into a read-only folder anyway
        tmp_path.chmod(0o555)
        try:
            loaded, recorder = sidecar.load(path)
            assert recorder is None and not sidecar.sidecar_path(path).exists()
            assert _loaded_shape(loaded) == _loaded_shape(read_file(path))
            with Session.open(path, write=False) as session:
                assert len(session.index) == len(read_file(path).entries)
        finally:
            tmp_path.chmod(0o755)

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    loaded, recorder = sidecar.load(path)
    assert recorder is None and not sidecar.sidecar_path(path).exists()
    assert _loaded_shape(loaded) == _loaded_shape(read_file(path))
    with Session.open(path, fsync=FsyncPolicy.NEVER) as session:
        session.append_message(user("still writable"))
    assert _loaded_shape(sidecar.load(path)[0]) == _loaded_shape(read_file(path))


def test_disabled_by_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _session(tmp_path / "s.jsonl")
    monkeypatch.setenv("AGENT_TUI_SIDECAR", "off")
    loaded, recorder = sidecar.load_indexed(path)
    assert recorder is None and not sidecar.sidecar_path(path).exists() and not _mapped(loaded)


def test_old_versions_and_bom_use_the_reader(tmp_path: Path) -> None:
    v2 = Builder()
    v2.lines[0]["version"] = 2
    v2.message({"role": "hookMessage", "content": "x", "timestamp": 0})
    path = v2.write(tmp_path / "v2.jsonl")
    assert_same_as_full_parse(path)
    assert not sidecar.sidecar_path(path).exists()
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + _session(tmp_path / "plain.jsonl").read_bytes())
    assert_same_as_full_parse(bom)


def test_lone_surrogate_line_reads_as_the_reader_repairs_it(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl", turns=1)
    line = (
        '{"type":"message","id":"sur00001","parentId":"e0004","timestamp":"t",'
        '"message":{"role":"user","content":"cut \\ud83d here","timestamp":1}}\n'
    )
    with open(path, "a") as f:
        f.write(line)
    assert_same_as_full_parse(path)
    assert _mapped(assert_same_as_full_parse(path))


def test_session_bytes_are_pi_format(tmp_path: Path) -> None:
    """pi reads what it wrote: keeping the sidecar writes nothing into the session file but the
    entries themselves, and opening never changes it (compared byte for byte)."""
    session = Session.create(tmp_path, tmp_path, fsync=FsyncPolicy.NEVER)
    lines = [session.append_message(user(f"m{i}")) for i in range(3)]
    session.close()
    data = session.path.read_bytes()
    assert [json.loads(x)["id"] for x in data.splitlines()[1:]] == [e.id for e in lines]
    for _ in range(2):
        sidecar.load(session.path)
        assert session.path.read_bytes() == data


@pytest.mark.parametrize("seed", range(40))
def test_property_random_sessions_and_damage(tmp_path: Path, seed: int) -> None:
    """Random trees, then a random series of what happens to files: pi appends, torn tails,
    truncation, edits, sidecar damage, appends through Session. Each open equals a full parse."""
    rng = random.Random(seed)
    path = random_session(seed, rng.randint(5, 60)).write(tmp_path / "r.jsonl")
    side = sidecar.sidecar_path(path)
    for step in range(8):
        assert_same_as_full_parse(path)
        action = rng.choice(["pi", "session", "tear", "truncate", "edit", "garbage", "none", "kill"])
        data = path.read_bytes()
        if action == "pi":
            _append_line(
                path, _entry(f"p{seed}x{step}", _last_id(path) if data.endswith(b"\n") else "zz", "pi")
            )
        elif action in ("session", "kill"):
            try:
                session = Session.open(path, fsync=FsyncPolicy.NEVER)
            except Exception:
                continue
            with session:
                if action == "kill":
                    session.sidecar = None
                session.append_message(user(f"s{step}"))
        elif action == "tear":
            with open(path, "ab") as f:
                f.write(b'{"type":"message","id":"torn')
        elif action == "truncate":
            with open(path, "r+b") as f:
                f.truncate(rng.randint(data.find(b"\n") + 1, len(data)))
        elif action == "edit":
            lines = data.splitlines(keepends=True)
            if len(lines) > 2:
                i = rng.randrange(1, len(lines))
                lines[i] = lines[i].replace(b'"', b"'", 1) if rng.random() < 0.5 else b"\n"
                path.write_bytes(b"".join(lines))
        elif action == "garbage" and side.exists():
            raw = bytearray(side.read_bytes())
            if raw:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            side.write_bytes(bytes(raw))
    assert_same_as_full_parse(path)


def test_a_planted_symlink_is_never_written_through(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me\n")
    sidecar.sidecar_path(path).symlink_to(victim)
    assert_same_as_full_parse(path)  # rebuilt: the link itself is replaced
    assert victim.read_bytes() == b"keep me\n"
    assert not sidecar.sidecar_path(path).is_symlink()
    sidecar.sidecar_path(path).unlink()
    sidecar.load(path)
    side = sidecar.sidecar_path(path)
    side.replace(tmp_path / "real.idx")
    side.symlink_to(tmp_path / "real.idx")  # a valid sidecar behind a link: read, never appended to
    with Session.open(path, fsync=FsyncPolicy.NEVER) as session:
        before = (tmp_path / "real.idx").read_bytes()
        session.append_message(user("after"))
    assert (tmp_path / "real.idx").read_bytes() == before
    assert_same_as_full_parse(path)

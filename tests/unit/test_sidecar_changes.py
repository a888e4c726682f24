"""The sidecar offset index against changes other programs make to an open or closed session:
an in-place edit that puts the mtime back (``touch -r``) is noticed, and a file truncated while
it is open fails one read with one line, never a crash (nothing is memory-mapped)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_tui.store import sidecar
from agent_tui.store.errors import ConcurrentChangeError
from tests.unit.test_sidecar_index import _mapped, _session, assert_same_as_full_parse

ROOT = Path(__file__).resolve().parents[2]


def _same_length_edit(path: Path, number: int) -> None:
    """Line ``number`` (0-based) loses its parent: the tree changes, the file's size does not."""
    lines = path.read_bytes().splitlines(keepends=True)
    old = lines[number]
    entry = json.loads(old)
    assert entry["parentId"] is not None
    entry["parentId"] = None
    new = json.dumps(entry, ensure_ascii=False).encode()
    assert len(new) + 1 <= len(old)
    lines[number] = new[:-1] + b" " * (len(old) - len(new) - 1) + b"}\n"
    with open(path, "r+b") as f:  # in place, as an editor that keeps the inode would
        f.write(b"".join(lines))


def test_in_place_edit_with_the_mtime_put_back_is_noticed(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    assert _mapped(assert_same_as_full_parse(path))
    st = path.stat()
    _same_length_edit(path, 7)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # what `touch -r` does
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    # the records still say line 8 has a parent; a full parse says it has none: they must agree
    assert_same_as_full_parse(path)
    assert _mapped(assert_same_as_full_parse(path))  # rebuilt, then used again


def test_a_new_ctime_with_the_same_bytes_keeps_the_records(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    side = sidecar.sidecar_path(path)
    before = side.read_bytes()
    ino = side.stat().st_ino
    os.chmod(path, 0o640)  # the ctime moves, nothing else
    assert _mapped(assert_same_as_full_parse(path))  # checked by the CRC, not rebuilt
    after = side.read_bytes()
    assert (
        side.stat().st_ino == ino
        and after.startswith(before)
        and after.count(b"\n") == before.count(b"\n") + 1
    )
    assert _mapped(assert_same_as_full_parse(path))
    assert side.read_bytes() == after  # sealed again once: the next open checks nothing more


def test_an_older_seal_without_ctime_is_checked_once(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    sidecar.load(path)
    side = sidecar.sidecar_path(path)
    data = side.read_bytes()
    first = data.index(b"\n") + 1
    seal_at = data.rindex(b"\n", 0, len(data) - 1) + 1
    seal = json.loads(data[seal_at:])
    old = json.dumps(seal[:8], separators=(",", ":")).encode() + b"\n"  # as version 1 wrote it
    side.write_bytes(data[:seal_at] + old)
    assert data[:first]  # the header unchanged
    assert _mapped(assert_same_as_full_parse(path))
    assert len(json.loads(side.read_bytes().splitlines()[-1])) == 10


def test_truncated_under_an_open_session_reads_fail_with_one_line(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl", turns=8)
    sidecar.load(path)
    loaded, _ = sidecar.load(path)
    assert _mapped(loaded)
    last = loaded.entries[-1]
    os.truncate(path, path.stat().st_size // 2)
    with pytest.raises(ConcurrentChangeError) as raised:
        last.data  # noqa: B018
    assert "\n" not in str(raised.value) and str(path) in str(raised.value)
    # an entry whose line is now cut short by the new end: its newline is gone
    with open(path, "ab") as f:
        f.write(b"x" * 4096)
    with pytest.raises(ConcurrentChangeError):
        loaded.entries[-3].message_raw  # noqa: B018
    # opening again reads what the file holds now, as a full parse does
    assert_same_as_full_parse(path)


@pytest.mark.slow
def test_truncated_while_open_in_another_process_exits_cleanly(tmp_path: Path) -> None:
    """The crash this replaces: a mapped file truncated by another program killed the process
    with SIGBUS on the next read of a line past the new end."""
    path = _session(tmp_path / "s.jsonl", turns=120)  # larger than the 128 KiB block kept
    sidecar.load(path)
    script = textwrap.dedent(
        """
        import os, sys
        from pathlib import Path
        from agent_tui.store import sidecar
        from agent_tui.store.errors import StoreError
        path = Path(sys.argv[1])
        loaded, _ = sidecar.load(path)
        assert isinstance(loaded.entries[-1], sidecar.MappedEntry)
        loaded.entries[1].data
        os.truncate(path, 4096)  # another program cuts the file while it is open
        try:
            for entry in loaded.entries:
                entry.data
        except StoreError as e:
            print(f"agent-tui: {e}", file=sys.stderr)
            sys.exit(1)
        print("read everything", file=sys.stderr)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, (done.returncode, done.stderr)  # -7 was SIGBUS
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "shorter than when it was opened" in lines[0] and str(path) in lines[0]

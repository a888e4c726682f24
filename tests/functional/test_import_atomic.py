"""An import is written whole or not at all: a disk that fills up mid-write, or an input that
cannot be converted, gives one line naming what is wrong and leaves no file behind (no partial
session, no temporary file), so the retry finds nothing in its way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.library.importers import import_session
from agent_tui.store.reader import read_file
from tests.support.limits import limit_file_size
from tests.support.transcripts import claude_transcript


def _import(source: Path, out: Path, room: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENT_TUI_FSYNC": "always", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", "import", str(source), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=(lambda: limit_file_size(room)) if room is not None else None,
        check=False,
    )


@pytest.mark.slow
def test_a_disk_that_fills_up_mid_import_leaves_no_session_behind(tmp_path: Path) -> None:
    source = claude_transcript(tmp_path / "transcript.jsonl", turns=400)
    whole = _import(source, tmp_path / "whole" / "s.jsonl")
    assert whole.returncode == 0, whole.stderr
    size = (tmp_path / "whole" / "s.jsonl").stat().st_size
    for room in (100, size // 3, size - 10):  # the header, the middle, the very last line
        folder = tmp_path / f"room-{room}"
        out = _import(source, folder / "s.jsonl", room)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 1 and len(lines) == 1, out.stderr
        assert "s.jsonl: write failed (disk full); nothing was written" in lines[0]
        assert list(folder.iterdir()) == []  # no partial session, no temporary file
        retry = _import(source, folder / "s.jsonl")  # room again: nothing blocks the retry
        assert retry.returncode == 0, retry.stderr
        assert (folder / "s.jsonl").stat().st_size == size
        assert read_file(folder / "s.jsonl").warnings == []


def test_an_entry_that_cannot_be_written_leaves_nothing_and_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = claude_transcript(tmp_path / "transcript.jsonl", turns=600)
    import agent_tui.library.importers as importers

    written = 0
    from agent_tui.store.writer import encode_line as real

    def encode_line(obj: dict[str, object]) -> bytes:  # the 700th line holds what JSON cannot
        nonlocal written
        written += 1
        if written == 700:
            raise TypeError("Encoding objects of type set is unsupported")
        return real(obj)

    monkeypatch.setattr(importers, "encode_line", encode_line)
    folder = tmp_path / "out"
    with pytest.raises(importers.ImportFormatError) as caught:
        import_session(source, out=folder / "s.jsonl")
    message = str(caught.value)
    assert "\n" not in message and str(source) in message and "TypeError" in message
    assert list(folder.iterdir()) == []  # the first 699 lines were not left under any name

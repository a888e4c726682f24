"""Crash campaign for imports: ``kill -9`` at random moments while ``agent-tui import`` writes a
big transcript's session. After every kill the session's name either does not exist or names the
complete session (every entry, no torn line): the file is written under a temporary name, fsynced,
then linked into place. A kill can leave that hidden temporary file (nothing runs to remove it);
the listing never shows it. One kill is aimed at the moment the session's name appears, which on
a file written in place is mid-write."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_tui.library.importers import import_session
from agent_tui.library.search import Library
from agent_tui.store.reader import read_file
from tests.support.campaign_support import SEED, report, scale
from tests.support.transcripts import claude_transcript

pytestmark = [pytest.mark.timeout(scale(300, 3600)), pytest.mark.slow]
KILLS = scale(6, 100)


def test_kill_minus_nine_while_an_import_writes(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    source = claude_transcript(tmp_path / "transcript.jsonl", turns=20_000, text_bytes=600)
    reference = import_session(source, out=tmp_path / "reference.jsonl")
    expected = len(reference.result.entries)
    env = {**os.environ, "AGENT_TUI_FSYNC": "always"}
    rng = random.Random(SEED)
    figures = {"kills": 0, "named mid-write": 0, "complete": 0, "absent": 0, "leftover temp files": 0}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui", "import", str(source), "-o", str(tmp_path / "timed.jsonl")],
        capture_output=True,
        env=env,
        check=False,
    )
    whole = time.monotonic() - started  # a run without a kill: the kills fall within it
    assert done.returncode == 0, done.stderr
    for attempt in range(KILLS):
        folder = tmp_path / f"run-{attempt}"
        folder.mkdir()
        target = folder / "s.jsonl"
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_tui", "import", str(source), "-o", str(target)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        if attempt == 0:  # the moment the name appears (mid-write, for a file written in place)
            while proc.poll() is None and not target.exists():
                time.sleep(0.001)
            if proc.poll() is None:
                figures["named mid-write"] += 1
        else:  # at a random moment of a whole run
            deadline = started + rng.uniform(0.3, 1.0) * whole
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
        if proc.poll() is None:
            proc.kill()
            figures["kills"] += 1
        proc.wait()
        if target.exists():
            loaded = read_file(target)
            assert loaded.warnings == [] and len(loaded.entries) == expected, (
                f"run {attempt}: partial session"
            )
            figures["complete"] += 1
        else:
            figures["absent"] += 1
        figures["leftover temp files"] += sum(1 for p in folder.iterdir() if p.name.startswith("."))
        with Library([folder], db_path=tmp_path / f"index-{attempt}.sqlite3") as lib:
            lib.refresh(text=False)
            assert [Path(s.path) for s in lib.sessions()] == ([target] if target.exists() else [])
    assert figures["kills"] >= 1
    report(request, "import crash", {**figures, "entries per session": expected, "seed": SEED})

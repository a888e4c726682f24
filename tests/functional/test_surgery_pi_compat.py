"""pi 1.6 projects files that went through random context surgery (spans hidden and restored, prunes,
ranges replaced by a summary, summary edits, undos) exactly as agent-tui does."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agent_tui.store.session import Session
from tests.functional.test_pi_compat import Job, Pi, compare, pi, zone
from tests.support.random_sessions import random_session
from tests.unit.test_surgery_properties import operate

__all__ = ["pi", "zone"]  # pi 1.6 under node, and a time zone with an offset: fixtures shared

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


def _surgery_files(folder: Path, count: int) -> list[Path]:
    out = []
    for seed in range(count):
        path = random_session(seed * 31 + 7, 20 + seed % 30).write(folder / f"surgery-{seed:03d}.jsonl")
        with Session.open(path) as session:
            operate(session, random.Random(seed), steps=8)
        out.append(path)
    return out


def test_pi_projects_surgery_files_as_agent_tui_does(pi: Pi, zone: None, tmp_path: Path) -> None:
    files = _surgery_files(tmp_path, 60)
    edited = sum(1 for f in files if b'"agent-tui.surgery"' in f.read_bytes())
    assert edited >= 40, edited  # the comparison means something only if most files hold surgeries
    jobs = [Job(f) for f in files]
    found = compare(pi, jobs)
    assert not found, f"{len(found)} of {len(jobs)} projections differ from pi's:\n" + "\n".join(found[:5])

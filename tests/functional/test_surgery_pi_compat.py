"""pi 1.6 projects files that went through random context surgery (spans hidden and restored, prunes,
ranges replaced by a summary, summary edits, undos) exactly as agent-tui does."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from agent_tui.store.session import Session
from tests.functional.test_pi_compat import Job, Pi, compare, pi, zone
from tests.unit.test_surgery_properties import operate, surgery_session

__all__ = ["pi", "zone"]  # pi 1.6 under node, and a time zone with an offset: fixtures shared

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


def _surgery_files(folder: Path, count: int) -> tuple[list[Path], Counter[str]]:
    out = []
    actions: Counter[str] = Counter()
    for seed in range(count):
        path = surgery_session(seed * 31 + 7, 20 + seed % 30, folder)
        with Session.open(path) as session:
            actions.update(done.split()[0] for done in operate(session, random.Random(seed), steps=8))
        out.append(path)
    return out, actions


def test_pi_projects_surgery_files_as_agent_tui_does(pi: Pi, zone: None, tmp_path: Path) -> None:
    files, actions = _surgery_files(tmp_path, 60)
    # the comparison means something only if the files hold every kind of surgery
    for action in ("hide", "restore", "prune", "compact-range", "edit-summary", "undo"):
        assert actions[action] >= 10, actions
    jobs = [Job(f) for f in files]
    found = compare(pi, jobs)
    assert not found, f"{len(found)} of {len(jobs)} projections differ from pi's:\n" + "\n".join(found[:5])

"""pi 1.6 reads a fork that carries later edits and pins as agent-tui does (pi ignores the pins)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.store.session import Session
from tests.functional.test_pi_compat import Job, Pi, compare, pi  # noqa: F401 (the fixture)
from tests.support.session_builder import assistant

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


def test_pi_projects_a_fork_with_later_edits_as_agent_tui(pi: Pi, tmp_path: Path) -> None:  # noqa: F811
    s = Session.create(tmp_path, tmp_path / "s.jsonl")
    u1 = s.append_message({"role": "user", "content": "first", "timestamp": 1})
    a1 = s.append_message(assistant("one"))
    u2 = s.append_message({"role": "user", "content": "second", "timestamp": 2})
    a2 = s.append_message(assistant("two"))
    s.replace(a1.id, "one, shorter")
    s.hide(u2.id)
    s.pin(u1.id)
    s.append_message({"role": "user", "content": "later", "timestamp": 3})
    out = s.fork(a2.id, tmp_path / "fork.jsonl")
    assert '"one, shorter"' in out.read_text(), "the replacement came along"
    assert compare(pi, [Job(out)]) == []

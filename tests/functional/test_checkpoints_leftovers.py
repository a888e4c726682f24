"""Issue 28's leftovers: the one checkpoint every ``!cmd`` takes, special files listed as skipped,
one ``/restore`` in every face, packed first snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.agent.checkpointing import CHECKPOINT_TYPE, checkpoint_command
from agent_tui.agent.checkpoints import CheckpointStore
from agent_tui.store.session import Session


def _checkpoints(session: Session) -> list[dict[str, object]]:
    return [
        e.data["data"]
        for e in session.index.entries
        if e.type == "custom" and e.data.get("customType") == CHECKPOINT_TYPE
    ]


async def test_a_command_checkpoint_is_appended_once_per_state(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    session = Session.in_memory(project)
    store = CheckpointStore(tmp_path / "store")
    assert await checkpoint_command(store, session, str(project), "before") is None
    assert await checkpoint_command(store, session, str(project), "after") is None  # unchanged: none
    (project / "a.txt").write_text("two\n")
    # a turn started meanwhile (the app's busy): taken, not appended
    assert await checkpoint_command(store, session, str(project), "after", lambda: False) is None
    assert [c["when"] for c in _checkpoints(session)] == ["before"]
    assert await checkpoint_command(store, session, str(project), "after") is None
    found = _checkpoints(session)
    assert [c["when"] for c in found] == ["before", "after"]
    assert found[1]["files"] == {"added": [], "changed": ["a.txt"], "deleted": []}


async def test_a_command_checkpoint_in_a_refused_folder_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    session = Session.in_memory(home)
    failed = await checkpoint_command(CheckpointStore(tmp_path / "store"), session, str(home), "before")
    assert failed is not None and "home or root folder" in failed
    assert _checkpoints(session) == []

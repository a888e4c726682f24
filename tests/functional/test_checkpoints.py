"""File checkpoints tied to tree nodes (issue 28): the model's writes and bash's changes are
snapshotted around each turn, and restoring any entry brings the files back as it left them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.checkpointing import (
    CHECKPOINT_TYPE,
    RESTORE_TYPE,
    RestoreConflict,
    TurnCheckpoints,
    list_checkpoints,
    plan_restore,
    restore,
)
from agent_tui.agent.checkpoints import CheckpointStore
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use


def _customs(h: Harness, kind: str) -> list[dict[str, Any]]:
    return [e for e in h.entries() if e["type"] == "custom" and e["customType"] == kind]


def _says(entry: dict[str, Any], words: str) -> bool:
    message = entry.get("message") or {}
    return message.get("role") == "assistant" and message["content"][0].get("text") == words


async def _two_turns(h: Harness, server: FakeModelServer, store: CheckpointStore) -> None:
    h.loop.checkpoints = TurnCheckpoints(store, str(h.workdir))
    server.push(
        anthropic_stream(text("Writing."), tool_use("t1", "write", {"path": "a.txt", "content": "v1\n"})),
        anthropic_stream(text("Done.")),
        anthropic_stream(
            text("Rewriting."),
            tool_use("t2", "bash", {"command": "printf 'v2\\n' > a.txt && printf 'b\\n' > b.txt"}),
        ),
        anthropic_stream(text("Done again.")),
    )
    await h.run("write a.txt")
    await h.run("now rewrite it")


async def test_restore_brings_back_each_turn_and_is_undone_by_the_next(
    h: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path / "store")
    await _two_turns(h, server, store)
    a, b = h.workdir / "a.txt", h.workdir / "b.txt"
    assert a.read_text() == "v2\n" and b.read_text() == "b\n"
    checkpoints = _customs(h, CHECKPOINT_TYPE)
    # turn 1: before (empty folder, first) and after (a.txt added); turn 2: after (bash's changes);
    # turn 2's "before" is turn 1's state, so it is not written again
    assert [c["data"]["when"] for c in checkpoints] == ["before", "after", "after"]
    assert checkpoints[1]["data"]["files"] == {"added": ["a.txt"], "changed": [], "deleted": []}
    assert checkpoints[2]["data"]["files"] == {"added": ["b.txt"], "changed": ["a.txt"], "deleted": []}
    # the "before" entry sits between the assistant message and its result
    entries = h.entries()
    at = entries.index(checkpoints[0])
    assert entries[at - 1]["message"]["role"] == "assistant"
    assert entries[at + 1]["message"]["role"] == "toolResult"
    assert h.messages("toolResult")[0]["isError"] is False

    # the first turn's last entry: its final assistant message
    first_turn_end = next(e for e in entries if _says(e, "Done."))
    plan = plan_restore(store, h.session, str(h.workdir), first_turn_end["id"])
    assert plan.lines() == ["delete b.txt", "write  a.txt"]
    assert not plan.conflicts
    assert a.read_text() == "v2\n"  # a plan writes nothing
    done = restore(store, h.session, str(h.workdir), first_turn_end["id"])
    assert a.read_text() == "v1\n" and not b.exists()
    restores = _customs(h, RESTORE_TYPE)
    assert len(restores) == 1
    assert restores[0]["data"]["files"] == {"added": [], "changed": ["a.txt"], "deleted": ["b.txt"]}
    assert restores[0]["data"]["checkpointId"] == checkpoints[1]["id"]
    # the state before the restore was already the latest checkpoint: that is the undo point
    assert done.undo_id == checkpoints[2]["id"]

    again = restore(store, h.session, str(h.workdir), done.undo_id)
    assert a.read_text() == "v2\n" and b.read_text() == "b\n"
    # and that restore is undone by restoring the first one's entry
    assert done.entry is not None and again.undo_id == done.entry.id
    restore(store, h.session, str(h.workdir), again.undo_id)
    assert a.read_text() == "v1\n" and not b.exists()

    listed = list_checkpoints(h.session)
    assert [c["kind"] for c in listed] == ["checkpoint"] * 3 + ["restore"] * 3
    assert all({"entryId", "snapshot", "files"} <= set(c) for c in listed)
    h.assert_requests_match_context()  # checkpoint entries never reach the model


async def test_a_file_changed_outside_the_agent_is_a_conflict(
    h: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path / "store")
    await _two_turns(h, server, store)
    (h.workdir / "a.txt").write_text("mine\n")  # the user's own edit, after the last turn
    first = next(e for e in h.entries() if _says(e, "Done."))["id"]
    plan = plan_restore(store, h.session, str(h.workdir), first)
    assert [p for p, _ in plan.conflicts] == ["a.txt"]
    with pytest.raises(RestoreConflict):
        restore(store, h.session, str(h.workdir), first)
    assert (h.workdir / "a.txt").read_text() == "mine\n"
    assert not _customs(h, RESTORE_TYPE)
    done = restore(store, h.session, str(h.workdir), first, force=True)
    # the user's edit was snapshotted first: restoring the undo point gives it back
    assert done.undo_id is not None and done.undo_id != done.plan.mark.entry.id  # type: ignore[union-attr]
    undo = json.loads(json.dumps(h.session.index.get(done.undo_id).data))
    assert undo["data"]["when"] == "restore" and undo["data"]["files"]["changed"] == ["a.txt"]
    restore(store, h.session, str(h.workdir), done.undo_id)
    assert (h.workdir / "a.txt").read_text() == "mine\n"

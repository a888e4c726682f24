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
from tests.functional.test_pi_compat import Job, compare, pi, zone
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

__all__ = ["pi", "zone"]  # pi 1.6 under node, and a time zone with an offset: fixtures shared


def _customs(anthropic_harness: Harness, kind: str) -> list[dict[str, Any]]:
    return [e for e in anthropic_harness.entries() if e["type"] == "custom" and e["customType"] == kind]


def _says(entry: dict[str, Any], words: str) -> bool:
    message = entry.get("message") or {}
    return message.get("role") == "assistant" and message["content"][0].get("text") == words


async def _two_turns(anthropic_harness: Harness, server: FakeModelServer, store: CheckpointStore) -> None:
    anthropic_harness.loop.checkpoints = TurnCheckpoints(store, str(anthropic_harness.workdir))
    server.push(
        anthropic_stream(text("Writing."), tool_use("t1", "write", {"path": "a.txt", "content": "v1\n"})),
        anthropic_stream(text("Done.")),
        anthropic_stream(
            text("Rewriting."),
            tool_use("t2", "bash", {"command": "printf 'v2\\n' > a.txt && printf 'b\\n' > b.txt"}),
        ),
        anthropic_stream(text("Done again.")),
    )
    await anthropic_harness.run("write a.txt")
    await anthropic_harness.run("now rewrite it")


async def test_restore_brings_back_each_turn_and_is_undone_by_the_next(
    anthropic_harness: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path / "store")
    await _two_turns(anthropic_harness, server, store)
    a, b = anthropic_harness.workdir / "a.txt", anthropic_harness.workdir / "b.txt"
    assert a.read_text() == "v2\n" and b.read_text() == "b\n"
    checkpoints = _customs(anthropic_harness, CHECKPOINT_TYPE)
    # turn 1: before (empty folder, first) and after (a.txt added); turn 2: after (bash's changes);
    # turn 2's "before" is turn 1's state, so it is not written again
    assert [c["data"]["when"] for c in checkpoints] == ["before", "after", "after"]
    assert checkpoints[1]["data"]["files"] == {"added": ["a.txt"], "changed": [], "deleted": []}
    assert checkpoints[2]["data"]["files"] == {"added": ["b.txt"], "changed": ["a.txt"], "deleted": []}
    # the "before" entry sits between the assistant message and its result
    entries = anthropic_harness.entries()
    at = entries.index(checkpoints[0])
    assert entries[at - 1]["message"]["role"] == "assistant"
    assert entries[at + 1]["message"]["role"] == "toolResult"
    assert anthropic_harness.messages("toolResult")[0]["isError"] is False

    # the first turn's last entry: its final assistant message
    first_turn_end = next(e for e in entries if _says(e, "Done."))
    plan = plan_restore(
        store, anthropic_harness.session, str(anthropic_harness.workdir), first_turn_end["id"]
    )
    assert plan.lines() == ["delete b.txt", "write  a.txt"]
    assert not plan.conflicts
    assert a.read_text() == "v2\n"  # a plan writes nothing
    done = restore(store, anthropic_harness.session, str(anthropic_harness.workdir), first_turn_end["id"])
    assert a.read_text() == "v1\n" and not b.exists()
    restores = _customs(anthropic_harness, RESTORE_TYPE)
    assert len(restores) == 1
    assert restores[0]["data"]["files"] == {"added": [], "changed": ["a.txt"], "deleted": ["b.txt"]}
    assert restores[0]["data"]["checkpointId"] == checkpoints[1]["id"]
    # the state before the restore was already the latest checkpoint: that is the undo point
    assert done.undo_id == checkpoints[2]["id"]

    assert done.undo_id is not None
    again = restore(store, anthropic_harness.session, str(anthropic_harness.workdir), done.undo_id)
    assert a.read_text() == "v2\n" and b.read_text() == "b\n"
    # and that restore is undone by restoring the first one's entry
    assert done.entry is not None and again.undo_id == done.entry.id
    restore(store, anthropic_harness.session, str(anthropic_harness.workdir), again.undo_id)
    assert a.read_text() == "v1\n" and not b.exists()

    listed = list_checkpoints(anthropic_harness.session)
    assert [c["kind"] for c in listed] == ["checkpoint"] * 3 + ["restore"] * 3
    assert all({"entryId", "snapshot", "files"} <= set(c) for c in listed)
    anthropic_harness.assert_requests_match_context()  # checkpoint entries never reach the model


async def test_a_file_changed_outside_the_agent_is_a_conflict(
    anthropic_harness: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path / "store")
    await _two_turns(anthropic_harness, server, store)
    (anthropic_harness.workdir / "a.txt").write_text("mine\n")  # the user's own edit, after the last turn
    first = next(e for e in anthropic_harness.entries() if _says(e, "Done."))["id"]
    plan = plan_restore(store, anthropic_harness.session, str(anthropic_harness.workdir), first)
    assert [p for p, _ in plan.conflicts] == ["a.txt"]
    with pytest.raises(RestoreConflict):
        restore(store, anthropic_harness.session, str(anthropic_harness.workdir), first)
    assert (anthropic_harness.workdir / "a.txt").read_text() == "mine\n"
    assert not _customs(anthropic_harness, RESTORE_TYPE)
    done = restore(store, anthropic_harness.session, str(anthropic_harness.workdir), first, force=True)
    # the user's edit was snapshotted first: restoring the undo point gives it back
    assert done.undo_id is not None and done.undo_id != done.plan.mark.entry.id  # type: ignore[union-attr]
    undo = json.loads(json.dumps(anthropic_harness.session.index.get(done.undo_id).data))
    assert undo["data"]["when"] == "restore" and undo["data"]["files"]["changed"] == ["a.txt"]
    restore(store, anthropic_harness.session, str(anthropic_harness.workdir), done.undo_id)
    assert (anthropic_harness.workdir / "a.txt").read_text() == "mine\n"


# -- the headless commands ---------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from agent_tui.cli.main import main

    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_checkpoint_commands(
    anthropic_harness: Harness,
    server: FakeModelServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = CheckpointStore()  # the data dir's, as the commands use
    await _two_turns(anthropic_harness, server, store)
    monkeypatch.chdir(anthropic_harness.workdir)
    file = str(anthropic_harness.session.path)
    first = next(e for e in anthropic_harness.entries() if _says(e, "Done."))["id"]

    code, out, _ = _cli(capsys, "checkpoints", file, "--json")
    listed = json.loads(out)
    assert code == 0 and [c["when"] for c in listed] == ["before", "after", "after"]
    assert listed[2]["files"]["added"] == ["b.txt"]

    code, out, _ = _cli(capsys, "checkpoints", file)
    assert code == 0 and len(out.splitlines()) == 3 and "1 added, 1 changed" in out.splitlines()[2]

    code, out, _ = _cli(capsys, "diff", file, first)
    assert code == 0
    assert "-v1\n+v2\n" in out and "+++ b/b.txt" in out
    code, out, _ = _cli(capsys, "diff", file, first, listed[2]["entryId"], "--stat")
    assert (code, out) == (0, "A b.txt\nM a.txt\n")

    code, out, _ = _cli(capsys, "restore", file, first, "--dry-run")
    assert (code, out) == (0, "delete b.txt\nwrite  a.txt\n")
    assert (anthropic_harness.workdir / "b.txt").exists()

    anthropic_harness.session.close()  # the commands open the file for writing themselves
    (anthropic_harness.workdir / "a.txt").write_text("mine\n")
    code, out, err = _cli(capsys, "restore", file, first)
    assert code == 2 and "conflict" in out and "nothing was written" in err
    assert (anthropic_harness.workdir / "a.txt").read_text() == "mine\n" and (
        anthropic_harness.workdir / "b.txt"
    ).exists()

    code, out, _ = _cli(capsys, "restore", file, first, "--yes")
    assert code == 0 and "write  a.txt" in out and "undo: agent-tui restore" in out
    assert (anthropic_harness.workdir / "a.txt").read_text() == "v1\n" and not (
        anthropic_harness.workdir / "b.txt"
    ).exists()
    undo = out.strip().split()[-1]
    code, out, _ = _cli(capsys, "restore", file, undo)
    assert code == 0
    assert (anthropic_harness.workdir / "a.txt").read_text() == "mine\n" and (
        anthropic_harness.workdir / "b.txt"
    ).read_text() == "b\n"

    # another folder is not the session's: nothing is written there
    other = anthropic_harness.tmp / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    code, _, err = _cli(capsys, "restore", file, first, "--yes")
    assert code == 1 and "the session's folder is" in err and not list(other.iterdir())

    # gc keeps what the session names and drops the rest
    loose = other / "loose.txt"
    loose.write_text("nobody refers to me\n")
    orphan = store.snapshot(other).tree
    assert store.exists(orphan)
    code, out, _ = _cli(capsys, "gc", "--session-dir", str(anthropic_harness.session.path.parent))
    assert code == 0 and "kept" in out
    assert not store.exists(orphan)
    assert all(store.exists(c["snapshot"]) for c in listed)
    assert store.blobs(
        [store.plan("4b825dc642cb6eb9a060e54bf8d69288fbee4904", listed[1]["snapshot"])[0].blob]
    )


async def test_the_restore_slash_command_lists_then_writes(
    anthropic_harness: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    from agent_tui.agent import slash_commands
    from agent_tui.agent.agent_session import AgentSession

    await _two_turns(anthropic_harness, server, CheckpointStore(tmp_path / "store"))
    agent = AgentSession(anthropic_harness.session, anthropic_harness.loop)
    assert "restore" in [c.name for c in slash_commands.listed(None)]  # ACP advertises it
    said = slash_commands.run(agent, slash_commands.Command("restore", ""))
    assert isinstance(said, slash_commands.Said) and len(said.text.splitlines()) == 5
    first = next(e for e in anthropic_harness.entries() if _says(e, "Done."))["id"]
    said = slash_commands.run(agent, slash_commands.Command("restore", first))
    assert isinstance(said, slash_commands.Said)
    assert "delete b.txt" in said.text and f"/restore {first} yes" in said.text
    assert (anthropic_harness.workdir / "b.txt").exists()
    said = slash_commands.run(agent, slash_commands.Command("restore", f"{first} yes"))
    assert isinstance(said, slash_commands.Said) and "Undo: /restore" in said.text
    assert (anthropic_harness.workdir / "a.txt").read_text() == "v1\n" and not (
        anthropic_harness.workdir / "b.txt"
    ).exists()


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_pi_projects_a_checkpointed_and_restored_session_as_before(
    anthropic_harness: Harness, server: FakeModelServer, tmp_path: Path, pi: Any, zone: None
) -> None:
    store = CheckpointStore(tmp_path / "store")
    await _two_turns(anthropic_harness, server, store)
    first = next(e for e in anthropic_harness.entries() if _says(e, "Done."))["id"]
    done = restore(store, anthropic_harness.session, str(anthropic_harness.workdir), first)
    assert done.undo_id is not None
    restore(store, anthropic_harness.session, str(anthropic_harness.workdir), done.undo_id)
    entries = anthropic_harness.entries()
    assert sum(e["type"] == "custom" for e in entries) >= 5
    # pi 1.6 projects it (at the leaf and at every entry) exactly as agent-tui does
    jobs = [Job(anthropic_harness.session.path)] + [
        Job(anthropic_harness.session.path, e["id"]) for e in entries
    ]
    found = compare(pi, jobs)
    assert not found, "\n".join(found[:5])


async def test_a_write_outside_the_project_is_captured_and_not_written_back(
    anthropic_harness: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path / "store")
    anthropic_harness.loop.checkpoints = TurnCheckpoints(store, str(anthropic_harness.workdir))
    target = tmp_path / "outside.txt"
    server.push(
        anthropic_stream(
            text("Writing."), tool_use("t1", "write", {"path": str(target), "content": "out\n"})
        ),
        anthropic_stream(text("Done.")),
    )
    await anthropic_harness.run("write outside")
    assert target.read_text() == "out\n"
    checkpoints = _customs(anthropic_harness, CHECKPOINT_TYPE)
    assert checkpoints[0]["data"]["outside"] == {str(target): None}
    blob = checkpoints[1]["data"]["outside"][str(target)]
    assert store.blobs([blob])[blob] == b"out\n"
    assert checkpoints[1]["data"]["files"]["outside"] == [str(target)]
    plan = plan_restore(
        store, anthropic_harness.session, str(anthropic_harness.workdir), checkpoints[0]["id"]
    )
    assert plan.lines() == [f"delete {target}  (outside the project folder)"]
    restore(store, anthropic_harness.session, str(anthropic_harness.workdir), checkpoints[0]["id"])
    assert target.read_text() == "out\n"  # outside the folder: said, not done
    restore(
        store, anthropic_harness.session, str(anthropic_harness.workdir), checkpoints[0]["id"], outside=True
    )  # asked for: done
    assert not target.exists()

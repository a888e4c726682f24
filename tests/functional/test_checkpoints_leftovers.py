"""Issue 28's leftovers: the one checkpoint every ``!cmd`` takes, special files listed as skipped,
one ``/restore`` in every face, packed first snapshots."""

from __future__ import annotations

import os
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


def _project(top: Path, files: int) -> Path:
    project = top / "project"
    for i in range(files):
        path = project / f"d{i % 7}" / f"f{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {i}\n")
    return project


def _loose(store: CheckpointStore) -> int:
    objects = store.git_dir / "objects"
    return sum(1 for d in objects.iterdir() if len(d.name) == 2 for _ in d.iterdir())


def test_a_first_snapshot_of_many_files_is_one_pack_that_gc_keeps_or_drops(tmp_path: Path) -> None:
    from agent_tui.agent.checkpoints import PACK_FROM

    project = _project(tmp_path, PACK_FROM + 44)
    store = CheckpointStore(tmp_path / "store")
    first = store.snapshot(project)
    packs = list((store.git_dir / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1
    assert _loose(store) < 20  # the trees (8) are loose; no blob is
    (project / "d0" / "f0.txt").write_text("changed\n")
    second = store.snapshot(project)  # one file: a loose object, no new pack
    assert len(list((store.git_dir / "objects" / "pack").glob("*.pack"))) == 1
    assert store.changes(first.tree, second.tree).changed == ("d0/f0.txt",)
    assert "-file 0\n+changed\n" in store.patch(first.tree, second.tree)
    plan = store.plan(second.tree, first.tree)
    assert not store.apply(project, plan) and (project / "d0" / "f0.txt").read_text() == "file 0\n"

    # kept: the packed blobs stay readable; dropped: gone from the pack too
    store.gc([second.tree])
    assert store.exists(second.tree) and not store.exists(first.tree)
    blob = store.plan("4b825dc642cb6eb9a060e54bf8d69288fbee4904", second.tree)[-1].blob
    assert store.blobs([blob])[blob].startswith(b"file ")
    store.gc([])
    assert not store.exists(second.tree) and not store.exists(blob)


def test_fifos_sockets_are_left_out_and_listed_as_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    from agent_tui.agent.checkpointing import checkpoint_now
    from agent_tui.cli.main import main

    project = tmp_path / "p"
    (project / "src").mkdir(parents=True)
    (project / "only-pipes").mkdir()
    (project / "ignored").mkdir()
    (project / "vendor" / ".git").mkdir(parents=True)  # a nested repository: not entered
    (project / ".gitignore").write_text("ignored/\n*.ignored\n")
    (project / "src" / "a.py").write_text("a = 1\n")
    for fifo in ("pipe", "src/pipe", "only-pipes/pipe", "ignored/pipe", "x.ignored", "vendor/pipe"):
        os.mkfifo(project / fifo)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(project / "src" / "sock"))
        store = CheckpointStore(tmp_path / "store")
        snap = store.snapshot(project)
    finally:
        server.close()
    assert snap.skipped == (
        ("only-pipes/pipe", "a FIFO (named pipe)"),
        ("pipe", "a FIFO (named pipe)"),
        ("src/pipe", "a FIFO (named pipe)"),
        ("src/sock", "a socket"),
    )
    listed = store._run(["ls-tree", "-r", "--name-only", snap.tree]).stdout.decode().split()
    assert listed == [".gitignore", "src/a.py"]

    # the checkpoint entry says so, and the checkpoints command shows it
    session = Session.create(tmp_path / "sessions", project)
    assert checkpoint_now(store, session, str(project), "before") is not None
    path = session.path
    session.close()
    data = _checkpoints(Session.open(path, write=False))[0]
    skipped = data["skipped"]
    assert isinstance(skipped, list) and {"path": "src/sock", "why": "a socket"} in skipped
    assert main(["checkpoints", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("    left out: only-pipes/pipe (a FIFO (named pipe)), pipe (a FIFO")
    assert out[1].endswith("src/sock (a socket)")


async def test_restore_means_the_files_in_the_app_as_in_every_face(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from agent_tui.agent import app_commands, slash_commands
    from agent_tui.agent.checkpointing import checkpoint_now
    from agent_tui.tui.checkpoint_offer import RestoreQuestion, restore_command
    from agent_tui.tui.commands import BY_NAME

    assert "restore" in slash_commands.BUILTIN_NAMES  # print, RPC, ACP: the files
    assert BY_NAME["restore"].title == "Restore the files as the entry left them"
    assert BY_NAME["unhide"].help == "Undo a hide or replace" and "unhide" in app_commands.NAMES

    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "data"))
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("v1\n")
    session = Session.in_memory(project)
    first = checkpoint_now(CheckpointStore(), session, str(project), "after")
    assert first is not None
    (project / "a.txt").write_text("v2\n")
    pushed: list[object] = []
    said: list[str] = []
    app = SimpleNamespace(
        session=session,
        config=SimpleNamespace(cwd=project),
        composer=SimpleNamespace(typed_at=0.0, insert=lambda text: None),
        push_screen=lambda screen, callback: pushed.append(screen),
    )

    async def append(fn: object, cursor: str | None = None) -> bool:
        return True

    actions = SimpleNamespace(
        app=app, notify=lambda text, **kw: said.append(text), append=append, target=lambda e=None: e
    )
    await restore_command(actions, first.id)
    assert len(pushed) == 1 and isinstance(pushed[0], RestoreQuestion)
    assert pushed[0].choices[0] == ("restore", "1  Restore 1 file(s)")
    assert "write  a.txt" in pushed[0].title_text
    (project / "a.txt").write_text("v1\n")
    await restore_command(actions, first.id)
    assert len(pushed) == 1 and said == ["Nothing to restore: the files are as that entry left them."]


async def test_a_branch_summary_offers_the_files_once_it_moved(tmp_path: Path) -> None:
    from collections.abc import AsyncIterator
    from types import SimpleNamespace

    from agent_tui.tui.checkpoint_offer import offer_after, offer_restore

    session = Session.in_memory(tmp_path)
    first = session.append({"type": "message", "message": {"role": "user", "content": "one"}})
    session.append({"type": "message", "message": {"role": "user", "content": "two"}})
    later: list[tuple[object, ...]] = []
    app = SimpleNamespace(session=session, call_later=lambda *a: later.append(a))
    app.index = session.index
    actions = SimpleNamespace(app=app)

    async def summary(move: bool) -> AsyncIterator[str]:
        yield "summarizing"
        if move:  # the summary's end: the move, then its entry
            session.branch(first.id)
            session.append({"type": "branch_summary", "fromId": first.id, "summary": "s"})

    assert [e async for e in offer_after(actions, summary(False), first.id)] == ["summarizing"]
    assert later == []  # aborted: no move, no offer
    assert [e async for e in offer_after(actions, summary(True), first.id)] == ["summarizing"]
    assert later == [(offer_restore, actions, first.id)]

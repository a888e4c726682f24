"""A hostile project: its ``.git`` asks for an fsmonitor program and hooks, symlinks point out of
it, a FIFO and a 2 GB (sparse) file sit in it. Snapshots and restores run nothing of it, read
nothing through the links, block on nothing, and write nothing outside the folder."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from agent_tui.agent.checkpoints import CheckpointStore

pytestmark = pytest.mark.timeout(120)


def _hostile(tmp: Path) -> tuple[Path, Path, Path]:
    project, outside, marker = tmp / "project", tmp / "outside", tmp / "ran"
    project.mkdir()
    outside.mkdir()
    (outside / "target.txt").write_text("outside, untouched\n")
    script = tmp / "evil.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    script.chmod(0o755)
    subprocess.run(["git", "init", "-q", str(project)], check=True, capture_output=True)
    with (project / ".git" / "config").open("a") as f:
        f.write(f"[core]\n\tfsmonitor = {script}\n\thooksPath = {tmp}\n[diff]\n\texternal = {script}\n")
    for hook in ("pre-commit", "post-index-change", "reference-transaction"):
        (project / ".git" / "hooks" / hook).write_text(script.read_text())
        (project / ".git" / "hooks" / hook).chmod(0o755)
    (project / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (project / ".git" / "info" / "exclude").write_text("*.txt\n")  # the project's own: not ours to read
    (project / ".gitignore").write_text(".env\n")
    (project / ".env").write_text("SECRET=1\n")
    (project / "a.txt").write_text("a\n")
    (project / "out").symlink_to(outside)  # a folder link out of the project
    (project / "link.txt").symlink_to(outside / "target.txt")
    os.mkfifo(project / "pipe")
    with (project / "big.bin").open("wb") as f:
        f.truncate(2 * 1024**3)
    return project, outside, marker


def _tree_paths(store: CheckpointStore, tree: str) -> set[str]:
    out = store._run(["ls-tree", "-r", "--name-only", "-z", tree]).stdout
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def test_a_hostile_project_runs_nothing_and_is_written_only_inside(tmp_path: Path) -> None:
    project, outside, marker = _hostile(tmp_path)
    store = CheckpointStore(tmp_path / "store")
    started = time.monotonic()
    first = store.snapshot(project)
    assert time.monotonic() - started < 10  # the 2 GB file is never read, the FIFO never opened
    assert _tree_paths(store, first.tree) == {".gitattributes", ".gitignore", "a.txt", "link.txt", "out"}
    assert ("big.bin", "over 10 MB") in first.skipped
    assert not marker.exists()
    # the links are stored as links: their targets' text is nowhere in the store
    link = store.plan("4b825dc642cb6eb9a060e54bf8d69288fbee4904", first.tree)
    by_path = {c.path: c for c in link}
    assert by_path["link.txt"].mode == "120000" and by_path["out"].mode == "120000"
    assert store.blobs([by_path["link.txt"].blob])[by_path["link.txt"].blob] == os.fsencode(
        outside / "target.txt"
    )

    # a snapshot where out/ was a real folder with a file, restored once out is a link again
    (project / "out").unlink()
    (project / "out").mkdir()
    (project / "out" / "target.txt").write_text("inside\n")
    (project / "a.txt").write_text("changed\n")
    second = store.snapshot(project)
    (project / "out" / "target.txt").unlink()
    (project / "out").rmdir()
    (project / "out").symlink_to(outside)
    current = store.snapshot(project)
    plan = store.plan(current.tree, second.tree)
    refused = store.apply(project, plan)
    # "out" (a link now) is first replaced by... nothing: the plan deletes the link and writes the
    # folder's file inside the project, never through the link
    assert (outside / "target.txt").read_text() == "outside, untouched\n"
    assert sorted(os.listdir(outside)) == ["target.txt"]
    assert (project / "a.txt").read_text() == "changed\n"
    assert not refused or all(p.startswith("out") for p, _ in refused)

    # back to the first snapshot: the link comes back as a link, the FIFO and the big file stay
    plan = store.plan(store.snapshot(project).tree, first.tree)
    assert not store.apply(project, plan)
    assert os.readlink(project / "out") == str(outside)
    assert (project / "a.txt").read_text() == "a\n"
    assert (project / "pipe").is_fifo() and (project / "big.bin").stat().st_size == 2 * 1024**3
    assert (outside / "target.txt").read_text() == "outside, untouched\n"
    assert not marker.exists()
    # the project's own repository was not touched
    assert not (project / ".git" / "index").exists()


def test_a_symlink_swapped_into_a_folder_is_never_followed(tmp_path: Path) -> None:
    project, outside, marker = _hostile(tmp_path)
    store = CheckpointStore(tmp_path / "store")
    (project / "sub").mkdir()
    (project / "sub" / "f.txt").write_text("one\n")
    before = store.snapshot(project)
    (project / "sub" / "f.txt").write_text("two\n")
    now = store.snapshot(project)
    plan = store.plan(now.tree, before.tree)
    # between the plan and the write, sub/ becomes a link out of the project
    (project / "sub" / "f.txt").unlink()
    (project / "sub").rmdir()
    (project / "sub").symlink_to(outside)
    refused = store.apply(project, plan)
    assert [p for p, _ in refused] == ["sub/f.txt"]
    assert sorted(os.listdir(outside)) == ["target.txt"]
    assert not marker.exists()


def test_the_store_is_private_and_holds_no_ignored_file(tmp_path: Path) -> None:
    project, _, _ = _hostile(tmp_path)
    store = CheckpointStore(tmp_path / "store")
    snap = store.snapshot(project)
    assert (store.root.stat().st_mode & 0o777) == 0o700
    assert (store.git_dir.stat().st_mode & 0o777) == 0o700
    assert ".env" not in _tree_paths(store, snap.tree)
    found = subprocess.run(
        ["grep", "-rl", "SECRET=1", str(store.root)], capture_output=True, text=True, check=False
    )
    assert found.stdout == ""  # loose objects are compressed: check the content is not stored at all
    blob = store._run(["hash-object", "--no-filters", str(project / ".env")]).stdout.decode().strip()
    assert not store.exists(blob)


def test_the_data_dir_inside_the_project_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / ".agent-tui" / "sessions").mkdir(parents=True)
    (project / ".agent-tui" / "sessions" / "s.jsonl").write_text("{}\n")
    (project / "code.py").write_text("x = 1\n")
    monkeypatch.setenv("AGENT_TUI_HOME", str(project / ".agent-tui"))
    store = CheckpointStore()  # the data dir's own: <project>/.agent-tui/checkpoints
    assert store.root == project / ".agent-tui" / "checkpoints"
    snap = store.snapshot(project)
    assert _tree_paths(store, snap.tree) == {"code.py"}


def test_files_outside_the_project_are_captured_one_by_one(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    outside.mkdir()
    (outside / "notes.txt").write_text("before\n")
    store = CheckpointStore(tmp_path / "store")
    snap = store.snapshot(project, [str(outside / "notes.txt"), str(outside / "missing.txt")])
    blob = snap.outside[str(outside / "notes.txt")]
    assert blob is not None and store.blobs([blob])[blob] == b"before\n"
    assert snap.outside[str(outside / "missing.txt")] is None
    assert _tree_paths(store, snap.tree) == set()


def test_a_folder_with_too_many_files_or_the_home_folder_takes_none(tmp_path: Path) -> None:
    from agent_tui.agent.checkpoints import CheckpointError

    project = tmp_path / "project"
    project.mkdir()
    for i in range(5):
        (project / f"f{i}").write_text("x")
    with pytest.raises(CheckpointError, match="over 4 files"):
        CheckpointStore(tmp_path / "store", max_files=4).snapshot(project)
    with pytest.raises(CheckpointError, match="home or root folder"):
        CheckpointStore(tmp_path / "store").snapshot(os.path.expanduser("~"))

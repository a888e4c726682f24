"""JSONL and Markdown exports, fork and clone, and the export / clone commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.library.actions import clone_session, fork_session
from agent_tui.library.export import (
    default_export_path,
    export_bytes,
    export_jsonl,
    export_markdown,
    export_session,
    write_new_file,
)
from agent_tui.projection.context import Projection, project, project_path
from agent_tui.store.errors import StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import parse_session, read_file
from tests.support.session_builder import Builder, assistant, header, tool_result, user

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "sessions.example").glob("*.jsonl"))


def load(path: Path) -> SessionIndex:
    return SessionIndex(read_file(path), str(path))


def view(projection: Projection) -> list[tuple[str, str, object]]:
    """What the model sees, with where each message came from and how."""
    return [(m.source_id, m.status.value, m.message) for m in projection.messages]


def statuses(projection: Projection) -> list[tuple[str, str]]:
    return [(ce.entry.id, ce.status.value) for ce in projection.entries if ce.entry.type != "label"]


def cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "AGENT_TUI_FSYNC": "never", **(env or {})},
    )


def branchy(path: Path) -> Path:
    """Two branches, a label on each, a compaction, a hidden entry, a branch marker."""
    b = Builder()
    b.message(user("first question"))
    b.message(assistant("reading", [("c1", "read", {"path": "a.py"})]))
    b.message(tool_result("c1", "print('a')"))
    answer = b.message(assistant("a prints a"))
    b.add("label", targetId=answer, label="answered")
    b.message(user("second question"))
    kept = b.message(assistant("second answer"))
    b.add("compaction", summary="## Goal\nquestions", firstKeptEntryId=kept, tokensBefore=500)
    b.add("context_edit", targetId=kept, replacement=None)
    b.message(user("third question"))
    side = b.message(user("a side question"), parent=answer)
    b.add("label", targetId=side, label="side")
    b.message(assistant("side answer"), parent=side)
    b.add("custom", customType="agent-tui.branch", data={"fromId": b.leaf}, parent=b.lines[-4]["id"])
    b.message(assistant("third answer"))
    return b.write(path)


# -- JSONL ------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", [*EXAMPLES, None], ids=[p.name for p in EXAMPLES] + ["branchy"])
def test_jsonl_branch_round_trip_gives_the_same_projection(source: Path | None, tmp_path: Path) -> None:
    source = source or branchy(tmp_path / "branchy.jsonl")
    index = load(source)
    exported = export_jsonl(index)
    reopened = SessionIndex(parse_session(exported))
    assert not reopened.warnings
    assert view(project(reopened)) == view(project(index))
    assert statuses(project(reopened)) == [s for s in statuses(project(index)) if s[0] in reopened.by_id]
    # standalone: a fresh header, the same cwd, no parentSession, and one chain
    header_line = json.loads(exported.split(b"\n", 1)[0])
    assert header_line["version"] == 3 and header_line["id"] != index.header["id"]
    assert header_line["cwd"] == index.header["cwd"] and "parentSession" not in header_line
    assert (
        len(reopened.roots()) == 1
        and sum(1 for e in reopened.entries if not reopened.children.get(e.id)) == 1
    )
    # labels on the branch travel with it
    on_path = {e.id for e in index.active_path()}
    assert reopened.labels == {k: v for k, v in index.labels.items() if k in on_path}


def test_jsonl_of_another_leaf_and_of_the_whole_file(tmp_path: Path) -> None:
    source = branchy(tmp_path / "b.jsonl")
    index = load(source)
    side_leaf = next(
        e.id for e in index.entries if (e.message or {}).get("content") and "side answer" in str(e.message)
    )
    reopened = SessionIndex(parse_session(export_jsonl(index, side_leaf)))
    assert view(project(reopened)) == view(project(index, side_leaf))
    assert export_jsonl(index, whole=True, source=source) == source.read_bytes()
    assert export_bytes(index, "jsonl", whole=True, source=source) == source.read_bytes()


def test_jsonl_keeps_compaction_boundaries(tmp_path: Path) -> None:
    index = load(branchy(tmp_path / "b.jsonl"))
    reopened = SessionIndex(parse_session(export_jsonl(index)))
    before, after = project(index), project(reopened)
    assert after.compaction_id == before.compaction_id
    assert after.summarized_ids == [i for i in before.summarized_ids if i in reopened.by_id]  # labels move
    assert "hidden" in {s for _, s in statuses(after)}


# -- fork and clone -----------------------------------------------------------------------------


def test_fork_and_clone_keep_labels_and_compaction(tmp_path: Path) -> None:
    source = branchy(tmp_path / "b.jsonl")
    before = source.read_bytes()
    index = load(source)
    clone = load(clone_session(source, tmp_path / "clone.jsonl"))
    assert view(project(clone)) == view(project(index))
    assert clone.header["parentSession"] == str(source.resolve())
    assert clone.labels == {"e0004": "answered"}
    assert not any(e.type == "custom" for e in clone.entries)  # the branch marker is left out
    # fork at every entry: the new file's view is the view at that entry, with the edits made
    # after it on the active branch to what it keeps (here: the hide of the kept answer)
    active = index.active_path()
    carried = 0
    for entry in index.entries:
        out = fork_session(source, entry.id, tmp_path / f"fork-{entry.id}.jsonl")
        path = index.path_to(entry.id)
        ids = {e.id for e in path}
        at = next((i for i, e in enumerate(active) if e.id == entry.id), None)
        later = [
            e
            for e in (active[at + 1 :] if at is not None else [])
            if e.type in ("context_edit", "pin") and e.data.get("targetId") in ids
        ]
        carried += bool(later)
        assert view(project(load(out))) == view(project_path([*path, *later])), entry.id
    assert carried, "some fork took a later edit along"
    assert source.read_bytes() == before
    with pytest.raises(StoreError):
        clone_session(source, tmp_path / "clone.jsonl")  # never over an existing file


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_clone_command(tmp_path: Path) -> None:
    source = branchy(tmp_path / "b.jsonl")
    out = cli("clone", str(source))
    assert out.returncode == 0, out.stderr
    made = Path(out.stdout.strip())
    assert made.parent == tmp_path and made != source
    assert view(project(load(made))) == view(project(load(source)))
    again = cli("clone", str(source), "-o", str(made))
    assert again.returncode == 1 and "already exists" in again.stderr


# -- Markdown ------------------------------------------------------------------------------------


def test_markdown_of_the_active_branch() -> None:
    index = load(ROOT / "sessions.example" / "edits.jsonl")
    text = export_markdown(index, source_name="edits.jsonl")
    assert text.startswith("# ")
    for entry in index.active_path():
        assert f"`{entry.id}`" in text
    other = next(
        e for e in index.entries if e.id not in {x.id for x in index.active_path()} and e.type == "message"
    )
    assert f"`{other.id}`" not in text
    assert "hidden from the model by edit" in text and "replaced in the model's view by edit" in text
    assert "```python" in text  # a file read, fenced in its language


def test_markdown_all_branches_and_fences() -> None:
    index = load(ROOT / "sessions.example" / "branches.jsonl")
    text = export_markdown(index, all_branches=True)
    assert "## Active branch" in text and "## Branch ending at" in text
    for entry in index.entries:
        if entry.type == "message":
            assert text.count(f"`{entry.id}`") >= 1
    b = Builder()
    b.message(user("show me"))
    b.message(assistant("here", [("c1", "bash", {"command": "cat x.md"})]))
    b.message(tool_result("c1", "```\n<b>not html</b>\n```\n" + "line\n" * 100, name="bash"))
    md = export_markdown(SessionIndex(parse_session(b.text().encode())))
    assert "````\n```\n<b>not html</b>" in md  # a longer fence: the output cannot close it
    assert "more lines (the JSONL export has them all)" in md


# -- the export command ----------------------------------------------------------------------------


def test_export_command(tmp_path: Path) -> None:
    source = ROOT / "sessions.example" / "branches.jsonl"
    out = cli("export", str(source), "--format", "md", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    made = Path(tmp_path / out.stdout.strip())
    assert made.name == "branches.md" and made.read_text().startswith("# Fix divide by zero")
    second = cli("export", str(source), "--format", "md", cwd=tmp_path)
    assert Path(tmp_path / second.stdout.strip()).name == "branches-2.md"  # never over the first
    html = cli("export", str(source), "-o", str(tmp_path / "page.html"))
    assert html.returncode == 0 and (tmp_path / "page.html").read_text().startswith("<!DOCTYPE html>")
    again = cli("export", str(source), "-o", str(tmp_path / "page.html"))
    assert again.returncode == 1 and "already exists" in again.stderr
    whole = cli("export", str(source), "--format", "jsonl", "--all", "-o", "-")
    assert whole.stdout.encode() == source.read_bytes()
    branch = cli("export", str(source), "--format", "jsonl", "--leaf", "5a0c1e10", "-o", "-")
    index = load(source)
    assert view(project(SessionIndex(parse_session(branch.stdout.encode())))) == view(
        project(index, "5a0c1e10")
    )
    bad = cli("export", str(source), "--leaf", "nope")
    assert bad.returncode == 1 and "nope" in bad.stderr
    only_branch = cli("export", str(source), "--branch", "-o", "-")
    assert "5a0c1e10" not in only_branch.stdout.split('id="session-data"')[1]  # the other branch is left out


def test_write_new_file_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "x.md"
    write_new_file(target, b"one")
    with pytest.raises(StoreError):
        write_new_file(target, b"two")
    assert target.read_bytes() == b"one" and (target.stat().st_mode & 0o777) == 0o600
    assert default_export_path(Path("/s/abc.jsonl"), "md", tmp_path) == tmp_path / "abc.md"
    (tmp_path / "abc.md").write_text("taken")
    assert default_export_path(Path("/s/abc.jsonl"), "md", tmp_path) == tmp_path / "abc-2.md"
    assert default_export_path(Path("/s/abc.jsonl"), "jsonl", tmp_path) == tmp_path / "abc-export.jsonl"


def test_empty_session_exports(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(json.dumps(header()) + "\n")
    index = load(path)
    assert export_markdown(index).startswith("# Session s1")
    assert SessionIndex(parse_session(export_jsonl(index))).entries == []
    assert "<!DOCTYPE html>" in export_bytes(index, "html", whole=True).decode()


def test_export_session_for_the_app(tmp_path: Path) -> None:
    source = ROOT / "sessions.example" / "branches.jsonl"
    index = load(source)
    page = export_session(index, "html", source=source, directory=tmp_path)
    assert page == tmp_path / "branches.html" and "5a0c1e10" in page.read_text()  # every branch
    md = export_session(index, "md", source=source, directory=tmp_path, leaf_id="5a0c1e10")
    assert "`5a0c1e10`" in md.read_text() and "`5a0c1e15`" not in md.read_text()
    jsonl = export_session(index, "jsonl", out=tmp_path / "x.jsonl")
    assert view(project(load(jsonl))) == view(project(index))


def test_compaction_token_counts_are_pluralised_in_markdown_and_html(tmp_path: Path) -> None:
    """The exports said "1 tokens before"."""
    from agent_tui.library.export import export_html

    for count, words in ((1, "1 token before"), (12345, "12,345 tokens before")):
        b = Builder()
        b.message(user("question"))
        kept = b.message(assistant("answer"))
        b.add("compaction", summary="## Goal\nq", firstKeptEntryId=kept, tokensBefore=count)
        index = load(b.write(tmp_path / f"c{count}.jsonl"))
        markdown = export_markdown(index)
        page = export_html(index)
        assert words in markdown and words in page
        assert "1 tokens" not in markdown and "1 tokens" not in page

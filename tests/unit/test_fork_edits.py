"""A fork carries the edits and pins made later on the branch to the entries it keeps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_tui.projection.context import project
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.store.session import Session
from tests.support.session_builder import assistant


def view(index: SessionIndex, keep: set[str] | None = None) -> list[tuple[str, str, Any]]:
    """The model's view: each message's source, status and content (only ``keep``'s sources)."""
    return [
        (m.source_id, m.status.value, m.message.get("content"))
        for m in project(index).messages
        if keep is None or m.source_id in keep
    ]


def build(tmp_path: Path) -> tuple[Session, dict[str, str]]:
    """u1 a1 u2 a2, a compaction keeping from u2, u3 a3; then a1 replaced, u1 pinned, u4 a4."""
    s = Session.create(tmp_path, tmp_path / "s.jsonl")
    ids: dict[str, str] = {}
    for name, text in [("u1", "first"), ("a1", "one"), ("u2", "second"), ("a2", "two")]:
        message = {"role": "user", "content": text, "timestamp": 1} if name[0] == "u" else assistant(text)
        ids[name] = s.append_message(message).id
    ids["c"] = s.append(
        {"type": "compaction", "summary": "so far", "firstKeptEntryId": ids["u2"], "tokensBefore": 9}
    ).id
    ids["u3"] = s.append_message({"role": "user", "content": "third", "timestamp": 1}).id
    ids["a3"] = s.append_message(assistant("three")).id
    ids["edit"] = s.replace(ids["a2"], "two, shorter").id
    ids["pin"] = s.pin(ids["u1"]).id
    ids["u4"] = s.append_message({"role": "user", "content": "fourth", "timestamp": 1}).id
    ids["a4"] = s.append_message(assistant("four")).id
    return s, ids


def test_a_fork_shows_its_entries_as_the_branch_does_now(tmp_path: Path) -> None:
    s, ids = build(tmp_path)
    out = s.fork(ids["a3"], tmp_path / "fork.jsonl")
    forked = SessionIndex(read_file(out), str(out))
    kept = {e.id for e in s.index.path_to(ids["a3"])}
    assert view(forked) == view(s.index, kept), "the fork's view is the branch's, without what came after"
    statuses = {source: status for source, status, _ in view(forked)}
    assert statuses[ids["a2"]] == "replaced" and statuses[ids["u1"]] == "pinned"
    lines = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert [d["id"] for d in lines][-2:] == [ids["edit"], ids["pin"]], "after the path, in order"
    assert lines[-2]["parentId"] == ids["a3"] and lines[-1]["parentId"] == ids["edit"], "one chain"
    assert ids["u4"] not in {d["id"] for d in lines}


def test_edits_of_entries_the_fork_leaves_out_stay_out(tmp_path: Path) -> None:
    s, ids = build(tmp_path)
    out = s.fork(ids["a1"], tmp_path / "fork.jsonl")
    forked_ids = [json.loads(line)["id"] for line in out.read_text().splitlines()[1:]]
    assert forked_ids == [ids["u1"], ids["a1"], ids["pin"]], "the pin of u1 comes; a2's edit does not"


def test_a_fork_from_another_branch_takes_no_edits(tmp_path: Path) -> None:
    s, ids = build(tmp_path)
    s.branch(ids["a3"])  # back above the edits: the branch now is u1..a3
    s.append_message({"role": "user", "content": "other way", "timestamp": 1})
    out = s.fork(ids["a3"], tmp_path / "fork.jsonl")
    forked = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert {d["type"] for d in forked} == {"message", "compaction"}, "the edits are on the branch left"
    forked_index = SessionIndex(read_file(out), str(out))
    kept = {e.id for e in s.index.path_to(ids["a3"])}
    assert view(forked_index) == view(s.index, kept)

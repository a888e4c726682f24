"""Context surgery: spans hidden and restored, old tool output pruned, ranges replaced by a summary,
compaction summaries edited, and each surgery undone in one go."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cli.main import main as agent_tui_main
from agent_tui.projection.context import Status, project
from agent_tui.projection.request import prepare
from agent_tui.projection.surgery import (
    SURGERY,
    SurgeryError,
    apply,
    edit_authors,
    plan_prune,
    plan_range,
    plan_span,
    plan_undo,
    prune_stub,
    range_edits,
    summary_edit_fields,
)
from agent_tui.projection.tokens import context_tokens
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from agent_tui.projection.wire.openai_completions import openai_request
from agent_tui.store.session import Session
from tests.support.fake_model_server import FakeModelServer, anthropic_error, anthropic_stream, text
from tests.support.model_env import fake_anthropic_env
from tests.support.request_validity import anthropic_problems, openai_problems
from tests.support.session_builder import Builder, assistant, tool_result, user

BIG = "x" * 14_000  # 4,000 tokens


def _session(tmp_path: Path) -> Path:
    """Three turns, each with tool calls; the outputs of the first two are big."""
    b = Builder()
    b.message(user("run the tests"))  # e0001
    b.message(assistant("running", [("c1", "bash", {"command": "pytest -x"})]))  # e0002
    b.message(tool_result("c1", BIG, name="bash"))  # e0003
    b.message(assistant("two failures"))  # e0004
    b.message(user("read both files"))  # e0005
    b.message(assistant("", [("c2", "read", {"path": "a.py"}), ("c3", "read", {"path": "b.py"})]))  # e0006
    b.message(tool_result("c2", BIG))  # e0007
    b.message(tool_result("c3", "short"))  # e0008
    b.message(assistant("fixed"))  # e0009
    b.message(user("run them again"))  # e0010
    b.message(assistant("", [("c4", "bash", {"command": "pytest"})]))  # e0011
    b.message(tool_result("c4", BIG, name="bash"))  # e0012
    b.message(assistant("all pass"))  # e0013
    return b.write(tmp_path / "s.jsonl")


def _bodies(session: Session) -> tuple[dict[str, Any], dict[str, Any]]:
    prepared = prepare(project(session.index).messages)
    return anthropic_request(prepared, "claude-sonnet-4-5"), openai_request(prepared, "gpt-4.1")


def _valid(session: Session) -> None:
    a, o = _bodies(session)
    assert anthropic_problems(a) == [] and openai_problems(o) == []


def test_a_span_hides_in_one_surgery_widened_to_keep_calls_with_results(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        plan = plan_span(project(s.index), "e0003", "e0006")
        # e0003's call (e0002) and e0006's results (e0007, e0008) come along
        assert plan.targets == ["e0002", "e0003", "e0004", "e0005", "e0006", "e0007", "e0008"]
        assert any("widened to e0002, e0007, e0008" in n for n in plan.notes)
        assert (plan.first_id, plan.last_id) == ("e0002", "e0008")
        record = apply(s, plan)
        assert record.data["customType"] == SURGERY
        assert record.data["data"]["edits"] == [e.id for e in s.index.active_path()[13:20]]
        view = project(s.index)
        hidden = [ce.entry.id for ce in view.entries if ce.status is Status.HIDDEN]
        assert hidden == plan.targets
        assert context_tokens(view).tokens == plan.tokens_after  # the preview's figure is the result's
        _valid(s)


def test_undo_puts_a_span_back_in_one_surgery(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        s.replace("e0005", "read a.py and b.py")  # an edit from before the surgery comes back as it was
        before = _bodies(s)
        record = apply(s, plan_span(project(s.index), "e0005", "e0009"))
        assert _bodies(s) != before
        undo = plan_undo(project(s.index), record.id)
        assert undo.extra == {"undoes": record.id}
        apply(s, undo)
        assert _bodies(s) == before
        replaced = next(ce for ce in project(s.index).entries if ce.entry.id == "e0005")
        assert replaced.status is Status.REPLACED


def test_undo_by_any_edit_of_the_group_and_leaves_later_edits(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        record = apply(s, plan_span(project(s.index), "e0001", "e0004"))
        first_edit = record.data["data"]["edits"][0]
        s.replace("e0001", "a later edit")
        undo = plan_undo(project(s.index), first_edit)
        assert "e0001" not in undo.targets and "left e0001 as edited since" in undo.notes[0]
        apply(s, undo)
        statuses = {ce.entry.id: ce.status for ce in project(s.index).entries}
        assert statuses["e0001"] is Status.REPLACED and statuses["e0002"] is Status.RESTORED
        _valid(s)


def test_a_span_keeps_pinned_entries_and_their_partners(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        s.pin("e0007")
        plan = plan_span(project(s.index), "e0005", "e0009")
        assert plan.targets == ["e0005", "e0009"]  # e0007's call e0006 and its sibling e0008 stay too
        assert "kept 3 pinned entries" in plan.notes


def test_restoring_a_span_brings_back_only_what_was_edited(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        s.hide("e0003")
        s.hide("e0004")
        plan = plan_span(project(s.index), "e0001", "e0013", restore=True)
        assert plan.targets == ["e0003", "e0004"]
        apply(s, plan)
        assert all(ce.status is not Status.HIDDEN for ce in project(s.index).entries)
        with pytest.raises(SurgeryError, match="nothing to restore"):
            plan_span(project(s.index), "e0001", "e0013", restore=True)


def test_a_span_off_the_view_is_refused(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s, pytest.raises(SurgeryError, match="not on the active branch"):
        plan_span(project(s.index), "e0001", "nope")


def test_prune_stubs_old_big_outputs_and_keeps_the_last(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        plan = plan_prune(project(s.index), keep_last=1, min_tokens=1_000)
        assert plan.targets == ["e0003", "e0007"]  # e0008 is small, e0012 is the last result
        assert plan.edits[0]["replacement"]["content"][0]["text"] == (
            '[output of bash "pytest -x" cleared: 4,000 tokens; run it again to see]'
        )
        assert '[output of read "a.py" cleared' in plan.edits[1]["replacement"]["content"][0]["text"]
        assert plan.saved > 7_900
        apply(s, plan)
        assert context_tokens(project(s.index)).tokens == plan.tokens_after
        _valid(s)
        # everything old is small now: a second prune has nothing to do
        assert plan_prune(project(s.index), keep_last=1, min_tokens=1_000).edits == []
        assert plan_prune(project(s.index), keep_last=0, min_tokens=1_000).targets == ["e0012"]


def test_prune_stub_names_the_call_on_one_clipped_line() -> None:
    assert (
        prune_stub("grep", {"pattern": "a\nb"}, 1200)
        == '[output of grep "a b" cleared: 1,200 tokens; run it again to see]'
    )
    long = prune_stub("bash", {"command": "y" * 200}, 5)
    assert len(long) < 140 and "…" in long
    assert prune_stub("", None, 5) == "[output of a tool cleared: 5 tokens; run it again to see]"


def test_a_range_widens_to_whole_turns_and_keeps_pins(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        s.pin("e0004")
        projection = project(s.index)
        plan = plan_range(projection, "e0003", "e0006")
        assert (plan.first_id, plan.last_id) == ("e0001", "e0009")
        assert plan.notes[0] == "widened to whole turns: e0001..e0009"
        assert plan.carrier_id == "e0001" and plan.pinned_ids == ["e0004"]
        assert plan.hidden_ids == ["e0002", "e0003", "e0005", "e0006", "e0007", "e0008", "e0009"]
        surgery = range_edits(projection, plan, "They fixed two tests.")
        apply(s, surgery)
        view = project(s.index)
        first = view.messages[0].message
        assert first["role"] == "user"
        assert first["content"] == "Summary of entries e0001..e0009:\n\nThey fixed two tests."
        assert [m.source_id for m in view.messages] == ["e0001", "e0004", "e0010", "e0011", "e0012", "e0013"]
        assert context_tokens(view).tokens == surgery.tokens_after
        _valid(s)


def test_editing_a_compaction_summary_appends_a_compaction_with_the_same_cut(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        old = s.append(
            {
                "type": "compaction",
                "summary": "old summary",
                "firstKeptEntryId": "e0010",
                "tokensBefore": 9000,
                "details": {"readFiles": ["a.py"], "modifiedFiles": []},
            }
        )
        s.append_message(user("next"))
        new = s.append(summary_edit_fields(project(s.index), old.id, "better summary"))
        assert new.data["firstKeptEntryId"] == "e0010" and new.data["tokensBefore"] == 9000
        assert new.data["details"] == {"readFiles": ["a.py"], "modifiedFiles": [], "editedFrom": old.id}
        view = project(s.index)
        assert view.compaction_id == new.id
        assert "better summary" in view.messages[0].message["content"][0]["text"]
        assert [m.source_id for m in view.messages[1:]] == [
            "e0010",
            "e0011",
            "e0012",
            "e0013",
            view.path[-2].id,
        ]
        with pytest.raises(SurgeryError, match="not the latest"):
            summary_edit_fields(project(s.index), old.id, "again")


def test_edit_authors_name_who_made_each_edit(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        single = s.hide("e0001")
        record = apply(s, plan_prune(project(s.index), keep_last=0, min_tokens=1_000))
        authors = edit_authors(s.index.active_path())
        assert single.id not in authors
        assert {authors[i] for i in record.data["data"]["edits"]} == {("prune", "prune", record.id)}


# -- the command line ----------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = agent_tui_main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_span_hide_preview_then_hide_then_undo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _session(tmp_path)
    size = path.stat().st_size
    code, out, _ = _run(capsys, "edit", str(path), "e0003..e0004", "--hide", "--preview")
    assert code == 0 and out.startswith("would hide 3 entries (e0002..e0004): context ")
    assert path.stat().st_size == size
    code, out, _ = _run(capsys, "edit", str(path), "e0003..e0004", "--hide")
    assert code == 0 and "widened to e0002" in out
    record_id = out.strip().splitlines()[-1].split()[0]
    with Session.open(path, write=False) as s:
        assert s.index.get(record_id).data["customType"] == SURGERY
    code, out, _ = _run(capsys, "edit", str(path), record_id, "--undo")
    assert code == 0 and out.startswith("undo 3 entries: ")
    code, _, err = _run(capsys, "edit", str(path), "e0001", "--undo")
    assert code == 1 and "not a surgery" in err


def test_cli_prune_preview_and_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _session(tmp_path)
    code, out, _ = _run(capsys, "prune", str(path), "--keep-last", "1", "--preview")
    assert code == 0 and out.startswith("would prune 2 entries: context ")
    assert "8,000 tokens of tool output in 2 results" in out
    code, out, _ = _run(capsys, "prune", str(path), "--keep-last", "1")
    assert code == 0
    code, out, _ = _run(capsys, "prune", str(path), "--keep-last", "1")
    assert code == 0 and out.startswith("nothing to prune")
    messages = json.loads(_run(capsys, "context", str(path))[1])
    assert messages[2]["content"][0]["text"].startswith('[output of bash "pytest -x" cleared')
    tree = _run(capsys, "tree", str(path))[1]
    assert sum("context_edit (by prune): " in line for line in tree.splitlines()) == 2


def test_cli_edit_replace_on_a_compaction_edits_its_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = Builder()
    b.message(user("a"))
    b.message(assistant("b"))
    cid = b.add("compaction", summary="old", firstKeptEntryId="e0002", tokensBefore=10)
    path = b.write(tmp_path / "c.jsonl")
    before = json.loads(_run(capsys, "context", str(path))[1])
    code, out, err = _run(capsys, "edit", str(path), cid, "--replace", "new summary")
    assert code == 0, err
    messages = json.loads(_run(capsys, "context", str(path))[1])
    assert "new summary" in messages[0]["content"][0]["text"]
    record_id = out.strip().splitlines()[-1].split()[0]
    code, _, err = _run(capsys, "edit", str(path), record_id, "--undo")
    assert code == 0, err
    after = json.loads(_run(capsys, "context", str(path))[1])
    assert (
        after[0]["content"] == before[0]["content"] and after[1:] == before[1:]
    )  # the summary's time is new
    with Session.open(path, write=False) as s:
        assert [e.type for e in s.index.entries[-4:]] == ["compaction", "custom", "compaction", "custom"]


@pytest.fixture
def model_env(server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeModelServer:
    """The command line's model is the fake server's; no config file."""
    fake_anthropic_env(monkeypatch, server, tmp_path / "none.toml")
    return server


def test_cli_compacts_a_range_with_the_model_and_undoes_it(
    model_env: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = model_env
    path = _session(tmp_path)
    before = json.loads(_run(capsys, "context", str(path))[1])
    code, out, _ = _run(capsys, "compact", str(path), "--from", "e0002", "--to", "e0007", "--preview")
    assert code == 0 and "widened to whole turns: e0001..e0009" in out and not server.requests
    server.push(anthropic_stream(text("## Goal\nfix the tests")))
    code, out, err = _run(
        capsys, "compact", str(path), "--from", "e0002", "--to", "e0007", "--focus", "tests"
    )
    assert code == 0, err
    assert "Additional focus: tests" in server.requests[0].body["messages"][0]["content"][0]["text"]
    assert "[User]: run the tests" in server.requests[0].body["messages"][0]["content"][0]["text"]
    messages = json.loads(_run(capsys, "context", str(path))[1])
    assert messages[0] == {
        **before[0],
        "content": "Summary of entries e0001..e0009:\n\n## Goal\nfix the tests",
    }
    assert messages[1:] == before[9:]  # the third turn, untouched
    record_id = out.strip().splitlines()[-1].split()[0]
    code, _, err = _run(capsys, "edit", str(path), record_id, "--undo")
    assert code == 0, err
    assert json.loads(_run(capsys, "context", str(path))[1]) == before


def test_cli_range_compaction_that_fails_appends_nothing(
    model_env: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = model_env
    path = _session(tmp_path)
    size = path.stat().st_size
    server.push(anthropic_error(400, "invalid_request_error", "bad request"))
    code, _, err = _run(capsys, "compact", str(path), "--from", "e0001", "--to", "e0004")
    assert code == 1 and "summarization call failed" in err
    assert path.stat().st_size == size


def test_the_panel_names_who_made_each_surgery_edit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's own edits are marked "(user)" as the model's and prune's are (they had no mark:
    an unmarked edit could be anyone's)."""
    from agent_tui.projection.models import lookup
    from agent_tui.projection.rows import build_panel_model
    from agent_tui.tui.tree_state import TreeState

    path = _session(tmp_path)
    with Session.open(path) as s:
        own = s.hide("e0013").id  # the user's own edit of one entry: no surgery record
        apply(s, plan_prune(project(s.index), keep_last=1, min_tokens=1_000))
        apply(s, plan_span(project(s.index), "e0010", "e0012", author="model"))
        replaced = s.replace("e0009", "shorter").id
        projection = project(s.index)
        rows = build_panel_model(projection, lookup("claude-sonnet-4-5"), "claude-sonnet-4-5").rows
        by_entry = {r.source_id: r for r in rows if r.source_id}
        assert by_entry["e0003"].status == "replaced (prune)"
        assert by_entry["e0007"].status == "replaced (prune)"
        assert ", model)" in str(by_entry["e0011"].note)
        assert str(by_entry["e0013"].note).startswith(f"(hidden by {own}, user) ")
        assert by_entry["e0009"].status == "replaced (user)"
        tree = TreeState.build(s.index, projection).authors  # the tree's [by ...] badges
        assert (tree[own], tree["e0013"], tree[replaced], tree["e0009"]) == ("user",) * 4
        assert tree["e0011"] == "model" and tree["e0003"] == "prune"
    listing = _run(capsys, "tree", str(path))[1]
    assert sum("context_edit (by user): " in line for line in listing.splitlines()) == 2


def test_a_range_from_the_compaction_summary_starts_at_the_first_turn_after_it(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("old"))  # e0001
    b.message(assistant("old answer"))  # e0002
    cid = b.add("compaction", summary="s", firstKeptEntryId="e0002", tokensBefore=5)  # e0003
    b.message(user("new"))  # e0004
    b.message(assistant("new answer"))  # e0005
    b.message(user("latest"))  # e0006
    path = b.write(tmp_path / "c.jsonl")
    with Session.open(path) as s:
        plan = plan_range(project(s.index), cid, "e0005")
        assert (plan.first_id, plan.carrier_id, plan.hidden_ids) == ("e0004", "e0004", ["e0005"])
        with pytest.raises(SurgeryError, match="no user message in"):
            plan_range(project(s.index), cid, "e0002")


def test_the_agents_overflow_recovery_hide_is_named_as_such(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("a long question"))  # e0001
    b.message({**assistant(""), "stopReason": "error", "errorMessage": "prompt is too long"})  # e0002
    recovery = b.add("context_edit", targetId="e0002", replacement=None)
    user_hide = b.add("context_edit", targetId="e0001", replacement=None)
    path = b.write(tmp_path / "o.jsonl")
    with Session.open(path, write=False) as s:
        authors = edit_authors(s.index.active_path())
    assert authors == {recovery: ("overflow-recovery", "hide", "")}
    assert user_hide not in authors

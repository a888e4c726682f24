"""Where a session stands deferred: the marker must be the branch's latest entry (but for what a
turn records first) and the message before it must hold the call; otherwise nothing is resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_tui.agent.deferred_calls import deferred_call, marker
from agent_tui.projection.window import window_entry
from agent_tui.store.session import Session
from tests.support.session_builder import Builder, assistant, tool_result, user

CALL = ("toolu_d", "bash", {"command": "echo hi"})


def _add(b: Builder, fields: dict[str, Any]) -> None:
    """An entry with ``fields`` (its ``type`` among them) at the leaf."""
    rest = dict(fields)
    b.add(str(rest.pop("type")), False, **rest)


def _deferred(tmp_path: Path, *after: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    b = Builder()
    b.message(user("deploy it"))
    b.message(assistant(calls=[CALL]))
    _add(b, marker({"id": "toolu_d", "name": "bash", "arguments": {"command": "echo hi"}}))
    for fields in after:
        _add(b, fields)
    with Session.open(b.write(tmp_path / "s.jsonl"), write=False) as session:
        return deferred_call(session.index.active_path())


def test_the_marker_at_the_branchs_end_names_the_call_and_its_stop_reason(tmp_path: Path) -> None:
    found = _deferred(tmp_path)
    assert found is not None
    call, stop = found
    assert (call["id"], call["name"], call["arguments"], stop) == (
        "toolu_d",
        "bash",
        {"command": "echo hi"},
        "toolUse",
    )


def test_what_a_turn_records_first_does_not_hide_it(tmp_path: Path) -> None:
    found = _deferred(
        tmp_path,
        {"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        {"type": "message", "message": {"role": "system", "content": "prompt", "timestamp": 1}},
        window_entry("anthropic", "m", 4096),
    )
    assert found is not None and found[0]["id"] == "toolu_d"


def test_anything_the_model_would_see_after_it_ends_the_deferral(tmp_path: Path) -> None:
    assert _deferred(tmp_path, {"type": "message", "message": user("never mind")}) is None
    assert _deferred(tmp_path, {"type": "message", "message": tool_result("toolu_d", "ran", "bash")}) is None


def test_a_marker_for_a_call_the_message_does_not_hold_is_not_resumed(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("deploy it"))
    b.message(assistant(calls=[CALL]))
    _add(b, marker({"id": "toolu_other", "name": "bash", "arguments": {}}))
    with Session.open(b.write(tmp_path / "s.jsonl"), write=False) as session:
        assert deferred_call(session.index.active_path()) is None

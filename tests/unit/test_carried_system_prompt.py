"""After a compaction, the system prompt before the cut is carried on whole by the compaction
(its ``systemMessage``), not summarized: exports and the panel say so."""

from __future__ import annotations

from pathlib import Path

from agent_tui.library.export import export_bytes
from agent_tui.library.marks import branch_marks
from agent_tui.projection.context import project
from agent_tui.projection.models import lookup
from agent_tui.projection.rows import build_panel_model
from agent_tui.store.session import Session
from tests.unit.test_call_history import reply, system, user


def test_the_system_prompt_is_carried_not_summarized(tmp_path: Path) -> None:
    with Session.create(tmp_path, tmp_path) as s:
        prompt = s.append_message(system("You are terse.")).id
        old = s.append_message(user("old")).id
        s.append_message(reply("old reply"))
        kept = s.append_message(user("kept")).id
        s.append_message(reply("kept reply"))
        compaction = s.append(
            {
                "type": "compaction",
                "summary": "sum",
                "firstKeptEntryId": kept,
                "tokensBefore": 10,
                "systemMessage": {"role": "system", "content": "You are terse.", "timestamp": 1},
            }
        ).id
        projection = project(s.index)
        marks = branch_marks(projection)
        assert marks[prompt].status == "carried"
        assert marks[prompt].describe() == f"system prompt, carried on by compaction {compaction}"
        assert marks[old].status == "summarized"
        markdown = export_bytes(s.index, "md").decode()
        assert f"*system prompt, carried on by compaction {compaction}*" in markdown
        rows = build_panel_model(projection, lookup("claude-sonnet-4-5", "anthropic"), "m").rows
        carried = [r for r in rows if r.source_id == compaction and r.role == "system"]
        assert carried and carried[0].text.startswith("(carried on by the compaction;")

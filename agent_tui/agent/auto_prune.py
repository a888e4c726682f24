"""``[compaction] prune_before_summarizing``: when the context passes the threshold, prune old tool
output first (no model call) and summarize only if that is not enough."""

from __future__ import annotations

from agent_tui.projection.context import project
from agent_tui.projection.surgery import apply, plan_prune
from agent_tui.store.record import Entry
from agent_tui.store.session import Session


def prune_for_threshold(session: Session) -> list[Entry]:
    """Prune with the defaults (``projection.surgery.plan_prune``), as the ``prune`` author; returns
    the entries appended (the edits, then the record), none when there was nothing to prune."""
    plan = plan_prune(project(session.index), author="prune")
    if not plan.edits:
        return []
    record = apply(session, plan)
    edit_ids = record.data["data"]["edits"]
    return [*(session.index.get(i) for i in edit_ids), record]

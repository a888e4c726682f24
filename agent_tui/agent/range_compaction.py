"""Compacting a chosen range: the model summarizes a span of the branch, and context_edits apply it.

The span is widened to whole turns (``projection.surgery.plan_range``); the model writes the
summary with the compaction prompt (in several calls if it does not fit one request); the
span's first unpinned user message is replaced by "Summary of entries A..B: ..." and its other
entries are hidden, as one surgery (one undo). Nothing is appended when the call fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_tui.agent.compaction import CompactionError, Summarizer
from agent_tui.projection.context import project
from agent_tui.projection.surgery import RangePlan, Surgery, apply, plan_range, range_edits
from agent_tui.store.record import Entry
from agent_tui.store.session import Session


@dataclass(slots=True)
class RangeOutcome:
    plan: RangePlan
    surgery: Surgery
    record: Entry  # the surgery record: the id an undo names


async def compact_range(
    session: Session, summarizer: Summarizer, first_id: str, last_id: str, *, focus: str | None = None
) -> RangeOutcome:
    """Summarize ``first_id``..``last_id`` (widened to whole turns) and apply it as context_edits.

    Raises ``SurgeryError`` for a span that cannot be compacted and ``CompactionError`` when the
    summarization call fails; either way nothing is appended."""
    projection = project(session.index)
    plan = plan_range(projection, first_id, last_id)
    summary, usage = await summarizer.summarize(plan.messages, None, focus)
    if not summary.strip():
        raise CompactionError("the summarization call returned no text")
    # the branch may have grown while the model wrote (the app): plan the edits on it as it is now
    projection = project(session.index)
    surgery = range_edits(projection, plan, summary)
    surgery.extra["usage"] = usage
    if focus:
        surgery.extra["focus"] = focus
    record = apply(session, surgery)
    return RangeOutcome(plan, surgery, record)

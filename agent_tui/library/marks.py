"""How each entry of a branch stands with the model: the marks exports show.

A projection knows, for its branch, which entries are hidden, replaced,
restored, folded into a compaction summary, pinned through one, or the summary
itself. ``branch_marks`` flattens that into one mark per entry id; entries
that reach the model unchanged (or never reach it, like labels) have none.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_tui.projection.context import Projection, Status


@dataclass(frozen=True, slots=True)
class Mark:
    status: str  # hidden, replaced, restored, summarized, carried, summary, pinned, superseded
    edit_id: str | None = None  # the context_edit behind hidden/replaced/restored
    compaction_id: str | None = None  # the compaction behind summarized

    def describe(self) -> str:
        if self.status == "hidden":
            return f"hidden from the model by edit {self.edit_id}"
        if self.status == "replaced":
            return f"replaced in the model's view by edit {self.edit_id}"
        if self.status == "restored":
            return f"restored by edit {self.edit_id}"
        if self.status == "summarized":
            return f"summarized by compaction {self.compaction_id}"
        if self.status == "carried":
            return f"system prompt, carried on by compaction {self.compaction_id}"
        if self.status == "summary":
            return "compaction summary the model sees"
        if self.status == "pinned":
            return "pinned: kept verbatim through compaction"
        if self.status == "superseded":
            return "older compaction, superseded"
        return self.status


#: Entry types that put something in the model's view (and so can be summarized away).
IN_CONTEXT_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})

#: One-letter codes for the HTML viewer's data.
CODES = {
    "hidden": "H",
    "replaced": "R",
    "restored": "S",
    "summarized": "C",
    "carried": "K",
    "summary": "M",
    "pinned": "P",
    "superseded": "X",
}


def branch_marks(projection: Projection) -> dict[str, Mark]:
    """Entry id -> mark, for the entries of ``projection``'s branch that have one."""
    marks: dict[str, Mark] = {}
    if projection.summarized_ids:
        by_id = {e.id: e for e in projection.path}
        for entry_id in projection.summarized_ids:
            entry = by_id.get(entry_id)
            if entry is None or entry.type not in IN_CONTEXT_TYPES:  # settings and labels fold into nothing
                continue
            # a system prompt before the cut is not summarized: the compaction carries it on whole
            status = "carried" if entry.type == "message" and entry.role == "system" else "summarized"
            marks[entry_id] = Mark(status, compaction_id=projection.compaction_id)
    for ce in projection.entries:
        status = ce.status
        eid = ce.entry.id
        if status in (Status.HIDDEN, Status.REPLACED, Status.RESTORED):
            marks[eid] = Mark(status.value, edit_id=ce.edit_id)
        elif status is Status.SUPERSEDED:
            marks[eid] = Mark("superseded")
        elif status is Status.SUMMARY and ce.entry.type == "compaction":
            marks[eid] = Mark("summary")
        elif status is Status.PINNED or (ce.pinned and eid not in marks):
            marks[eid] = Mark("pinned")
    return marks

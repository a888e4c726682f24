"""Context surgery: edits of many entries at once, planned as pure functions over a projection.

A surgery is a list of ``context_edit`` entries (pi's own type, so pi 1.6 projects the result the
same way) followed by one ``custom`` entry of type :data:`SURGERY` that groups them: what was
done, by whom, over which span, and the tokens of the next request before and after. The record
is never in context (pi ignores ``custom`` entries); it is what lets one undo revert the whole
group and what the tree and the panel read to say who made an edit.

Plans are made here, without writing anything: a span hidden or restored (:func:`plan_span`),
old tool output pruned (:func:`plan_prune`), a range replaced by its summary
(:func:`plan_range` and :func:`range_edits`), an earlier surgery undone (:func:`plan_undo`).
Each plan's token figures come from projecting the branch with the plan's entries drafted onto
it (:func:`draft_tokens`), the same :func:`~agent_tui.projection.tokens.context_tokens` the panel
shows after the entries are written, so a preview and its result are one figure.
:func:`apply` appends a plan through a session.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_tui.projection.context import ContextEntry, Projection, Status, project_path
from agent_tui.projection.request import current_system_message
from agent_tui.projection.tokens import context_tokens, estimate_message, estimate_request, image_rule
from agent_tui.store.record import Entry, JSONObject
from agent_tui.store.session import restore_fields

if TYPE_CHECKING:
    from agent_tui.store.session import Session

#: ``custom`` entries of this type group the context_edits of one surgery.
SURGERY = "agent-tui.surgery"

#: Who made a surgery (the record's ``author``).
AUTHORS = ("user", "model", "prune", "overflow-recovery")

DEFAULT_KEEP_LAST = 3
DEFAULT_MIN_TOKENS = 1_000


class SurgeryError(Exception):
    """A surgery that cannot be made as asked; nothing was appended."""


@dataclass(slots=True)
class Surgery:
    """What one surgery will append, and what it does to the next request."""

    action: str  # hide, restore, prune, compact-range, undo, context-tool
    author: str
    edits: list[JSONObject]  # context_edit fields, in the order they are appended
    first_id: str | None = None  # the span (after widening), in view order
    last_id: str | None = None
    notes: list[str] = field(default_factory=list)  # widened, skipped pinned entries...
    tokens_before: int = 0  # the next request as the panel counts it now (reported usage + estimate)
    #: the same figure after the surgery, as the panel will show it: all estimated, since an edit after
    #: the last reply voids its reported usage
    tokens_after: int = 0
    estimated_before: int = 0  # the whole request estimated now, as ``tokens_after`` is counted
    saved: int = 0  # estimated_before - tokens_after: what the edits take out
    extra: JSONObject = field(default_factory=dict)  # action-specific record fields

    @property
    def targets(self) -> list[str]:
        return [str(e["targetId"]) for e in self.edits if "targetId" in e]

    def record_fields(self, edit_ids: Sequence[str]) -> JSONObject:
        data: JSONObject = {
            "action": self.action,
            "author": self.author,
            "edits": list(edit_ids),
            "targets": self.targets,
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
            "tokensSaved": self.saved,
        }
        if self.first_id is not None:
            data["from"] = self.first_id
            data["to"] = self.last_id
        data.update(self.extra)
        return {"type": "custom", "customType": SURGERY, "data": data}

    def summary_line(self) -> str:
        """One line: ``hide 12 entries (a..b): 12,345 → 1,234 tokens``."""
        n = len(self.edits)
        span = f" ({self.first_id}..{self.last_id})" if self.first_id else ""
        noun = "entry" if n == 1 else "entries"
        what = (
            f"edit the summary of compaction {self.extra.get('compaction')}"
            if self.action == "edit-summary"
            else f"{self.action} {n} {noun}{span}"
        )
        return (
            f"{what}: context ≈ {self.estimated_before:,} → {self.tokens_after:,} tokens "
            f"({_signed(-self.saved)})"
        )


def _signed(n: int) -> str:
    return f"+{n:,}" if n > 0 else f"−{-n:,}" if n < 0 else "±0"


# -- token figures ---------------------------------------------------------------------------------


def draft_entries(projection: Projection, fields_list: Sequence[JSONObject]) -> list[Entry]:
    """``fields_list`` as entries chained under the projection's leaf (never written)."""
    out: list[Entry] = []
    parent = projection.leaf_id
    for i, fields in enumerate(fields_list):
        entry = Entry.from_data({**fields, "id": f"~surgery-draft-{i}", "parentId": parent, "timestamp": ""})
        out.append(entry)
        parent = entry.id
    return out


def draft_projection(projection: Projection, fields_list: Sequence[JSONObject]) -> Projection:
    """The projection after appending ``fields_list`` (drafts, never written)."""
    drafts = draft_entries(projection, fields_list)
    if not drafts:
        return projection
    return project_path([*projection.path, *drafts], drafts[-1].id)


def draft_tokens(projection: Projection, surgery: Surgery) -> Surgery:
    """Fill in the plan's before and after figures: the next request now, and after the plan's
    edits and record are appended (the record is drafted too, so the figure is the result's)."""
    surgery.tokens_before = context_tokens(projection).tokens
    record = surgery.record_fields([f"~surgery-draft-{i}" for i in range(len(surgery.edits))])
    after = draft_projection(projection, [*surgery.edits, record])
    surgery.tokens_after = context_tokens(after).tokens
    surgery.estimated_before = estimate_request(projection.messages, images=image_rule(projection.model))
    surgery.saved = surgery.estimated_before - surgery.tokens_after
    return surgery


# -- what an entry is --------------------------------------------------------------------------------


def _is_user_editable(ce: ContextEntry) -> bool:
    """Entries a user may hide: messages of the conversation (not system prompts, not summaries)."""
    entry = ce.entry
    if entry.type == "custom_message":
        return True
    return entry.type == "message" and entry.role in ("user", "assistant", "toolResult", "bashExecution")


def _tool_links(entries: Iterable[ContextEntry]) -> dict[str, set[str]]:
    """Entry id -> the entries that must stay with it: an assistant's tool calls and their results."""
    calls: dict[str, str] = {}
    results: dict[str, list[str]] = {}
    for ce in entries:
        entry = ce.entry
        if entry.type != "message":
            continue
        if entry.role == "assistant":
            message = entry.message or {}
            for block in message.get("content") or []:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "toolCall"
                    and isinstance(block.get("id"), str)
                ):
                    calls[block["id"]] = entry.id
        elif entry.role == "toolResult":
            call_id = (entry.message or {}).get("toolCallId")
            if isinstance(call_id, str):
                results.setdefault(call_id, []).append(entry.id)
    links: dict[str, set[str]] = {}
    for call_id, assistant_id in calls.items():
        for result_id in results.get(call_id, []):
            links.setdefault(assistant_id, set()).add(result_id)
            links.setdefault(result_id, set()).add(assistant_id)
    return links


def _closure(start: Iterable[str], links: dict[str, set[str]]) -> set[str]:
    out = set(start)
    todo = list(out)
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in out:
                out.add(other)
                todo.append(other)
    return out


def _pinned(entries: Sequence[ContextEntry], links: dict[str, set[str]]) -> set[str]:
    """Pinned entries in view, with their tool-call partners (a pinned call keeps its results)."""
    return _closure((ce.entry.id for ce in entries if ce.pinned or ce.status is Status.PINNED), links)


def _view_position(projection: Projection, entry_id: str) -> int:
    for i, ce in enumerate(projection.entries):
        if ce.entry.id == entry_id:
            return i
    if entry_id in {e.id for e in projection.path}:
        raise SurgeryError(
            f"entry {entry_id} is folded into compaction {projection.compaction_id}'s summary: "
            "it is not in the model's view"
        )
    raise SurgeryError(f"entry {entry_id} is not on the active branch")


def _span(projection: Projection, first_id: str, last_id: str) -> tuple[int, int]:
    a, b = _view_position(projection, first_id), _view_position(projection, last_id)
    return (a, b) if a <= b else (b, a)


# -- hide or restore a span --------------------------------------------------------------------------


def plan_span(
    projection: Projection, first_id: str, last_id: str, *, restore: bool = False, author: str = "user"
) -> Surgery:
    """Hide (or restore) every entry of the view from ``first_id`` to ``last_id``.

    Hiding leaves out what is already hidden and pinned entries (with their tool-call partners);
    both ways, a tool call and its results go together, so the span widens to take the partner of
    any entry at its edges (a note says so).
    """
    entries = projection.entries
    a, b = _span(projection, first_id, last_id)
    links = _tool_links(entries)
    in_span = [ce for ce in entries[a : b + 1] if _is_user_editable(ce)]
    if restore:
        chosen = {
            ce.entry.id for ce in in_span if ce.edit_id is not None and ce.status is not Status.RESTORED
        }
    else:
        chosen = {ce.entry.id for ce in in_span if ce.status is not Status.HIDDEN}
    widened = _closure(chosen, links)
    by_id = {ce.entry.id: ce for ce in entries}
    notes: list[str] = []
    if not restore:
        pinned = _pinned(entries, links) & widened
        if pinned:
            notes.append(f"kept {len(pinned)} pinned {'entry' if len(pinned) == 1 else 'entries'}")
        widened -= pinned
        widened = {i for i in widened if by_id[i].status is not Status.HIDDEN}
    else:
        widened = {
            i for i in widened if by_id[i].edit_id is not None and by_id[i].status is not Status.RESTORED
        }
    order = [ce.entry.id for ce in entries if ce.entry.id in widened]
    outside = [i for i in order if not a <= _index(entries, i) <= b]
    if outside:
        notes.append(f"widened to {', '.join(outside)} to keep tool calls with their results")
    if not order:
        what = "hidden or replaced" if restore else "visible and unpinned"
        raise SurgeryError(
            f"nothing to {'restore' if restore else 'hide'}: no {what} entry in {first_id}..{last_id}"
        )
    edits = [
        restore_fields(by_id[i].entry)
        if restore
        else {"type": "context_edit", "targetId": i, "replacement": None}
        for i in order
    ]
    first = order[0] if _index(entries, order[0]) < a else entries[a].entry.id
    last = order[-1] if _index(entries, order[-1]) > b else entries[b].entry.id
    plan = Surgery("restore" if restore else "hide", author, edits, first, last, notes)
    return draft_tokens(projection, plan)


def _index(entries: Sequence[ContextEntry], entry_id: str) -> int:
    for i, ce in enumerate(entries):
        if ce.entry.id == entry_id:
            return i
    return -1


# -- prune old tool output ----------------------------------------------------------------------------

STUB_ARGUMENT_CHARS = 60


def tool_call_blocks(entries: Iterable[ContextEntry]) -> dict[str, JSONObject]:
    """Tool call id -> its ``toolCall`` block, from the assistant messages in view (as sent)."""
    calls: dict[str, JSONObject] = {}
    for ce in entries:
        for m in ce.messages:
            if m.role != "assistant":
                continue
            for block in m.message.get("content") or []:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "toolCall"
                    and isinstance(block.get("id"), str)
                ):
                    calls[block["id"]] = block
    return calls


def _main_argument(arguments: Any) -> str | None:
    """The argument that names what a call did: a command, a path, a pattern, else the first string."""
    if not isinstance(arguments, dict):
        return None
    for key in ("command", "path", "pattern", "query", "url"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return next((v for v in arguments.values() if isinstance(v, str) and v.strip()), None)


def tool_stub(tool_name: str, arguments: Any) -> str:
    """What a call did, on one line: ``bash "pytest -x"`` (its command, path or pattern, clipped)."""
    argument = _main_argument(arguments)
    what = tool_name or "a tool"
    if argument is not None:
        one_line = " ".join(argument.split())
        if len(one_line) > STUB_ARGUMENT_CHARS:
            one_line = one_line[: STUB_ARGUMENT_CHARS - 1] + "…"
        what += f' "{one_line}"'
    return what


def prune_stub(tool_name: str, arguments: Any, tokens: int) -> str:
    """``[output of bash "pytest -x" cleared: 12,400 tokens; run it again to see]``."""
    return f"[output of {tool_stub(tool_name, arguments)} cleared: {tokens:,} tokens; run it again to see]"


def plan_prune(
    projection: Projection,
    *,
    keep_last: int = DEFAULT_KEEP_LAST,
    min_tokens: int = DEFAULT_MIN_TOKENS,
    author: str = "prune",
) -> Surgery:
    """Replace the output of old tool results with a one-line stub, without a model call.

    The last ``keep_last`` tool results in view are kept whatever their size; of the ones before
    them, each whose output is over ``min_tokens`` tokens (as sent now: a result already replaced
    counts at its replacement) becomes :func:`prune_stub`. Pinned results are never pruned. The
    plan may have no edits (nothing to prune).
    """
    entries = projection.entries
    results = [
        ce for ce in entries if ce.entry.type == "message" and ce.entry.role == "toolResult" and ce.messages
    ]
    older = results[: max(0, len(results) - max(0, keep_last))]
    calls = tool_call_blocks(entries)
    edits: list[JSONObject] = []
    pruned_tokens = 0
    skipped_pinned = 0
    images = image_rule(projection.model)
    for ce in older:
        message = ce.messages[0].message
        tokens = estimate_message(message, images)
        if tokens <= min_tokens:
            continue
        if ce.pinned:
            skipped_pinned += 1
            continue
        call = calls.get(str(message.get("toolCallId")), {})
        name = str(message.get("toolName") or call.get("name") or "")
        stub = prune_stub(name, call.get("arguments"), tokens)
        if estimate_message({"role": "toolResult", "content": [{"type": "text", "text": stub}]}) >= tokens:
            continue  # the stub would cost as much as the output
        edits.append(
            {
                "type": "context_edit",
                "targetId": ce.entry.id,
                "replacement": {"content": [{"type": "text", "text": stub}]},
            }
        )
        pruned_tokens += tokens
    notes = [f"kept {skipped_pinned} pinned tool results"] if skipped_pinned else []
    plan = Surgery(
        "prune",
        author,
        edits,
        notes=notes,
        extra={"keepLast": keep_last, "minTokens": min_tokens, "outputTokens": pruned_tokens},
    )
    return draft_tokens(projection, plan)


# -- a range replaced by its summary -----------------------------------------------------------------


@dataclass(slots=True)
class RangePlan:
    """A span widened to whole turns: what to summarize, which entry carries the summary, what hides."""

    first_id: str
    last_id: str
    carrier_id: str  # the span's first unpinned user message: its content becomes the summary
    hidden_ids: list[str]  # the span's other visible entries, hidden
    pinned_ids: list[str]  # pinned entries (and their tool-call partners) that stay
    messages: list[JSONObject]  # what the summary is written from
    notes: list[str] = field(default_factory=list)


def _is_turn_start(ce: ContextEntry) -> bool:
    entry = ce.entry
    return entry.type == "custom_message" or (entry.type == "message" and entry.role == "user")


def plan_range(projection: Projection, first_id: str, last_id: str) -> RangePlan:
    """The span from ``first_id`` to ``last_id``, widened to whole turns (a turn starts at a user
    message and runs to the next), so no tool call is cut from its result at an edge."""
    entries = projection.entries
    a, b = _span(projection, first_id, last_id)
    start = a
    while start > 0 and not _is_turn_start(entries[start]):
        start -= 1
    if not _is_turn_start(
        entries[start]
    ):  # nothing before (a summary, a system prompt): the first turn in it
        start = next((i for i in range(a, b + 1) if _is_turn_start(entries[i])), -1)
        if start < 0:
            raise SurgeryError(f"no user message in {first_id}..{last_id}: a range starts at a turn")
    end = b
    while end + 1 < len(entries) and not _is_turn_start(entries[end + 1]):
        end += 1
    notes = []
    first, last = entries[start].entry.id, entries[end].entry.id
    if (start, end) != (a, b):
        notes.append(f"widened to whole turns: {first}..{last}")
    links = _tool_links(entries)
    pinned = _pinned(entries, links)
    span = entries[start : end + 1]
    carrier = next((ce for ce in span if _is_turn_start(ce) and ce.entry.id not in pinned), None)
    if carrier is None:
        raise SurgeryError(f"every user message in {first}..{last} is pinned: none can carry the summary")
    hidden = [
        ce.entry.id
        for ce in span
        if ce is not carrier
        and _is_user_editable(ce)
        and ce.entry.id not in pinned
        and ce.status is not Status.HIDDEN
    ]
    kept_pinned = [ce.entry.id for ce in span if ce.entry.id in pinned]
    if kept_pinned:
        notes.append(f"kept {len(kept_pinned)} pinned {'entry' if len(kept_pinned) == 1 else 'entries'}")
    messages = [
        m.message
        for ce in span
        if ce.entry.id not in pinned and ce.entry.type != "compaction"
        for m in ce.messages
        if m.role != "system"
    ]
    if not messages:
        raise SurgeryError(f"nothing to summarize in {first}..{last}: every entry is hidden or pinned")
    return RangePlan(first, last, carrier.entry.id, hidden, kept_pinned, messages, notes)


def range_summary_text(plan: RangePlan, summary: str) -> str:
    return f"Summary of entries {plan.first_id}..{plan.last_id}:\n\n{summary.strip()}"


def range_edits(projection: Projection, plan: RangePlan, summary: str) -> Surgery:
    """The surgery that applies a range's summary: the carrier's content replaced, the rest hidden."""
    edits: list[JSONObject] = [
        {
            "type": "context_edit",
            "targetId": plan.carrier_id,
            "replacement": {"content": range_summary_text(plan, summary)},
        },
        *({"type": "context_edit", "targetId": i, "replacement": None} for i in plan.hidden_ids),
    ]
    surgery = Surgery("compact-range", "user", edits, plan.first_id, plan.last_id, list(plan.notes))
    return draft_tokens(projection, surgery)


# -- an edited compaction summary ----------------------------------------------------------------------


def summary_edit_fields(projection: Projection, compaction_id: str, summary: str) -> JSONObject:
    """A new ``compaction`` entry that is ``compaction_id`` with ``summary``: pi and agent-tui take the
    latest compaction on the branch, so appending it replaces the summary the model sees and keeps
    the same ``firstKeptEntryId``. Its ``systemMessage`` is the system prompt replayed as it is now
    (it stands in for the system messages between the two compactions too)."""
    if projection.compaction_id != compaction_id:
        if compaction_id in {e.id for e in projection.path if e.type == "compaction"}:
            raise SurgeryError(
                f"compaction {compaction_id} is not the latest on the branch ({projection.compaction_id} is)"
            )
        raise SurgeryError(f"entry {compaction_id} is not a compaction on the active branch")
    if not summary.strip():
        raise SurgeryError("the summary is empty")
    old = next(e for e in projection.path if e.id == compaction_id).data
    first_kept = old.get("firstKeptEntryId")
    details = old.get("details")
    system = current_system_message([m.message for m in projection.messages if m.role == "system"])
    fields: JSONObject = {
        "type": "compaction",
        "summary": summary,
        "firstKeptEntryId": first_kept,  # its own id ("keeps nothing") keeps nothing after it either
        "tokensBefore": old.get("tokensBefore") if isinstance(old.get("tokensBefore"), int) else 0,
        "details": {
            **(details if isinstance(details, dict) else {}),
            "editedFrom": compaction_id,
        },
    }
    if system is not None:
        fields["systemMessage"] = system
    return fields


def plan_summary_edit(
    projection: Projection, compaction_id: str, summary: str, *, author: str = "user"
) -> Surgery:
    """:func:`summary_edit_fields` as a surgery (its record names the compaction it edits, so an undo
    appends one more compaction carrying the earlier summary)."""
    fields = summary_edit_fields(projection, compaction_id, summary)
    surgery = Surgery("edit-summary", author, [fields], extra={"compaction": compaction_id})
    return draft_tokens(projection, surgery)


# -- records and undo ------------------------------------------------------------------------------------


def is_record(entry: Entry) -> bool:
    return entry.type == "custom" and entry.data.get("customType") == SURGERY


def records(path: Sequence[Entry]) -> list[Entry]:
    """The surgery records on a branch, oldest first."""
    return [e for e in path if is_record(e)]


def edit_authors(path: Sequence[Entry]) -> dict[str, tuple[str, str, str]]:
    """context_edit id -> (author, action, record id), for the edits a surgery on the branch made,
    and for the agent's overflow recovery (a hide of an assistant attempt that ended in an error,
    which the loop appends without a record: record id "")."""
    out: dict[str, tuple[str, str, str]] = {}
    by_id: dict[str, Entry] | None = None
    for entry in path:
        if entry.type == "context_edit" and entry.data.get("replacement", False) is None:
            if by_id is None:
                by_id = {e.id: e for e in path}
            target = by_id.get(str(entry.data.get("targetId")))
            if (
                target is not None
                and target.role == "assistant"
                and (target.message or {}).get("stopReason") == "error"
            ):
                out[entry.id] = ("overflow-recovery", "hide", "")
        elif is_record(entry):
            data = entry.data.get("data")
            if not isinstance(data, dict):
                continue
            author, action = str(data.get("author") or "user"), str(data.get("action") or "")
            for edit_id in data.get("edits") or []:
                if isinstance(edit_id, str):
                    out[edit_id] = (author, action, entry.id)
    return out


def surgery_authors(path: Sequence[Entry]) -> dict[str, str]:
    """context_edit id -> who made it, for every edit on ``path``: a surgery's author (user, prune,
    model), the overflow recovery, else "user" (a hide, restore or replace of one entry appends no
    record): what the panel and the tree mark, the user's own edits as plainly as the others'."""
    made = edit_authors(path)
    return {e.id: made[e.id][0] if e.id in made else "user" for e in path if e.type == "context_edit"}


def find_record(path: Sequence[Entry], entry_id: str) -> Entry:
    """The surgery record ``entry_id`` names: the record itself or one of its edits."""
    for record in reversed(records(path)):
        data = record.data.get("data")
        if record.id == entry_id or (isinstance(data, dict) and entry_id in (data.get("edits") or [])):
            return record
    raise SurgeryError(f"entry {entry_id} is not a surgery (or one of its edits) on the active branch")


def plan_undo(projection: Projection, record_id: str, *, author: str = "user") -> Surgery:
    """Put every target of a surgery back as it was before it, in one surgery.

    A target's earlier state is the latest edit of it on the branch before the surgery's first
    edit (appended again), or, when there was none, its original content (a ``restore`` edit).
    Targets edited again since the surgery are left as they are now (a note says so).
    """
    path = projection.path
    record = find_record(path, record_id)
    data = record.data.get("data")
    if isinstance(data, dict) and data.get("action") == "edit-summary":
        return _undo_summary_edit(projection, record, data, author)
    edit_ids = [
        i for i in (data.get("edits") if isinstance(data, dict) else None) or [] if isinstance(i, str)
    ]
    position = {e.id: i for i, e in enumerate(path)}
    group_start = min((position[i] for i in edit_ids if i in position), default=position[record.id])
    in_view = {ce.entry.id: ce for ce in projection.entries}
    edits: list[JSONObject] = []
    changed_since: list[str] = []
    for edit_id in edit_ids:
        edit = next((e for e in path if e.id == edit_id), None)
        if edit is None:
            continue
        target_id = str(edit.data.get("targetId"))
        current = in_view.get(target_id)
        if current is None:
            continue  # folded into a later compaction: nothing to put back in view
        if current.edit_id != edit_id:
            changed_since.append(target_id)
            continue
        earlier = next(
            (
                e
                for e in reversed(path[:group_start])
                if e.type == "context_edit" and e.data.get("targetId") == target_id
            ),
            None,
        )
        if earlier is not None and earlier.id in in_view:
            fields: JSONObject = {
                "type": "context_edit",
                "targetId": target_id,
                "replacement": earlier.data.get("replacement"),
            }
            if earlier.data.get("restore") is True:
                fields["restore"] = True
            edits.append(fields)
        else:
            edits.append(restore_fields(current.entry))
    notes = [f"left {', '.join(changed_since)} as edited since"] if changed_since else []
    if not edits:
        raise SurgeryError(f"nothing to undo: every entry surgery {record.id} changed was edited since")
    surgery = Surgery("undo", author, edits, notes=notes, extra={"undoes": record.id})
    return draft_tokens(projection, surgery)


def _undo_summary_edit(projection: Projection, record: Entry, data: JSONObject, author: str) -> Surgery:
    made = [i for i in data.get("edits") or [] if isinstance(i, str)]
    edited = data.get("compaction")
    if not made or projection.compaction_id != made[-1]:
        raise SurgeryError(f"nothing to undo: a later compaction replaced the one surgery {record.id} wrote")
    earlier = next((e for e in projection.path if e.id == edited and e.type == "compaction"), None)
    if earlier is None:
        raise SurgeryError(f"nothing to undo: compaction {edited} is not on the active branch")
    surgery = plan_summary_edit(projection, made[-1], str(earlier.data.get("summary") or ""), author=author)
    surgery.extra["undoes"] = record.id
    return surgery


# -- writing -----------------------------------------------------------------------------------------------


def apply(session: Session, surgery: Surgery) -> Entry:
    """Append the plan's edits, then its record; returns the record (the id an undo names)."""
    if not surgery.edits:
        raise SurgeryError("nothing to change")
    ids = [session.append(fields, sync=False).id for fields in surgery.edits]
    record = session.append(surgery.record_fields(ids), sync=False)
    session.sync()
    return record


__all__ = [
    "AUTHORS",
    "SURGERY",
    "RangePlan",
    "Surgery",
    "SurgeryError",
    "apply",
    "draft_projection",
    "draft_tokens",
    "edit_authors",
    "find_record",
    "plan_prune",
    "plan_range",
    "plan_span",
    "plan_summary_edit",
    "plan_undo",
    "prune_stub",
    "range_edits",
    "records",
    "summary_edit_fields",
    "surgery_authors",
    "tool_call_blocks",
    "tool_stub",
]

"""Compaction planning and token accounting: the pure half of compaction.

Follows pi 1.6's ``prepareCompaction``: keep about ``keep_recent_tokens`` of
the newest context verbatim, cut at a user or assistant message but never at
a tool result, summarize a split turn's prefix separately, and start the range
to summarize where the previous compaction's kept range starts, so nothing
is summarized twice. The model call that writes the summary lives in
``agent_tui.agent.compaction``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agent_tui.projection.context import ContextEntry, Projection, Status, entry_messages, project_path
from agent_tui.projection.models import lookup
from agent_tui.projection.request import current_system_message
from agent_tui.projection.tokens import (
    CHARS_PER_TOKEN,
    ContextTokens,
    context_line,
    context_tokens,
    estimate_message,
    estimate_request,
    image_rule,
    usage_total,
)
from agent_tui.projection.tool_facts import tool_facts
from agent_tui.store.record import Entry

__all__ = [
    "ContextTokens",
    "context_line",
    "context_tokens",
    "estimate_request",
    "unmeasured_since_compaction",
    "usage_total",
]

JSONObject = dict[str, Any]

TOOL_RESULT_MAX_CHARS = 2000  # per tool result in the summarization request, as pi


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = 16_384
    keep_recent_tokens: int = 20_000
    prune_before_summarizing: bool = False  # the threshold prunes old tool output first (no model call)


#: The keep budget is at most this share of the window, and the reserve at most RESERVE_SHARE of it:
#: with a server's real window (llama.cpp ``-c 4096``) the defaults (20,000 kept, 16,384 reserved)
#: would keep more than fits, or compact before every call.
KEEP_SHARE = 0.4
RESERVE_SHARE = 0.25


def fit_to_window(
    settings: CompactionSettings, context_window: int, fixed_tokens: int = 0
) -> CompactionSettings:
    """The settings for a window: keep = min(keep_recent_tokens, 40% of what the system prompt and
    tools (``fixed_tokens``) leave of it), reserve = min(reserve_tokens, 25% of it). The same as
    ``settings`` for any window of 80,000 tokens or more at the defaults."""
    room = max(1, context_window - max(0, fixed_tokens))
    keep = min(settings.keep_recent_tokens, max(1, int(room * KEEP_SHARE)))
    reserve = min(settings.reserve_tokens, max(0, int(context_window * RESERVE_SHARE)))
    if keep == settings.keep_recent_tokens and reserve == settings.reserve_tokens:
        return settings
    return replace(settings, reserve_tokens=reserve, keep_recent_tokens=keep)


def compaction_threshold(context_window: int, settings: CompactionSettings) -> int:
    """Tokens above which the next request is compacted first: the window minus the (fitted) reserve."""
    return context_window - fit_to_window(settings, context_window).reserve_tokens


def should_compact(tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    return settings.enabled and tokens > compaction_threshold(context_window, settings)


def unmeasured_since_compaction(projection: Projection) -> bool:
    """No reply since the latest compaction on the path has reported usage (pi's rule: a threshold
    check waits for a reply after the compaction). The figure is then an estimate of a context just
    made small, and estimates run high (tool definitions, JSON): compacting again on it would fold
    the summary into a summary before the model has even seen it. An overflow the server reports
    still compacts."""
    latest = max((i for i, e in enumerate(projection.path) if e.type == "compaction"), default=-1)
    if latest < 0:
        return False
    for entry in projection.path[latest + 1 :]:
        message = entry.message if entry.type == "message" else None
        if (
            message is not None
            and message.get("role") == "assistant"
            and message.get("stopReason") not in ("aborted", "error")
            and usage_total(message.get("usage")) > 0
        ):
            return False
    return True


# -- the cut ------------------------------------------------------------------------------

_TURN_START_KINDS = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})
_CUT_KINDS = _TURN_START_KINDS | {"assistant"}


def _is_cut_point(ce: ContextEntry) -> bool:
    return ce.entry.type != "compaction" and any(m.kind in _CUT_KINDS for m in ce.messages)


def _is_turn_start(ce: ContextEntry) -> bool:
    return ce.entry.type != "compaction" and any(m.kind in _TURN_START_KINDS for m in ce.messages)


def _entry_tokens(ce: ContextEntry) -> int:
    return sum(estimate_message(m.message) for m in ce.messages)


def _intrinsically_visible(ce: ContextEntry) -> bool:
    """The entry gives the model something when no edit touches it (pi's sessionEntryToContextMessages)."""
    return ce.entry.type != "context_edit" and bool(entry_messages(ce.entry, ce.origin or ce.status))


def _is_recovery_omission_suffix(suffix: Sequence[ContextEntry]) -> bool:
    """pi's rule: what follows the cut is only a hidden assistant attempt (an overflow or a truncated
    reply that recovery hid) and the edits hiding it; then the cut may move past the last input."""
    omitted = {ce.entry.id for ce in suffix if ce.status is Status.HIDDEN and _intrinsically_visible(ce)}
    replaced_elsewhere = any(
        ce.entry.type == "context_edit"
        and ce.entry.data.get("replacement", _MISSING) is not None  # pi: `replacement !== null`
        and ce.entry.data.get("targetId") not in omitted
        for ce in suffix
    )
    return (
        not replaced_elsewhere
        and any(
            ce.entry.type == "message" and ce.entry.role == "assistant" and ce.entry.id in omitted
            for ce in suffix
        )
        and all(
            ce.entry.type != "compaction" and (ce.entry.id in omitted or not _intrinsically_visible(ce))
            for ce in suffix
        )
    )


_MISSING = object()


@dataclass(slots=True)
class CutPoint:
    first_kept_index: int
    turn_start_index: int  # -1 unless the cut splits a turn
    is_split_turn: bool


def find_cut_point(
    entries: Sequence[ContextEntry], start: int, end: int, keep_recent_tokens: int
) -> CutPoint:
    """Walk back from the newest entry until ``keep_recent_tokens`` are kept; cut at the nearest
    user-like or assistant entry at or after that point (never at a tool result)."""
    cut_points = [i for i in range(start, end) if _is_cut_point(entries[i])]
    if not cut_points:
        return CutPoint(start, -1, False)
    cut = cut_points[0]
    accumulated = 0
    exceeded = False
    for i in range(end - 1, start - 1, -1):
        tokens = _entry_tokens(entries[i])
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep_recent_tokens:
            exceeded = True
            cut = next((c for c in cut_points if c >= i), cut_points[-1])
            break
    if exceeded and _is_recovery_omission_suffix(entries[cut + 1 : end]):
        cut += 1  # the input that overflowed goes into the summary too, or the retry overflows again
    while cut > start:  # take along the metadata entries just before the cut
        previous = entries[cut - 1]
        if previous.entry.type == "compaction" or previous.messages:
            break
        cut -= 1
    if _is_turn_start(entries[cut]):
        return CutPoint(cut, -1, False)
    turn_start = next((i for i in range(cut, start - 1, -1) if _is_turn_start(entries[i])), -1)
    return CutPoint(cut, turn_start, turn_start != -1)


# -- the plan -------------------------------------------------------------------------------


@dataclass(slots=True)
class CompactionPlan:
    """What a compaction would do; also what the preview shows."""

    first_kept_entry_id: str
    messages_to_summarize: list[JSONObject]
    turn_prefix_messages: list[JSONObject]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    read_files: list[str]
    modified_files: list[str]
    summarized_entry_ids: list[str] = field(default_factory=list)
    kept_entry_ids: list[str] = field(default_factory=list)
    kept_tokens: int = 0  # the kept messages alone, estimated
    summary_guess: int = 0  # tokens the preview guesses the summary at
    estimated_after: int = 0  # the next request's figure with a summary of that size (the preview's)
    #: the next request's figure now, all estimated: what a preview shows before → after (after a
    #: compaction the figure is all estimated; ``tokens_before`` may be the server's count)
    estimated_before: int = 0


def plan_compaction(
    projection: Projection,
    settings: CompactionSettings,
    *,
    everything: bool = False,
    window: int | None = None,
) -> CompactionPlan | None:
    """pi's prepareCompaction over our projection. None when there is nothing to summarize.

    ``everything`` (what the user asked for, and the overflow recovery's last resort): when the keep
    budget would keep the whole branch, or the branch was just compacted, summarize everything before
    the latest user turn instead; None only when nothing comes before it.

    Unlike pi, the latest user message is never summarized while it fits ``window`` (the server's
    window, else the model's) with what follows it, the system prompt and the reserve: pi's cut
    inside that turn (a small keep budget, or the overflow recovery moving the cut past the input
    that overflowed) folded the question into a "split turn" summary, and the model answered the
    summary, not the question."""
    path = projection.path
    if path and path[-1].type == "compaction" and not everything:
        return None
    entries = projection.entries
    previous_index = next(
        (i for i, ce in enumerate(entries) if ce.entry.type == "compaction" and ce.messages), -1
    )
    previous_summary: str | None = None
    start = 0
    if previous_index >= 0:
        previous_summary = str(entries[previous_index].entry.data.get("summary") or "")
        start = previous_index + 1
        while start < len(entries) and entries[start].status is Status.PINNED:
            start += 1  # pinned entries follow the summary verbatim; the cut never lands on them
    end = len(entries)
    cut = find_cut_point(entries, start, end, settings.keep_recent_tokens)
    cut = _keeping_the_question(projection, entries, start, end, cut, settings, window)
    to_summarize, prefix = _summarized(entries, start, cut)
    if everything and (cut.first_kept_index >= end or (not to_summarize and not prefix)):
        latest = _latest_user_turn(entries, start, end)
        if latest is None:
            return None
        cut = CutPoint(latest, -1, False)
        to_summarize, prefix = _summarized(entries, start, cut)
    if cut.first_kept_index >= end:
        return None
    first_kept = entries[cut.first_kept_index].entry
    if not to_summarize and not prefix:
        return None
    read, modified = file_operations(
        [*to_summarize, *prefix], entries[previous_index].entry if previous_index >= 0 else None
    )
    summarized_ids = [ce.entry.id for ce in entries[start : cut.first_kept_index] if not ce.pinned]
    kept = entries[cut.first_kept_index :]
    plan = CompactionPlan(
        first_kept_entry_id=first_kept.id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=context_tokens(projection).tokens,
        previous_summary=previous_summary,
        read_files=read,
        modified_files=modified,
        summarized_entry_ids=summarized_ids,
        kept_entry_ids=[ce.entry.id for ce in kept],
        kept_tokens=estimate_request(
            [m for ce in kept for m in ce.messages if m.role != "system"], images=image_rule(projection.model)
        ),
        estimated_before=estimate_request(projection.messages, images=image_rule(projection.model)),
    )
    folded = sum(estimate_message(m, image_rule(projection.model)) for m in [*to_summarize, *prefix])
    plan.summary_guess = min(SUMMARY_GUESS_MAX, math.ceil(folded / 10))
    guess = "x" * math.ceil(plan.summary_guess * CHARS_PER_TOKEN)
    plan.estimated_after = tokens_after_compaction(projection, plan, guess + file_lists_text(read, modified))
    return plan


def _keeping_the_question(
    projection: Projection,
    entries: Sequence[ContextEntry],
    start: int,
    end: int,
    cut: CutPoint,
    settings: CompactionSettings,
    window: int | None,
) -> CutPoint:
    """``cut``, or a cut at the latest user message when ``cut`` would summarize it and the message,
    what follows it, the system prompt and tools and the output reserve fit the window."""
    latest = _latest_user_turn(entries, start, end)
    if latest is None or latest >= cut.first_kept_index:
        return cut
    if cut.is_split_turn and len([ce for ce in entries[latest : cut.first_kept_index] if ce.messages]) == 1:
        # the split turn's prefix would be its question alone: a summary of it saves nothing and
        # loses the words, so the turn is kept whole (a request it makes too long is said so)
        return CutPoint(latest, -1, False)
    if window is None:
        model = projection.model or {}
        window = lookup(str(model.get("modelId") or ""), model.get("provider")).context_window
    fixed = fixed_tokens(projection)
    kept = estimate_request(
        [m for ce in entries[latest:] for m in ce.messages if m.role != "system"],
        images=image_rule(projection.model),
    )
    if fixed + kept + settings.reserve_tokens > window:
        return cut  # it cannot go verbatim: the recovery says what cannot fit
    return CutPoint(latest, -1, False)


def latest_question(projection: Projection) -> tuple[str, int] | None:
    """(the entry id, its tokens) of the branch's latest user message, the one a compaction keeps
    verbatim; None when there is none since the last compaction."""
    for ce in reversed(projection.entries):
        if ce.entry.type == "compaction":
            return None
        if ce.entry.type == "message" and ce.entry.role == "user" and ce.messages:
            return ce.entry.id, sum(
                estimate_message(m.message, image_rule(projection.model)) for m in ce.messages
            )
    return None


def fixed_tokens(projection: Projection) -> int:
    """The system prompt and the tool declarations: what every request carries whatever is compacted."""
    return sum(estimate_message(m.message) for m in projection.messages if m.role == "system")


def _summarized(
    entries: Sequence[ContextEntry], start: int, cut: CutPoint
) -> tuple[list[JSONObject], list[JSONObject]]:
    """(the history to summarize, the split turn's prefix) for a cut."""
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    to_summarize = _messages(entries[start:history_end])
    prefix = _messages(entries[cut.turn_start_index : cut.first_kept_index]) if cut.is_split_turn else []
    return to_summarize, prefix


def _latest_user_turn(entries: Sequence[ContextEntry], start: int, end: int) -> int | None:
    """The index of the latest user message after ``start`` with something to summarize before it
    (the metadata entries just before it are taken along), or None."""
    for i in range(end - 1, start, -1):
        ce = entries[i]
        if ce.entry.type == "compaction" or not any(m.kind == "user" for m in ce.messages):
            continue
        if not _messages(entries[start:i]):
            return None
        while i > start and not entries[i - 1].messages and entries[i - 1].entry.type != "compaction":
            i -= 1
        return i
    return None


SUMMARY_GUESS_MAX = 4_000  # the preview guesses a summary at a tenth of what it folds, at most this


def compaction_fields(plan: CompactionPlan, summary: str, system: JSONObject | None) -> JSONObject:
    """The ``compaction`` entry a plan and its summary make (the agent appends it; the preview drafts it)."""
    fields: JSONObject = {
        "type": "compaction",
        "summary": summary,
        "firstKeptEntryId": plan.first_kept_entry_id,
        "tokensBefore": plan.tokens_before,
        "details": {"readFiles": plan.read_files, "modifiedFiles": plan.modified_files},
    }
    if system is not None:
        fields["systemMessage"] = system
    return fields


def tokens_after_compaction(projection: Projection, plan: CompactionPlan, summary: str) -> int:
    """The figure the next request would have after compacting with ``summary``: the same
    :func:`context_tokens` the panel shows, of the projection with a draft compaction entry
    (never written), so the preview and the result are one estimate with one rounding."""
    system = current_system_message([m.message for m in projection.messages if m.role == "system"])
    fields = compaction_fields(plan, summary, system)
    draft = Entry.from_data(
        {**fields, "id": "~compaction-draft", "parentId": projection.leaf_id, "timestamp": ""}
    )
    return context_tokens(project_path([*projection.path, draft], draft.id)).tokens


def grows_the_context(projection: Projection, plan: CompactionPlan, summary: str) -> tuple[int, int] | None:
    """(before, after) when compacting with ``summary`` would leave a larger request than now, else
    None. Both sides are estimates of the same kind (a reported figure on one side only would
    compare a server's count with our estimate)."""
    system = current_system_message([m.message for m in projection.messages if m.role == "system"])
    draft = Entry.from_data(
        {
            **compaction_fields(plan, summary, system),
            "id": "~compaction-draft",
            "parentId": projection.leaf_id,
            "timestamp": "",
        }
    )
    images = image_rule(projection.model)
    before = estimate_request(projection.messages, images=images)
    after = estimate_request(project_path([*projection.path, draft], draft.id).messages, images=images)
    return (before, after) if after >= before else None


def _messages(entries: Sequence[ContextEntry]) -> list[JSONObject]:
    """The model messages of entries, without system messages (the compaction snapshots those)."""
    return [
        m.message
        for ce in entries
        if ce.entry.type != "compaction" and not ce.pinned
        for m in ce.messages
        if m.role != "system"
    ]


def file_operations(messages: Sequence[JSONObject], previous: Entry | None) -> tuple[list[str], list[str]]:
    """The files the calls of ``messages`` (and the previous compaction) read and modified: a call
    whose tool changes the file it names (``ToolFacts.file_effect == "path"``) modified it, one
    that reads a file's text (``reads_file``) read it."""
    read: set[str] = set()
    modified: set[str] = set()
    if previous is not None:
        details = previous.data.get("details")
        if isinstance(details, dict) and not previous.data.get("fromHook"):
            read.update(f for f in details.get("readFiles") or [] if isinstance(f, str))
            modified.update(f for f in details.get("modifiedFiles") or [] if isinstance(f, str))
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            facts = tool_facts(str(block.get("name")))
            args = block.get("arguments")
            named = facts.path_argument
            file_path = args.get(named) if named is not None and isinstance(args, dict) else None
            if not isinstance(file_path, str):
                continue
            if facts.file_effect == "path":  # pi's extractFileOperations: write, edit
                modified.add(file_path)
            elif facts.reads_file:  # read
                read.add(file_path)
    return sorted(read - modified), sorted(modified)


# -- the summarization request --------------------------------------------------------------

SUMMARIZATION_SYSTEM_PROMPT = (
    "You are a context summarization assistant. Your task is to read a conversation between a user and an AI "
    "assistant, then produce a structured summary following the exact format specified.\n\n"
    "Do NOT continue the conversation. Do NOT respond to any questions in the conversation. "
    "ONLY output the structured summary."
)

_SECTIONS = """## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages."""

SUMMARIZATION_PROMPT = (
    "The messages above are a conversation to summarize. Create a structured context checkpoint summary "
    "that another LLM will use to continue the work.\n\nUse this EXACT format:\n\n" + _SECTIONS
)

UPDATE_SUMMARIZATION_PROMPT = (
    "The messages above are NEW conversation messages to incorporate into the existing summary provided in "
    "<previous-summary> tags.\n\nUpdate the existing structured summary with new information. RULES:\n"
    "- PRESERVE all existing information from the previous summary\n"
    "- ADD new progress, decisions, and context from the new messages\n"
    '- UPDATE the Progress section: move items from "In Progress" to "Done" when completed\n'
    '- UPDATE "Next Steps" based on what was accomplished\n'
    "- PRESERVE exact file paths, function names, and error messages\n"
    "- If something is no longer relevant, you may remove it\n\nUse this EXACT format:\n\n" + _SECTIONS
)

TURN_PREFIX_PROMPT = """The messages above are earlier context from an ongoing conversation. Later messages are stored separately and do not need to be reconstructed.

Create a concise checkpoint of the user's request and the progress shown above. This checkpoint will be placed before the later messages so the conversation can continue with the necessary context.

## Original Request
[What did the user ask for?]

## Progress So Far
- [Key decisions and work completed in these messages]

## Context Needed to Continue
- [Information from these messages needed to understand the later work]

Only summarize information explicitly present above. Do not infer or recreate later messages."""


def serialize_conversation(
    messages: Sequence[JSONObject], max_result_chars: int = TOOL_RESULT_MAX_CHARS
) -> str:
    """Messages as plain text, so the model summarizes rather than continues; tool results clipped."""
    parts: list[str] = []
    for m in messages:
        role = m.get("role")
        content = m.get("content")
        if role == "user":
            text = _text(content, "")
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant" and isinstance(content, list):
            calls = []
            for block in content:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    raw_args = block.get("arguments")
                    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
                    rendered = ", ".join(f"{k}={_json(v)}" for k, v in args.items())
                    calls.append(f"{block.get('name')}({rendered})")
            if any(isinstance(b, dict) and b.get("type") == "text" for b in content):
                parts.append(f"[Assistant]: {_text(content)}")
            if calls:
                parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif role == "toolResult":
            text = _text(content, "")
            if text:
                if len(text) > max_result_chars:
                    text = (
                        text[:max_result_chars]
                        + f"\n\n[... {len(text) - max_result_chars} more characters truncated]"
                    )
                parts.append(f"[Tool result]: {text}")
    return "\n\n".join(parts)


def summary_request_text(
    messages: Sequence[JSONObject],
    previous_summary: str | None,
    focus: str | None,
    max_result_chars: int = TOOL_RESULT_MAX_CHARS,
) -> str:
    prompt = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
    if focus:
        prompt += f"\n\nAdditional focus: {focus}"
    text = f"<conversation>\n{serialize_conversation(messages, max_result_chars)}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    return text + prompt


def turn_prefix_request_text(
    messages: Sequence[JSONObject], focus: str | None, max_result_chars: int = TOOL_RESULT_MAX_CHARS
) -> str:
    text = f"# Conversation\n{serialize_conversation(messages, max_result_chars)}\n\n# Instructions\n{TURN_PREFIX_PROMPT}"
    if focus:
        text += f"\n\nAdditional focus: {focus}"
    return text


def file_lists_text(read_files: Sequence[str], modified_files: Sequence[str]) -> str:
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


def _text(content: Any, separator: str = "\n") -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return separator.join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

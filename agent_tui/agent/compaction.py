"""Compaction and branch summaries: the model writes the summary, the store appends it.

The plan (what to summarize, where to cut, what it costs) is pure and lives in
``agent_tui.projection.compaction``; this module makes the summarization calls
and appends the ``compaction`` or ``branch_summary`` entry. Nothing is
deleted: the projection does the folding, and undoing a compaction is moving
the leaf back to the entry before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_tui.agent.model_stream import ModelStream
from agent_tui.config import RetryPolicy
from agent_tui.projection.compaction import (
    SUMMARIZATION_SYSTEM_PROMPT,
    CompactionPlan,
    CompactionSettings,
    compaction_fields,
    context_tokens,
    file_lists_text,
    file_operations,
    fixed_tokens,
    grows_the_context,
    plan_compaction,
    serialize_conversation,
    summary_request_text,
    turn_prefix_request_text,
)
from agent_tui.projection.context import Projection, project
from agent_tui.projection.models import lookup
from agent_tui.projection.request import Prepared, PreparedMessage, current_system_message
from agent_tui.projection.summary_loss import losses_json, summary_losses
from agent_tui.projection.tokens import estimate_text
from agent_tui.providers.base import Provider
from agent_tui.store.clock import now_ms
from agent_tui.store.content import content_text
from agent_tui.store.record import Entry, JSONObject
from agent_tui.store.session import Session

SUMMARY_MAX_TOKENS = 16_384  # room for the summary itself; a longer one is cut off and refused
PROMPT_OVERHEAD_TOKENS = 2_000  # the summarization instructions, the previous summary's framing

BRANCH_SUMMARY_PREAMBLE = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
BRANCH_SUMMARY_PROMPT = """Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages."""


class CompactionError(Exception):
    """A compaction could not be made; nothing was appended."""


#: What every face says when the branch has nothing before its latest user turn.
NOTHING_TO_COMPACT = "nothing to compact: the branch has nothing before its latest turn"


class SummaryTooLong(CompactionError):
    """The server refused a summarization request as too long and said its window: the summarizer
    now knows it (``Summarizer.context_window``) and the caller splits the request to fit."""


class CompactionGrew(CompactionError):
    """The summary would leave a larger request than the branch without it: not applied."""


class NothingToCompact(CompactionError):
    """The branch has nothing to summarize: not a failure, nothing was appended."""

    def __init__(self, message: str = NOTHING_TO_COMPACT) -> None:
        super().__init__(message)


#: The estimated tokens of a summarization request without the conversation: the system prompt
#: and the request's own instructions (the longer ones, that update a previous summary).
_FIXED_PROMPT_TOKENS = estimate_text(SUMMARIZATION_SYSTEM_PROMPT) + estimate_text(
    summary_request_text([], " ", None)
)
#: The fewest tokens of conversation one summarization request carries: in a small window (a
#: 1,024-token llama.cpp server) the messages are clipped to this rather than not summarized.
MIN_PART_TOKENS = 64


@dataclass(slots=True)
class Summarizer:
    """Makes summarization calls to one model, keeping every request inside its context window."""

    provider: Provider
    model: str
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    requests: int = 0  # calls made, for tests and reports

    context_window: int | None = None  # the server's real window when it is known, else the model's
    #: How many of the server's tokens one estimated token turned out to be (``estimate_text``
    #: undercounts some tokenizers: SmolLM2's counted 1.3x): the input budget shrinks by it.
    token_scale: float = 1.0

    @property
    def window(self) -> int:
        return self.context_window or lookup(self.model).context_window

    @property
    def max_output(self) -> int:
        """Room for the summary: the model's output limit, at most 16,384 tokens and a quarter of the window."""
        return max(64, min(lookup(self.model).max_output, SUMMARY_MAX_TOKENS, self.window // 4))

    @property
    def input_budget(self) -> int:
        """Tokens a summarization request may carry: the window minus the answer and the instructions."""
        # the instructions as the server counts them: a small window (1,024) has no third to spare
        fixed = int(_FIXED_PROMPT_TOKENS * self.token_scale * 1.1)
        overhead = max(fixed, min(PROMPT_OVERHEAD_TOKENS, self.window // 3))
        return max(MIN_PART_TOKENS, int((self.window - self.max_output - overhead) / self.token_scale))

    async def complete(self, text: str) -> tuple[str, JSONObject]:
        """One summarization call: (summary text, usage). Raises CompactionError on any failure.

        The request says how long the summary may be (the output budget the window leaves); a
        summary cut by that limit is asked for again, once, at half the length, and if that one is
        cut too it is kept, marked as cut: a small window (a 1,024-token llama.cpp server) failed
        every compaction and left the conversation stuck."""
        words = _words_for(self.max_output)
        summary, usage, cut = await self._call(_with_budget(text, words))
        if cut:
            summary, retry_usage, cut = await self._call(_with_budget(text, max(20, words // 2)))
            usage = _add_usage(usage, retry_usage)
        if cut:
            summary += f"\n\n[This summary was cut off by the output limit ({self.max_output:,} tokens).]"
        return summary, usage

    async def _call(self, text: str) -> tuple[str, JSONObject, bool]:
        """One call: (its text, usage, whether the output limit cut it)."""
        prepared = Prepared(
            SUMMARIZATION_SYSTEM_PROMPT,
            [],
            [PreparedMessage("user", [{"type": "text", "text": text}], None, {"role": "user"})],
        )
        body = self.provider.request_body(prepared, self.model)
        for key in ("max_tokens", "max_completion_tokens"):
            if key in body:
                body[key] = min(int(body[key]), self.max_output)
        call = ModelStream(self.provider, self.model, self.retry)
        try:
            result = await call.run(lambda: body)
        finally:
            self.requests += call.requests
        if result.error is not None:
            overflow = result.error.overflow
            if overflow is not None and self._learn(overflow.window, overflow.prompt_tokens, text):
                raise SummaryTooLong(f"the summarization call failed: {result.error.message}")
            raise CompactionError(f"the summarization call failed: {result.error.message}")
        message = result.builder.message()
        if any(b.get("type") == "toolCall" for b in message["content"]):
            raise CompactionError("the summarization call asked for a tool instead of writing a summary")
        summary = "\n".join(b["text"] for b in message["content"] if b.get("type") == "text").strip()
        if not summary:
            raise CompactionError("the summarization call returned no text")
        return summary, dict(message.get("usage") or {}), message.get("stopReason") == "length"

    def _learn(self, window: int | None, prompt_tokens: int | None, text: str) -> bool:
        """What a refused request taught about the server: its real window, and how far the
        estimate undercounted its tokenizer. True when a split would now cut the request smaller
        (the caller splits and tries again); False when nothing new was learnt."""
        learnt = False
        if window is not None and window < self.window:
            self.context_window = window  # the server's real window: split to fit it
            learnt = True
        if prompt_tokens is not None:
            estimated = estimate_text(text) + estimate_text(SUMMARIZATION_SYSTEM_PROMPT)
            scale = prompt_tokens / max(1, estimated) * 1.1  # a tenth to spare
            if scale > self.token_scale * 1.02:
                self.token_scale = scale
                learnt = True
        return learnt

    async def summarize(
        self, messages: Sequence[JSONObject], previous: str | None, focus: str | None
    ) -> tuple[str, JSONObject]:
        """Summarize ``messages`` onto ``previous``; in several calls if one request would not fit
        (split again, up to twice, when a refusal shows a smaller window or a tokenizer that counts more than the estimate)."""
        usage: JSONObject = {}
        for last_try in (False, False, True):  # each refusal teaches the window or the tokenizer
            summary = previous
            try:
                for chunk in self._chunks(messages, previous):
                    summary, call_usage = await self.complete(summary_request_text(chunk, summary, focus))
                    usage = _add_usage(usage, call_usage)
            except SummaryTooLong:
                if last_try:
                    raise
                continue
            break
        return summary or "", usage

    async def complete_or_split(
        self, text: str, messages: Sequence[JSONObject], focus: str | None
    ) -> tuple[str, JSONObject]:
        """``text`` in one call when it fits the window, else ``messages`` summarized in parts."""
        if estimate_text(text) <= self.input_budget:
            try:
                return await self.complete(text)
            except SummaryTooLong:
                pass  # the window is smaller than assumed: in parts
        return await self.summarize(messages, None, focus)

    def _chunks(self, messages: Sequence[JSONObject], previous: str | None) -> list[list[JSONObject]]:
        """Consecutive groups of messages whose serialized text fits the input budget (with the previous
        summary, which grows with each call: room is left for it)."""
        # the previous summary rides along in every call; it can grow up to one answer's length
        budget = max(
            MIN_PART_TOKENS,
            self.input_budget - max(estimate_text(previous) if previous else 0, self.max_output),
        )
        chunks: list[list[JSONObject]] = [[]]
        used = 0
        for message in messages:
            tokens = estimate_text(serialize_conversation([message]))
            if tokens > budget:
                message = _clip(message, budget)
                tokens = estimate_text(serialize_conversation([message]))
            if chunks[-1] and used + tokens > budget:
                chunks.append([])
                used = 0
            chunks[-1].append(message)
            used += tokens
        return chunks


def _words_for(tokens: int) -> int:
    """Words that fit ``tokens`` of output with room to spare (about 1.3 tokens a word in English
    prose, more in code and names: three quarters of a word per token)."""
    return max(20, tokens * 3 // 4 * 3 // 4)


def _with_budget(text: str, words: int) -> str:
    """The summarization request with the length its answer may have."""
    return f"{text}\n\nKeep the summary under {words:,} words: a longer one is cut off."


def _clip(message: JSONObject, budget_tokens: int) -> JSONObject:
    """A message whose text alone exceeds a request: keep its head (the summary can only see so much)."""
    limit = max(200, int(budget_tokens * 3.5) - 200)
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": content[:limit] + "\n[... cut to fit the summarization request]"}
    blocks = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            text = str(block.get("text", ""))
            block = {
                **block,
                "text": text[:limit]
                + ("\n[... cut to fit the summarization request]" if len(text) > limit else ""),
            }
        blocks.append(block)
    return {**message, "content": blocks}


def _add_usage(a: JSONObject, b: JSONObject) -> JSONObject:
    """Two calls' usage added up, their ``cost`` breakdowns (pi's shape) too."""
    keys = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
    total: JSONObject = {k: int(a.get(k, 0) or 0) + int(b.get(k, 0) or 0) for k in keys}
    costs = [c for c in (a.get("cost"), b.get("cost")) if isinstance(c, dict)]
    if costs:
        parts = ("input", "output", "cacheRead", "cacheWrite", "total")
        total["cost"] = {
            k: sum(float(v) for c in costs if isinstance(v := c.get(k, 0), int | float)) for k in parts
        }
    return total


@dataclass(slots=True)
class CompactionOutcome:
    entry: Entry
    plan: CompactionPlan
    tokens_after: int


def preview(
    session: Session, settings: CompactionSettings, *, everything: bool = True, window: int | None = None
) -> CompactionPlan | None:
    """What a compaction would summarize and keep, without calling the model (by default what the
    user asking for one gets: everything before the latest turn when the keep budget keeps it all),
    in ``window`` (the server's learned one; None: the model's)."""
    return plan_compaction(project(session.index), settings, everything=everything, window=window)


@dataclass(slots=True)
class DraftCompaction:
    """A compaction's summary written by the model but not appended yet (to review or edit first)."""

    plan: CompactionPlan
    summary: str  # what the model wrote, with the file lists the entry carries
    usage: JSONObject
    leaf_id: str | None  # the branch tip the plan was made at: appending elsewhere is refused


async def draft_compaction(
    session: Session,
    summarizer: Summarizer,
    settings: CompactionSettings,
    *,
    focus: str | None = None,
    everything: bool = True,
) -> DraftCompaction:
    """Plan a compaction and have the model write its summary; nothing is appended.

    ``everything`` (a compaction the user asked for): when the keep budget would keep the whole
    branch, everything before the latest user turn is summarized. Raises NothingToCompact when
    nothing comes before it; the automatic threshold passes False (pi's plan, nothing forced)."""
    leaf_id = session.index.leaf_id
    projection = project(session.index)
    plan = plan_compaction(projection, settings, everything=everything, window=summarizer.window)
    if plan is None:
        raise NothingToCompact()
    usage: JSONObject = {}
    if plan.is_split_turn and plan.turn_prefix_messages:
        history = plan.previous_summary or "No prior history."
        if plan.messages_to_summarize:
            history, usage = await summarizer.summarize(
                plan.messages_to_summarize, plan.previous_summary, focus
            )
        prefix_text = turn_prefix_request_text(plan.turn_prefix_messages, focus)
        prefix_summary, prefix_usage = await summarizer.complete_or_split(
            prefix_text, plan.turn_prefix_messages, focus
        )
        summary = f"{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix_summary}"
        summary += _question_verbatim(plan, projection, settings, summarizer.window)
        usage = _add_usage(usage, prefix_usage)
    else:
        summary, usage = await summarizer.summarize(plan.messages_to_summarize, plan.previous_summary, focus)
    summary += file_lists_text(plan.read_files, plan.modified_files)
    return DraftCompaction(plan, summary, usage, leaf_id)


def _question_verbatim(
    plan: CompactionPlan, projection: Projection, settings: CompactionSettings, window: int
) -> str:
    """A split turn's question, word for word, for the end of its summary: the turn is too long to
    keep from its question on, and the model must still answer the question, not a summary of it
    (when the question alone cannot fit the window, the overflow recovery says so instead)."""
    first = plan.turn_prefix_messages[0] if plan.turn_prefix_messages else {}
    if first.get("role") != "user":
        return ""
    text = content_text(first.get("content"), "\n").strip()
    if not text or fixed_tokens(projection) + estimate_text(text) + settings.reserve_tokens > window:
        return ""
    return f"\n\n**The user's message that began this turn, verbatim:**\n\n{text}"


def append_compaction(
    session: Session, draft: DraftCompaction, summary: str | None = None
) -> CompactionOutcome:
    """Append the draft's ``compaction`` entry, with ``summary`` (an edited one) instead of the
    model's if given: the same ``firstKeptEntryId``, ``tokensBefore`` and details either way.
    Raises CompactionError (nothing appended) when the branch moved since the draft was made or
    the summary is empty."""
    text = draft.summary if summary is None else summary.strip()
    if not text:
        raise CompactionError("the summary is empty; nothing was appended")
    if session.index.leaf_id != draft.leaf_id:
        raise CompactionError("the branch changed since the summary was written; nothing was appended")
    projection = project(session.index)
    system = current_system_message([m.message for m in projection.messages if m.role == "system"])
    fields = compaction_fields(
        draft.plan, text, {**system, "timestamp": now_ms()} if system is not None else None
    )
    fields["usage"] = draft.usage
    # what the summary leaves out of the span it replaces, checked by code (a review shows it first)
    lost = summary_losses(projection, draft.plan.summarized_entry_ids, text)
    fields["details"] = {**fields["details"], "lost": losses_json(lost)}
    entry = session.append(fields)
    # what the next request carries now: the figure the panel shows and the preview estimated
    after = context_tokens(project(session.index))
    return CompactionOutcome(entry, draft.plan, after.tokens)


async def compact(
    session: Session,
    summarizer: Summarizer,
    settings: CompactionSettings,
    *,
    focus: str | None = None,
    everything: bool = True,
) -> CompactionOutcome:
    """Summarize the older part of the active branch and append a ``compaction`` entry
    (:func:`draft_compaction` then :func:`append_compaction`). A summary that would leave a larger
    request than now is not applied (CompactionGrew), whoever asked: the threshold, an overflow or
    the user (in every face). Only a reviewed draft, whose figures the user saw, may be appended
    anyway (:func:`append_compaction` directly)."""
    draft = await draft_compaction(session, summarizer, settings, focus=focus, everything=everything)
    grown = grows_the_context(project(session.index), draft.plan, draft.summary)
    if grown is not None:  # a summary longer than what it replaces (small models write them)
        raise CompactionGrew(
            f"the summary would make the context larger (≈{grown[0]:,} → ≈{grown[1]:,} tokens); "
            "nothing was applied, the branch is as it was"
        )
    return append_compaction(session, draft)


def undo_compaction(session: Session) -> Entry:
    """Continue from the entry before the latest compaction on the branch: its kept and summarized
    entries are all verbatim again. One appended entry (a leaf move), nothing deleted."""
    for entry in reversed(session.index.active_path()):
        if entry.type == "compaction":
            if entry.parent_id is None:
                raise CompactionError("the compaction is the first entry: there is nothing before it")
            moved = session.branch(entry.parent_id)
            assert moved is not None
            return moved
    raise CompactionError("no compaction on the active branch")


# -- branch summaries ----------------------------------------------------------------------------


def abandoned_entries(session: Session, target_id: str) -> list[Entry]:
    """Entries from the current leaf back to its common ancestor with ``target_id`` (pi's rule)."""
    index = session.index
    old = index.active_path()
    target_path = {e.id for e in index.path_to(target_id)}
    out: list[Entry] = []
    for entry in reversed(old):
        if entry.id in target_path:
            break
        out.append(entry)
    out.reverse()
    return out


async def summarize_branch(
    session: Session, summarizer: Summarizer, target_id: str, *, focus: str | None = None
) -> Entry | None:
    """Move to ``target_id`` leaving a ``branch_summary`` of the abandoned branch under it (as pi).

    Returns None (and only moves the leaf) when the abandoned branch says nothing."""
    session.index.get(target_id)
    old_leaf = session.index.leaf_id
    leaving = abandoned_entries(session, target_id)
    projection = project(session.index)
    by_id = {ce.entry.id: ce for ce in projection.entries}
    messages = [
        m.message for e in leaving if (ce := by_id.get(e.id)) for m in ce.messages if m.role != "system"
    ]
    read, modified = _branch_files(messages, leaving)
    if not messages:
        session.branch(target_id)
        return None
    text = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n" + BRANCH_SUMMARY_PROMPT
    if focus:
        text += f"\n\nAdditional focus: {focus}"
    summary, usage = await summarizer.complete_or_split(text, messages, focus)
    summary = BRANCH_SUMMARY_PREAMBLE + summary + file_lists_text(read, modified)
    return session.append(
        {
            "type": "branch_summary",
            "fromId": old_leaf or "root",
            "summary": summary,
            "details": {"readFiles": read, "modifiedFiles": modified},
            "usage": usage,
        },
        parent_id=target_id,
    )


def _branch_files(messages: Sequence[JSONObject], entries: Sequence[Entry]) -> tuple[list[str], list[str]]:
    read, modified = file_operations(messages, None)
    for entry in entries:
        details = entry.data.get("details") if entry.type == "branch_summary" else None
        if isinstance(details, dict):
            read = sorted(set(read) | {f for f in details.get("readFiles") or [] if isinstance(f, str)})
            modified = sorted(
                set(modified) | {f for f in details.get("modifiedFiles") or [] if isinstance(f, str)}
            )
    return sorted(set(read) - set(modified)), modified


def estimated_after(plan: CompactionPlan) -> int:
    """The next request's figure after the compaction, for the preview: the projection with a draft
    compaction whose summary is guessed at a tenth of what it folds, at most 4,000 tokens
    (``projection.compaction.tokens_after_compaction``, the estimate the result is counted with)."""
    return plan.estimated_after

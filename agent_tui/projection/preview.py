"""What one more entry (an edit, a pin) would change in the next request, before it is written.

:func:`hypothetical` projects the branch as if ``entry``, never written, were the
leaf's next child: through :func:`~agent_tui.projection.context.extend` (what the
app's ``Projector`` does after the real append) or, for a pin, a projection of the
whole path. :func:`compare` then sets the two projections side by side: the token
total the panel would show, the messages that leave or join the view, and what
:func:`~agent_tui.projection.request.prepare` would repair differently (a hidden
tool call takes its results out of the request; a hidden result leaves its call a
placeholder).

Only the stretch that differs is counted and prepared. ``prepare``'s state starts
afresh at every user or assistant message, so a change cannot reach past the
nearest such message on either side of it: preparing that window before and after
gives the same difference as preparing everything, in time proportional to the
window rather than the session.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agent_tui.projection.context import ContextEntry, ProjectedMessage, Projection, extend, project_path
from agent_tui.projection.describe import plural
from agent_tui.projection.request import prepare, system_prompt
from agent_tui.projection.tokens import estimate_message, estimate_tools
from agent_tui.store.record import Entry

#: Tokens of one message of one context entry (the panel counts by entry, edit and position).
TokenCount = Callable[[ContextEntry, int, ProjectedMessage], int]

_RESETS = frozenset({"user", "assistant"})  # prepare's state starts afresh at these


def _estimate(ce: ContextEntry, position: int, m: ProjectedMessage) -> int:
    return estimate_message(m.message)


@dataclass(slots=True)
class Change:
    """The next request before and after a hypothetical entry."""

    tokens_before: int  # the context total as the panel counts it (messages and tool definitions)
    tokens_after: int
    left_view: list[str] = field(default_factory=list)  # entries whose messages leave the projection
    joined_view: list[str] = field(default_factory=list)  # entries whose messages join it
    changed: list[str] = field(default_factory=list)  # entries still in view with other content
    dropped: list[str] = field(default_factory=list)  # also left out of the request by prepare
    returned: list[str] = field(default_factory=list)  # no longer left out by prepare
    placeholders: int = 0  # more (or, negative, fewer) "No result provided" results prepare adds
    repairs_added: list[str] = field(default_factory=list)
    repairs_removed: list[str] = field(default_factory=list)
    #: The estimate the change is worked out from, when ``tokens_before`` is a reported figure the
    #: edit ends (the context after an edit is all estimated): the delta is the edit's own.
    estimated_before: int | None = None

    @property
    def delta(self) -> int:
        """What the edit itself adds (negative: takes out), whatever the figure is made of."""
        base = self.tokens_before if self.estimated_before is None else self.estimated_before
        return self.tokens_after - base

    @property
    def becomes_estimate(self) -> bool:
        """The context figure changes from reported to estimated by more than the edit's own delta."""
        return self.estimated_before is not None and self.estimated_before != self.tokens_before

    def context_text(self) -> str:
        """``context A → B`` with both figures on one basis: estimates when the edit ends the
        reported count (a removal never reads as the context growing)."""
        if self.estimated_before is None or not self.becomes_estimate:
            return f"context {self.tokens_before:,} → {self.tokens_after:,}"
        return f"context ≈{self.estimated_before:,} → ≈{self.tokens_after:,}"

    @property
    def unchanged(self) -> bool:
        return not (
            self.delta
            or self.left_view
            or self.joined_view
            or self.changed
            or self.dropped
            or self.returned
            or self.placeholders
            or self.repairs_added
            or self.repairs_removed
        )

    def describe(self, action: str, target: str) -> str:
        """One line: ``hide a1b2c3d4: −1,234 tokens (context 12,345 → 11,111); also ...``."""
        if self.unchanged:
            return f"{action} {target}: no change to the next request"
        noun = "token" if abs(self.delta) == 1 else "tokens"
        head = f"{action} {target}: {signed(self.delta)} {noun} ({self.context_text()})"
        notes = self.notes(target)
        if self.becomes_estimate:
            notes.append(
                f"both estimated: the panel's {self.tokens_before:,} is the server's count, from before the edit"
            )
        return "; ".join([head, *notes])

    def notes(self, target: str) -> list[str]:
        """What else changes, beyond the target's own tokens."""
        parts = []
        others = [i for i in self.left_view if i != target]
        if others:
            parts.append(f"also takes out {_ids(others)}")
        back = [i for i in self.joined_view if i != target]
        if back:
            parts.append(f"brings back {_ids(back)}")
        if self.dropped:
            parts.append(f"the request also leaves out {_ids(self.dropped, 'message')}")
        if self.returned:
            parts.append(f"the request takes back {_ids(self.returned, 'message')}")
        if self.placeholders > 0:
            n = self.placeholders
            parts.append(f"adds {plural(n, 'placeholder tool result')}")
        elif self.placeholders < 0:
            n = -self.placeholders
            parts.append(f"{plural(n, 'placeholder tool result')} fewer")
        return parts


def signed(n: int) -> str:
    """``+1,234``, ``−1,234`` (a minus sign) or ``±0``."""
    return f"{'+' if n > 0 else '−' if n < 0 else '±'}{abs(n):,}"


def _ids(ids: Sequence[str], noun: str = "entry", most: int = 4) -> str:
    shown = ", ".join(ids[:most]) + (f" +{len(ids) - most}" if len(ids) > most else "")
    plural = noun if len(ids) == 1 else "entries" if noun == "entry" else noun + "s"
    return f"{len(ids)} {plural} ({shown})"


def hypothetical(projection: Projection, entry: Entry) -> Projection:
    """``projection`` (of its leaf) with ``entry``, a child of that leaf, appended; nothing is written."""
    if entry.parent_id != projection.leaf_id:
        raise ValueError(f"entry {entry.id} is not a child of the projection's leaf {projection.leaf_id}")
    grown = extend(projection, entry)
    return grown if grown is not None else project_path([*projection.path, entry], entry.id)


def _same(a: ContextEntry, b: ContextEntry) -> bool:
    # a context entry's messages follow from its entry, its status and its edit
    return a is b or (a.entry is b.entry and a.status is b.status and a.edit_id == b.edit_id)


def compare(
    before: Projection,
    after: Projection,
    tokens_before: int,
    count: TokenCount = _estimate,
    count_after: TokenCount | None = None,
) -> Change:
    """What changes from ``before`` to ``after`` (``hypothetical(before, entry)``).

    ``tokens_before`` is the panel's total for ``before``; ``count`` counts the tokens of
    one message as the panel does (``count_after`` for the messages only ``after`` has,
    by default ``count``)."""
    old, new = before.entries, after.entries
    n_old, n_new = len(old), len(new)
    if n_new and after.leaf_id is not None and new[-1].entry.id == after.leaf_id and not new[-1].messages:
        n_new -= 1  # the hypothetical entry itself (an edit or a pin brings no message)
    start = 0
    while start < n_old and start < n_new and _same(old[start], new[start]):
        start += 1
    end_old, end_new = n_old, n_new
    while end_old > start and end_new > start and _same(old[end_old - 1], new[end_new - 1]):
        end_old -= 1
        end_new -= 1
    region_old, region_new = old[start:end_old], new[start:end_new]
    count_new = count_after or count

    def total(region: Sequence[ContextEntry], counter: TokenCount) -> int:
        return sum(counter(ce, i, m) for ce in region for i, m in enumerate(ce.messages))

    tokens_after = tokens_before - total(region_old, count) + total(region_new, count_new)
    if any(m.role == "system" for ce in (*region_old, *region_new) for m in ce.messages):
        tokens_after += _tool_tokens(after.messages) - _tool_tokens(before.messages)
    change = Change(tokens_before, tokens_after)

    old_ids = _message_ids(region_old)
    new_ids = _message_ids(region_new)
    change.left_view = [i for i in old_ids if i not in new_ids]
    change.joined_view = [i for i in new_ids if i not in old_ids]
    old_by_id = {ce.entry.id: ce for ce in region_old if ce.messages}
    change.changed = [
        ce.entry.id
        for ce in region_new
        if ce.messages and ce.entry.id in old_by_id and _content(old_by_id[ce.entry.id]) != _content(ce)
    ]

    # prepare the window around the change, from the last reset before it to the first after it
    first = _window_start(old, start)
    prepared_old = prepare(_flatten(old, first, _window_end(old, end_old)))
    prepared_new = prepare(_flatten(new, first, _window_end(new, end_new, n_new)))
    sent_old = Counter(m.source_id for m in prepared_old.messages if m.source_id is not None)
    sent_new = Counter(m.source_id for m in prepared_new.messages if m.source_id is not None)
    change.dropped = [i for i in sent_old if i not in sent_new and i not in change.left_view]
    change.returned = [i for i in sent_new if i not in sent_old and i not in change.joined_view]
    change.placeholders = sum(1 for m in prepared_new.messages if m.source_id is None) - sum(
        1 for m in prepared_old.messages if m.source_id is None
    )
    repairs_old, repairs_new = Counter(prepared_old.repairs), Counter(prepared_new.repairs)
    change.repairs_added = list((repairs_new - repairs_old).elements())
    change.repairs_removed = list((repairs_old - repairs_new).elements())
    return change


def _content(ce: ContextEntry) -> list[tuple[str, object]]:
    """What the model gets of an entry (a restore of an unedited entry changes only its status)."""
    return [(m.role, m.message) for m in ce.messages]


def _message_ids(region: Sequence[ContextEntry]) -> dict[str, None]:
    return {m.source_id: None for ce in region for m in ce.messages}


def _resets(ce: ContextEntry) -> bool:
    return any(m.role in _RESETS for m in ce.messages)


def _window_start(entries: Sequence[ContextEntry], start: int) -> int:
    i = start - 1
    while i > 0 and not _resets(entries[i]):
        i -= 1
    return max(i, 0)


def _window_end(entries: Sequence[ContextEntry], end: int, limit: int | None = None) -> int:
    """One past the first entry at or after ``end`` that resets prepare's state (or the end)."""
    limit = len(entries) if limit is None else limit
    i = end
    while i < limit and not _resets(entries[i]):
        i += 1
    return min(i + 1, len(entries))


def _flatten(entries: Sequence[ContextEntry], start: int, end: int) -> list[ProjectedMessage]:
    return [m for ce in entries[start:end] for m in ce.messages]


def _tool_tokens(messages: Sequence[ProjectedMessage]) -> int:
    _, tools = system_prompt([m.message for m in messages if m.role == "system"])
    return estimate_tools(tools)

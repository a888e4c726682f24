"""Every model call of a branch, rebuilt from the file: what each request held, why its cache
missed, and what each entry cost by riding along (pure).

A session is append-only, so the request behind a reply is the projection of the branch up to
the reply's parent: every hide, replace, pin and compaction that reached that request is an
ancestor of the reply. The request is then split into the pieces a provider caches as one
prefix, in the order Anthropic sends them: the tool list, the system prompt, then each message.
Two consecutive calls share the leading pieces that are equal byte for byte (and the same
model); the first piece that differs says why the rest could not be read from the cache.

Token counts are the same estimate as every other figure (``tokens.estimate_message``), so the
shared prefix and the carry figures add up across calls; the server's own counts of the call
(``cacheRead`` / ``cacheWrite`` / ``input``) are shown beside them and used to price: an entry's
tokens, scaled to the server's count of the request, are priced as cache reads for the part of
the request the server read from its cache, as cache writes for the part it wrote, and as input
for the rest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from agent_tui.projection.context import ProjectedMessage, Projection, Status, extend, project_path
from agent_tui.projection.pricing import Usage, price_for, usage_of
from agent_tui.projection.request import prepare
from agent_tui.projection.tokens import estimate_message, estimate_text, estimate_tools, image_rule
from agent_tui.store.index import SessionIndex
from agent_tui.store.record import Entry

_encode = msgspec.json.Encoder(order="sorted").encode

#: Why a call could not reuse the previous call's cached prefix (``Cause.kind``).
CAUSES = (
    "first call",  # nothing before it to share
    "none",  # the whole previous request is a prefix of this one
    "model change",  # another model (a cache is per model)
    "thinking level",  # another thinking level (Anthropic drops the message cache)
    "tool list",  # tools added or removed
    "system prompt",  # a system prompt section changed
    "compaction",  # a compaction replaced the start of the conversation
    "hidden",  # an entry of the previous request was hidden
    "replaced",  # an entry's content was replaced (or a replacement undone)
    "restored",  # a hidden entry came back
    "changed",  # a message differs for another reason (a repair, an edited summary)
)


@dataclass(frozen=True, slots=True)
class Piece:
    """One cached unit of a request: the tool list, the system prompt, or one message."""

    kind: str  # "tools", "system" or "message"
    source_id: str | None  # the entry it came from (None: tools; a synthesized message)
    key: bytes  # a digest of what is sent, canonical JSON: equal keys are equal bytes on the wire
    tokens: int
    status: Status | None = None  # a message's status in the projection
    names: tuple[str, ...] = ()  # the tool list's tool names (sorted), to say what changed


@dataclass(slots=True)
class ModelCall:
    """One reply and the request that produced it."""

    entry_id: str  # the assistant entry holding the reply
    model: str | None
    thinking_level: str
    usage: Usage
    pieces: list[Piece]
    compaction_id: str | None
    edits: dict[str, str]  # entry id -> the context_edit (or surgery) entry that changed it
    statuses: dict[str, Status]  # entry id -> its status in this request

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.pieces)


@dataclass(frozen=True, slots=True)
class Cause:
    kind: str  # one of CAUSES
    entry_id: str | None = None  # the entry that caused it (an edit, a compaction, a system message)
    detail: str = ""


@dataclass(frozen=True, slots=True)
class CacheReport:
    """How much of one call's request the call before it had already sent."""

    call: ModelCall
    shared_prefix_tokens: int
    first_difference: str | None  # "tools", "system", "model", "thinking", an entry id; None: none
    cause: Cause

    def as_json(self) -> dict[str, Any]:
        usage = self.call.usage
        return {
            "entryId": self.call.entry_id,
            "model": self.call.model,
            "requestTokens": self.call.tokens,
            "sharedPrefixTokens": self.shared_prefix_tokens,
            "firstDifference": self.first_difference,
            "cause": self.cause.kind,
            "causeEntryId": self.cause.entry_id,
            "detail": self.cause.detail,
            "reported": {
                "input": usage.input,
                "cacheRead": usage.cache_read,
                "cacheWrite": usage.cache_write,
            },
        }


def model_calls(index: SessionIndex, leaf_id: str | None = None) -> list[ModelCall]:
    """The calls of the branch ending at ``leaf_id`` (default: the leaf), oldest first."""
    return calls_on_path(index.path_to(leaf_id if leaf_id is not None else index.leaf_id))


def calls_on_path(path: Sequence[Entry]) -> list[ModelCall]:
    """The calls of a branch given as its path (root first), oldest first."""
    calls: list[ModelCall] = []
    projection: Projection | None = None
    for position, entry in enumerate(path):
        if projection is not None and entry.type == "message" and entry.role == "assistant":
            calls.append(_call(entry, projection))
        grown = extend(projection, entry) if projection is not None else None
        projection = grown if grown is not None else project_path(path[: position + 1], entry.id)
    return calls


def latest_report(path: Sequence[Entry]) -> CacheReport | None:
    """The cache report of the branch's latest call (two projections, not one per call: the panel
    shows it after every reply)."""
    replies = [i for i, e in enumerate(path) if i > 0 and e.type == "message" and e.role == "assistant"]
    if not replies:
        return None
    calls = [_call(path[i], project_path(path[:i], path[i - 1].id)) for i in replies[-2:]]
    return _report(calls[0] if len(calls) == 2 else None, calls[-1])


def report_line(report: CacheReport) -> str:
    """One line for the panel: what the latest call shared with the one before, and why not more."""
    usage = report.call.usage
    server = f"server: cache read {usage.cache_read:,}, write {usage.cache_write:,}"
    if report.cause.kind == "first call":
        return f"last call: the first of the branch · {server}"
    share = 100 * report.shared_prefix_tokens // report.call.tokens if report.call.tokens else 0
    line = (
        f"last call shared ≈{report.shared_prefix_tokens:,} tokens ({share}%) with the one before · {server}"
    )
    if report.cause.kind != "none":
        line += f" · then {report.cause.kind}" + (
            f" ({report.cause.entry_id})" if report.cause.entry_id else ""
        )
    return line


def _key(value: Any) -> bytes:
    """What a piece sends, as a digest of its canonical JSON (16 bytes, however big the piece)."""
    return hashlib.blake2b(_encode(value), digest_size=16).digest()


def _call(reply: Entry, projection: Projection) -> ModelCall:
    message = reply.message or {}
    # each message read for this call only, and kept as a digest: a 1 GB session's context would
    # otherwise stay in memory twice (decoded and encoded) for each of the two calls compared
    prepared = prepare(projection.messages, ProjectedMessage.peek_message)
    pieces: list[Piece] = []
    images = image_rule({"provider": message.get("provider"), "modelId": message.get("model")})
    if prepared.tools:
        names = tuple(sorted(str(t.get("name")) for t in prepared.tools))
        pieces.append(Piece("tools", None, _key(prepared.tools), estimate_tools(prepared.tools), names=names))
    if prepared.system:
        system_id = next((m.source_id for m in reversed(projection.messages) if m.role == "system"), None)
        pieces.append(Piece("system", system_id, _key(prepared.system), estimate_text(prepared.system)))
    statuses: dict[str, Status] = {}
    edits: dict[str, str] = {}
    for ce in projection.entries:
        statuses[ce.entry.id] = ce.status
        if ce.edit_id is not None:
            edits[ce.entry.id] = ce.edit_id
    for pm in prepared.messages:
        sent: dict[str, Any] = {"role": pm.role, "content": pm.content}
        if pm.role == "toolResult":
            sent["toolCallId"] = pm.message.get("toolCallId")
        status = statuses.get(pm.source_id) if pm.source_id is not None else None
        pieces.append(Piece("message", pm.source_id, _key(sent), estimate_message(sent, images), status))
    model = message.get("model")
    return ModelCall(
        reply.id,
        model if isinstance(model, str) else None,
        projection.thinking_level,
        usage_of(message.get("usage")),
        pieces,
        projection.compaction_id,
        edits,
        statuses,
    )


# -- why the cache missed ----------------------------------------------------------------------


def cache_reports(calls: Sequence[ModelCall]) -> list[CacheReport]:
    reports: list[CacheReport] = []
    previous: ModelCall | None = None
    for call in calls:
        reports.append(_report(previous, call))
        previous = call
    return reports


def _report(previous: ModelCall | None, call: ModelCall) -> CacheReport:
    if previous is None:
        return CacheReport(call, 0, None, Cause("first call"))
    if previous.model != call.model:
        return CacheReport(call, 0, "model", Cause("model change", None, f"{previous.model} → {call.model}"))
    if previous.thinking_level != call.thinking_level:
        detail = f"{previous.thinking_level} → {call.thinking_level}"
        return CacheReport(call, 0, "thinking", Cause("thinking level", None, detail))
    shared = 0
    for position, (old, new) in enumerate(zip(previous.pieces, call.pieces, strict=False)):
        if old.key != new.key:
            return CacheReport(call, shared, _where(old, new, call), _cause(previous, call, position))
        shared += new.tokens
    if len(call.pieces) < len(previous.pieces):  # the request shrank at its end: its tail was removed
        old = previous.pieces[len(call.pieces)]
        return CacheReport(call, shared, _where(old, None, call), _cause(previous, call, len(call.pieces)))
    return CacheReport(call, shared, None, Cause("none"))


def _where(old: Piece, new: Piece | None, call: ModelCall) -> str:
    """The first piece that differs: the previous request's, when it is no longer sent (hidden,
    compacted away), else this request's."""
    sent = {p.source_id for p in call.pieces}
    piece = old if new is None or old.source_id not in sent else new
    return piece.source_id if piece.kind == "message" and piece.source_id else piece.kind


def _cause(previous: ModelCall, call: ModelCall, position: int) -> Cause:
    old = previous.pieces[position] if position < len(previous.pieces) else None
    new = call.pieces[position] if position < len(call.pieces) else None
    piece = new or old
    assert piece is not None
    if "tools" in (old.kind if old else None, new.kind if new else None):
        # the tools come first: a request that gained or lost its whole tool list differs there too
        return Cause("tool list", _system_entry(call), _tools_changed(previous, call))
    if piece.kind == "system":
        return Cause("system prompt", _system_entry(call))
    if previous.compaction_id != call.compaction_id:
        return Cause("compaction", call.compaction_id)
    # The entry of the previous request that is not sent the same way now, else the new one.
    for candidate in (old, new):
        source = candidate.source_id if candidate is not None else None
        if source is None:
            continue
        before, now = previous.statuses.get(source), call.statuses.get(source)
        edit = call.edits.get(source)
        if edit is not None and edit != previous.edits.get(source):
            if now is Status.HIDDEN:
                return Cause("hidden", edit, f"entry {source}")
            if now is Status.RESTORED:
                return Cause("restored", edit, f"entry {source}")
            return Cause("replaced", edit, f"entry {source}")
        if before is not None and before is not now:
            return Cause("changed", source, f"entry {source}: {before} → {now}")
    return Cause("changed", piece.source_id)


def _tools_changed(previous: ModelCall, call: ModelCall) -> str:
    """Which tools the call's tool list added and removed ("added bash; removed read")."""
    before, now = (set(next((p.names for p in c.pieces if p.kind == "tools"), ())) for c in (previous, call))
    parts = [
        f"{verb} {', '.join(sorted(names))}"
        for verb, names in (("added", now - before), ("removed", before - now))
        if names
    ]
    return "; ".join(parts) or "a tool's definition changed"


def _system_entry(call: ModelCall) -> str | None:
    return next((p.source_id for p in call.pieces if p.kind == "system"), None)


# -- what each entry cost by riding along -------------------------------------------------------


@dataclass(slots=True)
class Carry:
    """What one entry cost across every call it rode in."""

    entry_id: str
    calls: int = 0
    carried_tokens: int = 0  # estimated, summed over calls
    cost: float = 0.0  # dollars, over the calls of a model with a price
    unpriced_calls: int = 0  # calls it rode in whose model has no price
    last_tokens: int = 0  # its size in the branch's latest call (0: not in it, nothing to save)
    last_rate: float | None = None  # dollars per token it was charged at in that call
    kinds: set[str] = field(default_factory=set)

    def saving(self, next_calls: int) -> tuple[int, float | None]:
        """Tokens and dollars hiding (or compacting) it would save over the next calls, at the rate
        it was charged in the latest call (a cache read stays a cache read)."""
        tokens = self.last_tokens * next_calls
        return tokens, None if self.last_rate is None else tokens * self.last_rate

    def as_json(self, next_calls: int) -> dict[str, Any]:
        tokens, dollars = self.saving(next_calls)
        return {
            "entryId": self.entry_id,
            "carriedTokens": self.carried_tokens,
            "calls": self.calls,
            "cost": self.cost if self.unpriced_calls < self.calls else None,
            "unpricedCalls": self.unpriced_calls,
            "lastTokens": self.last_tokens,
            "saving": {"nextCalls": next_calls, "tokens": tokens, "cost": dollars},
        }


def carry_costs(calls: Sequence[ModelCall]) -> list[Carry]:
    """Every entry that rode in a call, most carried tokens first."""
    carries: dict[str, Carry] = {}
    for position, call in enumerate(calls):
        latest = position == len(calls) - 1
        rates = _piece_rates(call)
        for piece, rate in zip(call.pieces, rates, strict=True):
            key = piece.source_id if piece.source_id is not None else f"({piece.kind})"
            carry = carries.get(key)
            if carry is None:
                carry = carries[key] = Carry(key)
            carry.calls += 1
            carry.carried_tokens += piece.tokens
            carry.kinds.add(piece.kind)
            if latest:
                carry.last_tokens += piece.tokens
                carry.last_rate = rate
            if rate is None:
                carry.unpriced_calls += 1
            else:
                carry.cost += rate * piece.tokens
    return sorted(carries.values(), key=lambda c: (-c.carried_tokens, c.entry_id))


def _piece_rates(call: ModelCall) -> list[float | None]:
    """Dollars per estimated token for each piece of the call: its tokens scaled to the server's
    count, priced by where they fell (cache read, then cache write, then plain input)."""
    price = price_for(call.model)
    if price is None:
        return [None] * len(call.pieces)
    usage = call.usage
    estimated = call.tokens
    reported = usage.prompt
    scale = reported / estimated if reported and estimated else 1.0
    r = price.rates(reported)
    zones = ((usage.cache_read, r.cache_read), (usage.cache_write, r.cache_write))
    rates: list[float | None] = []
    position = 0.0
    for piece in call.pieces:
        start, size = position, piece.tokens * scale
        position += size
        if size == 0:
            rates.append(0.0)
            continue
        dollars, zone_start = 0.0, 0.0
        end = start + size
        for zone_tokens, rate in zones:
            zone_end = zone_start + zone_tokens
            overlap = max(0.0, min(end, zone_end) - max(start, zone_start))
            dollars += overlap * rate
            zone_start = zone_end
        beyond = max(0.0, end - max(start, zone_start))
        dollars += beyond * r.input
        rates.append(dollars / 1_000_000 / piece.tokens)
    return rates

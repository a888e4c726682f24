"""What a session cost: a price table per model and the usage totals of a session (pure).

Prices are US dollars per million tokens, as pi 1.6's model table has them
(``cost: {input, output, cacheRead, cacheWrite, tiers}``); a tier applies when a
request's input (input + cache read + cache write) is above its threshold, as
pi's ``calculateCost``. The config file overrides or adds prices with
``[models."id"] cost = { input = 3, output = 15, cache_read = 0.3, cache_write = 3.75 }``.
A model without a price shows tokens only: its cost is unknown, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from agent_tui.projection.registry import builtin_prices
from agent_tui.projection.specs import Price, Rates, Usage
from agent_tui.store.record import Entry

#: Every provider's built-in prices (pi 1.6's table), then the config file's, by model id.
PRICES: dict[str, Price] = dict(builtin_prices())


def price_for(model_id: str | None) -> Price | None:
    """The price of ``model_id`` (a dated id matches its base, as ``models.lookup``), else None."""
    if not model_id:
        return None
    if model_id in PRICES:
        return PRICES[model_id]
    for known, price in PRICES.items():
        if model_id.startswith(known + "-") or model_id.startswith(known + "@"):
            return price
    return None


def register_price(model_id: str, price: Price) -> None:
    PRICES[model_id] = price


def price_from_config(spec: Mapping[str, Any], base: Price | None) -> Price:
    """A ``cost = {input, output, cache_read, cache_write}`` table over the built-in price (key by key).

    pi's spellings ``cacheRead`` / ``cacheWrite`` are accepted too; tiers are kept from the table."""
    old = base.base if base is not None else Rates(0.0, 0.0)

    def rate(*names: str, default: float) -> float:
        for name in names:
            if name in spec:
                value = spec[name]
                if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                    raise ValueError(f"cost.{name} must be a number of dollars per million tokens")
                return float(value)
        return default

    rates = Rates(
        rate("input", default=old.input),
        rate("output", default=old.output),
        rate("cache_read", "cacheRead", default=old.cache_read),
        rate("cache_write", "cacheWrite", default=old.cache_write),
    )
    return Price(rates, base.tiers if base is not None and rates == old else ())


# -- usage -----------------------------------------------------------------------------------


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_of(raw: Any) -> Usage:
    """pi's usage object (input, output, cacheRead, cacheWrite) as a :class:`Usage`; junk counts 0."""
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        _int(raw.get("input")),
        _int(raw.get("output")),
        _int(raw.get("cacheRead")),
        _int(raw.get("cacheWrite")),
    )


def cost_json(model_id: str | None, usage: Usage) -> dict[str, float]:
    """pi's ``usage.cost`` of one call (``calculateCost``): dollars for input, output, cache read,
    cache write and their total, by the model's price; all 0 when the model has no price (pi
    writes 0 for a model whose table says nothing, and the totals then count the call unpriced)."""
    price = price_for(model_id)
    parts = price.cost_parts(usage) if price is not None else (0.0, 0.0, 0.0, 0.0)
    return {
        "input": parts[0],
        "output": parts[1],
        "cacheRead": parts[2],
        "cacheWrite": parts[3],
        "total": sum(parts),
    }


def recorded_cost(raw: Any) -> float:
    """The ``usage.cost.total`` a file recorded (pi's and agent-tui's, by the price when written)."""
    cost = raw.get("cost") if isinstance(raw, dict) else None
    total = cost.get("total") if isinstance(cost, dict) else None
    return (
        float(total) if isinstance(total, int | float) and not isinstance(total, bool) and total > 0 else 0.0
    )


class _UsageHead(msgspec.Struct):
    role: Any = None
    model: Any = None
    usage: Any = None


_decode_head = msgspec.json.Decoder(_UsageHead).decode


def _head(entry: Entry) -> tuple[Any, Any, Any] | None:
    """(role, model, usage) of a message entry, decoding only those fields when the entry is undecoded."""
    raw = entry.peek_message_raw()  # read, not kept: every assistant message of the file is read
    if raw is not None:
        try:
            head = _decode_head(raw)
            return head.role, head.model, head.usage
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            pass
    message = entry.message
    if message is None:
        return None
    return message.get("role"), message.get("model"), message.get("usage")


@dataclass(frozen=True, slots=True)
class Call:
    """One model call's tokens and dollars (``cost`` None: its model has no price and the file
    recorded none)."""

    kind: str  # the entry's type: message, compaction, branch_summary
    model: str | None
    usage: Usage
    cost: float | None


def priced_call(kind: str, model: Any, raw_usage: Any) -> Call | None:
    """The call an entry reports (``model`` and ``raw_usage`` as the file has them), priced by the
    table (else by the cost the file recorded); None when it reports no tokens."""
    usage = usage_of(raw_usage)
    if usage.total == 0:
        return None
    model_id = model if isinstance(model, str) else None
    price = price_for(model_id)
    cost: float | None
    if price is not None:
        cost = price.cost(usage)
    else:
        recorded = recorded_cost(raw_usage)
        cost = recorded if recorded > 0 else None
    return Call(kind, model_id, usage, cost)


def call_of(entry: Entry) -> tuple[str, Any, Any] | None:
    """(type, model, usage) of an entry that may report a model call (an assistant message, a
    compaction, a branch summary), else None; the usage is as the file has it."""
    if entry.type == "message":
        if entry.role != "assistant":  # known without reading the line (a tool result's output)
            return None
        head = _head(entry)
        if head is None or head[0] != "assistant":
            return None
        return entry.type, head[1], head[2]
    if entry.type in ("compaction", "branch_summary"):
        return entry.type, entry.data.get("model"), entry.data.get("usage")
    return None


@dataclass(slots=True)
class UsageTotals:
    """Tokens and dollars of a session's model calls, every branch and failed attempt included
    (what was paid for, as pi's footer counts), kept up to date as entries are appended."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    unpriced: int = 0  # calls with tokens whose model has no price (their cost is unknown)
    calls: int = 0
    seen: int = 0  # entries read so far (the index only grows)
    last: Usage = field(default_factory=Usage)  # the latest call that reported usage
    last_model: str | None = None

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    @property
    def priced(self) -> bool:
        """Every call with tokens had a price (or the file recorded its cost)."""
        return self.calls > 0 and self.unpriced == 0

    def add_entries(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            self.seen += 1
            call = call_of(entry)
            if call is not None:
                self.add_call(*call)

    def add_call(self, kind: str, model: Any, raw_usage: Any) -> None:
        """One model call: ``kind`` the entry's type, ``model`` and ``raw_usage`` as the file has them."""
        call = priced_call(kind, model, raw_usage)
        if call is not None:
            self.add(call)

    def add(self, call: Call) -> None:
        """A call priced by :func:`priced_call` (one pricing for several totals)."""
        usage = call.usage
        self.calls += 1
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        if call.cost is None:
            self.unpriced += 1
        else:
            self.cost += call.cost
        if call.kind == "message":
            self.last = usage
            self.last_model = call.model

    def to_json(self) -> dict[str, Any]:
        """The totals for ``sessions --json`` and the like (``cost`` is None when a call has no price)."""
        return {
            "calls": self.calls,
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "totalTokens": self.tokens,
            "cost": round(self.cost, 6) if (self.priced or self.cost > 0) else None,
            "unpriced": self.unpriced,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UsageTotals:
        """The totals :meth:`to_json` wrote (a summary's): counts and cost, not the last call."""

        def count(key: str) -> int:
            return _int(data.get(key))

        cost = data.get("cost")
        return cls(
            input=count("input"),
            output=count("output"),
            cache_read=count("cacheRead"),
            cache_write=count("cacheWrite"),
            cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0,
            unpriced=count("unpriced"),
            calls=count("calls"),
        )


class BranchTotals:
    """The usage totals of the path to the leaf, kept as the leaf moves: a path that extends the
    last one reads only its new entries (an append), another is read afresh (a move in the tree)."""

    def __init__(self) -> None:
        self.totals = UsageTotals()
        self._path: list[str] = []

    def update(self, path: Sequence[Entry]) -> UsageTotals:
        known = len(self._path)
        extends = known <= len(path) and (known == 0 or path[known - 1].id == self._path[-1])
        if not extends:
            self.totals, self._path, known = UsageTotals(), [], 0
        self.totals.add_entries(path[known:])
        self._path.extend(e.id for e in path[known:])
        return self.totals


def session_usage(entries: Iterable[Entry]) -> UsageTotals:
    totals = UsageTotals()
    totals.add_entries(entries)
    return totals


__all__ = [
    "PRICES",
    "BranchTotals",
    "Call",
    "Price",
    "Rates",
    "Usage",
    "UsageTotals",
    "call_of",
    "cost_json",
    "price_for",
    "price_from_config",
    "priced_call",
    "recorded_cost",
    "register_price",
    "session_usage",
    "usage_of",
]

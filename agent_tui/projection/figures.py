"""The status line's figures and how they fit a width (pure; the widget only draws the string).

Fields, most important first when space runs out: what is happening (a spinner, the
elapsed time, a retry countdown), the context used against the window, the model
and thinking level, the session cost, the session name, the last turn's tokens.
Each field has shorter forms; at 80 columns everything still fits in short form,
and narrower widths drop the least important fields whole, never cutting one
mid-word (the last resort is an ellipsis on the session name).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_tui.projection.context import Projection
from agent_tui.projection.describe import first_line, plural
from agent_tui.projection.pricing import BranchTotals, Usage, UsageTotals, usage_of
from agent_tui.projection.tokens import ContextTokens
from agent_tui.store.index import SessionIndex
from agent_tui.store.record import Entry

SEPARATOR = " · "


def short_tokens(n: int) -> str:
    """pi's formatTokens: 999, 1.2k, 12k, 1.2M, 12M."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{round(n / 1000)}k"
    if n < 10_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{round(n / 1_000_000)}M"


def money(dollars: float) -> str:
    if dollars < 0.01:
        return f"${dollars:.4f}"
    if dollars < 10:
        return f"${dollars:.3f}"
    return f"${dollars:,.2f}"


def session_title(index: SessionIndex | None, width: int = 40) -> str:
    """The session's name, else its first message's first line: never the file's uuid."""
    if index is None or not len(index):
        return "new session"
    if index.name:
        return index.name if len(index.name) <= width else index.name[: width - 1] + "…"
    first = next((e for e in index.entries if e.type == "message" and e.role == "user"), None)
    return first_line(first, width) or "untitled session" if first is not None else "untitled session"


def last_turn(projection: Projection) -> Usage | None:
    """Tokens of the last turn on the branch: every model call since its last user message
    (input counts what was sent, cache reads and writes included; output what came back)."""
    total_in = total_out = 0
    found = False
    for entry in reversed(projection.path):
        if entry.type != "message":
            continue
        role = entry.role
        if role == "user":
            break
        if role != "assistant":
            continue
        message = entry.message or {}
        usage = usage_of(message.get("usage"))
        if usage.total:
            found = True
            total_in += usage.prompt
            total_out += usage.output
    return Usage(input=total_in, output=total_out) if found else None


@dataclass(frozen=True, slots=True)
class StatusFigures:
    session: str
    model: str | None  # the model the next send uses (None: none configured)
    provider: str | None
    thinking: str
    context: int
    window: int
    estimated: bool  # the context figure is an estimate only (no reported usage applies)
    turn: Usage | None
    totals: UsageTotals
    branch: UsageTotals | None = None  # the path to the leaf (None: not counted)
    mode: str = ""  # the permission mode as the line names it ("plan"; empty: not shown)

    @property
    def percent(self) -> float:
        return 100 * self.context / self.window if self.window else 0.0


class FigureSource:
    """Builds :class:`StatusFigures` for one session at a time; the usage totals are read once per
    entry (the index only grows), so a refresh after an append reads only the new entries."""

    def __init__(self) -> None:
        self._index: SessionIndex | None = None
        self.totals = UsageTotals()
        self.branch = BranchTotals()

    def _start(self, index: SessionIndex | None) -> None:
        self._index = index
        self.totals = UsageTotals()
        self.branch = BranchTotals()

    def catch_up(self, index: SessionIndex | None, path: Sequence[Entry] | None = None) -> None:
        """Read the usage of the entries not read yet (all of them for another session), and of
        ``path``'s entries for the branch's totals."""
        if index is not self._index or (index is not None and len(index) < self.totals.seen):
            self._start(index)
        if index is not None:
            self.totals.add_entries(index.entries[self.totals.seen :])
        if path is not None:
            self.branch.update(path)

    def figures(
        self,
        index: SessionIndex | None,
        projection: Projection,
        *,
        model: str | None,
        provider: str | None,
        thinking: str,
        window: int,
        context: ContextTokens,
        count_usage: bool = True,
        mode: str = "",
    ) -> StatusFigures:
        """``count_usage=False`` shows the totals counted so far (a big session's are counted
        off the event loop by :meth:`catch_up`, so the first paint does not wait for them)."""
        if count_usage:
            self.catch_up(index)
        elif index is not self._index:
            self._start(index)
        return StatusFigures(
            session_title(index),
            model,
            provider,
            thinking,
            context.tokens,
            window,
            context.estimated_only,
            last_turn(projection),
            self.totals,
            self.branch.update(projection.path) if count_usage else None,
            mode,
        )


def _context(f: StatusFigures) -> list[str]:
    approx = "≈" if f.estimated else ""
    return [
        f"ctx {approx}{f.context:,}/{short_tokens(f.window)} ({f.percent:.1f}%)",
        f"{approx}{short_tokens(f.context)}/{short_tokens(f.window)} {f.percent:.0f}%",
        f"{f.percent:.0f}%",
    ]


def _model(f: StatusFigures) -> list[str]:
    if not f.model:
        return ["no model configured", "no model"]
    model = f.model
    thinking = "" if f.thinking == "off" else f" {f.thinking}"
    forms = [f"{f.provider}/{model} · think {f.thinking}" if f.provider else f"{model} · think {f.thinking}"]
    forms.append(f"{model}{thinking}")
    if len(model) > 18:
        forms.append(f"{model[:17]}…{thinking}")
    return forms


def cost_text(t: UsageTotals) -> str:
    """Dollars when the calls are priced ("+?": some are not), else the tokens."""
    if t.cost > 0 or t.priced:
        return f"{money(t.cost)}{'+?' if t.unpriced else ''}"
    return f"Σ {short_tokens(t.tokens)} tok"


def usage_lines(file: UsageTotals, branch: UsageTotals) -> list[str]:
    """``/session``'s account of what the model calls cost: this branch, then the whole file."""

    def line(name: str, t: UsageTotals) -> str:
        if not t.calls:
            return f"{name}: no model calls"
        return (
            f"{name}: {cost_text(t)} · {plural(t.calls, 'call')} · ↑{t.input:,} ↓{t.output:,}"
            f" cache read {t.cache_read:,} write {t.cache_write:,}"
            + (f" ({plural(t.unpriced, 'call')} of a model without a price)" if t.unpriced else "")
        )

    return [line("cost of this branch", branch), line("cost of the whole file", file)]


def _cost(f: StatusFigures) -> list[str]:
    t = f.totals
    if not t.calls:
        return []
    whole = cost_text(t)
    b = f.branch
    if b is not None and b.calls != t.calls:  # other branches cost too: this one, then the file's
        # each figure says what it counts, down to the narrowest form that keeps both
        mine = cost_text(b) if b.calls else money(0)
        return [
            f"branch {mine} · file {whole}",
            f"{mine} (file {whole})",
            f"file {whole}".replace(" tok", ""),
        ]
    if t.cost > 0 or t.priced:
        return [whole]
    return [whole, f"Σ{short_tokens(t.tokens)}"]


def _turn(f: StatusFigures) -> list[str]:
    if f.turn is None:
        return []
    return [
        f"last ↑{short_tokens(f.turn.input)} ↓{short_tokens(f.turn.output)}",
        f"↑{short_tokens(f.turn.input)} ↓{short_tokens(f.turn.output)}",
    ]


def _mode(f: StatusFigures) -> list[str]:
    return [f"mode: {f.mode}"] if f.mode else []


def _name(f: StatusFigures) -> list[str]:
    name = f.session
    forms = [name]
    for width in (24, 16, 10):
        if len(name) > width:
            forms.append(name[: width - 1] + "…")
    return forms


# Display order, and the order fields are dropped in when even their shortest forms do not fit.
_FIELDS: list[tuple[str, Callable[[StatusFigures], list[str]]]] = [
    ("mode", _mode),  # never dropped: what may run without asking
    ("name", _name),
    ("model", _model),
    ("context", _context),
    ("turn", _turn),
    ("cost", _cost),
]
_DROP_ORDER = ("turn", "name", "cost", "model")
# The context keeps its figures ("≈1.8k/128k 1%") until every field that can go has gone; only then
# is it a bare percentage.
_SHORTEN_ORDER = ("model", "context", "turn", "name", "name", "name", "cost", "model")


def format_status(figures: StatusFigures, width: int, working: str | None = None) -> str:
    """The status line for ``width`` columns; ``working`` (spinner, elapsed, retry) always stays."""
    forms = {key: make(figures) for key, make in _FIELDS}
    chosen = {key: 0 for key in forms if forms[key]}

    def line() -> str:
        parts = [working] if working else []
        parts += [forms[key][chosen[key]] for key, _ in _FIELDS if key in chosen]
        return SEPARATOR.join(parts)

    for key in _SHORTEN_ORDER:
        if len(line()) <= width:
            return line()
        if key in chosen and chosen[key] + 1 < len(forms[key]):
            chosen[key] += 1
    for key in _DROP_ORDER:
        if len(line()) <= width:
            return line()
        if key in chosen:
            # shortest form first; drop it only if that does not fit either
            chosen[key] = len(forms[key]) - 1
            if len(line()) > width:
                del chosen[key]
    if len(line()) > width and "context" in chosen:
        chosen["context"] = len(forms["context"]) - 1
    text = line()
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


__all__ = [
    "FigureSource",
    "StatusFigures",
    "format_status",
    "last_turn",
    "money",
    "plural",
    "session_title",
    "short_tokens",
]

"""The panel's list of every model call on the branch (``m``): one row per call with how much of
its request the call before it had sent, where the two first differ, why, and what the server
said it read from and wrote to its cache.

The reports are ``projection.call_history.cache_reports``, the ones ``agent-tui cache FILE``
prints; this module only lays them out. Every id and cause comes from the session file: each is
made visible (``visible_line``) and put in a ``Text``, never read as markup.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from agent_tui.projection.call_history import CacheReport
from agent_tui.projection.describe import plural
from agent_tui.terminal_text import visible_line

ID_WIDTH = 8  # pi's entry ids are 8 hex digits; a longer one is cut (its full id: Enter)

#: The columns' titles, aligned with :func:`call_row`.
CALL_HEADER = f"{'#':>4} {'reply':<{ID_WIDTH}} {'shared':>11} {'read':>7} {'write':>6} {'first':<{ID_WIDTH}} why not more"

#: Causes that cost nothing: the call read everything the one before sent.
_QUIET = ("none", "first call")


def _short(entry_id: str | None) -> str:
    if entry_id is None:
        return "-"
    shown = visible_line(entry_id)
    return shown if len(shown) <= ID_WIDTH else shown[: ID_WIDTH - 1] + "…"


def shared_text(report: CacheReport) -> str:
    """``1,234 98%``: the shared prefix, in tokens and as a share of the call's request."""
    if report.cause.kind == "first call":
        return "-"
    share = 100 * report.shared_prefix_tokens // report.call.tokens if report.call.tokens else 0
    return f"{report.shared_prefix_tokens:,} {share}%"


def cause_text(report: CacheReport) -> str:
    """The cause as one line: its kind, the entry that caused it and what changed."""
    cause = report.cause
    text = cause.kind
    if cause.entry_id:
        text += f" ({cause.entry_id})"
    if cause.detail:
        text += f": {cause.detail}"
    return visible_line(text)


def call_row(number: int, report: CacheReport, miss: Style) -> Text:
    """One call's row (``miss``: the style of a cause that cost a cache read)."""
    usage = report.call.usage
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{number:>4} {_short(report.call.entry_id):<{ID_WIDTH}} ")
    text.append(f"{shared_text(report):>11} ", style=Style(dim=report.cause.kind in _QUIET))
    text.append(f"{usage.cache_read:>7,} {usage.cache_write:>6,} ", style=Style(dim=True))
    text.append(f"{_short(report.first_difference):<{ID_WIDTH}} ")
    text.append(cause_text(report), style=Style(dim=True) if report.cause.kind in _QUIET else miss)
    return text


def call_title(number: int, report: CacheReport) -> str:
    return visible_line(
        f"call {number} · reply {report.call.entry_id} · {plural(report.call.tokens, 'token')}"
    )


def call_detail(number: int, report: CacheReport, total: int) -> str:
    """Everything the report says of one call, for the full view (Enter on its row); untrusted
    text, for a place that shows it inert."""
    call, usage = report.call, report.call.usage
    lines = [
        f"Call {number} of {total} on the branch: the reply {call.entry_id}",
        f"model: {call.model or '?'} · thinking {call.thinking_level}",
        f"request: ≈{call.tokens:,} tokens (estimated on one basis with every other figure)",
        f"shared with the call before: ≈{report.shared_prefix_tokens:,} tokens ({shared_text(report)})",
        f"first difference: {report.first_difference or 'none'}",
        f"why not more: {report.cause.kind}",
    ]
    if report.cause.entry_id:
        lines.append(f"caused by the entry: {report.cause.entry_id}")
    if report.cause.detail:
        lines.append(f"what changed: {report.cause.detail}")
    lines.append(
        f"server's count: cache read {usage.cache_read:,} · cache write {usage.cache_write:,}"
        f" · input {usage.input:,}"
    )
    return "\n".join(lines)

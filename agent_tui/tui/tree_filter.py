"""The session tree's filters, search and label times, as pi 1.6's ``/tree`` has them (plain data;
the widget is ``widgets/session_tree``):

- filters, cycled with ``t``: ``all`` (the whole tree, its branches), ``no-tools`` (no tool results,
  no assistant message that only calls tools, no bookkeeping: labels, edits, settings), ``user`` (user messages only), ``labeled`` (labeled
  entries only). Any filter but ``all``, or a search, shows the matching entries as one flat list in
  file order (pi's filtered view), the active path's marked as usual.
- search (``/``): the rows whose text holds every word typed (case-insensitive, pi's rule).
- label times (``T``): each label shows when it was set (``14:05``, ``3/2 14:05``, ``25/3/2 14:05``).
"""

from __future__ import annotations

from datetime import datetime

from agent_tui.projection.describe import first_line, kind
from agent_tui.store.index import SessionIndex
from agent_tui.store.record import Entry

#: The filters, in the order ``t`` cycles them, with the short name the tree bar shows.
FILTERS: tuple[tuple[str, str], ...] = (
    ("all", "all"),
    ("no-tools", "no tools"),
    ("user", "user"),
    ("labeled", "labeled"),
)
#: Bookkeeping entries pi's filtered views leave out (they change settings, not the conversation).
SETTINGS_TYPES = frozenset(
    {"label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info", "pin"}
)
FILTER_NAMES = dict(FILTERS)


def next_filter(mode: str) -> str:
    names = [name for name, _ in FILTERS]
    return names[(names.index(mode) + 1) % len(names)] if mode in names else "all"


def _only_calls_tools(entry: Entry) -> bool:
    """An assistant message with tool calls and no text (pi leaves these out of ``no-tools``)."""
    content = (entry.message or {}).get("content")
    if not isinstance(content, list):
        return False
    types = {b.get("type") for b in content if isinstance(b, dict)}
    has_text = any(
        isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).strip() for b in content
    )
    return "toolCall" in types and not has_text


def passes(entry: Entry, mode: str, index: SessionIndex) -> bool:
    """Whether the filter ``mode`` keeps ``entry``."""
    if mode == "user":
        return entry.type == "message" and entry.role == "user"
    if mode == "labeled":
        return entry.id in index.labels
    if mode == "no-tools":
        if entry.type in SETTINGS_TYPES or (entry.type == "message" and entry.role == "toolResult"):
            return False
        return not (entry.type == "message" and entry.role == "assistant" and _only_calls_tools(entry))
    return True


def search_words(text: str) -> list[str]:
    return [w for w in text.lower().split() if w]


def matches(entry: Entry, words: list[str], index: SessionIndex) -> bool:
    """Whether every word is in the row's text: its kind, its label, its first lines."""
    if not words:
        return True
    haystack = " ".join(
        (kind(entry), entry.type, index.labels.get(entry.id, ""), first_line(entry, 400))
    ).lower()
    return all(w in haystack for w in words)


def label_time(index: SessionIndex, entry_id: str) -> str | None:
    """When the label of ``entry_id`` was set (the latest label entry's timestamp), or None."""
    for entry in reversed(index.entries):
        if entry.type == "label" and entry.data.get("targetId") == entry_id:
            stamp = entry.data.get("timestamp")
            return format_label_time(stamp) if isinstance(stamp, str) else None
    return None


def format_label_time(stamp: str, now: datetime | None = None) -> str | None:
    """pi's label time: ``HH:MM`` today, ``M/D HH:MM`` this year, else ``YY/M/D HH:MM`` (local time)."""
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return None
    now = now or datetime.now().astimezone()
    clock = f"{when.hour:02d}:{when.minute:02d}"
    if when.date() == now.date():
        return clock
    if when.year == now.year:
        return f"{when.month}/{when.day} {clock}"
    return f"{str(when.year)[-2:]}/{when.month}/{when.day} {clock}"


__all__ = [
    "FILTERS",
    "FILTER_NAMES",
    "format_label_time",
    "label_time",
    "matches",
    "next_filter",
    "passes",
    "search_words",
]

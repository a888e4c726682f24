"""What a compaction's summary lost: the things of the summarized span a user would miss, found
by code (never by asking a model) and checked against the summary's text (pure).

Five kinds, each with the entry it came from:

- ``path``: a file path the span named (a tool call's path argument, a path in a message);
  kept when the summary names it or its file name.
- ``identifier``: a code name the user or the model wrote in backticks, or a snake_case /
  camelCase word the user wrote; kept when the summary holds it.
- ``number``: a number of two digits or more, a version or a ``file:line`` the user wrote;
  kept when the summary holds it.
- ``instruction``: a sentence of the user's that tells the agent how to work (always, never,
  don't, must, make sure...); kept when most of its words are in the summary.
- ``request``: a user message of the span that no reply answered (the turn ended without the
  model's text); kept when most of its words are in the summary.

Pinned entries are never lost: a compaction keeps them verbatim after the summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_tui.projection.context import Projection

KINDS = ("path", "identifier", "number", "instruction", "request")
MAX_PER_KIND = 20
#: Most of a sentence's words must be in the summary for it to count as kept.
KEPT_WORD_SHARE = 0.6

_PATH = re.compile(
    r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+|(?<![\w/.-])[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|rs|go|c|h|cc|cpp|hpp|java|kt|rb|php|cs|swift|md|toml|json|jsonl|yaml|yml|ini|cfg|txt|sh|sql|html|css|tcss|lock)\b"
)
_BACKTICKED = re.compile(r"`([^`\n]{2,80})`")
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.:]*(?:\(\))?$")
_CODE_WORD = re.compile(
    r"\b(?:[a-z][a-z0-9]*_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b"
)
_NUMBER = re.compile(r"(?<![\w.])(?:v?\d+(?:\.\d+){1,3}|\d{2,}(?::\d+)?)(?![\w])")
_INSTRUCTION = re.compile(
    r"\b(?:always|never|don'?t|do not|must|should|make sure|remember|avoid|prefer|only use|keep)\b", re.I
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_WORD = re.compile(r"[A-Za-z0-9_]{4,}")
_STOP = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "have",
        "what",
        "when",
        "then",
        "than",
        "they",
        "them",
        "your",
        "yours",
        "into",
        "also",
        "just",
        "make",
        "sure",
        "always",
        "never",
        "should",
        "must",
        "dont",
        "please",
        "keep",
        "only",
        "there",
        "their",
        "about",
        "would",
        "could",
        "which",
    ]
)


@dataclass(frozen=True, slots=True)
class Lost:
    kind: str  # one of KINDS
    text: str
    entry_id: str | None

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "entryId": self.entry_id}


def summary_losses(projection: Projection, summarized_ids: Iterable[str], summary: str) -> list[Lost]:
    """What of the entries ``summarized_ids`` (in the projection) the ``summary`` does not hold."""
    return missing(span_candidates(projection, summarized_ids), summary)


def span_candidates(projection: Projection, summarized_ids: Iterable[str]) -> list[Lost]:
    """Everything of the summarized span a summary should hold, found once (a review checks each
    edit of the summary against the same list: :func:`missing`)."""
    wanted = set(summarized_ids)
    span = [ce for ce in projection.entries if ce.entry.id in wanted and not ce.pinned]
    return candidates([(ce.entry.id, m.message) for ce in span for m in ce.messages])


def losses_in(messages: Sequence[tuple[str, dict[str, Any]]], summary: str) -> list[Lost]:
    return missing(candidates(messages), summary)


def missing(found: Sequence[Lost], summary: str) -> list[Lost]:
    """The candidates ``summary`` does not hold, at most :data:`MAX_PER_KIND` of each kind."""
    folded = summary.casefold()
    summary_words = {w.casefold() for w in _WORD.findall(summary)}
    lost: dict[str, list[Lost]] = {kind: [] for kind in KINDS}
    for item in found:
        if len(lost[item.kind]) < MAX_PER_KIND and not _kept(item.kind, item.text, folded, summary_words):
            lost[item.kind].append(item)
    return [item for kind in KINDS for item in lost[kind]]


def candidates(messages: Sequence[tuple[str, dict[str, Any]]]) -> list[Lost]:
    """What of ``messages`` (entry id, message) a summary should hold, each thing once, in order."""
    found: list[Lost] = []
    seen: set[tuple[str, str]] = set()

    def add(kind: str, text: str, entry_id: str) -> None:
        text = text.strip()
        key = (kind, text.casefold())
        if text and key not in seen:
            seen.add(key)
            found.append(Lost(kind, text, entry_id))

    answered_after: set[int] = set()
    replied = False
    for position in range(len(messages) - 1, -1, -1):
        role = messages[position][1].get("role")
        if role == "assistant" and _text(messages[position][1]).strip():
            replied = True
        elif role == "user" and replied:
            answered_after.add(position)
            replied = False
    for position, (entry_id, message) in enumerate(messages):
        role = message.get("role")
        text = _text(message)
        for path in _paths(message, text):
            add("path", path, entry_id)
        if role in ("user", "assistant"):
            for inner in _BACKTICKED.findall(text):
                if _IDENTIFIER.match(inner.strip()) and not _PATH.fullmatch(inner.strip()):
                    add("identifier", inner, entry_id)
        if role != "user":
            continue
        for word in _CODE_WORD.findall(text):
            add("identifier", word, entry_id)
        for number in _NUMBER.findall(text):
            add("number", number, entry_id)
        for sentence in _SENTENCE.findall(text):
            if _INSTRUCTION.search(sentence):
                add("instruction", sentence, entry_id)
        if position not in answered_after and text.strip():
            add("request", _first_line(text), entry_id)
    return found


def losses_json(losses: Sequence[Lost]) -> list[dict[str, Any]]:
    return [lost.as_json() for lost in losses]


def losses_text(losses: Sequence[Lost]) -> list[str]:
    """One line per lost thing, for a review and the command line."""
    return [f"{lost.kind}: {lost.text}" + (f" ({lost.entry_id})" if lost.entry_id else "") for lost in losses]


def _kept(kind: str, text: str, folded: str, summary_words: set[str]) -> bool:
    if kind == "path":
        name = text.rstrip("/").rsplit("/", 1)[-1]
        return text.casefold() in folded or name.casefold() in folded
    if kind in ("identifier", "number"):
        return text.casefold().removesuffix("()") in folded
    words = [w.casefold() for w in _WORD.findall(text) if w.casefold() not in _STOP]
    if not words:
        return True
    return sum(w in summary_words for w in words) / len(words) >= KEPT_WORD_SHARE


def _paths(message: dict[str, Any], text: str) -> list[str]:
    paths: list[str] = []
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                arguments = block.get("arguments")
                if isinstance(arguments, dict) and isinstance(arguments.get("path"), str):
                    paths.append(arguments["path"])
    if message.get("role") != "toolResult":  # a listing's hundred paths are not things the user named
        paths.extend(
            m.group(0) for m in _PATH.finditer(text) if "://" not in text[max(0, m.start() - 8) : m.start()]
        )
    return paths


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"

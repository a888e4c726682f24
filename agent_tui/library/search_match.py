"""Matching a parsed query against what the index cannot answer alone: phrases, fields, snippets.

The FTS index keeps no positions, so a phrase is checked on the session file
itself: :class:`_Check` is one phrase (folded words, adjacent, in order) and
:func:`_file_holds` reads a file once for several of them, using a regex on
the raw bytes to pick the lines worth decoding. :func:`_tokenize` gives the
FTS tokenizer's tokens for words it would split. :func:`_folded_fields` are a
summary's fields folded for matching query words, :func:`_around` and
:func:`_snippet` cut the text shown around a hit, and :class:`_Cache` is what
one refresh's search keeps in memory. Part of :mod:`agent_tui.library.search`.
"""

from __future__ import annotations

import re
import sqlite3
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agent_tui.library.search_query import fold, words_of
from agent_tui.library.search_summary import SessionSummary
from agent_tui.library.search_text import entry_text
from agent_tui.store.errors import StoreError
from agent_tui.store.reader import parse_session
from agent_tui.store.record import LineSource


@dataclass(frozen=True, slots=True)
class _Cache:
    summaries: dict[int, SessionSummary]
    chunk_files: dict[int, int]  # FTS row -> file
    folded: dict[int, list[tuple[str, str]]]  # file -> its fields, folded, for matching query words
    verified: dict[tuple[int, _Check], bool]  # (file, phrase) -> the file holds it
    missing: dict[int, list[_Check]]  # file -> the phrases it does not hold


@dataclass(frozen=True, slots=True)
class _Check:
    """A phrase to look for in a file's entries: folded words, adjacent, in order."""

    words: tuple[str, ...]
    prefix: bool  # the last word may be the start of a longer word
    gap: str = ""  # letters the FTS tokenizer takes for separators (a query word it split)

    def implies(self, other: _Check) -> bool:
        """Does text holding this phrase hold ``other`` (``other`` typed on: a longer last word, more words)?"""
        n = len(other.words)
        if self.gap != other.gap or len(self.words) < n or self.words[: n - 1] != other.words[:-1]:
            return False
        word, last = self.words[n - 1], other.words[-1]
        if other.prefix:
            return word.startswith(last)
        return word == last and (len(self.words) > n or not self.prefix)

    def pattern(self) -> re.Pattern[str]:
        """As :meth:`Term.pattern`, the ``gap`` letters separating words too."""
        extra = re.escape(self.gap)
        body = rf"[\W_{extra}]+".join(re.escape(w) for w in self.words)
        return re.compile(rf"(?<![^\W_{extra}])" + body + ("" if self.prefix else rf"(?![^\W_{extra}])"))


def _tokenize(words: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The FTS tokenizer's tokens for ``words``, and the letters of them it drops as separators."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(b, tokenize='unicode61 remove_diacritics 2')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        letters = sorted(set("".join(words)))
        db.executemany("INSERT INTO t(rowid, b) VALUES(?, ?)", enumerate([" ".join(words), *letters]))
        tokens = tuple(t for (t,) in db.execute("SELECT term FROM v WHERE doc=0 ORDER BY offset"))
        kept = {doc for (doc,) in db.execute("SELECT DISTINCT doc FROM v WHERE doc>0")}
        return tokens, "".join(c for i, c in enumerate(letters, 1) if i not in kept)
    finally:
        db.close()


#: In a line of JSON with no ``\\u`` escape and no byte past ASCII, what may stand between two
#: words of the decoded text: anything but a letter, a digit or a newline, or an escape.
_RAW_GAP = rb"(?:[^a-z0-9\n]|\\[nrtbf])+"
_UNSURE_LINE = re.compile(rb"^.*(?:[\x80-\xff]|\\u).*$", re.MULTILINE)


@lru_cache(maxsize=256)
def _raw_pattern(words: tuple[str, ...]) -> re.Pattern[bytes]:
    return re.compile(_RAW_GAP.join(re.escape(w.encode()) for w in words))


def _file_holds(path: str, terms: list[_Check]) -> list[bool]:
    """For each term: does an entry of the session file at ``path`` hold it (in :func:`entry_text`)?

    Decoding every entry is slow, so the lines worth decoding are found first on the raw
    bytes: a line of plain ASCII without ``\\u`` escapes decodes to the same letters and digits,
    lower-cased by ``bytes.lower``, so the term's words there are its words in the raw line,
    with only non-letters and escapes between them. Other lines are always decoded.
    """
    try:
        data = Path(path).read_bytes()
    except OSError:
        return [False] * len(terms)
    lower = data.lower()
    starts = LineSource(data).starts
    unsure: set[int] = set()
    if not data.isascii() or b"\\u" in data:
        unsure = {bisect_right(starts, m.start()) for m in _UNSURE_LINE.finditer(data)}
    lines = [
        unsure | {bisect_right(starts, m.start()) for m in _raw_pattern(term.words).finditer(lower)}
        for term in terms
    ]
    if not any(lines):
        return [False] * len(terms)
    try:
        entries = parse_session(data, path).entries
    except StoreError:
        return [False] * len(terms)
    out = []
    for term, numbers in zip(terms, lines, strict=True):
        pattern = term.pattern()
        out.append(any(pattern.search(fold(entry_text(e))) for e in entries if e.line in numbers))
    return out


def _folded_fields(summary: SessionSummary) -> list[tuple[str, str]]:
    """(field, its words folded, each after a space) in the order a query word is looked for.

    ``" " + word`` in it is then "a word of the field starts with ``word``", as in the text index.
    """
    fields = [("name", summary.name or "")]
    fields.extend(("label", label) for _, label in summary.labels)
    fields.append(("first message", summary.first_message))
    fields.append(("cwd", summary.cwd))
    fields.append(("file", Path(summary.path).name))
    out = []
    for name, value in fields:
        words = words_of(value)
        if words:
            out.append((name, " " + " ".join(words) + " "))
    return out


def _around(text: str, patterns: list[re.Pattern[str]], margin: int = 2048) -> str:
    """The whole lines of ``text`` within ``margin`` characters of the first match of ``patterns``:
    what a snippet is cut from, redacted without redacting a 50 KB tool output for it (whole
    lines, and a margin far wider than the snippet, so no secret around it is cut in two)."""
    if len(text) <= 4 * margin:
        return text
    folded = fold(text)
    if len(folded) != len(text):
        folded = text.lower()
    position = min((m.start() for p in patterns if (m := p.search(folded))), default=0)
    start = text.rfind("\n", 0, max(0, position - margin)) + 1
    end = text.find("\n", position + margin)
    return text[start : end if end >= 0 else len(text)]


def _snippet(text: str, patterns: list[re.Pattern[str]], width: int = 160) -> str:
    """About ``width`` characters of ``text`` around the first match of ``patterns`` (on folded text)."""
    flat = " ".join(text.split())
    folded = fold(flat)
    if len(folded) != len(flat):  # folding changed the length (a ligature, ß): find the match in lower case
        folded = flat.lower()
    position = min((m.start() for p in patterns if (m := p.search(folded))), default=0)
    start = max(0, position - width // 3)
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")

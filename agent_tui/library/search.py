"""The session library: a listing of every session and full-text search over them.

The session files stay the source of truth. Beside them, in the data dir, a
small SQLite database (``index/library-v{INDEX_VERSION}.sqlite3``) caches what the picker
needs per file (name, cwd, first message, last activity, size, entry and
branch counts, labels, ``parentSession``) and an FTS5 index of the text of
every entry (message text, thinking, tool calls and their output, summaries).
It can be deleted at any time and is rebuilt on the next refresh.

Refreshing stats every file and compares size, mtime and the header line with
what the cache saw. Session files only grow, so a file that grew has only its
new lines indexed; a file that was replaced or shrank is indexed again, and a
file that vanished is forgotten. A listing (``refresh(text=False)``) brings only
the summaries up to date; the text of what it read is indexed by the next
refresh with text, before a search. The text goes into one contentless FTS table,
``text``, that keeps no positions (``detail=none``) and has prefix indexes: it
answers "which sessions contain a word starting with ..." from a few thousand
rows, which is what makes a search on every keystroke cheap. A phrase (two
words or more) is asked of it as its words, all present; the sessions that
hold them all are then read back, best first and only as many as the results
need, and kept if an entry's text holds the words adjacent and in order
(:meth:`Library._verify`: a regex on the raw bytes picks the lines worth
decoding). Positions are not stored: they made the index ten times larger.
Where in a session a hit is (the entry and a snippet) is found afterwards by
reading that one file (:meth:`Library.locate`).

Query syntax (:mod:`agent_tui.library.search_query`): words, all of which must
occur in the session (in its name, a label, the first message, the cwd, the
file name or the text of any entry); each word matches the start of a word
there (a one-letter word, a whole word). Words are runs of letters and digits:
``snake_case`` is two words. Case and accents are ignored. ``"two words"`` is
a phrase (whole words, adjacent, in order; an open quote runs to the end and
its last word is a prefix), ``-word`` or ``-"two words"`` leaves sessions out.

The code is split by what it does; this module runs a parsed query
(:class:`Library`) and re-exports the public names:
:mod:`~agent_tui.library.search_summary` (the per-file session summary),
:mod:`~agent_tui.library.search_text` (what text of an entry is indexed,
redacted), :mod:`~agent_tui.library.search_index` (the SQLite database:
open, repair, refresh) and :mod:`~agent_tui.library.search_match` (phrase
checks on the files, snippets).
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from agent_tui.library.search_index import (
    IndexDatabase,
    RefreshStats,
    _repairs_damage,
    default_db_path,
    index_error_reason,
)
from agent_tui.library.search_match import (
    _around,
    _Cache,
    _Check,
    _file_holds,
    _folded_fields,
    _snippet,
    _tokenize,
)
from agent_tui.library.search_query import Term, fold, parse_query, query_words, words_of
from agent_tui.library.search_summary import SearchHit, SessionNode, SessionSummary, group_forks, summarize
from agent_tui.library.search_text import _shown, entry_text
from agent_tui.store.errors import StoreError
from agent_tui.store.reader import parse_session
from agent_tui.store.record import Entry

#: Weights of where a query word matched, for ranking.
WEIGHTS = {"name": 8.0, "label": 6.0, "first message": 4.0, "cwd": 2.0, "file": 2.0, "text": 1.0}
#: Verifications remembered (file, term -> found) until the next refresh, for typing.
VERIFIED_MAX = 100_000


class Library(IndexDatabase):
    """The sessions under ``roots`` (folders of session files), with a search index.

    ``nested``: also look one level down (the data dir keeps a folder per cwd).
    """

    # -- reading ---------------------------------------------------------------------------------

    @_repairs_damage
    def _load(self) -> _Cache:
        cache = self._cache
        if cache is None:
            summaries: dict[int, SessionSummary] = {}
            for file_id, path, info in self.db.execute("SELECT id, path, info FROM files"):
                if self._under_roots(path):
                    summaries[file_id] = SessionSummary.from_json(json.loads(info))
            chunk_files = {
                chunk: file_id
                for chunk, file_id in self.db.execute("SELECT id, file_id FROM chunks")
                if file_id in summaries
            }
            folded = {file_id: _folded_fields(s) for file_id, s in summaries.items()}
            cache = self._cache = _Cache(summaries, chunk_files, folded, {}, {})
        return cache

    def sessions(self) -> list[SessionSummary]:
        """Every session under the roots (as of the last refresh), most recent activity first."""
        return sorted(self._load().summaries.values(), key=lambda s: s.modified, reverse=True)

    def tree(self) -> list[SessionNode]:
        """The sessions with their forks grouped under them."""
        return group_forks(self._load().summaries.values())

    @_repairs_damage
    def search(self, query: str, limit: int = 50, *, locate: int = 0) -> list[SearchHit]:
        """Sessions holding every word and phrase of ``query`` and none it excludes, best first
        (then most recent). Any text is a query (see :mod:`agent_tui.library.search_query`): this
        returns hits or an empty list, it does not raise on what the text holds.

        ``locate``: find the entry and a snippet for the first that many hits
        (reads those files; the picker can call :meth:`locate` for rows it shows).
        """
        cache = self._load()
        summaries = cache.summaries
        parsed = parse_query(query)
        if not parsed:
            hits = [
                SearchHit(s, 0.0, {})
                for s in sorted(summaries.values(), key=lambda s: s.modified, reverse=True)
            ]
            return hits[:limit]
        chunk_files = cache.chunk_files
        wanted = parsed.wanted
        matched: dict[int, dict[str, str]] | None = None  # None: every session so far
        # terms the index only narrows down (phrases): file -> (term, wanted), checked on the file
        unsure: dict[int, list[tuple[_Check, bool]]] = {}
        for term in wanted:
            in_text, check = self._text_matches(term, chunk_files)
            probe, key = term.probe, term.key
            holding: dict[int, dict[str, str]] = {}
            for file_id in summaries if matched is None else matched:
                where = next((f for f, value in cache.folded[file_id] if probe in value), None)
                if where is None and file_id in in_text:
                    where = "text"
                    if check is not None:
                        unsure.setdefault(file_id, []).append((check, True))
                if where is not None:
                    fields = holding[file_id] = {} if matched is None else matched[file_id]
                    fields[key] = where
            if not holding:
                return []
            matched = holding
        if matched is None:  # only exclusions
            matched = {file_id: {} for file_id in summaries}
        for term in parsed.excluded:
            in_text, check = self._text_matches(term, chunk_files)
            probe = term.probe
            kept: dict[int, dict[str, str]] = {}
            for file_id, fields in matched.items():
                if any(probe in value for _, value in cache.folded[file_id]):
                    continue
                if file_id in in_text:
                    if check is None:
                        continue
                    unsure.setdefault(file_id, []).append((check, False))
                kept[file_id] = fields
            matched = kept
        ranked: list[tuple[SearchHit, int]] = []
        for file_id, fields in matched.items():
            summary = summaries[file_id]
            score = sum(WEIGHTS[w] for w in fields.values())
            hit = SearchHit(summary, score, fields)
            if "label" in fields.values():
                label_term = next(t for t in wanted if fields.get(t.key) == "label")
                for entry_id, label in summary.labels:
                    if label_term.probe in " " + " ".join(words_of(label)) + " ":
                        hit.entry_id, hit.snippet = entry_id, label
                        break
            ranked.append((hit, file_id))
        ranked.sort(key=lambda h: (h[0].score, h[0].session.modified), reverse=True)
        found: list[SearchHit] = []
        for hit, file_id in ranked:  # best first: read only the files the results need
            if len(found) >= limit:
                break
            checks = unsure.get(file_id)
            if checks and not self._verify(cache, file_id, checks):
                continue
            found.append(hit)
        for hit in found[:locate]:
            self.locate(hit, query)
        return found

    def _text_matches(self, term: Term, chunk_files: dict[int, int]) -> tuple[set[int], _Check | None]:
        """The files whose text may hold ``term``, and what to check on them (None: they do).

        ``text`` keeps no positions: for a phrase it gives the files holding all its words,
        to be read back (:meth:`_verify`); for a word, the answer.
        """
        words, check = term.words, _Check(term.words, term.prefix) if len(term.words) > 1 else None
        for _ in range(2):
            pattern = " ".join(f'"{w}"' for w in words) + ("*" if term.prefix else "")  # no quote in words
            try:
                rows = self.db.execute("SELECT rowid FROM text WHERE text MATCH ?", (pattern,))
                return {f for (rowid,) in rows if (f := chunk_files.get(rowid)) is not None}, check
            except sqlite3.OperationalError:
                # a word the tokenizer splits in two (a character unicode61 does not know) is a
                # phrase to FTS5: ask for its tokens, and check them as a phrase on the files
                words, gap = _tokenize(term.words)
                check = _Check(words, term.prefix, gap)
                if not words:
                    break
        return set(), None

    def _verify(self, cache: _Cache, file_id: int, checks: list[tuple[_Check, bool]]) -> bool:
        """Read the file: does an entry's text hold each wanted phrase, and none of the others?"""
        verified, missing = cache.verified, cache.missing.setdefault(file_id, [])
        todo = []
        for check, _ in checks:
            if (file_id, check) not in verified:
                if any(check.implies(shorter) for shorter in missing):  # typing on: still not there
                    verified[file_id, check] = False
                else:
                    todo.append(check)
        if todo:
            if len(verified) > VERIFIED_MAX:
                verified.clear()
                cache.missing.clear()
                missing = cache.missing[file_id] = []
            for check, holds in zip(todo, _file_holds(cache.summaries[file_id].path, todo), strict=True):
                verified[file_id, check] = holds
                if not holds:
                    missing.append(check)
        return all(verified[file_id, check] == want for check, want in checks)

    def locate(self, hit: SearchHit, query: str) -> SearchHit:
        """Find the entry of ``hit``'s session that best matches ``query`` (latest first) and a snippet."""
        parsed = parse_query(query)
        terms = parsed.wanted
        if not terms or (hit.entry_id is not None and hit.snippet):
            return hit
        try:
            data = Path(hit.session.path).read_bytes()
            loaded = parse_session(data, hit.session.path)
        except (OSError, StoreError):
            return hit
        patterns = [t.pattern() for t in terms]
        raw = [re.compile(re.escape(w.encode()), re.IGNORECASE) for w in parsed.words() if w.isascii()]
        best: tuple[int, Entry, str] | None = None
        for entry in reversed(loaded.entries):
            if raw and entry.message_raw is not None:
                message = bytes(entry.message_raw)
                if message.isascii() and not any(p.search(message) for p in raw):
                    continue  # cheap test on the raw JSON first
            text = entry_text(entry)
            if not text:
                continue
            folded = fold(text)
            found = sum(1 for p in patterns if p.search(folded))
            if found and (best is None or found > best[0]):
                best = (found, entry, text)
                if found == len(patterns):
                    break
        if best is not None:
            hit.entry_id = best[1].id
            hit.snippet = _snippet(_shown(_around(best[2], patterns)), patterns)
        return hit


__all__ = [
    "Library",
    "RefreshStats",
    "SearchHit",
    "SessionNode",
    "SessionSummary",
    "default_db_path",
    "entry_text",
    "fold",
    "group_forks",
    "index_error_reason",
    "query_words",
    "summarize",
]

"""The project's files for the composer's ``@`` picker and Tab completion, matched fuzzily and fast.

The list comes from the tools' walker (:func:`agent_tui.agent.tools.walk.list_tree`, so
``.gitignore`` is respected as ``find`` and ``grep`` respect it), built once in a thread and
refreshed when the picker opens after :data:`STALE_AFTER` seconds. Matching never loops over the
files in Python: every path (and every file name) sits on its own line of one lower-cased
string, and each ranking tier is one regular-expression scan of it that starts with a literal
(so the engine skips ahead), best tier first, stopping once a page of results is found. On 100,000 files a keystroke costs a few milliseconds (``bench/composer_bench.py``).

Tiers: the file name starts with the query; the file name holds it; the path holds it; the
file name holds its letters in order; the path holds them in order. Within a tier shorter paths
come first. A query with ``/`` is matched against the whole path from the first tier on.
"""

from __future__ import annotations

import bisect
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agent_tui.agent.tools.walk import list_tree

#: After this many seconds the next ``@`` lists the files again (in the background).
STALE_AFTER = 10.0
#: The most results a query returns (the picker shows a window of them).
LIMIT = 50
#: Characters scanned between two looks at the clock (``search_within``).
CHUNK = 256 * 1024


@dataclass(frozen=True, slots=True)
class FileMatch:
    path: str  # relative, posix; directories end with "/"
    tier: int


class FileIndex:
    """Files and folders under ``root``; ``ensure()`` builds the list (blocking: call it in a thread)."""

    def __init__(self, root: Path, *, include_dirs: bool = True) -> None:
        self.root = root
        self.include_dirs = include_dirs
        self._lock = threading.Lock()
        self._paths: list[str] = []
        self._blobs: tuple[str, list[int], str, list[int]] = ("", [], "", [])
        self._cache: dict[str, tuple[str, list[FileMatch]]] = {}
        self._chunks: list[tuple[int, int]] = []
        self._name_chunks: list[tuple[int, int]] = []
        self.built_at: float | None = None
        self.build_seconds = 0.0

    @property
    def ready(self) -> bool:
        return self.built_at is not None

    @property
    def stale(self) -> bool:
        return self.built_at is None or time.monotonic() - self.built_at > STALE_AFTER

    def __len__(self) -> int:
        return len(self._paths)

    def ensure(self) -> None:
        """List the files now (blocking) unless a fresh list is there."""
        if not self.stale:
            return
        self.rebuild()

    def rebuild(self) -> None:
        started = time.perf_counter()
        try:
            files, dirs = list_tree(self.root)
        except OSError:
            files, dirs = [], []
        paths = files + ([d + "/" for d in dirs] if self.include_dirs else [])
        self.set_paths(paths)
        self.build_seconds = time.perf_counter() - started

    def set_paths(self, paths: list[str]) -> None:
        """Index these paths (shortest first, so each tier's scan meets the best candidates first)."""
        ordered = sorted(paths, key=lambda p: (len(p), p))
        lines = [p.lower().replace("\n", " ") for p in ordered]
        names = [_name(line) for line in lines]
        blob = "\n" + "\n".join(lines) + "\n"
        name_blob = "\n" + "\n".join(names) + "\n"
        with self._lock:
            self._paths = ordered
            self._blobs = (blob, _line_starts(blob), name_blob, _line_starts(name_blob))
            self._chunks = _chunks(blob)
            self._name_chunks = _chunks(name_blob)
            self.built_at = time.monotonic()

    def search(self, query: str, limit: int = LIMIT) -> list[FileMatch]:
        """The best ``limit`` paths for ``query`` (empty: the shortest paths)."""
        return self.search_within(query, limit)[0]

    def search_within(
        self, query: str, limit: int = LIMIT, budget: float | None = None
    ) -> tuple[list[FileMatch], bool]:
        """Like :meth:`search`, but stop after ``budget`` seconds with what was found so far; the
        flag says whether the answer is complete (the picker then asks again once typing pauses)."""
        with self._lock:
            paths, blobs = self._paths, self._blobs
        if not paths:
            return [], True
        q = query.lower().replace("\n", " ")
        if not q:
            return [FileMatch(p, 0) for p in paths[:limit]], True
        blob, starts, name_blob, name_starts = blobs
        cached = self._cache.get(q)
        if cached is not None and cached[0] is blob:
            return cached[1][:limit], True
        deadline = time.perf_counter() + budget if budget is not None else None
        seen: set[int] = set()
        out: list[FileMatch] = []
        for tier, (pattern, on_names) in enumerate(_tiers(q, blob, len(paths))):
            text, at = (name_blob, name_starts) if on_names else (blob, starts)
            chunks = self._name_chunks if on_names else self._chunks
            for pos, endpos in chunks:
                for m in pattern.finditer(text, pos, endpos):
                    line = (
                        bisect.bisect_right(at, m.end() - 1) - 1
                    )  # the match's last character is on its line
                    if line in seen:
                        continue
                    seen.add(line)
                    out.append(FileMatch(paths[line], tier))
                    if len(out) >= limit:
                        return self._remember(q, blob, out), True
                if deadline is not None and time.perf_counter() > deadline:
                    return out, False
        return self._remember(q, blob, out), True

    def _remember(self, q: str, blob: str, out: list[FileMatch]) -> list[FileMatch]:
        """Keep the last few answers: Backspace goes back to a query already answered."""
        if len(self._cache) > 64:
            self._cache.clear()
        self._cache[q] = (blob, out)
        return out


def _name(line: str) -> str:
    """The last part of a path ("dir/" keeps its slash off: "dir")."""
    return line.rstrip("/").rsplit("/", 1)[-1]


def _chunks(blob: str, size: int = CHUNK) -> list[tuple[int, int]]:
    """(pos, endpos) ranges of about ``size`` characters that start and end on a newline (each
    line whole in one range), so a scan can look at the clock between them."""
    out: list[tuple[int, int]] = []
    pos = 0
    while pos < len(blob) - 1:
        cut = blob.find("\n", min(pos + size, len(blob) - 1))
        end = len(blob) - 1 if cut < 0 else cut
        out.append((pos, end + 1))
        pos = end
    return out


def _line_starts(blob: str) -> list[int]:
    """Where each line's text begins (after its leading newline)."""
    starts = [m.end() for m in re.finditer("\n", blob)]
    return starts[:-1]


def _tiers(q: str, blob: str, lines: int) -> list[tuple[re.Pattern[str], bool]]:
    """(pattern, on the names blob?) per tier. Literal patterns and patterns that start with a
    literal let the regex engine skip ahead; a fuzzy match never crosses a newline."""
    e = re.escape
    # Each letter's first place after the one before, possessive (never backtracking). A rare
    # first letter: start at its occurrences (a[^b\n]*+b...); a common one: at each line's start
    # (\n[^a\n]*+a...), so a line is read once however often the letter appears in it.
    steps = "".join(f"[^{e(c)}\n]*+{e(c)}" for c in q[1:])
    rare = blob.count(q[0]) < lines
    fuzzy = e(q[0]) + steps if rare else f"\n[^{e(q[0])}\n]*+{e(q[0])}" + steps
    if "/" in q:  # a path query: the whole path counts
        return [
            (re.compile("\n" + e(q)), False),
            (re.compile(e(q)), False),
            (re.compile(fuzzy), False),
        ]
    return [
        (re.compile("\n" + e(q)), True),  # the name starts with it
        (re.compile(e(q)), True),  # the name holds it
        (re.compile(e(q)), False),  # the path holds it
        (re.compile(fuzzy), True),  # the name has its letters in order
        (re.compile(fuzzy), False),  # the path has them
    ]


__all__ = ["LIMIT", "STALE_AFTER", "FileIndex", "FileMatch"]

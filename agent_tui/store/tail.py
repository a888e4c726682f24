"""A session file read from its end: the leaf, and the branch up from it, without the rest.

pi's leaf is the last entry in file order, so the newest things of a session are at the end of
its file. :class:`TailReader` reads whole lines backwards (bounded ``os.pread`` of 1 MiB blocks,
growing for a longer line) and makes each the entry a full parse makes of it (``reader.line_entry``:
the same decode, repairs and rules), so what it finds is what the reader finds:

- :func:`last_entry`: the leaf, reading only the lines after it (a torn or bad last line, blank
  lines, a second header after it are skipped as the reader skips them);
- :func:`leaf_path`: the active branch from the leaf up, as ``SessionIndex.path_to`` walks it (a
  later duplicate id shadows an earlier one: read from the end, the first one met wins; a dangling
  parent ends the branch; a parentId cycle is cut where the walk comes back), stopped at the first
  kept entry of the latest compaction on it (``firstKeptEntryId``), or at its root.

Line numbers are counted from the end while reading (``Entry.line`` is the line's number from the
file's end, -1 for the last); :meth:`TailPath.number` counts the newlines before the earliest entry
read to turn them into the file's numbers when they are wanted.

Only v3 files whose first line is their header (no byte order mark) are read this way: for anything
else these return None and the caller reads the file from its start. Nothing is mapped (a file
truncated while it is read is :class:`ConcurrentChangeError`, never a SIGBUS), nothing is written.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import msgspec

from agent_tui.store.errors import ConcurrentChangeError
from agent_tui.store.reader import CURRENT_VERSION, LoadWarning, line_entry
from agent_tui.store.record import Entry, JSONObject

BLOCK = 1 << 20
_decode = msgspec.json.Decoder().decode


class TailPath(msgspec.Struct):
    header: JSONObject
    leaf_id: str | None
    entries: list[Entry]  # the branch's entries read, root side first, the leaf last
    complete: bool  # the walk reached the branch's root: ``entries`` is all of ``path_to(leaf)``
    start: int  # the byte offset of the earliest line read
    lines_read: int  # the lines from ``start`` to the end of the file

    def number(self, reader: TailReader) -> None:
        """Give the entries the file's line numbers (reads the file up to ``start`` once)."""
        before = reader.newlines_before(self.start)
        for entry in self.entries:
            if entry.line < 0:
                entry.line = before + 1 + self.lines_read + entry.line


class TailReader:
    """The lines of one session file, last first (see the module's docstring)."""

    def __init__(self, fd: int, path: Path, size: int, header: JSONObject, header_end: int) -> None:
        self.fd = fd
        self.path = path
        self.size = size
        self.header = header
        self.header_end = header_end  # where the header line ends (after its newline)

    @classmethod
    def open(cls, path: Path) -> TailReader | None:
        """The reader of ``path``, None when it is not a v3 file with its header on line 1 (or cannot
        be opened): read it from the start then."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            size = os.fstat(fd).st_size
            head = os.pread(fd, min(size, 1 << 16), 0)
            end = head.find(b"\n")
            while end < 0 and len(head) < size:  # a header longer than 64 KiB
                more = os.pread(fd, min(size - len(head), len(head)), len(head))
                if not more:
                    break
                head += more
                end = head.find(b"\n", len(head) - len(more))
            if end < 0 or head.startswith(b"\xef\xbb\xbf"):
                raise ValueError
            header = _decode(head[:end])
            if (
                not isinstance(header, dict)
                or header.get("type") != "session"
                or not isinstance(header.get("id"), str)
                or header.get("version", 1) != CURRENT_VERSION
                or type(header.get("version")) is not int
            ):
                raise ValueError
        except (OSError, ValueError, msgspec.DecodeError, RecursionError):
            os.close(fd)
            return None
        return cls(fd, path, size, header, end + 1)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def __enter__(self) -> TailReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, start: int, stop: int) -> bytes:
        parts: list[bytes] = []
        at = start
        while at < stop:
            try:
                chunk = os.pread(self.fd, stop - at, at)
            except OSError as e:
                raise ConcurrentChangeError(f"{self.path}: cannot be read at byte {at}: {e.strerror}") from e
            if not chunk:
                raise ConcurrentChangeError(
                    f"{self.path}: shorter than when it was opened (truncated by another program?); open it again"
                )
            parts.append(chunk)
            at += len(chunk)
        return b"".join(parts)

    def lines(self) -> Iterator[tuple[int, int, bytes]]:
        """``(number from the end, start offset, bytes)`` of each line after the header, the last
        first (-1 is the last line; a file ending with a newline has no empty line after it)."""
        pos, number, block = self.size, 0, BLOCK
        pieces: list[bytes] = []  # the end of a line whose start is not read yet, last read first
        last = True  # the first piece met is no line when it is empty (the file ends with a newline)
        while pos > self.header_end:
            start = max(self.header_end, pos - block)
            chunk = self._read(start, pos)
            end = len(chunk)
            cut = chunk.rfind(b"\n", 0, end)
            if cut < 0:
                block = min(block * 2, 64 << 20)  # a long line: read it in fewer, bigger blocks
            while cut >= 0:
                pieces.append(chunk[cut + 1 : end])
                line = pieces[0] if len(pieces) == 1 else b"".join(reversed(pieces))
                pieces = []
                if line or not last:
                    number -= 1
                    yield number, start + cut + 1, line
                last = False
                end = cut
                cut = chunk.rfind(b"\n", 0, end)
            pieces.append(chunk[:end])
            pos = start
        line = b"".join(reversed(pieces))
        if line or not last:
            yield number - 1, self.header_end, line

    def entries(self) -> Iterator[tuple[int, Entry]]:
        """``(start offset, entry)`` of each line that is an entry, the last first; ``entry.line``
        counts from the end (see :meth:`lines`)."""
        ignored: list[LoadWarning] = []  # what is wrong with a line: the reader's to tell
        size = self.size
        torn_end = size if self._read(size - 1, size) != b"\n" else -1
        for number, start, line in self.lines():
            end = start + len(line)
            entry = line_entry(line, number, end == torn_end, len(line), ignored)
            ignored.clear()
            if entry is not None:
                yield start, entry

    def newlines_before(self, offset: int) -> int:
        count, at, step = 0, 0, 8 << 20
        while at < offset:
            stop = min(offset, at + step)
            count += self._read(at, stop).count(b"\n")
            at = stop
        return count


def last_entry(path: Path) -> tuple[JSONObject, Entry | None] | None:
    """The header and the last entry of ``path`` (pi's leaf; None when it has none), read from the
    end; None when the file is not one :class:`TailReader` reads (read it from the start)."""
    reader = TailReader.open(path)
    if reader is None:
        return None
    with reader:
        for _, entry in reader.entries():
            return reader.header, entry
        return reader.header, None


def leaf_path(reader: TailReader, *, to_root: bool = False) -> TailPath:
    """The active branch read from the end (see the module's docstring): from the leaf up to the
    latest compaction's first kept entry (with ``to_root``: up to the root)."""
    seen: dict[str, Entry] = {}  # id -> the latest entry with it (the first met from the end)
    branch: list[Entry] = []
    on_branch: set[str] = set()
    want: str | None = None  # the id the walk waits for: the parent of the last entry taken
    kept: str | None = None  # the first kept entry of the latest compaction on the branch
    compacted = False
    at_kept = False  # stopped at ``kept``: the entries above it are not read
    start, read = reader.size, 0

    def take(entry: Entry) -> bool:
        """Add ``entry`` to the branch; True when the walk is over."""
        nonlocal want, kept, compacted, at_kept
        if entry.id in on_branch:
            return True  # a cycle: the walk came back; cut here, as the index does
        branch.append(entry)
        on_branch.add(entry.id)
        want = entry.parent_id
        if compacted and entry.id == kept and not to_root:
            at_kept = want is not None
            return True
        if entry.type == "compaction" and not compacted:
            compacted = True
            first = entry.data.get("firstKeptEntryId")
            kept = first if isinstance(first, str) else None
        return want is None

    done = False
    for offset, entry in reader.entries():
        start, read = offset, -entry.line
        if entry.id in seen:
            continue  # an earlier entry with a later one's id: shadowed
        seen[entry.id] = entry
        if not branch or entry.id == want:
            done = take(entry)
        while not done and want in seen:  # a parent written after its child: read already
            done = take(seen[want])
        if done:
            break
    branch.reverse()
    leaf_id = branch[-1].id if branch else None
    return TailPath(reader.header, leaf_id, branch, not at_kept, start, read)

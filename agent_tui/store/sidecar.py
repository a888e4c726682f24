"""The sidecar offset index: open a session without parsing it.

Beside ``DIR/NAME.jsonl`` lives ``DIR/.NAME.jsonl.idx`` (hidden, and no ``.jsonl`` suffix, so pi's
listing and ours never take it for a session). It is JSON lines, append-only like the session:

- line 1, its header: a hash of the session's header line, and where that line ends;
- then one record per line of the session that is an entry (line number, byte offset and length,
  id, parentId, type, role and whether the message passes through undecoded, where its ``message``
  value lies in the line, its ``toolName``: a session's plan is found without reading every tool
  result) or that loading warns about (the warning's text);
- after each batch of records (a build, an extension, one :class:`Session` append) a seal: how far
  the records cover the session (byte offset and line), the session file's size and mtime then, a
  hash of the 4 KiB before the covered end, a CRC-32 of every sidecar byte before the seal, and a
  CRC-32 of the covered session bytes.

Opening (:func:`load`) checks the last seal: the sidecar's CRC, the same file size, mtime, ctime
and inode, the same tail bytes (and, when the file grew, the session CRC of the covered part).
Then the entries are built from the records over the open session file, and each line is read
with one bounded ``os.pread`` of its byte range when it is first used, so nothing but the lines
someone reads (the active path's message bytes when they are sent or shown, labels and names) is
touched. A longer file whose covered part still ends with the hashed bytes was
appended to without the sidecar (pi, a kill between the two appends): only the new lines are parsed
(by the reader, as a full parse would), and recorded. Anything else (a shorter file, the same size
with another mtime, a sidecar of another file, garbage) rebuilds it from a full parse. When it
cannot be written the full parse is used as it is: a read-only folder opens as before.

A same-size edit that restores the mtime (``touch -r``) cannot restore the ctime, which the kernel
sets to the clock on every write or metadata change: the same size and mtime with another ctime
or inode (that edit, but also ``chmod``, ``cp -p``, a restore from backup) checks the CRC of the
whole covered part; equal, the sidecar is sealed again with the new ctime; different, rebuilt. Not
noticed: an edit that also brings back the ctime (setting the system clock back around it, or
writing the disk beneath the filesystem).

Only v3 files without a byte order mark use it; everything else is read by the reader alone. The
session file itself is never touched here. A file truncated or rewritten by another program while
it is open makes the next entry read fail with one line naming the file and the line
(:class:`~agent_tui.store.errors.ConcurrentChangeError`): a read that comes back short, or a line
no longer ended by its newline. Nothing is mapped, so it is never a SIGBUS
(``AGENT_TUI_SIDECAR=off`` opens by a full parse into memory, as before).
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import overload

import msgspec

from agent_tui.store.errors import ConcurrentChangeError, StoreError
from agent_tui.store.reader import (
    CURRENT_VERSION,
    LoadedFile,
    LoadWarning,
    _decode_head,
    parse_session,
    read_file,
)
from agent_tui.store.record import Entry, JSONObject, LineSource

try:  # hashlib's own blake2b, without hashlib loading OpenSSL first (a few ms of every ``context``)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

SIDECAR_VERSION = 1
TAIL_BYTES = 4096
#: A file bigger than this is parsed a chunk of lines at a time when its sidecar is built.
REBUILD_CHUNK = 32 << 20
#: How much of it at a time (at most ``REBUILD_CHUNK``): on the 1 GB session 8 MiB chunks peak at
#: 153 MB and take 2.4 s of CPU, 32 MiB ones at 253 MB and 3.0 s (fewer fresh pages to fault in).
REBUILD_PIECE = 8 << 20


class SidecarHeader(msgspec.Struct):
    agentTuiSidecar: int
    header: str  # hash of the session's first line, its newline included
    headerEnd: int


class EntryRecord(msgspec.Struct, array_like=True, tag=0, tag_field="k", gc=False):
    line: int
    off: int
    len: int
    id: str
    parent: str | None
    type: str
    role: str | None
    plain: bool
    moff: int  # where the ``message`` value starts in the line; -1: none (read through ``data``)
    mlen: int
    tool: str | bool | None = False  # ``message.toolName`` (None: none; False: not recorded, read)
    utf8: bool = False  # the ``message`` bytes were valid UTF-8 when recorded (False: not checked)


class WarningRecord(msgspec.Struct, array_like=True, tag=1, tag_field="k", gc=False):
    line: int
    off: int
    len: int
    text: str


class Seal(msgspec.Struct, array_like=True, tag=2, tag_field="k", gc=False):
    end: int  # the session bytes the records cover
    line: int  # the number of the line ending there
    size: int  # the session file's size and mtime when sealed
    mtime: int
    tail: str  # hash of the covered bytes' last 4 KiB
    crc: int  # CRC-32 of the sidecar's bytes before this line
    scrc: int  # CRC-32 of the session's covered bytes (checked when the file grew without us)
    ctime: int = 0  # the file's ctime and inode when sealed: another, with the same size and
    ino: int = 0  # mtime, checks ``scrc`` (0: an older seal, checked once too)


Record = EntryRecord | WarningRecord

_encode = msgspec.json.Encoder().encode
_decode_header = msgspec.json.Decoder(SidecarHeader).decode
_decode_records = msgspec.json.Decoder(EntryRecord | WarningRecord | Seal).decode_lines
_decode_any = msgspec.json.Decoder().decode


class _Source:
    """The session file, open for reading by bounded reads of byte ranges (``os.pread``).

    Never a mapping: a file that another program truncates while it is open reads short here, and
    that is an error naming the file, where a mapping would kill the process with SIGBUS. Slicing
    gives ``bytes`` (``src[a:b]``), indexing one byte's value. The descriptor is closed when the
    last entry that reads through it is gone."""

    __slots__ = ("_block", "_block_at", "fd", "path", "size")

    BLOCK = 1 << 17  # short lines come out of the last 128 KiB block read (a projection reads in order)

    def __init__(self, fd: int, path: Path, size: int) -> None:
        self.fd = fd
        self.path = path
        self.size = size  # the file's size when opened
        self._block = b""
        self._block_at = 0

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError, TypeError):
            os.close(self.fd)

    def __len__(self) -> int:
        return self.size

    def _pread(self, start: int, want: int) -> bytes:
        """Up to ``want`` bytes from ``start``: fewer only at the end of the file."""
        parts: list[bytes] = []
        got = 0
        while got < want:
            try:
                chunk = os.pread(self.fd, min(want - got, 1 << 30), start + got)
            except OSError as e:
                raise ConcurrentChangeError(
                    f"{self.path}: cannot be read at byte {start + got}: {e.strerror}"
                ) from e
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def read(self, start: int, stop: int) -> bytes:
        """Bytes ``start`` to ``stop``, all of them, or :class:`ConcurrentChangeError`."""
        want = max(0, stop - start)
        at = self._block_at
        if at <= start and stop <= at + len(self._block):
            return self._block[start - at : stop - at]
        if want <= self.BLOCK // 4:
            at = start - start % self.BLOCK
            block = self._pread(at, max(self.BLOCK, stop - at))
            data = block[start - at : stop - at]
            if len(data) == want:  # a short read is never kept: the next read asks the file again
                self._block, self._block_at = block, at
        else:
            data = self._pread(start, want)
        if len(data) < want:
            raise ConcurrentChangeError(
                f"{self.path}: shorter than when it was opened (truncated by another program?); open it again"
            )
        return data

    def line(self, off: int, length: int, number: int, skip: int = 0, take: int = -1) -> bytes:
        """The line at ``off`` (``length`` bytes, its newline left out), or ``take`` bytes of it from
        ``skip`` on, checked to still end where it did: its newline is read with it (unless it was
        the unended last line when opened)."""
        end = off + length
        ended = end < self.size
        data = self.read(off + skip, end + 1 if ended else end)
        if ended and data[-1] != 0x0A:
            raise ConcurrentChangeError(
                f"{self.path}: line {number} changed on disk since it was opened "
                "(rewritten by another program?); open it again"
            )
        if take >= 0:
            return data[:take]
        return data[:-1] if ended else data

    def forget(self) -> None:
        """Drop the block read while opening: an entry read later reads the file as it is then."""
        self._block, self._block_at = b"", 0

    def crc(self, start: int, stop: int, value: int = 0) -> int:
        """CRC-32 of bytes ``start`` to ``stop``, read 4 MiB at a time."""
        step = 1 << 22
        for at in range(start, stop, step):
            value = zlib.crc32(self.read(at, min(stop, at + step)), value)
        return value

    @overload
    def __getitem__(self, key: int) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> bytes: ...
    def __getitem__(self, key: slice | int) -> bytes | int:
        if isinstance(key, int):
            return self.read(key, key + 1)[0]
        start, stop, _ = key.indices(self.size)
        return self.read(start, stop)


class MappedEntry(Entry, gc=False, eq=False):
    """An entry read through the sidecar: its role came from the record, and its line and its
    ``message`` bytes are read from the session file (one bounded read each) only when asked for."""

    _src: _Source | None = None
    _off: int = 0
    _len: int = 0
    _moff: int = -1
    _mlen: int = 0
    _utf8: bool = False  # its record says the ``message`` bytes are valid UTF-8

    @property
    def data(self) -> JSONObject:
        if self._data is None and self.raw is None and self._src is not None:
            self.raw = self._src.line(self._off, self._len, self.line)
        return Entry.data.fget(self)  # type: ignore[attr-defined,no-any-return]

    @property
    def message_raw(self) -> msgspec.Raw | None:
        if self._data is not None:
            return None
        if self._message_raw is None and self._moff >= 0 and self._src is not None:
            if isinstance(self.raw, bytes):  # the line was read already (by ``data``)
                raw = self.raw[self._moff : self._moff + self._mlen]
            else:  # read on to the line's newline, which says the line is still where it was
                raw = self._src.line(self._off, self._len, self.line, self._moff, self._mlen)
            self._message_raw = msgspec.Raw(raw)
        return self._message_raw

    def peek_message_raw(self) -> msgspec.Raw | None:
        if self._data is not None or self._message_raw is not None or self._moff < 0 or self._src is None:
            return self.message_raw
        if isinstance(self.raw, bytes):
            return msgspec.Raw(self.raw[self._moff : self._moff + self._mlen])
        return msgspec.Raw(self._src.line(self._off, self._len, self.line, self._moff, self._mlen))


#: :func:`write_messages` reads neighbouring messages in one read while the bytes between them are
#: at most this many, and one read spans at most ``READ_SPAN`` bytes.
READ_GAP = 1 << 16
READ_SPAN = 4 << 20


def copies_unread(entry: Entry) -> bool:
    """Whether :func:`write_messages` copies ``entry``'s ``message`` from the file: a mapped entry
    not decoded or read yet, whose record says those bytes are valid UTF-8 (checked when the
    record was written, so they are not decoded again to know)."""
    return (
        type(entry) is MappedEntry
        and entry._utf8
        and entry._data is None
        and entry._message_raw is None
        and entry._moff >= 0
        and entry._src is not None
        and not isinstance(entry.raw, bytes)
    )


def write_messages(
    items: Sequence[Entry | bytes | msgspec.Raw], write: Callable[[bytes | memoryview | msgspec.Raw], object]
) -> None:
    """Write ``items`` separated by commas: bytes as they are, an entry (:func:`copies_unread`) as
    its ``message`` bytes in the file, neighbours read in one read into one reused buffer (a few
    hundred reads for a 24 MB context, and no copy of it in memory). Each line is checked as
    ``MappedEntry.message_raw`` checks it: still ended by its newline, nothing read short
    (:class:`ConcurrentChangeError`). The entries are left as they were."""
    buf = bytearray()
    i, n = 0, len(items)
    while i < n:
        first = items[i]
        if i:
            write(b",")
        if type(first) is not MappedEntry:
            write(first)  # type: ignore[arg-type]  # bytes or Raw
            i += 1
            continue
        src = first._src
        assert src is not None
        start = first._off + first._moff
        stop = first._off + first._len + 1  # its newline too
        j = i + 1
        while j < n:
            e = items[j]
            if type(e) is not MappedEntry or e._src is not src:
                break
            at = e._off + e._moff
            end = e._off + e._len + 1
            if at < stop or at - stop > READ_GAP or end - start > READ_SPAN:
                break
            stop = end
            j += 1
        stop = min(stop, src.size)
        if len(buf) < stop - start:
            buf = bytearray(stop - start)
        with memoryview(buf) as view:
            got = 0
            while got < stop - start:
                try:
                    chunk = os.preadv(src.fd, [view[got : stop - start]], start + got)
                except OSError as err:
                    raise ConcurrentChangeError(
                        f"{src.path}: cannot be read at byte {start + got}: {err.strerror}"
                    ) from err
                if chunk <= 0:
                    raise ConcurrentChangeError(
                        f"{src.path}: shorter than when it was opened (truncated by another program?); "
                        "open it again"
                    )
                got += chunk
            for k in range(i, j):
                e = items[k]
                end = e._off + e._len  # type: ignore[union-attr]
                if end < src.size and view[end - start] != 0x0A:
                    raise ConcurrentChangeError(
                        f"{src.path}: line {e.line} changed on disk since it was opened "  # type: ignore[union-attr]
                        "(rewritten by another program?); open it again"
                    )
                at = e._off + e._moff - start  # type: ignore[union-attr]
                if k > i:
                    write(b",")
                write(view[at : at + e._mlen])  # type: ignore[union-attr]
        i = j


def sidecar_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.idx")


def enabled() -> bool:
    """Whether sessions are opened through their sidecar (``AGENT_TUI_SIDECAR=off``: never)."""
    return os.environ.get("AGENT_TUI_SIDECAR", "").strip().lower() not in ("off", "0", "no", "false")


def _hash(data: bytes | memoryview) -> str:
    return blake2b(data, digest_size=12).hexdigest()


def _tail_hash(view: memoryview | _Source, end: int) -> str:
    return _hash(view[max(0, end - TAIL_BYTES) : end])


class Sidecar:
    """The append side of one sidecar file, for :class:`Session` to record what it appends."""

    def __init__(self, path: Path, session_path: Path, size: int, crc: int, scrc: int, scrc_end: int) -> None:
        self.path = path
        self.session_path = session_path
        self._size = size  # the sidecar's size and CRC as this process last saw them
        self._crc = crc
        self._scrc = scrc  # the session's CRC up to ``_scrc_end``
        self._scrc_end = scrc_end

    def append_entry(self, line: bytes, line_no: int, end: int) -> None:
        """Record the entry just written as ``line`` (its newline included), ending at ``end``.
        Failing to write only leaves the sidecar behind the file, which the next open repairs."""
        length = len(line) - 1 if line.endswith(b"\n") else len(line)
        try:
            head = _decode_head(line)  # the newline is whitespace to the decoder
        except (msgspec.DecodeError, RecursionError):
            return
        if not isinstance(head.type, str) or not isinstance(head.id, str):
            return
        parent = head.parentId if isinstance(head.parentId, str) else None
        entry = Entry(head.type, head.id, parent, line_no, line, head.message or None)
        record = _entry_record(entry, line, 0, length, end - len(line), line_no)
        start = end - len(line)
        with contextlib.suppress(OSError):
            st = os.stat(self.session_path)
            with open(self.session_path, "rb") as f:
                scrc = self._scrc
                if self._scrc_end != start:  # a newline before ours, or lines another program wrote
                    f.seek(self._scrc_end)
                    scrc = zlib.crc32(f.read(max(0, start - self._scrc_end)), scrc)
                scrc = zlib.crc32(line, scrc)
                f.seek(max(0, end - TAIL_BYTES))
                tail = _hash(f.read(min(end, TAIL_BYTES)))
            self.write([record], end, line_no, st, tail, scrc)

    def write(
        self, records: list[Record], end: int, line: int, st: os.stat_result, tail: str, scrc: int
    ) -> None:
        """Append ``records`` and their seal in one write, unless another process appended to the
        sidecar since this one last saw it (its records stay; the next open extends them)."""
        body = b"".join(_encode(r) + b"\n" for r in records)
        crc = zlib.crc32(body, self._crc)
        seal = _encode(
            Seal(end, line, st.st_size, st.st_mtime_ns, tail, crc, scrc, st.st_ctime_ns, st.st_ino)
        )
        seal += b"\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            if os.fstat(fd).st_size != self._size:
                return
            os.write(fd, body + seal)
        finally:
            os.close(fd)
        self._size += len(body) + len(seal)
        self._crc = zlib.crc32(seal, crc)
        self._scrc, self._scrc_end = scrc, end


def _entry_record(entry: Entry, blob: bytes, begin: int, stop: int, offset: int, line_no: int) -> EntryRecord:
    """The record of ``entry``, read from ``blob[begin:stop]``, which is at ``offset`` in the session."""
    role = entry.role
    plain = entry._plain if entry.type == "message" else False
    moff, mlen = -1, 0
    utf8 = False
    raw = entry.message_raw
    if raw is not None:
        key = blob.find(b'"message":', begin, stop) + 10  # where it usually is, else anywhere
        found = key if key >= 10 and blob.startswith(raw, key) else blob.find(raw, begin, stop)
        if found >= 0:
            moff, mlen = found - begin, len(raw)
            utf8 = _is_utf8(blob[found : found + mlen])
    if moff < 0:
        plain = False  # e.g. a line the reader repaired: decoded (and repaired) when read
    return EntryRecord(
        line_no,
        offset,
        stop - begin,
        entry.id,
        entry.parent_id,
        entry.type,
        role,
        plain,
        moff,
        mlen,
        entry.tool_name,
        utf8,
    )


def _is_utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        str(data, "utf-8")
    except UnicodeDecodeError:
        return False
    return True


# -- opening --------------------------------------------------------------------------------


def load(path: Path) -> tuple[LoadedFile, Sidecar | None]:
    """Read a session file through its sidecar (built, extended or rebuilt as needed). The second
    value is where to record appends, None when the sidecar cannot be used or written."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return read_file(path), None  # the reader words the error
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return read_file(path), None
    if st.st_size == 0 or not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return read_file(path), None
    src = _Source(fd, path, st.st_size)  # closes the descriptor when dropped
    try:
        header_end = _header_end(src)
        if header_end <= 0 or src[:3] == b"\xef\xbb\xbf":
            return read_file(path), None
        header_hash = _hash(src[:header_end])
        got = _from_sidecar(path, src, header_hash, header_end, st)
        if got is not None:
            return got
        return _rebuild(path, src, header_hash, header_end, st)
    except ConcurrentChangeError:
        return read_file(path), None  # changed while we read it: what it holds now, by the reader


def _header_end(src: _Source) -> int:
    """Where the first line ends (after its newline); 0 when no line ends."""
    at, step = 0, 1 << 16
    while at < src.size:
        chunk = src[at : at + step]
        found = chunk.find(b"\n")
        if found >= 0:
            return at + found + 1
        at += len(chunk)
        step *= 4
    return 0


#: :func:`is_current` allows this much of the file after the sealed part (parsed at the open).
CURRENT_SLACK = 32 << 20


def is_current(path: Path) -> bool:
    """Whether :func:`load` would open ``path`` through its sidecar without building it: the
    sidecar's header and seal match the file and cover all of it but a short tail. A cheap look
    (the sidecar's first and last lines, the file's header and the 4 KiB before the seal) for a
    caller choosing how to open a big file; :func:`load` still checks everything."""
    if not enabled():
        return False
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            head = f.read(1 << 16)
            header_end = head.find(b"\n") + 1
            if header_end <= 0:
                return False
            with open(sidecar_path(path), "rb") as side:
                first = side.readline(1 << 12)
                side_size = os.fstat(side.fileno()).st_size
                side.seek(max(0, side_size - 512))
                seal_line = side.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
            head_record = _decode_header(first)
            seal = msgspec.json.decode(seal_line, type=Seal)
            if (
                head_record.agentTuiSidecar != SIDECAR_VERSION
                or head_record.headerEnd != header_end
                or head_record.header != _hash(head[:header_end])
                or not header_end <= seal.end <= st.st_size
                or st.st_size - seal.end > CURRENT_SLACK
                or st.st_size < seal.size
            ):
                return False
            f.seek(max(0, seal.end - TAIL_BYTES))
            return _hash(f.read(seal.end - max(0, seal.end - TAIL_BYTES))) == seal.tail
    except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return False


#: A file this big without a current sidecar is opened from its end first (``Session.open_tail``).
SLOW_OPEN_BYTES = 64 << 20


def opens_slowly(path: Path) -> bool:
    """Whether opening ``path`` would build its sidecar from a big file (seconds for 1 GB):
    ``AGENT_TUI_SLOW_OPEN_BYTES`` sets the size (tests)."""
    try:
        size = os.stat(path).st_size
        limit = int(os.environ.get("AGENT_TUI_SLOW_OPEN_BYTES") or SLOW_OPEN_BYTES)
    except (OSError, ValueError):
        return False
    return size >= limit and enabled() and not is_current(path)


def load_indexed(path: Path) -> tuple[LoadedFile, Sidecar | None]:
    """:func:`load` when the sidecar is enabled, else the reader alone."""
    return load(path) if enabled() else (read_file(path), None)


def read_indexed(path: Path) -> LoadedFile:
    """:func:`load_indexed` for readers: the loaded file only."""
    return load_indexed(path)[0]


def _from_sidecar(
    path: Path, view: _Source, header_hash: str, header_end: int, st: os.stat_result
) -> tuple[LoadedFile, Sidecar | None] | None:
    side = sidecar_path(path)
    try:
        with open(side, "rb") as f:
            data = f.read()
    except OSError:
        return None
    first = data.find(b"\n")
    seal_at = data.rfind(b"\n", 0, len(data) - 1) + 1
    if first < 0 or seal_at <= first or not data.endswith(b"\n"):
        return None
    try:
        head = _decode_header(data[:first])
        items = _decode_records(memoryview(data)[first + 1 :])
    except (msgspec.DecodeError, RecursionError):
        return None
    seal = items.pop() if items else None
    if (
        type(seal) is not Seal
        or head.agentTuiSidecar != SIDECAR_VERSION
        or head.header != header_hash
        or head.headerEnd != header_end
        or zlib.crc32(memoryview(data)[:seal_at]) != seal.crc
    ):
        return None
    if seal.end > st.st_size or _tail_hash(view, seal.end) != seal.tail:
        return None
    if st.st_size < seal.size or (st.st_size == seal.size and st.st_mtime_ns != seal.mtime):
        return None  # shortened, or changed in place: rebuild
    touched = st.st_size == seal.size and (st.st_ctime_ns != seal.ctime or st.st_ino != seal.ino)
    if (st.st_size != seal.size or touched) and view.crc(0, seal.end) != seal.scrc:
        return None  # grown, but not only by appends; or edited in place with the mtime put back
    records = _checked(items, data.count(b"\n[2,") - 1, view, header_end, seal)
    if records is None:
        return None
    new: list[Record] = []
    writer = Sidecar(side, path, len(data), zlib.crc32(data), seal.scrc, seal.end)
    if st.st_size > seal.end:
        parsed = _parse_tail(view, header_end, seal.end, seal.line)
        if parsed is None:
            return None
        new = parsed
        extension = _complete_lines(new, view, st.st_size)
        if extension:
            last = extension[-1]
            end = last.off + last.len + 1
            try:
                scrc = view.crc(seal.end, end, seal.scrc)
                writer.write(extension, end, last.line, st, _tail_hash(view, end), scrc)
            except OSError:
                return _materialize(view, header_end, records + new, st.st_size), None
    elif touched:  # the same bytes under a new ctime: sealed again, so the next open is quick
        with contextlib.suppress(OSError):
            writer.write([], seal.end, seal.line, st, seal.tail, seal.scrc)
    return _materialize(view, header_end, records + new, st.st_size), writer


def _checked(
    items: list[object], seals: int, view: _Source, header_end: int, seal: Seal
) -> list[Record] | None:
    """The records (seals between them left in) if they tile the session up to the seal, blank
    lines between them aside; None when they do not. The sidecar's CRC already says these are the
    bytes our processes wrote; this checks that what they wrote adds up."""
    first = next((r for r in items if type(r) is not Seal), None)
    last = next((r for r in reversed(items) if type(r) is not Seal), None)
    if first is None or last is None:
        gap = bytes(view[header_end : seal.end])
        return [] if not gap.strip() and seal.line == 1 + gap.count(b"\n") else None
    n = len(items) - seals  # the seals before the last (counted in the bytes: each line starts "[2,")
    if (
        first.off == header_end  # type: ignore[attr-defined]
        and first.line == 2  # type: ignore[attr-defined]
        and last.line == n + 1  # type: ignore[attr-defined]
        and last.off + last.len + 1 == seal.end  # type: ignore[attr-defined]
        and seal.line == last.line  # type: ignore[attr-defined]
    ):
        return items  # type: ignore[return-value]  # one line each, no gaps: the usual case
    end, line = header_end, 1
    for r in items:
        if type(r) is Seal:
            continue
        gap = bytes(view[end : r.off]) if end <= r.off else b"x"  # type: ignore[attr-defined]
        if gap.strip() or r.line != line + 1 + gap.count(b"\n"):  # type: ignore[attr-defined]
            return None
        end, line = r.off + r.len + 1, r.line  # type: ignore[attr-defined]
    gap = bytes(view[end : seal.end]) if end <= seal.end else b"x"
    if gap.strip() or seal.line != line + gap.count(b"\n"):
        return None
    return items  # type: ignore[return-value]


def _complete_lines(records: list[Record], view: bytes | _Source, size: int) -> list[Record]:
    """The records of lines that end with a newline (a torn last line is parsed again next time)."""
    return [r for r in records if r.off + r.len < size and view[r.off + r.len] == 0x0A]


def _parse_tail(view: _Source, header_end: int, start: int, line_before: int) -> list[Record] | None:
    """Records for the lines from ``start`` on, read by the reader itself (so they say what a full
    parse says): the header line, then the tail, parsed as one small file."""
    blob = view[:header_end] + view[start:]
    try:
        loaded = parse_session(blob)
    except StoreError:
        return None
    if loaded.version != CURRENT_VERSION:
        return None
    return _records_of(loaded, blob, start - header_end, line_before - 1)


def _records_of(loaded: LoadedFile, blob: bytes, base: int, shift: int) -> list[Record]:
    """Records for what ``loaded`` (a parse of ``blob``) holds: line n of ``blob`` is line
    ``n + shift`` of the session, and its byte ``i`` is the session's ``base + i`` (for i past the
    header line)."""
    source = loaded.entries[0].raw if loaded.entries else None
    if isinstance(source, LineSource) and source.data is blob:
        starts = source.starts  # the reader's clean pass counted them already
    else:
        starts = [0]
        find, pos = blob.find, 0
        while (pos := find(b"\n", pos) + 1) > 0:
            starts.append(pos)
    size = len(blob)

    def span(number: int) -> tuple[int, int]:
        begin = starts[number - 1]
        stop = starts[number] - 1 if number < len(starts) else size
        return begin, stop

    out: list[Record] = []
    for entry in loaded.entries:
        begin, stop = span(entry.line)
        out.append(_entry_record(entry, blob, begin, stop, base + begin, entry.line + shift))
    if loaded.warnings:
        for warning in loaded.warnings:
            begin, stop = span(warning.line)
            out.append(WarningRecord(warning.line + shift, base + begin, stop - begin, warning.message))
        out.sort(key=lambda r: r.line)
    return out


def _materialize(view: _Source, header_end: int, records: list[Record], size: int) -> LoadedFile:
    """The loaded file the records describe (seals among them are skipped)."""
    header = _decode_any(view[: header_end - 1])
    entries: list[Entry] = []
    warnings: list[LoadWarning] = []
    add = entries.append
    last: Record | None = None
    for r in records:
        kind = type(r)
        if kind is EntryRecord:
            add(
                MappedEntry(
                    r.type,  # type: ignore[union-attr]
                    r.id,  # type: ignore[union-attr]
                    r.parent,  # type: ignore[union-attr]
                    r.line,
                    None,
                    None,
                    None,
                    r.role,  # type: ignore[union-attr]
                    r.plain,  # type: ignore[union-attr]
                    r.tool,  # type: ignore[union-attr]
                    view,
                    r.off,
                    r.len,
                    r.moff,  # type: ignore[union-attr]
                    r.mlen,  # type: ignore[union-attr]
                    r.utf8,  # type: ignore[union-attr]
                )
            )
            last = r
        elif kind is WarningRecord:
            warnings.append(LoadWarning(r.line, r.text))  # type: ignore[union-attr]
            last = r
    ends_with_newline = view[size - 1 : size] == b"\n"
    if last is not None:
        last_end = last.off + last.len  # its newline, or the end of a torn line
        lines = last.line
        if last_end < size:
            lines += view[last_end + 1 :].count(b"\n") + (0 if ends_with_newline else 1)
    else:
        lines = 1 + view[header_end:].count(b"\n") + (0 if ends_with_newline else 1)
    view.forget()
    return LoadedFile(
        header=header,
        entries=entries,
        warnings=warnings,
        size=size,
        ends_with_newline=ends_with_newline,
        version=CURRENT_VERSION,
        lines=lines,
    )


def _rebuild(
    path: Path, src: _Source, header_hash: str, header_end: int, st: os.stat_result
) -> tuple[LoadedFile, Sidecar | None]:
    """A full parse, and a new sidecar written from it (under a temporary name, then renamed). A
    file over :data:`REBUILD_CHUNK` is parsed a chunk of whole lines at a time (as lines appended
    without the sidecar are) and opened through the records: never all in memory at once."""
    if st.st_size > REBUILD_CHUNK:
        built = _rebuild_in_chunks(path, src, header_hash, header_end, st)
        if built is not None:
            return built
    data = src[:]
    view = memoryview(data)
    loaded = parse_session(data, str(path))
    if loaded.version != CURRENT_VERSION:
        return loaded, None
    complete = _complete_lines(_records_of(loaded, data, 0, 0), data, st.st_size)
    if complete:
        end, line = complete[-1].off + complete[-1].len + 1, complete[-1].line
    else:
        end, line = header_end, 1
    out = _encode(SidecarHeader(SIDECAR_VERSION, header_hash, header_end)) + b"\n"
    out += b"".join(_encode(r) + b"\n" for r in complete)
    return loaded, _write_new(path, view, out, end, line, st, _tail_hash(view, end))


def _rebuild_in_chunks(
    path: Path, src: _Source, header_hash: str, header_end: int, st: os.stat_result
) -> tuple[LoadedFile, Sidecar | None] | None:
    """:func:`_rebuild` for a big file: each chunk of whole lines is parsed by the reader with the
    header line before it, its records kept and its bytes dropped. None: not a v3 file. What the
    chunks tell is not read again: the lines they count, the CRC of their bytes, and that each line
    but a torn last one ends with its newline (a chunk is cut after one)."""
    header = src[:header_end]
    records: list[Record] = []
    size = st.st_size
    crc = zlib.crc32(header)
    crc_before = crc  # the CRC of the bytes before the last chunk
    start, line_before = header_end, 1  # ``line_before``: the number of the line ending at ``start``
    while start < size:
        stop = min(size, start + min(REBUILD_PIECE, REBUILD_CHUNK))
        piece = src[start:stop]
        while stop < size and (cut := piece.rfind(b"\n") + 1) == 0:  # a line longer than a chunk
            stop = min(size, stop + len(piece))
            piece = src[start:stop]
        whole = memoryview(piece)[:cut] if stop < size else memoryview(piece)  # (not copied again)
        blob = header + whole
        try:
            loaded = parse_session(blob, str(path))
        except StoreError:
            return None
        if loaded.version != CURRENT_VERSION:
            return None
        records.extend(
            r
            for r in _records_of(loaded, blob, start - header_end, line_before - 1)
            if r.line > line_before or start == header_end
        )
        line_before += loaded.lines - (1 if loaded.ends_with_newline else 2)  # its newlines, not the header's
        del loaded, blob
        crc_before, crc = crc, zlib.crc32(whole, crc)
        last_start, last = start, whole
        start += len(whole)
    # every line of a chunk ends with a newline but the file's last when the file does not
    complete = [r for r in records if r.off + r.len < size]
    if complete:
        end, line = complete[-1].off + complete[-1].len + 1, complete[-1].line
    else:
        end, line = header_end, 1
    if end != start:  # a torn last line (or no line): the CRC of the covered part only
        crc = zlib.crc32(last[: end - last_start], crc_before) if end > header_end else zlib.crc32(header)
    out = _encode(SidecarHeader(SIDECAR_VERSION, header_hash, header_end)) + b"\n"
    out += b"".join(_encode(r) + b"\n" for r in complete)
    side = _write_new(path, src, out, end, line, st, _tail_hash(src, end), crc)
    return _materialize(src, header_end, records, size), side


def _write_new(
    path: Path,
    session: bytes | memoryview | _Source,
    body: bytes,
    end: int,
    line: int,
    st: os.stat_result,
    tail: str,
    scrc: int | None = None,
) -> Sidecar | None:
    """Write a whole sidecar (``body`` and its seal) under a temporary name and rename it into place
    (``scrc``: the CRC of the session's first ``end`` bytes, when known)."""
    side = sidecar_path(path)
    if scrc is None:
        scrc = zlib.crc32(session[:end])
    seal = Seal(
        end, line, st.st_size, st.st_mtime_ns, tail, zlib.crc32(body), scrc, st.st_ctime_ns, st.st_ino
    )
    data = body + _encode(seal) + b"\n"
    partial = side.with_name(f"{side.name}.{uuid.uuid4().hex[:12]}.part")  # never an existing file
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None  # a folder we may not write: the full parse serves
    try:
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
        finally:
            os.close(fd)
        os.replace(partial, side)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        return None
    return Sidecar(side, path, len(data), zlib.crc32(data), scrc, end)


def create(path: Path, header_line: bytes) -> Sidecar | None:
    """The sidecar of a session file just created holding ``header_line`` alone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    view = memoryview(header_line)
    body = _encode(SidecarHeader(SIDECAR_VERSION, _hash(view), len(header_line))) + b"\n"
    return _write_new(path, view, body, len(header_line), 1, st, _tail_hash(view, len(header_line)))


__all__ = [
    "MappedEntry",
    "Sidecar",
    "copies_unread",
    "create",
    "enabled",
    "load",
    "load_indexed",
    "read_indexed",
    "sidecar_path",
    "write_messages",
]

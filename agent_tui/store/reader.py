"""Tolerant reading of session files: bytes in, entries and warnings out.

Nothing here writes. A torn last line, malformed lines, unknown types,
entries without ids and non-object lines become warnings; every valid line
becomes an :class:`Entry`. Old pi formats (v1, v2) are upgraded in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec

from agent_tui.store.errors import NotASessionError, StoreError
from agent_tui.store.kinds import KNOWN_TYPES
from agent_tui.store.record import Entry, JSONObject, LineSource, repair_lone_surrogates

CURRENT_VERSION = 3


class LoadWarning(msgspec.Struct, frozen=True):
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class LoadedFile(msgspec.Struct):
    header: JSONObject
    entries: list[Entry]
    warnings: list[LoadWarning] = msgspec.field(default_factory=list)
    size: int = 0
    ends_with_newline: bool = True
    version: int = CURRENT_VERSION
    lines: int = 0


class _LineHead(msgspec.Struct):
    type: Any = None
    id: Any = None
    parentId: Any = None
    message: msgspec.Raw = msgspec.Raw(b"")


class _CleanHead(msgspec.Struct, gc=False):
    """A line of a clean file: msgspec checks the link fields' types in C, and any surprise
    (a missing or non-string id, a numeric parentId...) sends the file to the line scan."""

    type: str
    id: Annotated[str, msgspec.Meta(min_length=1)]
    parentId: str | None = None
    message: msgspec.Raw = msgspec.Raw(b"")


_decode_head = msgspec.json.Decoder(_LineHead).decode
_decode_clean_lines = msgspec.json.Decoder(_CleanHead).decode_lines
_decode_any = msgspec.json.Decoder().decode
#: A line that is not JSON, or nests too deeply to decode (msgspec recurses), is malformed.
_UNREADABLE = (msgspec.DecodeError, RecursionError)


def _decode_repairing(decode: Any, line: memoryview | bytes) -> tuple[Any, memoryview | bytes]:
    """``decode(line)``, or, when that fails because of an escaped lone surrogate (pi cuts strings
    inside emoji), the decoded repaired line (see ``repair_lone_surrogates``) and its bytes, which
    the entry then keeps. Raises what ``decode`` raises when there is nothing to repair."""
    try:
        return decode(line), line
    except _UNREADABLE:
        repaired = repair_lone_surrogates(line)
        if repaired is None:
            raise
        return decode(repaired), repaired


def decode_json_line(line: bytes) -> Any:
    """One line of JSON as the session reader decodes it (an escaped lone surrogate repaired to
    U+FFFD); None for a line that is not JSON or nests too deeply. For every reader of JSONL files
    agent-tui did not write (the importers), so each reads a line as the session reader does."""
    try:
        return _decode_repairing(_decode_any, line)[0]
    except _UNREADABLE:
        return None


def read_file(path: Path) -> LoadedFile:
    """Read and parse a session file. Raises StoreError for a missing or headerless file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise StoreError(f"{path}: no such session file") from None
    except IsADirectoryError:
        raise StoreError(f"{path}: is a directory, not a session file") from None
    except OSError as e:
        raise StoreError(f"{path}: cannot read: {e.strerror}") from None
    return parse_session(data, str(path))


def parse_session(data: bytes, name: str = "<session>") -> LoadedFile:
    """Parse the bytes of a session file.

    The common case (a v3 file of valid lines, no blank ones) is decoded in one
    call; anything unusual falls back to the line-by-line scan that reports
    each bad line.
    """
    if data.startswith(_UTF8_BOM):
        # Some editors start UTF-8 with a byte order mark. JSON allows whitespace where it stood:
        # three spaces keep every offset (and the size the writer checks) as they are.
        data = b"   " + data[len(_UTF8_BOM) :]
    fast = _parse_clean(data)
    if fast is not None:
        return fast
    return _parse_lines(data, name)


_UTF8_BOM = b"\xef\xbb\xbf"


def no_header_reason(data: bytes) -> str:
    """Why a file without a session header has none, in a few words (for one line)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(data) > 1 and data.count(b"\x00") * 3 > len(data)):
        return "UTF-16 text, not UTF-8 (convert it: iconv -f UTF-16 -t UTF-8)"
    if b"\r" in data and b"\n" not in data:
        return (
            "its lines end with CR only (old Mac line endings), not newlines: convert them (tr '\\r' '\\n')"
        )
    if not data.strip():
        return "empty file, no session header"
    return "no session header"


def _parse_clean(data: bytes) -> LoadedFile | None:
    first_end = data.find(b"\n")
    if first_end < 0:
        return None
    try:
        header = _decode_any(data[:first_end])
    except _UNREADABLE:
        return None
    if (
        not isinstance(header, dict)
        or header.get("type") != "session"
        or not isinstance(header.get("id"), str)
    ):
        return None
    version = header.get("version", 1)
    if not isinstance(version, int) or version != CURRENT_VERSION:
        return None
    body = memoryview(data)[first_end + 1 :]
    try:
        heads = _decode_clean_lines(body)
    except _UNREADABLE:  # ValidationError is a DecodeError
        return None
    source = LineSource(data)
    lines = len(source.starts) - (1 if data.endswith(b"\n") else 0)
    if len(heads) != lines - 1:
        return None  # blank lines: let the scan number the lines
    warnings: list[LoadWarning] = []
    if not {head.type for head in heads} <= KNOWN_TYPES:
        for line_no, head in enumerate(heads, 2):
            if head.type not in KNOWN_TYPES:
                if head.type == "session":
                    return None  # a second header: let the scan report it
                warnings.append(
                    LoadWarning(line_no, f"entry {head.id}: unknown type {head.type!r}; kept, not projected")
                )
    entries = [
        Entry(head.type, head.id, head.parentId, line_no, source, head.message or None)
        for line_no, head in enumerate(heads, 2)
    ]
    return LoadedFile(
        header=header,
        entries=entries,
        warnings=warnings,
        size=len(data),
        ends_with_newline=data.endswith(b"\n"),
        version=version,
        lines=lines,
    )


def _parse_lines(data: bytes, name: str) -> LoadedFile:
    view = memoryview(data)
    size = len(data)
    entries: list[Entry] = []
    warnings: list[LoadWarning] = []
    header: JSONObject | None = None
    version = CURRENT_VERSION
    legacy: list[tuple[int, JSONObject]] = []  # v1/v2 lines, migrated after the scan
    pos = 0
    line_no = 0
    find = data.find
    while pos < size:
        end = find(b"\n", pos)
        if end < 0:
            end = size
        line_no += 1
        line: memoryview | bytes = view[pos:end]
        start = pos
        pos = end + 1
        if not line:
            continue
        torn = end == size  # no newline after it: the process may have died mid-write
        if header is None:
            try:
                obj, _ = _decode_repairing(_decode_any, line)
            except _UNREADABLE:
                if not bytes(line).isspace():
                    warnings.append(LoadWarning(line_no, _bad_line_message(torn, start, end)))
                continue
            if (
                not isinstance(obj, dict)
                or obj.get("type") != "session"
                or not isinstance(obj.get("id"), str)
            ):
                raise NotASessionError(f"{name}: line {line_no} is not a session header")
            header = obj
            raw_version = obj.get("version", 1)
            version = raw_version if isinstance(raw_version, int) else 1
            continue
        if version < 2:
            try:
                obj, _ = _decode_repairing(_decode_any, line)
            except _UNREADABLE:
                if not bytes(line).isspace():
                    warnings.append(LoadWarning(line_no, _bad_line_message(torn, start, end)))
                continue
            if isinstance(obj, dict) and isinstance(obj.get("type"), str):
                legacy.append((line_no, obj))
            else:
                warnings.append(LoadWarning(line_no, "not an entry object; ignored"))
            continue
        entry = line_entry(line, line_no, torn, end - start, warnings)
        if entry is not None:
            entries.append(entry)
    if header is None:
        raise NotASessionError(f"{name}: {no_header_reason(data)}")
    if version < 2:
        entries = _migrate_v1(header, legacy, entries, warnings)
    if version < 3:
        _migrate_v2(entries)
    loaded = LoadedFile(
        header=header,
        entries=entries,
        warnings=warnings,
        size=size,
        ends_with_newline=size == 0 or data[-1:] == b"\n",
        version=version,
        lines=line_no,
    )
    if version > CURRENT_VERSION:
        loaded.warnings.insert(
            0,
            LoadWarning(
                1,
                f"format version {version} is newer than this agent-tui knows ({CURRENT_VERSION}); opened read-only",
            ),
        )
    return loaded


def line_entry(
    line: memoryview | bytes, line_no: int, torn: bool, length: int, warnings: list[LoadWarning]
) -> Entry | None:
    """The entry line ``line_no`` of a v2/v3 file holds (``torn``: no newline after it; ``length``:
    its bytes), None for a blank or bad line; what is wrong with it is added to ``warnings``. The one
    rule for a line, whether the file is read from its start (``_parse_lines``) or from its end
    (``store.tail``)."""
    if not line:
        return None
    try:
        head, line = _decode_repairing(_decode_head, line)
    except _UNREADABLE:
        if not bytes(line).isspace():
            warnings.append(LoadWarning(line_no, _bad_line_message(torn, 0, length)))
        return None
    etype, eid, parent = head.type, head.id, head.parentId
    if not isinstance(etype, str):
        warnings.append(LoadWarning(line_no, "entry has no string 'type'; ignored"))
        return None
    if etype == "session":
        # pi skips every header line but the first: it is no entry, no parent, never the leaf
        warnings.append(LoadWarning(line_no, "a second session header (files joined?); ignored"))
        return None
    if not isinstance(eid, str) or not eid:
        warnings.append(LoadWarning(line_no, f"{etype} entry has no string 'id'; ignored"))
        return None
    if parent is not None and not isinstance(parent, str):
        warnings.append(LoadWarning(line_no, f"entry {eid}: parentId is not a string; treated as a root"))
        parent = None
    if etype not in KNOWN_TYPES:
        warnings.append(LoadWarning(line_no, f"entry {eid}: unknown type {etype!r}; kept, not projected"))
    message_raw = head.message if len(head.message) else None
    return Entry(etype, eid, parent, line_no, line, message_raw)


def _bad_line_message(torn: bool, start: int, end: int) -> str:
    if torn:
        return f"torn last line ({end - start} bytes without a newline, likely a write cut short); ignored"
    return "malformed JSON; ignored"


def _migrate_v1(
    header: JSONObject,
    legacy: list[tuple[int, JSONObject]],
    entries: list[Entry],
    warnings: list[LoadWarning],
) -> list[Entry]:
    """pi v1 had no ids: chain the lines in file order under deterministic ids.

    pi gives random ids when it migrates (and rewrites the file); ours are derived
    from the session id and line number so they survive a restart without a rewrite.
    """
    session_id = str(header.get("id"))
    # pi's firstKeptEntryIndex counts parsed lines, header included.
    by_index: list[JSONObject | None] = [header]
    ids: set[str] = set()
    prev: str | None = None
    for line_no, obj in legacy:
        eid = _legacy_id(session_id, line_no, ids)
        obj["id"] = eid
        obj["parentId"] = prev
        prev = eid
        by_index.append(obj)
    migrated: list[Entry] = []
    for line_no, obj in legacy:
        if obj["type"] == "compaction" and isinstance(obj.get("firstKeptEntryIndex"), int):
            index = obj.pop("firstKeptEntryIndex")
            target = by_index[index] if 0 < index < len(by_index) else None
            if target is not None:
                obj["firstKeptEntryId"] = target["id"]
            else:
                warnings.append(
                    LoadWarning(line_no, f"compaction points at entry index {index}, which is missing")
                )
        migrated.append(Entry.from_data(obj, line_no))
    return migrated + entries


def _legacy_id(session_id: str, line_no: int, taken: set[str]) -> str:
    import hashlib

    salt = 0
    while True:
        eid = hashlib.sha256(f"{session_id}:{line_no}:{salt}".encode()).hexdigest()[:8]
        if eid not in taken:
            taken.add(eid)
            return eid
        salt += 1


def _migrate_v2(entries: list[Entry]) -> None:
    """v2 -> v3: the ``hookMessage`` role became ``custom``."""
    for entry in entries:
        if entry.type == "message" and entry.role == "hookMessage":
            message = entry.message
            if message is not None:
                message["role"] = "custom"
                entry._role = "custom"

"""What the importers share: the result type, ids, timestamps, entry builders."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_tui.store.record import JSONObject

#: ``custom`` entry recording where an imported session came from (never in context).
IMPORT_MARKER = "agent-tui.import"


@dataclass
class ImportResult:
    """A converted session, not yet written: a header's worth of facts and chained entries."""

    format: str  # "claude-code" or "codex"
    source: str
    cwd: str
    timestamp: str
    entries: list[JSONObject]
    source_session_id: str | None = None
    name: str | None = None
    kept: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    cwd_note: JSONObject | None = None  # the header's cwd is the importing process's: why

    @property
    def leaf_id(self) -> str | None:
        return self.entries[-1]["id"] if self.entries else None


class Converter:
    """What both converters keep while reading a source file: ids, what was kept and dropped, the
    warnings, the entries written so far, and tool names by call id."""

    format = ""

    def __init__(self, path: Path, objects: list[tuple[int, Any]]) -> None:
        self.path = path
        self.objects = objects
        self.ids = IdMaker()
        self.kept: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()
        self.warnings: list[str] = []
        self.out: list[JSONObject] = []
        self.tool_names: dict[str, str] = {}
        self.cwd_note: JSONObject | None = None  # set when the header's cwd is not the transcript's

    def result(self, cwd: str, timestamp: str, **facts: Any) -> ImportResult:
        """The converted session so far (``entries`` still to be filled)."""
        return ImportResult(
            self.format,
            str(self.path),
            cwd,
            timestamp,
            [],
            kept=self.kept,
            dropped=self.dropped,
            warnings=self.warnings,
            cwd_note=self.cwd_note,
            **facts,
        )


class IdMaker:
    """Short ids (8 hex characters, as pi's) derived from the source's own ids, unique in the file."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def make(self, key: str) -> str:
        digits = "".join(c for c in key.lower() if c in "0123456789abcdef")
        candidates = (
            [digits[i : i + 8] for i in range(0, max(len(digits) - 7, 0), 8)] if len(digits) >= 8 else []
        )
        for candidate in candidates:
            if len(candidate) == 8 and candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
        return self.hashed(key)

    def hashed(self, key: str) -> str:
        """An id hashed from ``key`` (stable across imports of the same file)."""
        salt = 0
        while True:
            candidate = hashlib.sha256(f"{key}:{salt}".encode()).hexdigest()[:8]
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
            salt += 1


def session_cwd(recorded: str | None, converter: Converter) -> str:
    """The cwd the imported session's header names: the transcript's, or, when it records none (or
    ``/``, which would put the whole disk "inside the session's folder"), the importing process's,
    with a warning and a note in the import record."""
    if isinstance(recorded, str) and os.path.isabs(recorded) and "\0" not in recorded:
        normal = os.path.normpath(recorded)
        if normal.startswith("//"):  # POSIX keeps a leading "//" ("//" itself is "/" on Linux)
            normal = "/" + normal.lstrip("/")
        if normal != "/":
            return normal
    used = os.getcwd()
    what = f"records {recorded!r} as its working directory" if recorded else "records no working directory"
    converter.warnings.append(f"{converter.path}: the transcript {what}; using the current one, {used}")
    converter.cwd_note = {"recorded": recorded, "used": used, "why": "the transcript's cwd is missing or /"}
    return used


def iso(value: Any, fallback: str) -> str:
    """An ISO 8601 UTC timestamp with milliseconds and a Z, or ``fallback``."""
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return fallback
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        return stamp.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return fallback


def ms(stamp: str) -> int:
    return round(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def entry(kind: str, eid: str, parent: str | None, timestamp: str, **fields: Any) -> JSONObject:
    return {"type": kind, "id": eid, "parentId": parent, "timestamp": timestamp, **fields}


def usage(input_: int, output: int, cache_read: int = 0, cache_write: int = 0) -> JSONObject:
    return {
        "input": input_,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input_ + output + cache_read + cache_write,
    }


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def image_block(mime: Any, data: Any) -> JSONObject | None:
    if isinstance(mime, str) and isinstance(data, str) and mime.startswith("image/"):
        return {"type": "image", "data": data, "mimeType": mime}
    return None


def import_record(result: ImportResult, eid: str, extra: JSONObject) -> JSONObject:
    """The first entry of an imported session: where it came from, what was kept and dropped."""
    return entry(
        "custom",
        eid,
        None,
        result.timestamp,
        customType=IMPORT_MARKER,
        data={
            "format": result.format,
            "source": result.source,
            "sourceSessionId": result.source_session_id,
            "kept": dict(sorted(result.kept.items())),
            "dropped": dict(sorted(result.dropped.items())),
            **({"cwd": result.cwd_note} if result.cwd_note else {}),
            **extra,
        },
    )

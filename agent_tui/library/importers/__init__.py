"""Importing other agents' transcripts as agent-tui sessions.

``convert(path)`` reads a Claude Code transcript or a Codex CLI rollout and
returns the entries of the equivalent session (nothing written);
``import_session(path, ...)`` writes them to a new file whole or not at all
(under a temporary name in the same folder, fsynced, then linked into place,
never over an existing file): a crash or a bad entry leaves no half-written
session. The source file is only read. pi files need no
import: agent-tui opens them directly.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from agent_tui.library.importers import claude_code, codex
from agent_tui.library.importers.common import IMPORT_MARKER, ImportResult
from agent_tui.library.new_file import write_new_file
from agent_tui.store.errors import StoreError
from agent_tui.store.paths import make_private_dirs, session_dir_for, session_file_name
from agent_tui.store.reader import decode_json_line
from agent_tui.store.record import JSONObject
from agent_tui.store.redact import redact_value, redaction_enabled
from agent_tui.store.writer import FsyncPolicy, encode_line

FORMATS = ("claude-code", "codex")


class ImportFormatError(StoreError):
    """The file is not a transcript any importer knows."""


@dataclass(frozen=True, slots=True)
class Imported:
    path: Path
    result: ImportResult


def read_lines(path: Path) -> list[tuple[int, Any]]:
    """(line number, decoded JSON) for each line that parses; malformed lines are skipped."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StoreError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise StoreError(f"{path}: is a directory") from None
    except OSError as e:
        raise StoreError(f"{path}: cannot read: {e.strerror}") from None
    # the session reader's decoding: an escaped lone surrogate (JavaScript cuts strings inside
    # emoji) was a malformed line here, and everything before it fell off the active path
    return [
        (number, decode_json_line(line)) for number, line in enumerate(data.split(b"\n"), 1) if line.strip()
    ]


def detect(path: Path, objects: list[tuple[int, Any]] | None = None) -> str:
    """``claude-code`` or ``codex``; raises ImportFormatError for anything else (pi's files included)."""
    objects = objects if objects is not None else read_lines(path)
    sample = [o for _, o in objects[:50] if isinstance(o, dict)]
    if sample and sample[0].get("type") == "session" and ("version" in sample[0] or "cwd" in sample[0]):
        raise ImportFormatError(
            f"{path}: already a pi / agent-tui session; open it directly, no import needed"
        )
    if codex.looks_like(sample):
        return "codex"
    if claude_code.looks_like(sample):
        return "claude-code"
    raise ImportFormatError(f"{path}: not a Claude Code transcript or a Codex CLI rollout")


def convert(path: str | Path, fmt: str | None = None) -> ImportResult:
    """Read ``path`` and return the session it becomes (nothing is written)."""
    path = Path(path)
    objects = read_lines(path)
    fmt = fmt or detect(path, objects)
    converters = {"claude-code": claude_code.convert, "codex": codex.convert}
    if fmt not in converters:
        raise ImportFormatError(f"unknown import format {fmt!r}; expected one of {', '.join(FORMATS)}")
    try:
        return converters[fmt](path, objects)
    except (RecursionError, MemoryError, AttributeError, KeyError, TypeError, ValueError, IndexError) as e:
        # a shape no sample had: this file is not imported, with one line (never a traceback, and a
        # folder import goes on with the other files)
        raise ImportFormatError(
            f"{path}: cannot import this {fmt} transcript ({type(e).__name__}: {e})"
        ) from e


def import_session(
    path: str | Path,
    *,
    out: str | Path | None = None,
    session_dir: str | Path | None = None,
    fmt: str | None = None,
    fsync: FsyncPolicy | None = None,
    parent_session: str | Path | None = None,
) -> Imported:
    """Convert ``path`` and write it as a new v3 session.

    The new file is ``out``, or a fresh name in ``session_dir``, or in the data
    dir's folder for the transcript's cwd (where ``agent-tui`` looks for it).
    ``parent_session``: the session this one is a fork of (a sub-agent's, its
    main session), written as the header's ``parentSession``.
    """
    result = convert(path, fmt)
    session_id = str(uuid.uuid4())
    if out is not None:
        target = Path(out)
    else:
        folder = session_dir_for(result.cwd, session_dir)
        target = folder / session_file_name(session_id, result.timestamp)
    header: JSONObject = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": result.timestamp,
        "cwd": result.cwd,
    }
    if parent_session is not None:
        header["parentSession"] = str(parent_session)
    policy = fsync or FsyncPolicy.from_env()
    redact = redaction_enabled()  # transcripts of other agents hold whatever their tools printed

    def lines() -> Iterator[bytes]:
        yield encode_line(header)
        chunk: list[bytes] = []
        for data in result.entries:
            chunk.append(encode_line(redact_value(data) if redact else data))
            if len(chunk) >= 256:
                yield b"".join(chunk)
                chunk.clear()
        if chunk:
            yield b"".join(chunk)

    try:
        make_private_dirs(target.parent)
    except OSError as e:
        raise StoreError(f"{target.parent}: cannot create the folder: {e.strerror}") from None
    try:
        # whole or not at all: a crash, a full disk or an entry that cannot be written leaves no
        # half-written session (and nothing to block the retry)
        write_new_file(target, lines(), what="imports", fsync=policy is not FsyncPolicy.NEVER)
    except (msgspec.EncodeError, OverflowError, RecursionError, TypeError, ValueError) as e:
        raise ImportFormatError(
            f"{path}: cannot import this {result.format} transcript ({type(e).__name__}: {e})"
        ) from e
    return Imported(target, result)


def folder_transcripts(folder: Path) -> list[tuple[Path, Path | None]]:
    """The transcripts of a folder, in import order, each with the one it is a fork of: Claude
    Code keeps a session's sub-agents in ``<session>/subagents/*.jsonl`` beside ``<session>.jsonl``."""
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
    except OSError as e:
        raise StoreError(f"{folder}: cannot read: {e.strerror}") from None
    out: list[tuple[Path, Path | None]] = []
    for path in files:
        out.append((path, None))
        sub = folder / path.stem / "subagents"
        if sub.is_dir():
            out.extend((p, path) for p in sorted(sub.glob("*.jsonl")) if p.is_file())
    return out


def import_folder(
    folder: str | Path, *, session_dir: str | Path | None = None, fmt: str | None = None
) -> list[tuple[Path, Imported | StoreError]]:
    """Import every transcript of ``folder`` (sub-agents as forks of their session): what each
    became, or why it was not imported. One bad file never stops the others (a sub-agent whose
    session was not imported is imported on its own)."""
    done: dict[Path, Path] = {}  # a source -> the session it became
    out: list[tuple[Path, Imported | StoreError]] = []
    for path, parent in folder_transcripts(Path(folder)):
        try:
            imported = import_session(
                path, session_dir=session_dir, fmt=fmt, parent_session=done.get(parent) if parent else None
            )
        except StoreError as e:
            out.append((path, e))
            continue
        done[path] = imported.path
        out.append((path, imported))
    return out


__all__ = [
    "FORMATS",
    "IMPORT_MARKER",
    "ImportFormatError",
    "ImportResult",
    "Imported",
    "convert",
    "detect",
    "folder_transcripts",
    "import_folder",
    "import_session",
    "read_lines",
]

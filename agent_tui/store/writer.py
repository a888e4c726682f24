"""Appending to session files: exclusive creation, one write per line, a single-writer lock.

The only ways this module touches a file are ``O_CREAT | O_EXCL`` to create
it and ``O_APPEND`` writes to extend it. Nothing is ever rewritten or truncated.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import uuid
from enum import StrEnum
from pathlib import Path

import msgspec

from agent_tui.store.errors import ConcurrentChangeError, SessionLockedError, StoreError
from agent_tui.store.paths import make_private_dirs
from agent_tui.store.record import JSONObject

_encode = msgspec.json.Encoder().encode
_SURROGATE = re.compile("[\ud800-\udfff]")


class FsyncPolicy(StrEnum):
    """When appended lines are forced to disk.

    ``always``: fsync after every entry (survives power loss; the default).
    ``never``: leave it to the OS (survives a killed process, not a power cut).
    """

    ALWAYS = "always"
    NEVER = "never"

    @classmethod
    def from_env(cls) -> FsyncPolicy:
        value = os.environ.get("AGENT_TUI_FSYNC", cls.ALWAYS.value).strip().lower()
        try:
            return cls(value)
        except ValueError:
            raise StoreError(f"AGENT_TUI_FSYNC={value!r}: expected 'always' or 'never'") from None


def encode_line(obj: JSONObject) -> bytes:
    return encode_entry(obj)[1]


def encode_entry(obj: JSONObject) -> tuple[JSONObject, bytes]:
    """The line for ``obj``, and the object it holds: ``obj`` itself or, when one of its strings holds
    a UTF-16 surrogate (a model reply cut inside an emoji, a file name that is not UTF-8 read through
    ``surrogateescape``), a copy with each surrogate replaced by U+FFFD, since such a string cannot be
    encoded to UTF-8 at all. Keep the returned object in memory: it is what the file holds."""
    try:
        return obj, _encode(obj) + b"\n"
    except UnicodeEncodeError:
        clean: JSONObject = _scrub(obj)  # type: ignore[assignment]
        return clean, _encode(clean) + b"\n"


def _scrub(value: object) -> object:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


def partial_name(path: Path) -> Path:
    """Where a new file is written before it gets its name (hidden, same folder, never a session)."""
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.part")


def publish_new_file(partial: Path, path: Path, what: str = "files") -> None:
    """Give the complete file ``partial`` the name ``path``, never over an existing file, then drop
    the partial name. A hard link is refused when ``path`` exists, where a rename would replace it;
    a filesystem without hard links gets a rename after a check. Raises StoreError; ``partial`` is
    removed either way."""
    try:
        try:
            os.link(partial, path)
        except FileExistsError:
            raise StoreError(f"{path}: already exists; {what} are never overwritten") from None
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise StoreError(f"{path}: cannot create: {e.strerror}") from None
            if os.path.lexists(path):
                raise StoreError(f"{path}: already exists; {what} are never overwritten") from None
            try:
                os.rename(partial, path)
            except OSError as e2:
                raise StoreError(f"{path}: cannot create: {e2.strerror}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
    with contextlib.suppress(OSError):  # the new name itself, on disk
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def discard_partial(partial: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(partial)


class SessionWriter:
    """Holds the writer lock on one session file and appends lines to it."""

    def __init__(self, path: Path, fd: int, size: int, ends_with_newline: bool, fsync: FsyncPolicy) -> None:
        self.path = path
        self._fd: int | None = fd
        self._size = size
        self._needs_newline = not ends_with_newline
        self.fsync = fsync

    # -- opening ------------------------------------------------------------------

    @classmethod
    def create(cls, path: Path, header: JSONObject, fsync: FsyncPolicy | None = None) -> SessionWriter:
        """Create a new session file holding ``header``. Fails if the file exists."""
        try:
            make_private_dirs(path.parent)
        except OSError as e:
            raise StoreError(f"{path.parent}: cannot create the folder: {e.strerror}") from None
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            raise StoreError(f"{path}: already exists; session files are never overwritten") from None
        except OSError as e:
            raise StoreError(f"{path}: cannot create: {e.strerror}") from None
        _lock(fd, path)
        writer = cls(path, fd, 0, True, fsync or FsyncPolicy.from_env())
        writer.append(header)
        return writer

    @classmethod
    def open(cls, path: Path, fsync: FsyncPolicy | None = None) -> SessionWriter:
        """Take the writer lock on an existing file. Raises SessionLockedError if another process has it."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except FileNotFoundError:
            raise StoreError(f"{path}: no such session file") from None
        except OSError as e:
            raise StoreError(f"{path}: cannot open for appending: {e.strerror}") from None
        _lock(fd, path)
        size = os.fstat(fd).st_size
        ends_with_newline = size == 0 or _last_byte(path, size) == b"\n"
        return cls(path, fd, size, ends_with_newline, fsync or FsyncPolicy.from_env())

    # -- appending ------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self._size

    def expect_size(self, size: int) -> None:
        """Fail unless the file is exactly ``size`` bytes: what we loaded is what is on disk."""
        actual = self._stat_size()
        if actual != size:
            raise ConcurrentChangeError(
                f"{self.path}: changed on disk while open ({size} bytes loaded, {actual} now); reopen it"
            )

    def append(self, obj: JSONObject, *, sync: bool = True) -> None:
        """Write one entry as one line with a single write, then fsync per policy (``sync=False``:
        the caller calls :meth:`sync` itself, e.g. off the event loop)."""
        self.append_bytes(encode_line(obj), sync=sync)

    def append_bytes(self, line: bytes, *, sync: bool = True) -> None:
        fd = self._require_fd()
        try:
            actual = os.fstat(fd).st_size
        except OSError as e:
            raise StoreError(f"{self.path}: cannot append: {e.strerror}") from None
        if actual != self._size:
            raise ConcurrentChangeError(
                f"{self.path}: changed on disk by another program ({self._size} bytes expected, {actual} found); reopen it"
            )
        if self._needs_newline:
            # The last line was torn (a write cut short). Start ours on a line of its own.
            line = b"\n" + line
        written = 0
        try:
            while written < len(line):  # one write; regular files only short-write when the disk fills
                written += os.write(fd, line[written:])
            if sync and self.fsync is FsyncPolicy.ALWAYS:
                os.fsync(fd)
        except OSError as e:
            # Whatever reached the file is a torn line; the next append starts on a new line.
            self._size += written
            self._needs_newline = written > 0 or self._needs_newline
            reason = "disk full" if e.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT) else e.strerror
            raise StoreError(f"{self.path}: append failed ({reason}); the entry was not saved") from None
        self._size += len(line)
        self._needs_newline = False

    def sync(self) -> None:
        """Force what was written to disk: the second half of ``append(..., sync=False)``."""
        try:
            os.fsync(self._require_fd())
        except OSError as e:
            raise StoreError(f"{self.path}: cannot force the session to disk: {e.strerror}") from None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the flock
            self._fd = None

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _require_fd(self) -> int:
        if self._fd is None:
            raise StoreError(f"{self.path}: writer is closed")
        return self._fd

    def _stat_size(self) -> int:
        try:
            return os.fstat(self._require_fd()).st_size
        except OSError as e:
            raise StoreError(f"{self.path}: cannot stat: {e.strerror}") from None


def _lock(fd: int, path: Path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SessionLockedError(
            f"{path}: another agent-tui process is writing this session; open it read-only or close the other one"
        ) from None


def _last_byte(path: Path, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(size - 1)
        return f.read(1)

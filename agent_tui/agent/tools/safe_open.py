"""Opening a file to write it so that the file written is the file that was checked.

The permission check looks at a path; the write happens a moment later. In
between, a symlink in the path can be swapped to point out of the project
(another process, a background command), or the path can be a hard link to a
file outside. So the write and edit tools open through :func:`open_checked`:

- the path is resolved (``realpath``) and the policy's :data:`WriteGuard` is
  asked about that real path before anything is created;
- the real path is then walked from ``/`` one folder at a time, each opened
  with ``O_NOFOLLOW`` relative to the one before (missing folders are made
  there): a symlink that appeared since the path was resolved is refused,
  never followed; the file itself is opened with ``O_NOFOLLOW`` (and
  ``O_NONBLOCK``, so a FIFO cannot block the open), without truncating;
- the opened file is checked with ``fstat``: a regular file, and the guard is
  asked again with its link count (a file with more than one name may be
  another name of a file outside).

Only then is it truncated and written, through the descriptor that was checked.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from agent_tui.agent.tools.base import ToolError, WriteGuard

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_SWAPPED = "a symlink in the path changed between the check and the write; nothing was written"


def open_checked(path: Path, shown: str, *, create: bool, guard: WriteGuard | None) -> int:
    """A read-write descriptor of the regular file at ``path``'s real path (made, with its folders,
    when ``create``); ToolError when the guard refuses it or the path changed under us."""
    real = os.path.realpath(path)
    if guard is not None:
        refusal = guard(real, 1)
        if refusal is not None:
            raise ToolError(refusal)
    parts = Path(real).parts
    dir_fd = os.open(parts[0], _DIR_FLAGS)
    try:
        for name in parts[1:-1]:
            child = _enter(dir_fd, name, create)
            os.close(dir_fd)
            dir_fd = child
        flags = _FILE_FLAGS | (os.O_CREAT if create else 0)
        fd = os.open(parts[-1], flags, 0o666, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK):
            raise ToolError(f"Could not write {shown}: {_SWAPPED}.") from None
        raise
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(f"Could not write {shown}: not a regular file.")
        if guard is not None:
            refusal = guard(real, st.st_nlink)
            if refusal is not None:
                raise ToolError(refusal)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _enter(dir_fd: int, name: str, create: bool) -> int:
    """The folder ``name`` inside ``dir_fd`` (made when missing and ``create``), never through a symlink."""
    try:
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile: opened below, checked as any
                os.mkdir(name, 0o777, dir_fd=dir_fd)
            child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(dir_fd, name):
            raise OSError(errno.ELOOP, _SWAPPED) from None
        raise
    return child


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def write_all(fd: int, data: bytes) -> None:
    """Replace the file's content with ``data`` (the descriptor stays open)."""
    os.lseek(fd, 0, os.SEEK_SET)
    os.ftruncate(fd, 0)
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


__all__ = ["open_checked", "read_all", "write_all"]

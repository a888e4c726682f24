"""Creating a file whole or not at all: exports and imports are written under a temporary name in
the same folder, fsynced, then linked into place (never over an existing file)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

from agent_tui.store.errors import StoreError
from agent_tui.store.writer import discard_partial, partial_name, publish_new_file


def write_new_file(
    path: Path, chunks: bytes | Iterable[bytes], *, what: str = "exports", fsync: bool = True
) -> Path:
    """Create ``path`` (never over an existing file), mode 0600: written (and with ``fsync``,
    forced to disk) under a temporary name in the same folder, then linked into place, so a write
    cut short (a full disk, a crash) never leaves a partial file under ``path``, and an error leaves
    nothing behind to block the retry. ``chunks`` may be a generator: whatever it raises (bad
    input found while encoding) propagates after the partial file is removed. ``what`` names the
    files in the message when ``path`` exists ("exports", "imports")."""
    if os.path.lexists(path):
        raise StoreError(f"{path}: already exists; {what} never overwrite a file")
    partial = partial_name(path)
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError as e:
        raise StoreError(f"{path}: cannot create: {e.strerror}") from None
    try:
        try:
            for chunk in [chunks] if isinstance(chunks, bytes) else chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            if fsync:
                os.fsync(fd)
        except OSError as e:
            reason = "disk full" if e.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT) else e.strerror
            raise StoreError(f"{path}: write failed ({reason}); nothing was written") from None
        finally:
            os.close(fd)
        publish_new_file(partial, path, what)
    finally:
        discard_partial(partial)
    return path


__all__ = ["write_new_file"]

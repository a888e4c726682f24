"""Fork and clone: a new session file from part of an existing one.

Both copy a path of the tree into a new file, created exclusively, whose
header names the source as ``parentSession``; labels of the copied entries
are kept and compaction boundaries still cut where they did (see
``agent_tui.store.session.fork_entries``). The source is never changed.

- fork: the path to any entry (a node of the tree);
- clone: the current branch, up to the leaf.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from agent_tui.store.clock import now_iso
from agent_tui.store.paths import session_file_name
from agent_tui.store.session import Session
from agent_tui.store.writer import FsyncPolicy


def default_copy_path(source: str | Path) -> Path:
    """A fresh session file name beside ``source``."""
    return Path(source).resolve().parent / session_file_name(str(uuid.uuid4()), now_iso())


def fork_session(
    source: str | Path,
    entry_id: str | None,
    out: str | Path | None = None,
    *,
    fsync: FsyncPolicy | None = None,
) -> Path:
    """A new session holding the path from the root to ``entry_id`` (default: the leaf)."""
    session = Session.open(source, write=False)
    return session.fork(entry_id, Path(out) if out is not None else default_copy_path(source), fsync=fsync)


def clone_session(
    source: str | Path, out: str | Path | None = None, *, fsync: FsyncPolicy | None = None
) -> Path:
    """A new session holding the current branch, up to the leaf."""
    return fork_session(source, None, out, fsync=fsync)


def fork_into(source: str | Path, cwd: str | Path, session_dir: str | Path | None = None) -> Path:
    """pi's ``--fork``: a new session of ``cwd`` (in its sessions folder, or ``session_dir``) holding
    every entry of ``source``, the whole tree, its header naming ``cwd`` and ``source`` as
    ``parentSession``."""
    from agent_tui.store.paths import make_private_dirs, session_dir_for
    from agent_tui.store.session import write_new_session

    session = Session.open(source, write=False)
    folder = session_dir_for(cwd, session_dir)
    make_private_dirs(folder)
    out = folder / session_file_name(str(uuid.uuid4()), now_iso())
    entries = [dict(e.data) for e in session.index.entries]
    return write_new_session(
        out, str(Path(cwd).resolve()), entries, parent_session=str(Path(source).resolve())
    )


__all__ = ["clone_session", "default_copy_path", "fork_into", "fork_session"]

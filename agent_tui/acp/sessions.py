"""The editor's session history: a session file by its id or path (``session/load``), and the
listing ``session/list`` pages through (what ``agent-tui sessions`` lists)."""

from __future__ import annotations

import os
from pathlib import Path

from acp.schema import SessionInfo

from agent_tui.store.paths import session_dir_for, sessions_root


def find_session(session_id: str, cwd: str, session_dir: str | None = None) -> Path | None:
    """A session file by its path, or by its id: in the cwd's folder first, then in any folder."""
    path = Path(session_id).expanduser()
    if session_id.endswith(".jsonl") and path.is_file():
        return path
    if not session_id or any(c in session_id for c in "/\\*?[]"):
        return None
    pattern = f"*_{session_id}.jsonl"
    for found in sorted(session_dir_for(cwd, session_dir).glob(pattern)):
        return found
    if session_dir is None:
        for found in sorted(sessions_root().glob(f"*/{pattern}")):
            return found
    return None


def listed_sessions(cwd: str | None, session_dir: str | None = None) -> list[SessionInfo]:
    """The sessions of ``cwd`` (every folder's when None), most recent first, from the session
    library's summaries (brought up to date; no full-text index). Blocking: run it in a thread."""
    from agent_tui.config import load_model_table
    from agent_tui.library.search import Library

    # the config file's prices, as the CLI's listing has them: the index's summaries are
    # priced by one table, else each listing here and there would price them all again
    load_model_table()
    library = Library.for_cwd(cwd or os.getcwd(), all_dirs=cwd is None, session_dir=session_dir)
    with library:
        library.refresh(text=False)  # a listing: no full-text index
        return [
            SessionInfo(session_id=s.id, cwd=s.cwd, title=s.title, updated_at=s.modified or None)
            for s in library.sessions()
        ]


__all__ = ["find_session", "listed_sessions"]

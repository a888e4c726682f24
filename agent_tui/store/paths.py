"""Where sessions live: the user data dir, one folder per working directory (as pi encodes it)."""

from __future__ import annotations

import os
from pathlib import Path


def data_home() -> Path:
    """``$AGENT_TUI_HOME`` if set, else the platform's user data dir for agent-tui."""
    override = os.environ.get("AGENT_TUI_HOME")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("agent-tui", appauthor=False))


def sessions_root() -> Path:
    return data_home() / "sessions"


def encode_cwd(cwd: str | Path) -> str:
    """pi's folder name for a cwd: ``/home/me/proj`` -> ``--home-me-proj--``."""
    text = str(Path(cwd).resolve())
    text = text[1:] if text[:1] in ("/", "\\") else text
    return "--" + text.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def session_dir_for(cwd: str | Path, session_dir: str | Path | None = None) -> Path:
    """The folder for new sessions of ``cwd``; ``session_dir`` (the --session-dir flag) wins."""
    if session_dir is not None:
        return Path(session_dir).expanduser()
    return sessions_root() / encode_cwd(cwd)


def make_private_dirs(folder: str | Path) -> None:
    """Create ``folder`` and any missing parents, each one we create private (0700, whatever the umask).

    ``Path.mkdir(parents=True, mode=...)`` applies the mode to the last folder only;
    folders that already exist are left as they are.
    """
    folder = Path(folder)
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            if not path.is_dir():
                raise
            continue  # made by someone else meanwhile: not ours to change
        os.chmod(path, 0o700)


def session_file_name(session_id: str, timestamp_iso: str) -> str:
    return timestamp_iso.replace(":", "-").replace(".", "-") + f"_{session_id}.jsonl"

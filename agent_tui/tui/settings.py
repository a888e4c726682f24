"""The user's config file, as far as the app needs it: read the ``theme`` key and write it back.

The file is TOML in the user config dir (``AGENT_TUI_CONFIG`` overrides the
path). Other parts of agent-tui keep their own keys in the same file, so the
theme is written by editing its one top-level line and keeping every other
line as it was.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from agent_tui.store.paths import make_private_dirs

_THEME_LINE = re.compile(r"^\s*theme\s*=")
_TABLE_LINE = re.compile(r"^\s*\[")


def default_config_path() -> Path:
    override = os.environ.get("AGENT_TUI_CONFIG")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("agent-tui", appauthor=False)) / "config.toml"


def read_config(path: Path) -> dict[str, Any]:
    """The parsed file; an absent or unreadable file is an empty config."""
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def read_theme(path: Path) -> str | None:
    value = read_config(path).get("theme")
    return value if isinstance(value, str) and value else None


def write_theme(path: Path, theme: str) -> None:
    """Set the top-level ``theme`` key, keeping every other line of the file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    new_line = f"theme = {json.dumps(theme)}"
    out: list[str] = []
    done = False
    in_table = False
    for line in lines:
        if _TABLE_LINE.match(line):
            if not done:
                out.append(new_line)
                done = True
            in_table = True
        if not in_table and _THEME_LINE.match(line):
            if not done:
                out.append(new_line)
                done = True
            continue
        out.append(line)
    if not done:
        out.append(new_line)
    make_private_dirs(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(out) + "\n", encoding="utf-8")
    os.replace(tmp, path)

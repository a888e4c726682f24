"""The user's config file, as far as the app needs it: the theme, the panes, the keys.

The file is TOML in the user config dir (``AGENT_TUI_CONFIG`` overrides the
path; :mod:`agent_tui.config` finds and reads it). Other parts of agent-tui keep
their own keys in the same file, so a setting the app remembers (``theme``,
``tree_pane``, ``panel_pane``) is written with ``tomlkit``, which changes that one
value and keeps every other line, comment and table as it was.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent_tui.config import ConfigError, read_config_file
from agent_tui.config import config_path as default_config_path
from agent_tui.store.paths import make_private_dirs

__all__ = [
    "default_config_path",
    "read_config",
    "read_flag",
    "read_pane",
    "read_theme",
    "write_pane",
    "write_theme",
]


def read_config(path: Path) -> dict[str, Any]:
    """The parsed file; an absent, unreadable or invalid file is an empty config."""
    try:
        return dict(read_config_file(path))
    except ConfigError:
        return {}


def read_theme(path: Path) -> str | None:
    """The top-level ``theme``; an absent, unreadable or invalid file has none."""
    value = read_config(path).get("theme")
    return value if isinstance(value, str) and value else None


def read_flag(path: Path, key: str) -> bool:
    """A true/false top-level key (e.g. ``ascii_symbols``); absent or not a boolean: False."""
    try:
        return read_config_file(path).get(key) is True
    except ConfigError:
        return False


def write_theme(path: Path, theme: str) -> None:
    """Set the top-level ``theme`` key, keeping every other line of the file."""
    write_setting(path, "theme", theme)


def read_pane(path: Path, pane: str) -> bool:
    """Whether the user wants ``pane`` ("tree" or "panel") beside the chat when it fits (default yes)."""
    value = read_config(path).get(f"{pane}_pane")
    return value if isinstance(value, bool) else True


def write_pane(path: Path, pane: str, shown: bool) -> None:
    write_setting(path, f"{pane}_pane", shown)


def write_setting(path: Path, key: str, value: str | bool) -> None:
    """Set the top-level ``key``, keeping every other line of the file.

    A file that is not valid TOML is left alone (an ``OSError`` saying so): rewriting it
    could lose what the user was in the middle of writing.
    """
    import tomlkit  # here, not at the top: only a change of setting needs it
    from tomlkit.exceptions import ParseError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    try:
        document = tomlkit.parse(text)
    except ParseError as e:
        raise OSError(f"{path} is not valid TOML ({e}); it was left as it is") from e
    document[key] = value
    make_private_dirs(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(tomlkit.dumps(document), encoding="utf-8")
    os.replace(tmp, path)

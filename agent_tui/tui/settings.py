"""The user's config file, as far as the app needs it: the theme, the panes, the keys.

The file is TOML in the user config dir (``AGENT_TUI_CONFIG`` overrides the
path; :mod:`agent_tui.config` finds and reads it, through the typed tree of
:mod:`agent_tui.config_schema`: these readers take its fields). Other parts of agent-tui keep
their own keys in the same file, so a setting the app remembers (``theme``,
``tree_pane``, ``panel_pane``) is written with ``tomlkit``, which changes that one
value and keeps every other line, comment and table as it was.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from agent_tui.config import ConfigError, read_settings
from agent_tui.config import config_path as default_config_path
from agent_tui.config_schema import ConfigFile
from agent_tui.store.paths import make_private_dirs

__all__ = [
    "config_problems",
    "default_config_path",
    "read_config",
    "read_flag",
    "read_pane",
    "read_theme",
    "write_pane",
    "write_theme",
]


def read_config(path: Path) -> ConfigFile:
    """The file's typed settings; an absent, unreadable or invalid file has the defaults (a
    mistyped key: its default, and a line in :func:`config_problems`)."""
    try:
        return read_settings(path).settings
    except ConfigError:
        return ConfigFile()


def config_problems(path: Path) -> list[str]:
    """A line per unknown or mistyped key of the file (each names the key and the file). An
    unreadable or invalid file is none here: the agent's own message says it."""
    try:
        checked = read_settings(path)
    except ConfigError:
        return []
    return [*checked.errors, *checked.warnings]


def read_theme(path: Path) -> str | None:
    """The top-level ``theme``; an absent, unreadable or invalid file has none."""
    return read_config(path).theme or None


def read_flag(path: Path, key: Literal["ascii_symbols"]) -> bool:
    """A true/false top-level key (``ascii_symbols``); absent or invalid: False."""
    return read_config(path).ascii_symbols if key == "ascii_symbols" else False


def write_theme(path: Path, theme: str) -> None:
    """Set the top-level ``theme`` key, keeping every other line of the file."""
    write_setting(path, "theme", theme)


def read_pane(path: Path, pane: str) -> bool:
    """Whether the user wants ``pane`` ("tree" or "panel") beside the chat when it fits (default yes)."""
    settings = read_config(path)
    return {"tree": settings.tree_pane, "panel": settings.panel_pane}.get(pane, True)


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

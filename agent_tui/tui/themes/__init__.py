"""Theme files (TOML) turned into Textual themes.

A theme file holds the fields of :class:`textual.theme.Theme`: ``name``,
``dark`` and the colours (``primary``, ``secondary``, ``accent``,
``foreground``, ``background``, ``surface``, ``panel``, ``success``,
``warning``, ``error``, ``boost``), plus an optional ``[variables]`` table.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from textual.theme import Theme

_COLOURS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "success",
    "warning",
    "error",
    "boost",
)

#: The themes that ship with the package: the ``*.toml`` files beside this module.
DEFAULT_THEMES_DIR = Path(__file__).resolve().parent


class ThemeFileError(ValueError):
    """A theme file that cannot be turned into a theme."""


def load_theme(path: Path) -> Theme:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ThemeFileError(f"{path}: {e}") from e
    except RecursionError:
        raise ThemeFileError(f"{path}: nested too deeply") from None
    name = data.get("name") or path.stem
    primary = data.get("primary")
    if not isinstance(primary, str):
        raise ThemeFileError(f"{path}: a theme needs a 'primary' colour")
    colours = {key: str(data[key]) if key in data else None for key in _COLOURS}
    variables = data.get("variables") or {}
    return Theme(
        name=str(name),
        primary=primary,
        secondary=colours["secondary"],
        accent=colours["accent"],
        foreground=colours["foreground"],
        background=colours["background"],
        surface=colours["surface"],
        panel=colours["panel"],
        success=colours["success"],
        warning=colours["warning"],
        error=colours["error"],
        boost=colours["boost"],
        dark=bool(data.get("dark", True)),
        variables={str(k): str(v) for k, v in variables.items()},
    )


def load_themes(folder: Path) -> tuple[list[Theme], list[str]]:
    """Every ``*.toml`` theme in ``folder``, and one error line per file that failed."""
    themes: list[Theme] = []
    errors: list[str] = []
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        try:
            themes.append(load_theme(path))
        except ThemeFileError as e:
            errors.append(str(e))
    return themes, errors

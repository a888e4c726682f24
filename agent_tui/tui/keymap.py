"""Which key does what: the binding ids, the ``pi`` preset, and the config's ``[keys]`` table.

Every binding of the app and the tree has an id (``compact``, ``tree.hide``...).
``keymap = "pi"`` in the config starts from :data:`PI`, pi's keys where they do not
clash with a key the app needs; ``[keys]`` then remaps single ids
(``compact = "ctrl+k"``; several keys: ``"f8,ctrl+k"``). Textual's ``App.set_keymap``
applies the result.
"""

from __future__ import annotations

from collections.abc import Mapping

from textual.binding import Binding

from agent_tui.config_schema import KEYMAPS, ConfigFile

#: pi's keys (docs/keybindings.md of pi-coding-agent) for the actions both have. The ones they
#: displace move to function keys: label (F7), the palette (F10), resume (F9), compact (F8).
PI: dict[str, str] = {
    "model": "ctrl+l,f4",  # pi: app.model.select
    "label": "f7",
    "cycle_model": "ctrl+p",  # pi: app.model.cycleForward
    "palette": "f10",
    "cycle_thinking": "shift+tab",  # pi: app.thinking.cycle (the chooser stays on Ctrl+T)
    "permission_mode": "alt+m",  # (Shift+Tab is pi's thinking cycle)
    "expand_tools": "ctrl+o",  # pi: app.tools.expand
    "resume": "f9",
    "compact": "f8",
    "composer.external_editor": "ctrl+g",  # pi: app.editor.external (Alt+E by default)
    "editor.select_all": "alt+a",  # Ctrl+A is pi's tui.editor.cursorLineStart
}

PRESETS: dict[str, dict[str, str]] = {"default": {}, "pi": PI}
assert tuple(PRESETS) == KEYMAPS  # the schema lists the presets (the JSON Schema's enum)


def load_keymap(config: ConfigFile, known: set[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """The keymap the config asks for, and a line per thing in it that is not understood (a value
    of the wrong type is the schema's line: :func:`agent_tui.tui.settings.config_problems`)."""
    problems: list[str] = []
    preset = config.keymap
    if preset not in PRESETS:
        problems.append(f"keymap = {preset!r}: use one of {', '.join(PRESETS)}; the default keys apply")
        preset = "default"
    keymap = dict(PRESETS[preset])
    for binding_id, key in config.keys.items():
        if not key.strip():
            problems.append(f'[keys] {binding_id}: the key must be a string such as "ctrl+k"')
        elif known is not None and binding_id not in known:
            problems.append(f"[keys] {binding_id}: no such binding (see the help screen, ?)")
        else:
            keymap[str(binding_id)] = ",".join(k.strip() for k in key.split(","))
    return keymap, problems


def binding_ids(*nodes: object) -> set[str]:
    """The ids of every binding the classes of ``nodes`` (or ``nodes``, classes: a screen not open
    yet) declare (what ``[keys]`` may remap)."""
    return {
        b.id
        for node in nodes
        for cls in (node if isinstance(node, type) else type(node)).__mro__
        for b in cls.__dict__.get("BINDINGS", ())
        if isinstance(b, Binding) and b.id
    }


_NAMES = {"ctrl": "Ctrl", "alt": "Alt", "shift": "Shift", "escape": "Esc", "enter": "Enter", "tab": "Tab"}


def _key_part(part: str, alone: bool) -> str:
    if part in _NAMES:
        return _NAMES[part]
    if len(part) == 1:
        return part if alone else part.upper()  # "h", but "Ctrl+G"
    if part[0] == "f" and part[1:].isdigit():
        return part.upper()
    return part.capitalize()


def key_name(keymap: Mapping[str, str], binding_id: str, default: str) -> str:
    """How a message names the key of ``binding_id`` under ``keymap`` (``default`` when it is not
    remapped): its first key, as ``Ctrl+G``, ``F8``, ``Esc`` or ``h``."""
    first = keymap.get(binding_id, default).split(",")[0].strip() or default
    parts = first.split("+")
    return "+".join(_key_part(part, len(parts) == 1) for part in parts)

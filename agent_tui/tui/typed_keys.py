"""Text typed where nothing takes text goes to the composer, decided as each key is read.

The app hands every key to whatever has the focus when it reads the key, before any handler
runs. Keys that arrive together (a fast typist while the app is busy, a paste without bracketed
paste, ``tmux send-keys``) are all handed to the tree if the first lands there: moving the focus
from a handler is too late for the rest of the burst ("word⏎" typed in the tree kept "w" and
the Enter branched). So the app asks here first, in order with the keys: a printable key that no
widget from the focused one up to the app binds (the tree's h / e / u / p / l / f / v, ``?``)
closes a drawer, focuses the composer and is inserted there; the keys after it follow the focus.
A key held with Alt or Ctrl is never text, though Textual gives ``alt+e`` the character ``e``.
A paste there (the terminal's, a middle click) goes to the composer too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.widgets import Input, TextArea

if TYPE_CHECKING:
    from agent_tui.tui.screens.main import MainScreen


#: Modifiers that make a key a command, never text: ``alt+e`` has ``e`` as its character
#: (Textual reads ESC e so), yet typing it would be wrong.
_COMMAND_MODIFIERS = frozenset({"alt", "ctrl", "super", "meta", "hyper"})


def modified(key: str) -> bool:
    """Whether ``key`` (a Textual key name such as ``alt+e``) is held with Alt, Ctrl or the like."""
    return any(part in _COMMAND_MODIFIERS for part in key.split("+")[:-1])


def bound(screen: MainScreen, key: str) -> bool:
    """Whether a widget from the focused one up to the app binds ``key`` (keymap applied)."""
    return any(key in bindings.key_to_bindings for _node, bindings in screen._binding_chain)


def redirect_typed_key(screen: MainScreen, event: events.Key) -> bool:
    """Insert ``event`` into the composer if it is text typed where nothing takes text (True)."""
    if screen.app.screen is not screen or not (event.is_printable and event.character):
        return False
    focused = screen.focused
    if (
        focused is None
        or event.key == "space"
        or modified(event.key)
        or isinstance(focused, TextArea | Input)
    ):
        return False
    if bound(screen, event.key):
        return False
    screen.close_drawer()
    composer = screen.composer
    screen.set_focus(composer)
    composer.insert(event.character)
    return True


def redirect_paste(screen: MainScreen, event: events.Paste) -> bool:
    """A paste where nothing takes text goes to the composer, as its own paste (a long one becomes
    a ``[paste #N]`` marker there, an image path an attachment): True when it was redirected."""
    if screen.app.screen is not screen:
        return False
    focused = screen.focused
    if isinstance(focused, TextArea | Input):
        return False
    screen.close_drawer()
    composer = screen.composer
    screen.set_focus(composer)
    composer.post_message(events.Paste(event.text))
    return True

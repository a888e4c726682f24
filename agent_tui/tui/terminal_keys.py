"""The bytes terminals send for the keys Textual 8's parser misreads, read as the keys they are.

Measured on textual 8.2.8 (``XTermParser`` fed the bytes, then ``tick()`` after the escape delay):

- ``ESC CR`` (Alt+Enter in tmux's default config, xterm with metaSendsEscape, VTE, and kitty or
  iTerm2 without the kitty keyboard protocol) is read as ``enter``: the parser finds no sequence,
  waits ``ESCDELAY`` (100 ms) and reissues the CR with alt, but ``enter`` comes from the
  sequence table, where the alt is dropped. So Alt+Enter sent (pi's follow-up key). Here
  ``ESC CR`` is ``alt+enter`` at once, as pi's TUI reads it in its legacy mode. The cost: Esc
  then Enter within 100 ms is one Alt+Enter, in pi too.
- ``CSI 27 ; MOD ; CODE ~`` (xterm's modifyOtherKeys format, what tmux 3.2-3.4 sends with
  ``extended-keys`` on) was read as a key named ``"\\r"``; here it is read as the kitty
  protocol's ``CSI CODE ; MOD u``, which Textual knows (``shift+enter``, ``alt+enter``...).
- ``ESC e`` is ``alt+e`` after the escape delay, but with ``e`` as its character: a TextArea
  typed the ``e`` (``TextArea._on_key`` inserts any printable character) and the Alt+E binding
  never ran. Here an Alt key read from ESC has no character, as the kitty protocol's
  ``CSI 101;3u`` has none. (A widget cannot simply skip the key: Textual runs the base class's
  ``_on_key`` unless ``prevent_default()``, and a prevented key no longer reaches the app's
  ``_on_key``, which checks the non-priority bindings.)
- ``CSI 17 ~`` is ``f6``, the kitty protocol's ``CSI 13;3u`` ``alt+enter``: right already.

Textual's Linux driver writes ``CSI > 13 u`` on start (the kitty protocol: disambiguate, every
key as an escape code, with its text) unless ``TEXTUAL_DISABLE_KITTY_KEY`` is set; agent-tui never
sets it, so kitty (and any terminal that takes the push) reports every modifier exactly and the
legacy bytes above are only the fallback.

The hook: ``LinuxDriver.run_input_thread`` (and ``WebDriver``'s, for ``agent-tui serve``) builds
``XTermParser(...)``, a module global, with no parameter to change it. :class:`KeyDriver` runs
that same function (Textual's code object, not a copy) with the name bound to :class:`KeyParser`,
so it follows Textual's version; a unit test fails if the function stops naming ``XTermParser``.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterable

from textual import events
from textual._xterm_parser import XTermParser
from textual.driver import Driver
from textual.drivers import linux_driver
from textual.drivers.web_driver import WebDriver

from agent_tui.tui.signals import TerminalDriver

#: Alt+Enter as terminals without the kitty protocol send it (ESC, then the CR of Enter).
ESC_CR = "\x1b\r"
#: xterm's modifyOtherKeys report: ``CSI 27 ; modifiers ; code ~``.
_MODIFY_OTHER_KEYS = re.compile(r"\x1b\[27;(\d+);(\d+)~")


#: The bytes of each key a default binding uses, as tmux 3.3 (default config) sends them to the
#: program, measured with ``send-keys`` into a raw reader; xterm, VTE and kitty/iTerm2 without the
#: kitty protocol send the same (Alt as ESC: on macOS, Option must be set to send Esc+ / Meta).
#: :class:`KeyParser` reads each as exactly its key, and no two alike (tests check both).
LEGACY_BYTES: dict[str, str] = {
    "ctrl+a": "\x01",
    "ctrl+c": "\x03",
    "ctrl+f": "\x06",
    "ctrl+g": "\x07",
    "ctrl+j": "\n",
    "ctrl+l": "\x0c",
    "ctrl+n": "\x0e",
    "ctrl+o": "\x0f",
    "ctrl+p": "\x10",
    "ctrl+q": "\x11",
    "ctrl+r": "\x12",
    "ctrl+s": "\x13",
    "ctrl+t": "\x14",
    "ctrl+v": "\x16",
    "escape": "\x1b",
    "enter": "\r",
    "alt+enter": ESC_CR,
    "alt+e": "\x1be",
    "alt+t": "\x1bt",
    "alt+up": "\x1b[1;3A",
    "tab": "\t",
    "shift+tab": "\x1b[Z",
    "backspace": "\x7f",
    "delete": "\x1b[3~",
    "space": " ",
    "question_mark": "?",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "home": "\x1b[1~",  # xterm and VTE: ESC O H (both read as home)
    "end": "\x1b[4~",  # xterm and VTE: ESC O F
    "pageup": "\x1b[5~",
    "pagedown": "\x1b[6~",
    "ctrl+home": "\x1b[1;5H",
    "ctrl+end": "\x1b[1;5F",
    "f1": "\x1bOP",
    "f2": "\x1bOQ",
    "f3": "\x1bOR",
    "f4": "\x1bOS",
    "f5": "\x1b[15~",
    "f6": "\x1b[17~",
    "f7": "\x1b[18~",
    "f8": "\x1b[19~",
    "f9": "\x1b[20~",
    "f10": "\x1b[21~",
}
#: Keys only a terminal speaking the kitty protocol (or tmux with ``extended-keys``) tells apart:
#: tmux's default sends Shift+Enter as a plain CR. A binding may use one only beside a key of
#: :data:`LEGACY_BYTES` (Shift+Enter beside Ctrl+J).
KITTY_ONLY = frozenset({"shift+enter"})


class KeyParser(XTermParser):
    """Textual's parser, with ``ESC CR`` as Alt+Enter and xterm's modifyOtherKeys understood."""

    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        if sequence == ESC_CR or (alt and sequence == "\r"):
            # the kitty protocol's alt+enter has no character either (it is no text)
            yield events.Key("alt+enter", None)
            return
        match = _MODIFY_OTHER_KEYS.fullmatch(sequence)
        if match is not None:
            sequence = f"\x1b[{match.group(2)};{match.group(1)}u"
        for key in super()._sequence_to_key_events(sequence, alt):
            if alt and key.key.startswith("alt+"):
                # ESC e: ``alt+e`` with no text, as the kitty protocol reports it (Textual gave it
                # the character ``e``, so a TextArea typed it and its binding never ran)
                key = events.Key(key.key, None)
            yield key


def _with_parser(function: types.FunctionType) -> types.FunctionType:
    """``function`` (Textual's ``run_input_thread``) with its global ``XTermParser`` as ours."""
    scope = {**function.__globals__, "XTermParser": KeyParser}
    rebound = types.FunctionType(
        function.__code__, scope, function.__name__, function.__defaults__, function.__closure__
    )
    rebound.__qualname__ = function.__qualname__
    return rebound


def reads_with_key_parser(function: types.FunctionType) -> bool:
    """Whether ``function`` builds its parser by the global name the rebinding replaces."""
    return "XTermParser" in function.__code__.co_names


_stock_input_thread = linux_driver.LinuxDriver.run_input_thread


class KeyDriver(TerminalDriver):
    """The app's terminal driver (hangups, see :mod:`signals`), reading keys with :class:`KeyParser`."""

    run_input_thread = _with_parser(_stock_input_thread)  # type: ignore[arg-type]


class WebKeyDriver(WebDriver):
    """``agent-tui serve``'s driver (xterm.js in the browser sends ESC CR for Alt+Enter too)."""

    run_input_thread = _with_parser(WebDriver.run_input_thread)  # type: ignore[arg-type]


def key_driver(driver: type[Driver]) -> type[Driver]:
    """The driver to run the app with in place of ``driver``, Textual's choice for this terminal:
    the same with :class:`KeyParser` (a driver other than Textual's Linux or web one stays)."""
    if driver is linux_driver.LinuxDriver:
        return KeyDriver
    if driver is WebDriver:
        return WebKeyDriver
    return driver


__all__ = [
    "ESC_CR",
    "KITTY_ONLY",
    "LEGACY_BYTES",
    "KeyDriver",
    "KeyParser",
    "WebKeyDriver",
    "key_driver",
    "reads_with_key_parser",
]

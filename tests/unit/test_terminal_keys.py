"""The bytes terminals send, read as keys by the app's parser (``tui/terminal_keys.py``), and every
default binding on a key those bytes deliver."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import time

import pytest
from textual import events
from textual.binding import Binding
from textual.dom import DOMNode
from textual.drivers.linux_driver import LinuxDriver
from textual.keys import REPLACED_KEYS, key_to_character

import agent_tui.tui
from agent_tui.tui.terminal_keys import (
    KITTY_ONLY,
    LEGACY_BYTES,
    KeyDriver,
    KeyParser,
    reads_with_key_parser,
)


def keys_of(data: str) -> list[tuple[str, str | None]]:
    """(key, character) of every key event the parser makes of ``data``, the escape delay passed."""
    parser = KeyParser()
    read = list(parser.feed(data))
    time.sleep(0.15)  # past ESCDELAY (100 ms): a lone ESC or ESC+letter is reported
    read += list(parser.tick())
    keys = [e for e in read if isinstance(e, events.Key)]
    assert len(keys) == len(read), read
    return [(e.key, e.character) for e in keys]


def test_esc_cr_is_alt_enter_at_once_and_plain_cr_is_enter() -> None:
    parser = KeyParser()
    read = list(parser.feed("\x1b\r"))  # no wait for the escape delay
    assert [(e.key, e.character) for e in read if isinstance(e, events.Key)] == [("alt+enter", None)]
    assert len(read) == 1
    assert keys_of("\r") == [("enter", "\r")]
    assert keys_of("ab\x1b\rc") == [("a", "a"), ("b", "b"), ("alt+enter", None), ("c", "c")]


def test_esc_letter_is_alt_letter_with_no_text_to_type() -> None:
    assert keys_of("\x1be") == [("alt+e", None)]
    assert keys_of("\x1bt") == [("alt+t", None)]
    assert keys_of("\x1b") == [("escape", "\x1b")]


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ("\x1b[27;3;13~", "alt+enter"),  # xterm modifyOtherKeys / tmux 3.2-3.4 extended-keys
        ("\x1b[27;2;13~", "shift+enter"),
        ("\x1b[13;3u", "alt+enter"),  # the kitty protocol
        ("\x1b[13;2u", "shift+enter"),
        ("\x1b[101;3u", "alt+e"),
    ],
)
def test_extended_key_reports_are_the_keys_they_name(data: str, key: str) -> None:
    assert [k for k, _ in keys_of(data)] == [key]


@pytest.mark.parametrize("key", sorted(LEGACY_BYTES))
def test_each_key_a_binding_uses_is_read_from_its_bytes(key: str) -> None:
    assert [k for k, _ in keys_of(LEGACY_BYTES[key])] == [key]


def test_no_two_keys_send_the_same_bytes() -> None:
    assert len(set(LEGACY_BYTES.values())) == len(LEGACY_BYTES)


def _bindings() -> list[tuple[str, str]]:
    """(class.action, keys) of every binding of every widget and screen of the app."""
    found: list[tuple[str, str]] = []
    for info in pkgutil.walk_packages(agent_tui.tui.__path__, "agent_tui.tui."):
        module = importlib.import_module(info.name)
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and issubclass(cls, DOMNode) and cls.__module__ == module.__name__:
                for b in cls.__dict__.get("BINDINGS", ()):
                    if isinstance(b, Binding):
                        found.append((f"{name}.{b.action}", b.key))
    return found


def _typed(key: str) -> bool:
    """A key that is one printable character (``h``, or Textual's name for it: ``slash``)."""
    character = key_to_character(REPLACED_KEYS.get(key, key))  # "slash" is Unicode's "solidus"
    return character is not None and character.isprintable()


def test_every_default_binding_has_a_key_every_terminal_delivers() -> None:
    """A key only the kitty protocol tells apart (Shift+Enter) only beside one that needs none."""
    bindings = _bindings()
    assert len(bindings) > 40
    for where, keys in bindings:
        names = [k.strip() for k in keys.split(",")]
        delivered = [k for k in names if _typed(k) or k in LEGACY_BYTES]
        assert delivered, f"{where}: {keys} is no key a terminal without the kitty protocol sends"
        assert set(names) - set(delivered) <= KITTY_ONLY, f"{where}: {keys}"


def test_the_driver_runs_textuals_input_thread_with_the_key_parser() -> None:
    """The rebinding of ``XTermParser`` in Textual's own function: it must still name it (a
    Textual upgrade that builds the parser otherwise fails here, not silently in a terminal)."""
    stock = LinuxDriver.run_input_thread
    assert reads_with_key_parser(stock)  # type: ignore[arg-type]
    ours = KeyDriver.run_input_thread
    assert ours.__code__ is stock.__code__
    assert ours.__globals__["XTermParser"] is KeyParser


def test_the_web_driver_of_serve_reads_with_the_key_parser_too() -> None:
    from textual.drivers.web_driver import WebDriver

    from agent_tui.tui.terminal_keys import WebKeyDriver, key_driver

    assert reads_with_key_parser(WebDriver.run_input_thread)  # type: ignore[arg-type]
    assert WebKeyDriver.run_input_thread.__globals__["XTermParser"] is KeyParser
    assert key_driver(LinuxDriver) is KeyDriver
    assert key_driver(WebDriver) is WebKeyDriver
    assert key_driver(KeyDriver) is KeyDriver  # any other driver stays

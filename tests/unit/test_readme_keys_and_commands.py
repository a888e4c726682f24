"""The README's key tables and slash-command list name every binding id and every command of the
code (a key or command added without its line in the README fails here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.binding import Binding

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.commands import COMMANDS
from agent_tui.tui.screens.main import MainScreen
from agent_tui.tui.widgets.composer import Composer
from agent_tui.tui.widgets.session_tree import SessionTree

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _keymap_table() -> str:
    """The rows of the README's ``| id | default | ...`` table (the keymap ids)."""
    start = README.index("| id | default |")
    return README[start : README.index("\n\n", start)]


BINDING_IDS = sorted(
    b.id
    for owner in (AgentTuiApp, MainScreen, SessionTree, Composer)
    for b in owner.BINDINGS
    if isinstance(b, Binding) and b.id
)


@pytest.mark.parametrize("binding_id", BINDING_IDS)
def test_every_binding_id_is_in_the_readmes_keymap_table(binding_id: str) -> None:
    assert f"`{binding_id}`" in _keymap_table()


def test_the_keymap_table_names_no_id_the_code_lacks() -> None:
    named = set(re.findall(r"`([a-z_]+(?:\.[a-z_]+)?)`", _keymap_table()))
    assert named - set(BINDING_IDS) == set()


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_every_slash_command_is_in_the_readme(name: str) -> None:
    assert re.search(rf"`/{name}[ `]", README), f"/{name}"

"""The help screen lists how to quit (Ctrl+Q, remappable as the binding ``quit``) and what the
panel's keys do, beside the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from agent_tui.tui.screens.help import help_rows
from tests.support.dialogs import open_help_composer, settle
from tests.support.tui_fixtures import make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


async def test_help_lists_quit_and_the_panels_enter(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = {(r.section, r.keys, r.what) for r in help_rows(app)}
        assert ("Anywhere", "^q", "Quit") in rows
        assert any(section == "In the panel" and "full text" in what for section, _, what in rows), rows


async def test_quit_can_be_remapped_by_id(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[keys]\nquit = "f12"\n')
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert ("Anywhere", "f12", "Quit") in {(r.section, r.keys, r.what) for r in help_rows(app)}
        await pilot.press("f12")
        await pilot.pause()
    assert app.return_code == 0


async def test_help_lists_the_composers_typed_commands(tmp_path: Path) -> None:
    """``!``, ``!!``, ``@``, ``/`` and Tab are handled in the composer's code, not by bindings: the
    help lists them too, beside the composer's bound keys (Alt+Enter's follow-up, Alt+E)."""
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        composer = {r.keys: r.what for r in help_rows(app) if r.section == "In the composer"}
        for keys in ("!cmd", "!!cmd", "@", "/", "Tab", "Enter"):
            assert keys in composer, sorted(composer)
        assert "never sent to the model" in composer["!!cmd"]
        assert any("Follow-up" in what for what in composer.values()), composer
        assert any("Editor" in what for what in composer.values()), composer


def test_the_help_at_80x24_shows_the_composers_typed_commands(snap_compare: Any, tmp_path: Path) -> None:
    """A snapshot of the help scrolled to the composer's section at 80x24 (the dialog fills the
    screen): ``/``, ``@``, Tab, ``!cmd`` and ``!!cmd`` are there word for word; the first screen
    of the help (tests/e2e/test_tui_dialog_snapshots.py) ends before them."""
    app = make_app(tmp_path, sample_session(tmp_path))

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await open_help_composer(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)

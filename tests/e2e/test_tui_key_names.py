"""What the app says about its keys names the keys the keymap gives them: with ``keymap = "pi"``
compact is F8 (Ctrl+G opens the external editor), so marking a span in the tree must not say
"Ctrl+G compacts it"; a quit moved in ``[keys]`` is the key Ctrl+C's hint names."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.tui.keymap import key_name
from tests.support.pilot import notices, select, wait_for
from tests.support.tui_fixtures import SIZE, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


async def test_with_pis_keys_the_span_hints_name_f8_for_compact(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('keymap = "pi"\n[keys]\n"tree.hide" = "x"\n')
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await select(pilot, app, "a2")
        await pilot.press("v")
        await wait_for(
            pilot, lambda: any(n.startswith("Marked a2") for n in notices(app)), "the mark's notice"
        )
        notice = next(n for n in notices(app) if n.startswith("Marked a2"))
        assert "F8 compacts it" in notice and "Ctrl+G" not in notice, notice
        assert "x hides it" in notice and "u restores it" in notice and "v unmarks" in notice, notice
        await pilot.press("up")
        await wait_for(
            pilot, lambda: any(line.startswith("F8: ") for line in app.panel.edit_preview), "preview"
        )
        preview = app.panel.edit_preview
        assert not any(line.startswith("Ctrl+G") for line in preview), preview
        assert any(line.startswith("x: ") for line in preview), preview


async def test_ctrl_c_with_nothing_selected_names_the_quit_key_in_use(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[keys]\nquit = "f12"\n')
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: any("quits" in n for n in notices(app)), "the hint")
        hint = next(n for n in notices(app) if "quits" in n)
        assert hint == "Nothing selected to copy. Esc stops a reply; F12 quits.", hint


def test_key_names() -> None:
    assert key_name({}, "compact", "ctrl+g") == "Ctrl+G"
    assert key_name({"compact": "f8"}, "compact", "ctrl+g") == "F8"
    assert key_name({"quit": "ctrl+x,f12"}, "quit", "ctrl+q") == "Ctrl+X"
    assert key_name({}, "tree.hide", "h") == "h"
    assert key_name({}, "escape", "escape") == "Esc"
    assert key_name({}, "cycle_thinking", "shift+tab") == "Shift+Tab"

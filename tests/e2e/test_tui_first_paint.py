"""What the first frame waits for: no entry models imported, a big session's usage counted off the
event loop, and a footer rebuilt only when the keys it shows change."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets._footer import FooterKey

from agent_tui.tui.widgets.key_footer import KeyFooter
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, linear_session, make_app, sample_session

pytestmark = pytest.mark.timeout(90)


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_the_app_module_does_not_import_the_entry_models() -> None:
    """pydantic builds the entry models' validators (~0.1 s); the first frame needs none of them
    (they are preloaded after it)."""
    code = "import sys, agent_tui.tui.app; print(sorted(m for m in ('pydantic', 'agent_tui.store.entries') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


async def test_a_big_sessions_usage_is_counted_after_the_first_frame(tmp_path: Path) -> None:
    path = linear_session(tmp_path / "sessions" / "big.jsonl", 4400)  # 2,200 replies with usage
    app = make_app(tmp_path, path)
    counted_in: list[str] = []
    catch_up = app._figures.catch_up

    def recording(index: Any, path: Any = None) -> None:
        counted_in.append(threading.current_thread().name)
        catch_up(index, path)

    app._figures.catch_up = recording  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_paint_at is not None, "the first frame")
        await wait_for(pilot, lambda: app._figures.totals.calls == 2200, "the usage counted")
        assert app._figures.totals.seen == 4400
        assert counted_in and counted_in[0] != threading.main_thread().name  # not on the event loop


async def test_the_footer_is_rebuilt_only_when_its_keys_change(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.first_paint_at is not None, "the first frame")
        footer = app.screen.query_one(KeyFooter)
        rebuilt = 0
        recompose = footer.recompose

        async def counting() -> None:
            nonlocal rebuilt
            rebuilt += 1
            await recompose()

        footer.recompose = counting  # type: ignore[method-assign]

        def keys() -> list[str]:
            return [str(k.description) for k in app.screen.query(FooterKey)]

        assert "Send" in keys()
        await pilot.press("f1")  # the tree: its keys replace the composer's
        await wait_for(pilot, lambda: "Continue here" in keys(), "the tree's keys")
        assert rebuilt == 1
        await pilot.press("down")  # the cursor moves; the keys shown stay
        await pilot.press("up")
        await pilot.pause(0.1)
        assert rebuilt == 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: "Send" in keys(), "the composer's keys again")
        assert rebuilt == 2


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_no_frame_is_rendered_to_be_thrown_away_at_the_start(
    tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual renders the whole screen inside the start's batch, where nothing is written (50-90 ms
    at 200x50); the main screen renders its first frame once, when the terminal's size comes."""
    from agent_tui.tui.region_compositor import RegionCompositor

    app = make_app(tmp_path, sample_session(tmp_path))
    renders: list[tuple[bool, str]] = []  # before the first frame: (the app's batch open, update)
    render_update = RegionCompositor.render_update

    def recording(self: RegionCompositor, *args: Any, **kwargs: Any) -> Any:
        update = render_update(self, *args, **kwargs)
        if app.first_paint_at is None:
            renders.append((bool(app._batch_count), type(update).__name__))
        return update

    monkeypatch.setattr(RegionCompositor, "render_update", recording)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.first_paint_at is not None, "the first frame")
        assert renders, "no frame rendered before the first paint"
        assert not any(batched for batched, _ in renders), renders
        assert renders[0][1] == "LayoutUpdate", renders  # the first one draws the whole screen


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_start_lays_the_screen_out_once_inside_the_batch(
    tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screen's first layout posts the screen's own ``Resize`` (20-30 ms a layout at 200x50):
    inside the start's batch it lays nothing out again, the terminal's ``Resize`` after it does."""
    from textual.screen import Screen

    app = make_app(tmp_path, sample_session(tmp_path))
    layouts: list[bool] = []  # the main screen's layouts before the first frame: inside the batch
    refresh_layout = Screen._refresh_layout

    def recording(self: Screen[Any], *args: Any, **kwargs: Any) -> None:
        if app.first_paint_at is None and self is app._main_screen:
            layouts.append(bool(app._batch_count))
        refresh_layout(self, *args, **kwargs)

    monkeypatch.setattr(Screen, "_refresh_layout", recording)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.first_paint_at is not None, "the first frame")
        assert layouts.count(True) == 1, layouts
        assert False in layouts, layouts  # (and laid out again once the terminal's size came)

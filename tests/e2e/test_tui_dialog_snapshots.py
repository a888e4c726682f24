"""Snapshots of every dialog (and the queue, and the first-run notice) at 80x24 and 200x50.

At 80x24 a dialog is compact (no padding, the whole height): its title, its body and the hint of
what to press are all on screen, and no line is cut. Update with ``pytest
tests/e2e/test_tui_dialog_snapshots.py --snapshot-update`` after a deliberate change, and read
the text in the SVGs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from agent_tui.tui.agent_bridge import ModelChoice
from tests.support.dialogs import OPENERS, dialog_app, open_compaction_review, review_factory, settle
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.model_env import without_provider_env
from tests.support.tui_fixtures import make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

SIZES = [(80, 24), (200, 50)]


def _size_id(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


@pytest.mark.parametrize("size", SIZES, ids=_size_id)
@pytest.mark.parametrize("dialog", list(OPENERS))
def test_dialog(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dialog: str, size: tuple[int, int]
) -> None:
    app = dialog_app(tmp_path, monkeypatch, dialog)
    assert snap_compare(app, terminal_size=size, run_before=OPENERS[dialog])


@pytest.mark.parametrize("size", SIZES, ids=_size_id)
def test_first_run_without_a_model(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    without_provider_env(monkeypatch)
    app = make_app(
        tmp_path, None, model=ModelChoice(config_path=Path("/home/someone/.config/agent-tui/config.toml"))
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=_size_id)
def test_compaction_review(
    snap_compare: Any, tmp_path: Path, server: FakeModelServer, size: tuple[int, int]
) -> None:
    factory, provider = review_factory(server)
    summary = (
        "## Goal\nFix the failing test in parser.py.\n\n## Done\n- `parse` strips its input "
        "before int(): a trailing newline made it fail.\n\n## Next\n- explain the fix."
    )
    # The history's summary (the latest turn is kept whole: its question goes verbatim).
    server.push(anthropic_stream(text(summary)))
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=factory)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await open_compaction_review(pilot)
        await provider.aclose()  # the summary is written: the rest is on screen

    assert snap_compare(app, terminal_size=size, run_before=run_before)

"""The edit preview when the context figure is a reported one: an edit makes the figure an
estimate (the reported usage is from before it), so the line shows before and after both
estimated (the server's count named beside them): hiding takes tokens out, it never reads
"+1,600 tokens" nor a context that grows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.pilot import select
from tests.support.session_builder import Builder, assistant, user
from tests.support.tui_fixtures import make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


def _reported_low(path: Path) -> Path:
    """A reply whose reported usage (15 tokens) is far below the estimate of what was sent."""
    b = Builder()
    b.message(user("Please read this long question. " * 60))  # about 480 tokens by the estimate
    b.message(assistant("Short answer."))
    b.message(user("and a follow-up"))
    b.message(assistant("Done."))
    return b.write(path)


async def test_hiding_under_a_reported_figure_says_the_tokens_it_takes_out(tmp_path: Path) -> None:
    app = make_app(tmp_path, _reported_low(tmp_path / "s.jsonl"))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await select(pilot, app, "e0003")  # "and a follow-up"
        hide, _replace, restore, _pin = app.edit_preview_lines("e0003")
        own = app.edit_change("hide", "e0003")
        assert not isinstance(own, str)
        assert hide.startswith("hide e0003: −"), hide
        assert f"both estimated: the panel's {own.tokens_before:,} is the server's count" in hide, hide
        assert own.estimated_before is not None
        # one basis on both sides: a removal never reads as the context growing
        assert f"(context ≈{own.estimated_before:,} → ≈{own.tokens_after:,})" in hide
        assert own.estimated_before > own.tokens_after
        assert own.tokens_before < own.tokens_after, "the reported figure alone was lower than the estimate"
        assert restore == "restore e0003: no change to the next request", "nothing hidden to restore"

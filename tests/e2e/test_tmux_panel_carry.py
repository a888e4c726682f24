"""The panel's carry-cost sort with the byte a terminal sends, in tmux at 80x24: `c` (0x63) while
the panel holds the focus sorts its rows by carry cost, and again goes back; it never types."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.test_tmux_keys import started
from tests.support.fake_model_server import FakeModelServer, openai_stream

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def test_c_in_the_panel_sorts_by_carry_cost_and_back(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(openai_stream("The first reply."), openai_stream("The second reply."))
    tmux = started(tmp_path, server, (80, 24))
    try:
        for text, reply in (("first question", "The first reply."), ("second one", "The second reply.")):
            tmux.type(text)
            tmux.keys("Enter")
            tmux.wait_text(reply)
        tmux.keys("F3")  # the panel: shown and focused (a drawer at 80 columns)
        tmux.wait_text("What the model sees")
        time.sleep(1.2)  # a letter right after another key is typing: it would go to the composer
        tmux.keys("-H", "63")
        tmux.wait_text("sorted by carry cost", timeout=30)
        assert "carried" in tmux.screen()
        time.sleep(1.2)
        tmux.keys("-H", "63")
        deadline = time.monotonic() + 30
        while "sorted by carry cost" in tmux.screen():
            assert time.monotonic() < deadline, tmux.screen()
            time.sleep(0.1)
    finally:
        tmux.stop()

"""A program the tests start in tmux runs in the test's own home too: tmux's server is the test's
(its socket under the test's home), so it never hands over the developer's environment."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.tmux import Tmux


def test_a_program_in_tmux_sees_the_tests_home(tmp_path: Path) -> None:
    tmux = Tmux(f"agent-tui-home-{os.getpid()}", 120, 10)
    tmux.start("""sh -c 'echo "home=[$HOME]"; echo "tmux=[$TMUX]"; sleep 30'""", tmp_path)
    try:
        screen = tmux.wait_text("tmux=[")
    finally:
        tmux.stop()
    assert f"home=[{Path.home()}]" in screen
    assert f"tmux=[{os.environ['TMUX_TMPDIR']}" in screen, "the server's socket is under the test's home"

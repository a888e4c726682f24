"""The progress line a slow first index shows on stderr: only on a terminal, only after a delay,
rewritten in place and erased at the end."""

from __future__ import annotations

import io

from agent_tui.cli.progress_line import ProgressLine


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_slow_step_shows_its_progress_in_place_and_erases_it() -> None:
    out, clock = _Terminal(), _Clock()
    progress = ProgressLine("sessions", stream=out, delay=1.0, every=0.2, clock=clock)
    progress(1, 200)
    assert out.getvalue() == ""  # a step that ends within the delay shows nothing
    clock.now += 1.5
    progress(60, 200)
    assert out.getvalue() == "\ragent-tui: indexing sessions: 60/200 (2 s)\r"
    progress(61, 200)  # within 0.2 s of the last one: not rewritten
    assert out.getvalue().count("indexing") == 1
    clock.now += 0.5
    progress(200, 200)
    assert out.getvalue().endswith("\ragent-tui: indexing sessions: 200/200 (2 s)\r")
    progress.done()
    erased = out.getvalue().rsplit("\r", 2)[-2]
    assert erased == " " * len("agent-tui: indexing sessions: 200/200 (2 s)")


def test_nothing_is_written_when_stderr_is_not_a_terminal() -> None:
    out, clock = io.StringIO(), _Clock()
    progress = ProgressLine("sessions", stream=out, delay=0.0, clock=clock)
    clock.now += 5
    progress(10, 20)
    progress.done()
    assert out.getvalue() == ""

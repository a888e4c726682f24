"""The figures a compaction and a branch summary report, in the real program in tmux at 80x24.

The fake server reports 120 tokens of usage for each reply, far below the estimate of what the app
sends (its system prompt and tools alone are about 2,500): the notice put that server count before
an estimate after and read ``Compacted: context 120 → 2,583 tokens`` for a compaction that took
tokens out, and a branch summary, which has no "before", read ``Compacted: context 0 → 196``.
Now both figures are estimated (one basis) and a branch summary says what it is."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.e2e.test_tmux_keys import started
from tests.support.fake_model_server import FakeModelServer, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

LONG = "The parser keeps the trailing newline of every line it reads, so compare stripped text. " * 20


def toasts(screen: str) -> str:
    """The notices' text: the part of each row right of a toast's left edge (``▌``), joined."""
    parts = [row.split("▌", 1)[1].strip(" │╮╯") for row in screen.splitlines() if "▌" in row]
    return " ".join(p for p in parts if p)


def talk(tmux: Tmux, message: str, reply: str) -> None:
    tmux.type(message)
    tmux.wait_text(message)
    tmux.keys("Enter")
    tmux.wait_text(reply, timeout=60)
    tmux.wait(lambda s: "streaming" not in s, "the reply's end", 30)


def test_a_compaction_reports_before_and_after_on_one_basis(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(
        openai_stream(LONG + "End-1."),
        openai_stream(LONG + "End-2."),
        openai_stream(LONG + "End-3."),
        openai_stream("## Goal\nFix the parser."),  # the summary
    )
    tmux = started(tmp_path, server, (80, 24))
    try:
        for n, word in enumerate(("End-1.", "End-2.", "End-3.")):
            talk(tmux, f"question {n}", word)
        tmux.keys("C-g")
        tmux.wait_text("Enter compacts")
        tmux.keys("Enter")
        screen = tmux.wait(lambda s: "Compacted:" in toasts(s) and "tokens." in toasts(s), "the notice", 60)
        line = toasts(screen)
        found = re.search(r"Compacted: context ≈([\d,]+) → ≈([\d,]+) tokens\.", line)
        assert found, line
        before, after = (int(x.replace(",", "")) for x in found.groups())
        assert before > after > 2_000, line  # the summary took the replies out; tools and prompt stay
    finally:
        tmux.stop()


def test_a_branch_summary_says_so_not_compacted_from_zero(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(
        openai_stream("First answer."),
        openai_stream("Second answer."),
        openai_stream("## Goal\nThe second question was asked."),  # the branch summary
    )
    tmux = started(tmp_path, server, (80, 24))
    try:
        talk(tmux, "first question", "First answer.")
        talk(tmux, "second question", "Second answer.")
        tmux.keys("F1")  # the tree, its selection on the leaf (the second answer)
        tmux.wait_text("Continue here")
        time.sleep(1.2)  # a key right after another is typing: it would go to the composer
        tmux.keys("Up")  # the second question: Enter goes back to before it, leaving two behind
        time.sleep(0.3)
        tmux.keys("Enter")
        tmux.wait_text("Summarize branch?")
        time.sleep(1.2)  # a question takes no key in its first moment (never answered by accident)
        tmux.keys("Down")
        time.sleep(0.3)
        tmux.keys("Enter")  # Summarize
        screen = tmux.wait(lambda s: "tokens." in toasts(s), "the notice", 60)
        line = toasts(screen)
        assert re.search(r"Branch summary written; the next request: ≈[\d,]+ tokens\.", line), line
        assert "Compacted" not in line, line
    finally:
        tmux.stop()

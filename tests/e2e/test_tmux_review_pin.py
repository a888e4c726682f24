"""The compaction review's Ctrl+N with the byte a terminal sends (0x0e), in tmux at 80x24: it pins
the entry that holds what the summary leaves out (an ordinary ``pin`` entry), the review counts
again with nothing left out, and Ctrl+S (0x13) still applies the compaction after the pins."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_tmux_keys import started
from tests.e2e.test_tui_e2e import wait_until
from tests.support.fake_model_server import FakeModelServer, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

CTRL_N = ["-H", "0e"]
CTRL_S = ["-H", "13"]
CTRL_R = ["-H", "12"]
FIRST = "the server must listen on 8080"


def entries(tmp_path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for file in (tmp_path / "sessions").rglob("*.jsonl"):
        out += [json.loads(line) for line in file.read_text().splitlines() if line.strip()]
    return out


def talk(tmux: Tmux, message: str, reply: str) -> None:
    tmux.type(message)
    tmux.wait_text(message)
    tmux.keys("Enter")
    tmux.wait_text(reply, timeout=60)
    tmux.wait(lambda s: "streaming" not in s, "the reply's end", 30)


def test_ctrl_n_in_the_review_pins_what_the_summary_leaves_out(
    tmp_path: Path, server: FakeModelServer
) -> None:
    server.push(
        openai_stream("Noted-1."),
        openai_stream("Noted-2."),
        openai_stream("Noted-3."),
        openai_stream("## Goal\nFix the parser."),  # the summary: no 8080
        openai_stream("## Goal\nFix the parser."),  # (of the turn the cut splits, if it asks)
    )
    tmux = started(tmp_path, server, (80, 24))
    try:
        talk(tmux, FIRST, "Noted-1.")
        talk(tmux, "now fix the parser", "Noted-2.")
        talk(tmux, "and add a test", "Noted-3.")
        tmux.keys("C-g")
        tmux.wait_text("Ctrl+R")
        tmux.keys(*CTRL_R)
        tmux.wait_text("pin lost", timeout=60)
        tmux.wait_text("leaves out")
        time.sleep(1.5)  # the review appeared unasked: its guard lets keys act after a pause
        tmux.keys(*CTRL_N)
        wait_until(lambda: any(e["type"] == "pin" for e in entries(tmp_path)), "the pin entry")
        pins = [e for e in entries(tmp_path) if e["type"] == "pin"]
        first = next(e for e in entries(tmp_path) if e["type"] == "message" and FIRST in json.dumps(e))
        assert [(p["targetId"], p["pinned"]) for p in pins] == [(first["id"], True)]
        tmux.wait(lambda s: "leaves out" not in s, "the review counted again", 30)
        tmux.keys(*CTRL_S)
        wait_until(lambda: entries(tmp_path)[-1]["type"] == "compaction", "the compaction")
        assert entries(tmp_path)[-1]["details"]["lost"] == []
    finally:
        tmux.stop()

"""The replace editor's select-all with the bytes a terminal sends, in tmux at 80x24: Ctrl+A (0x01)
selects all; with ``keymap = "pi"`` Ctrl+A stays the line start and Alt+A (ESC a) selects all."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.e2e.test_tmux_keys import started
from tests.e2e.test_tui_e2e import wait_until
from tests.support.fake_model_server import FakeModelServer, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

CTRL_A = ["-H", "01"]
ALT_A = ["-H", "1b", "61"]
CTRL_S = ["-H", "13"]


def replacements(tmp_path: Path) -> list[str]:
    """The texts of the session's ``context_edit`` replacements, in order."""
    out: list[str] = []
    for file in (tmp_path / "sessions").rglob("*.jsonl"):
        for line in file.read_text().splitlines():
            data = json.loads(line)
            if data.get("type") == "context_edit" and data.get("replacement"):
                content = data["replacement"]["content"]
                out.append(content if isinstance(content, str) else "".join(b["text"] for b in content))
    return out


def open_replace_editor(tmux: Tmux) -> None:
    tmux.type("say something")
    tmux.keys("Enter")
    tmux.wait_text("The original reply.")
    tmux.keys("F1")  # the tree, its selection on the leaf (the reply)
    tmux.wait_text("e Replace")
    time.sleep(1.2)  # a letter right after another key is typing: it would go to the composer
    tmux.type("e")
    tmux.wait_text("selects all", timeout=30)


@pytest.mark.parametrize(
    ("config", "select"),
    [pytest.param("", CTRL_A, id="ctrl+a"), pytest.param('keymap = "pi"', ALT_A, id="pi-alt+a")],
)
def test_select_all_then_typing_replaces_the_whole_text(
    tmp_path: Path, server: FakeModelServer, config: str, select: list[str]
) -> None:
    server.push(openai_stream("The original reply."))
    tmux = started(tmp_path, server, (80, 24), **({"config": config} if config else {}))
    try:
        open_replace_editor(tmux)
        if config:  # pi's Ctrl+A: the line start, so a key typed now goes before the text
            tmux.keys(*CTRL_A)
            tmux.type("X")
            tmux.wait_text("XThe original reply.", timeout=10)
        tmux.keys(*select)
        tmux.type("Shorter")
        tmux.wait_text("Shorter", timeout=10)
        tmux.keys(*CTRL_S)
        wait_until(lambda: bool(replacements(tmp_path)), "the context_edit")
        assert replacements(tmp_path) == ["Shorter"]
    finally:
        tmux.stop()

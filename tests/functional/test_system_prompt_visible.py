"""The system prompt's text is visible wherever the session is shown: pi keeps it in
``sections`` with an empty ``content``, so every view that read only ``content`` showed nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.library.export import export_html, export_markdown
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.tui.widgets.chat_entry import LazyCollapsible
from tests.support.pilot import wait_for
from tests.support.session_builder import Builder, assistant, user
from tests.support.tui_fixtures import SIZE, make_app

TEMPLATE = "You are agent-tui, a careful coding agent."
RULES = "Never run rm -rf without asking."


def session(tmp_path: Path) -> Path:
    b = Builder()
    b.message(
        {
            "role": "system",
            "content": "",
            "sections": {"template": TEMPLATE, "rules": RULES},
            "toolsAdded": [{"name": "read", "description": "Read a file", "parameters": {}}],
            "timestamp": 0,
        }
    )
    b.message(user("hello"))
    b.message(assistant("hi"))
    return b.write(tmp_path / "s.jsonl")


def test_the_markdown_and_html_exports_show_the_system_prompt(tmp_path: Path) -> None:
    index = SessionIndex(read_file(session(tmp_path)), "s")
    md = export_markdown(index)
    assert TEMPLATE in md and RULES in md and "[tools: read]" in md
    page = export_html(index)
    assert "You are agent-tui, a careful coding agent." in page and "Never run rm -rf" in page


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_context_text_prints_the_system_prompt(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agent_tui", "context", str(session(tmp_path)), "--format", "text"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "## system prompt" in out and TEMPLATE in out and RULES in out
    first_row = next(line for line in out.splitlines() if line.lstrip().startswith("-  system"))
    assert " sent " in first_row


async def test_expanding_the_system_prompt_in_the_chat_shows_its_text(tmp_path: Path) -> None:
    app = make_app(tmp_path, session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.chat.query(LazyCollapsible)), "the chat")
        prompt = next(c for c in app.chat.query(LazyCollapsible) if "system prompt" in str(c.title))
        prompt.collapsed = False
        await pilot.pause()
        shown = "\n".join(str(s.render()) for s in prompt.query("Static"))
        assert TEMPLATE in shown and RULES in shown

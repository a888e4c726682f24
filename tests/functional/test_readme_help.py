"""The README's ``--help`` blocks are what the parser prints (scripts/readme-help --write fixes them)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "readme-help"


def _script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("readme_help", str(SCRIPT))
    spec = importlib.util.spec_from_loader("readme_help", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.mark.slow  # agent-tui twice as a process (make lint runs the same check)
def test_the_readmes_help_blocks_are_the_parsers() -> None:
    script = _script()
    text = script.README.read_text(encoding="utf-8")
    assert len(script.BLOCK.findall(text)) >= 2, "the README shows agent-tui --help and acp --help"
    _, stale = script.render(text)
    assert stale == [], f"stale: {stale}: run scripts/readme-help --write"


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_a_changed_block_is_found_and_rewritten() -> None:
    script = _script()
    text = "<!-- help: agent-tui --help -->\n```text\nusage: old\n```\n<!-- /help -->\n"
    new, stale = script.render(text)
    assert stale == ["agent-tui --help"]
    assert "usage: agent-tui" in new and "usage: old" not in new
    assert script.render(new)[1] == []

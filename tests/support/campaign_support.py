"""Shared by the fault campaigns (tests/campaigns/): sizes, figures, checks.

``make test`` runs the fast versions; ``make stress`` sets ``AGENT_TUI_STRESS=1``
and runs the long ones. Each campaign prints one line of figures (kills survived,
lines checked, mutations tried, faults injected, entries lost) straight to the
terminal, whether or not pytest captures output; ``AGENT_TUI_CAMPAIGN_LOG=FILE``
also appends them there.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from agent_tui.projection.wire.openai_completions import openai_request
from agent_tui.store.index import SessionIndex
from tests.support.request_validity import anthropic_problems, openai_problems

STRESS = os.environ.get("AGENT_TUI_STRESS", "").strip() not in ("", "0", "off", "no")
# `make test` is deterministic (a fixed seed, so CI cannot turn red on a case no one has seen);
# `make stress` explores a new seed each run. AGENT_TUI_CAMPAIGN_SEED replays one.
SEED = int(os.environ.get("AGENT_TUI_CAMPAIGN_SEED", "0") or 0) or (
    int(time.time()) if os.environ.get("AGENT_TUI_STRESS") else 20261130
)
# Read here, at collection: each test runs without the developer's AGENT_TUI_* (tests/conftest.py).
CAMPAIGN_LOG = os.environ.get("AGENT_TUI_CAMPAIGN_LOG")


def scale(fast: int, stress: int) -> int:
    """The fast count for ``make test``, the long one for ``make stress``."""
    return stress if STRESS else fast


def report(request: pytest.FixtureRequest, campaign: str, figures: Mapping[str, Any]) -> str:
    """Print ``[campaign] figure=value ...`` to the terminal (and AGENT_TUI_CAMPAIGN_LOG)."""
    line = f"[{campaign}{' stress' if STRESS else ''}] " + ", ".join(f"{k} {v}" for k, v in figures.items())
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None:
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            reporter.ensure_newline()
            reporter.write_line(line)
    if CAMPAIGN_LOG:
        with open(CAMPAIGN_LOG, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    return line


def request_problems(index: SessionIndex, leaf: str | None = None) -> list[str]:
    """Why the next request from this branch would be refused (both APIs); [] when it is valid.

    An empty conversation is no request (the next turn adds its prompt first), so it passes.
    """
    prepared = prepare(project(index, leaf).messages)
    if not prepared.messages:
        return []
    problems = [
        f"anthropic: {p}" for p in anthropic_problems(anthropic_request(prepared, "claude-sonnet-4-5"))
    ]
    problems += [f"openai: {p}" for p in openai_problems(openai_request(prepared, "gpt-4.1"))]
    return problems


def complete_lines(path: Path) -> list[str]:
    """The lines of a text file that end with a newline (a torn last line is not one)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return data.decode("utf-8", "replace").split("\n")[:-1]


__all__ = ["SEED", "STRESS", "complete_lines", "report", "request_problems", "scale"]

"""Test-wide settings: Hypothesis is deterministic in `make test`, exploring in `make stress`."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("explore" if os.environ.get("AGENT_TUI_STRESS") else "deterministic")

"""Test-wide settings (Hypothesis is deterministic in `make test`, exploring in `make stress`) and the
fixtures many modules share: a fake model server, and agent harnesses on it. A module may override them."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.agent_support import Harness
from tests.fake_model_server import FakeModelServer

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("explore" if os.environ.get("AGENT_TUI_STRESS") else "deterministic")


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as s:
        yield s


@pytest.fixture
async def h(server: FakeModelServer, tmp_path: Path) -> AsyncIterator[Harness]:
    """An agent loop (Anthropic) on the fake server, in a fresh work folder and session."""
    harness = Harness(server, tmp_path)
    yield harness
    await harness.close()


@pytest.fixture
async def oh(server: FakeModelServer, tmp_path: Path) -> AsyncIterator[Harness]:
    """The same with the OpenAI provider."""
    harness = Harness(server, tmp_path, provider="openai")
    yield harness
    await harness.close()

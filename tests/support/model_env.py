"""The environment a test's model comes from: none of the machine's keys and servers, or the fake
server's Anthropic endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_model_server import FakeModelServer

#: What would pick a provider or a server from the machine running the tests.
PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
)


def without_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


def fake_anthropic_env(monkeypatch: pytest.MonkeyPatch, server: FakeModelServer, config: Path) -> None:
    """The fake server as Anthropic (with a key), and ``config`` as the config file."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_base_url)
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(config))

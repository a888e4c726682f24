"""The environment of the programs run for the model loses every model service's key by name."""

from __future__ import annotations

import pytest

from agent_tui.agent.child_env import child_environment
from agent_tui.projection import registry
from agent_tui.store.redact import register_secret


def test_every_providers_key_variable_is_stripped() -> None:
    names = registry.key_variables()
    for spec in registry.PROVIDERS.values():
        assert set(spec.key_env) <= set(names), spec.name
    assert {"GEMINI_API_KEY", "OPENROUTER_API_KEY", "AZURE_OPENAI_API_KEY", "GOOGLE_API_KEY"} <= set(names)


def test_names_go_whatever_their_value_looks_like() -> None:
    """A key that does not look like a key ("x", a word) goes too: the name decides."""
    environ = {name: "x" for name in registry.key_variables()} | {"PATH": "/usr/bin", "GH_TOKEN": "kept"}
    assert child_environment(environ) == {"PATH": "/usr/bin", "GH_TOKEN": "kept"}


@pytest.mark.parametrize(
    "name", ["GEMINI_API_KEY", "OPENROUTER_API_KEY", "AZURE_OPENAI_API_KEY", "XAI_API_KEY"]
)
def test_each_named_key_is_absent(name: str) -> None:
    assert name not in child_environment({name: "not-secret-looking", "HOME": "/h"})


def test_a_configured_key_under_any_name_goes_too() -> None:
    register_secret("zz-configured-key-24680")
    assert child_environment({"MY_PROXY": "zz-configured-key-24680", "A": "b"}) == {"A": "b"}

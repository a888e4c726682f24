"""The provider registry: one :class:`~agent_tui.projection.specs.ProviderSpec` per provider.

Everything that names a provider reads it here: the config (which keys and base URLs exist,
the default model), the CLI (``--provider``, ``context --format``), the app's model picker
and its SDK preloading, the agent (which adapter to build), the model and price tables.
The order is the order of preference when nothing says which provider to use.
"""

from __future__ import annotations

from collections.abc import Iterator

from agent_tui.projection.registry import anthropic, openai
from agent_tui.projection.specs import ModelInfo, Price, ProviderSpec

PROVIDERS: dict[str, ProviderSpec] = {spec.name: spec for spec in (anthropic.SPEC, openai.SPEC)}
NAMES: tuple[str, ...] = tuple(PROVIDERS)


def spec(name: str) -> ProviderSpec:
    """The provider called ``name`` (KeyError for an unknown one)."""
    return PROVIDERS[name]


def find(name: str | None) -> ProviderSpec | None:
    return PROVIDERS.get(name) if name else None


def fallback() -> ProviderSpec:
    """The provider that serves any model name: a bare base URL, a model no table knows."""
    return next(s for s in PROVIDERS.values() if s.serves_any_model)


def by_api(api: str) -> ProviderSpec:
    """The first provider speaking ``api`` (pi's api name)."""
    for s in PROVIDERS.values():
        if s.api == api:
            return s
    raise KeyError(api)


def provider_of_model_id(model_id: str) -> ProviderSpec | None:
    """The provider a model id names by its prefix ("claude-..."), table aside."""
    for s in PROVIDERS.values():
        if any(model_id.startswith(prefix) for prefix in s.model_prefixes):
            return s
    return None


def builtin_models() -> Iterator[ModelInfo]:
    for s in PROVIDERS.values():
        yield from s.models


def builtin_prices() -> Iterator[tuple[str, Price]]:
    for s in PROVIDERS.values():
        yield from s.prices.items()


__all__ = [
    "NAMES",
    "PROVIDERS",
    "ProviderSpec",
    "builtin_models",
    "builtin_prices",
    "by_api",
    "fallback",
    "find",
    "provider_of_model_id",
    "spec",
]

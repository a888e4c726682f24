"""The provider registry: one :class:`~agent_tui.projection.specs.ProviderSpec` per provider.

Everything that names a provider reads it here: the config (which keys and base URLs exist,
the default model), the CLI (``--provider``, ``context --format``), the app's model picker
and its SDK preloading, the agent (which adapter to build), the model and price tables.
The order is the order of preference when nothing says which provider to use.
"""

from __future__ import annotations

from collections.abc import Iterator

from agent_tui.projection.registry import anthropic, anthropic_cloud, azure, google, openai, openrouter
from agent_tui.projection.specs import ApiRoute, ModelInfo, Price, ProviderSpec

PROVIDERS: dict[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        anthropic.SPEC,
        openai.SPEC,
        google.SPEC,
        openrouter.SPEC,
        azure.SPEC,
        anthropic_cloud.BEDROCK_SPEC,
        anthropic_cloud.VERTEX_SPEC,
    )
}
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


def api_names() -> tuple[str, ...]:
    """Every ``--api`` name some provider speaks."""
    return tuple(dict.fromkeys(name for s in PROVIDERS.values() for name in s.routes))


def route(
    name: str, model: ModelInfo | None = None, *, base_url: str | None = None, choice: str | None = None
) -> ApiRoute:
    """The API ``name`` is called through for ``model``: ``choice`` (``--api``, the provider's
    ``api`` in the config file) when given, else the model's own ``api``, else the provider's
    reasoning API for its own reasoning models at its default base URL, else its first API.
    KeyError names an API the provider does not speak."""
    entry = spec(name)
    routes = entry.routes
    wanted = choice or (model.api if model is not None else None)
    if wanted:
        if wanted not in routes:
            raise KeyError(f"{name} speaks {', '.join(routes)}, not {wanted!r}")
        return routes[wanted]
    own_model = model is not None and model.provider == entry.name and model.reasoning
    default_url = not base_url or base_url.rstrip("/") == entry.default_base_url.rstrip("/")
    if entry.reasoning_api and own_model and default_url:
        return routes[entry.reasoning_api]
    return entry.default_route


def builtin_models() -> Iterator[ModelInfo]:
    for s in PROVIDERS.values():
        yield from s.models


def builtin_prices() -> Iterator[tuple[str, Price]]:
    for s in PROVIDERS.values():
        yield from s.prices.items()


__all__ = [
    "NAMES",
    "PROVIDERS",
    "ApiRoute",
    "ProviderSpec",
    "api_names",
    "builtin_models",
    "builtin_prices",
    "by_api",
    "fallback",
    "find",
    "provider_of_model_id",
    "route",
    "spec",
]

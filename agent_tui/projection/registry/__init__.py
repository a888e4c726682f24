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


#: Credentials of model services no provider here reads, but the SDKs agent-tui loads or pi do (pi's
#: ``--help`` lists its keys): set for an agent, so the model's commands never see them either. The
#: user's own credentials for the tools the model runs (``AWS_ACCESS_KEY_ID`` for ``aws``, which
#: Bedrock also reads; ``GH_TOKEN``/``GITHUB_TOKEN`` for ``gh`` and ``git push``) are passed on,
#: and redacted by value wherever their values show up.
OTHER_MODEL_KEYS: tuple[str, ...] = (
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_OAUTH_TOKEN",
    "GOOGLE_API_KEY",
    "ANT_LING_API_KEY",
    "DEEPSEEK_API_KEY",
    "NVIDIA_API_KEY",
    "GROQ_API_KEY",
    "CEREBRAS_API_KEY",
    "XAI_API_KEY",
    "FIREWORKS_API_KEY",
    "TOGETHER_API_KEY",
    "BASETEN_API_KEY",
    "AI_GATEWAY_API_KEY",
    "ZAI_API_KEY",
    "ZAI_CODING_CN_API_KEY",
    "MISTRAL_API_KEY",
    "MINIMAX_API_KEY",
    "MOONSHOT_API_KEY",
    "OPENCODE_API_KEY",
    "KIMI_API_KEY",
    "META_API_KEY",
    "CLOUDFLARE_API_KEY",
    "QWEN_TOKEN_PLAN_TEAM_API_KEY",
    "QWEN_TOKEN_PLAN_TEAM_CN_API_KEY",
    "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY",
    "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY",
    "XIAOMI_API_KEY",
    "XIAOMI_TOKEN_PLAN_CN_API_KEY",
    "XIAOMI_TOKEN_PLAN_AMS_API_KEY",
    "XIAOMI_TOKEN_PLAN_SGP_API_KEY",
    "COHERE_API_KEY",
    "PERPLEXITY_API_KEY",
)


def key_variables() -> tuple[str, ...]:
    """Every variable holding a model service's key: each provider's ``key_env``, then
    :data:`OTHER_MODEL_KEYS`. The commands run for the model go without them (``agent.child_env``)."""
    own = (name for s in PROVIDERS.values() for name in s.key_env)
    return tuple(dict.fromkeys((*own, *OTHER_MODEL_KEYS)))


__all__ = [
    "NAMES",
    "OTHER_MODEL_KEYS",
    "PROVIDERS",
    "ApiRoute",
    "ProviderSpec",
    "api_names",
    "builtin_models",
    "builtin_prices",
    "by_api",
    "fallback",
    "find",
    "key_variables",
    "provider_of_model_id",
    "route",
    "spec",
]

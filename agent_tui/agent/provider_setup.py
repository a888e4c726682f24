"""Which model a loop uses and the provider that calls it (the registry's adapter for its API)."""

from __future__ import annotations

from dataclasses import replace

from agent_tui.config import Config, next_model
from agent_tui.projection import registry
from agent_tui.projection.context import Projection
from agent_tui.projection.wire import route_for
from agent_tui.providers.base import Provider, adapter_class
from agent_tui.store.redact import register_secret


def resolve_model(config: Config, projection: Projection, provider_name: str) -> str:
    """The model to use: the configured one when chosen explicitly, else the session's if it is this
    provider's (``config.next_model``, which the app's header uses too)."""
    return next_model(replace(config, provider=provider_name), projection.model)


def make_provider(config: Config, model: str | None = None) -> Provider:
    """The provider for ``config``: its registry entry's adapter for the API ``model`` (the
    configured one by default) is called through (the SDK is imported on first use)."""
    register_secret(config.api_key)  # wherever the key came from, it is redacted from what we write
    route = route_for(config.provider, model or config.model, base_url=config.base_url, api=config.api)
    return adapter_class(config.provider, route)(
        api_key=config.api_key,
        base_url=config.base_url,
        timeout=config.timeout,
        request_log=config.request_log,
        name=config.provider,
        headers=registry.spec(config.provider).headers,
    )


__all__ = ["make_provider", "resolve_model"]

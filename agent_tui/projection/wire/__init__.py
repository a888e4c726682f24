"""Request bodies, one module per API (``anthropic_messages``, ``openai_completions``, ...).

Each module has ``API`` (pi's api name) and ``request_body(prepared, model, *, thinking_level,
max_tokens)``, the exact body its adapter sends; :func:`request_body` picks the module a
provider's registry entry names, so the CLI and the adapters write bodies the same way.
"""

from __future__ import annotations

import importlib
from typing import Protocol, cast

from agent_tui.projection.models import lookup
from agent_tui.projection.registry import route
from agent_tui.projection.request import Prepared
from agent_tui.projection.specs import ApiRoute
from agent_tui.projection.wire.common import JSONObject


class WireFormat(Protocol):
    API: str

    def request_body(
        self,
        prepared: Prepared,
        model: str,
        *,
        thinking_level: str | None = "off",
        max_tokens: int | None = None,
    ) -> JSONObject: ...


def route_for(
    provider: str, model: str | None = None, *, base_url: str | None = None, api: str | None = None
) -> ApiRoute:
    """The API ``provider`` calls ``model`` through (``api``: an ``--api`` name, None: the
    registry's rule, see :func:`agent_tui.projection.registry.route`)."""
    return route(provider, lookup(model) if model else None, base_url=base_url, choice=api)


def wire_format(
    provider: str, model: str | None = None, *, base_url: str | None = None, api: str | None = None
) -> WireFormat:
    """The wire-format module ``provider`` writes ``model``'s requests with (a registry name)."""
    chosen = route_for(provider, model, base_url=base_url, api=api)
    module = importlib.import_module(f"{__name__}.{chosen.wire}")
    return cast(WireFormat, module)


def request_body(
    provider: str,
    prepared: Prepared,
    model: str,
    *,
    thinking_level: str | None = "off",
    max_tokens: int | None = None,
    base_url: str | None = None,
    api: str | None = None,
) -> JSONObject:
    """The request body ``provider`` sends for ``model`` at ``thinking_level``."""
    return wire_format(provider, model, base_url=base_url, api=api).request_body(
        prepared, model, thinking_level=thinking_level, max_tokens=max_tokens
    )


__all__ = ["WireFormat", "request_body", "route_for", "wire_format"]

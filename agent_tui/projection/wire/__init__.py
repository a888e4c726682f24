"""Request bodies, one module per API (``anthropic_messages``, ``openai_completions``, ...).

Each module has ``API`` (pi's api name) and ``request_body(prepared, model, *, thinking_level,
max_tokens)``, the exact body its adapter sends; :func:`request_body` picks the module a
provider's registry entry names, so the CLI and the adapters write bodies the same way.
"""

from __future__ import annotations

import importlib
from typing import Protocol, cast

from agent_tui.projection.registry import spec
from agent_tui.projection.request import Prepared
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


def wire_format(provider: str) -> WireFormat:
    """The wire-format module of ``provider`` (a registry name)."""
    module = importlib.import_module(f"{__name__}.{spec(provider).wire}")
    return cast(WireFormat, module)


def request_body(
    provider: str,
    prepared: Prepared,
    model: str,
    *,
    thinking_level: str | None = "off",
    max_tokens: int | None = None,
) -> JSONObject:
    """The request body ``provider`` sends for ``model`` at ``thinking_level``."""
    return wire_format(provider).request_body(
        prepared, model, thinking_level=thinking_level, max_tokens=max_tokens
    )


__all__ = ["WireFormat", "request_body", "wire_format"]

"""The environment of every program run for the model: ``bash``, the user's ``!cmd``, hooks.

This process's environment without any model service's key (the provider registry's
``key_env`` of every provider and the other model services' keys it lists,
:func:`agent_tui.projection.registry.key_variables`) and without any variable holding a key the
configuration registered for redaction. MCP stdio servers are started by the MCP SDK with only
``HOME``, ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM`` and ``USER`` plus what their ``env`` table
passes explicitly (a key named there is meant for the server).
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_tui.projection import registry
from agent_tui.store.redact import tool_environment


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment (or ``environ``) as a command run for the model gets it."""
    return tool_environment(registry.key_variables(), environ)


__all__ = ["child_environment"]

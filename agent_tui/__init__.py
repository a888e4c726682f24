"""agent-tui: a terminal coding agent whose session is an append-only tree.

The Python SDK (:mod:`agent_tui.sdk`, docs/SDK.md) is importable from here, loaded on first use
so that ``agent-tui --version`` and the session commands do not pay for it::

    from agent_tui import create_agent, open_session
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agent_tui.sdk import (
        Agent,
        AgentEvent,
        PiEventStream,
        SessionHandle,
        create_agent,
        open_session,
    )

    # From its own module: ``agent_tui.sdk.pi_events`` is also that module's name.
    from agent_tui.sdk.pi_events import pi_events

#: The SDK names this package re-exports (the rest are in agent_tui.sdk).
_SDK_NAMES = (
    "Agent",
    "AgentEvent",
    "PiEventStream",
    "SessionHandle",
    "create_agent",
    "open_session",
    "pi_events",
)


def __getattr__(name: str) -> Any:
    if name in _SDK_NAMES:
        from agent_tui import sdk

        return getattr(sdk, name)
    raise AttributeError(f"module 'agent_tui' has no attribute {name!r}")


__all__ = [
    "Agent",
    "AgentEvent",
    "PiEventStream",
    "SessionHandle",
    "__version__",
    "create_agent",
    "open_session",
    "pi_events",
]

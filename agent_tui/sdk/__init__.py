"""agent-tui's Python SDK: open a session, run turns and read their events, edit, branch and fork.

A stable, typed face over the layers the app and the command line use (the session store, the
projection, the agent loop); see docs/SDK.md for examples::

    import asyncio
    from agent_tui import create_agent, open_session
    from agent_tui.sdk import TextDelta

    async def main() -> None:
        with open_session("work.jsonl") as session:
            async with create_agent(session, provider="openai", model="qwen2.5-coder") as agent:
                async for event in agent.prompt("List the files here"):
                    if isinstance(event, TextDelta):
                        print(event.text, end="")

    asyncio.run(main())

Everything named in ``__all__`` is the supported surface; the underlying objects stay reachable
(``SessionHandle.store``, ``Agent.loop``) for what it does not cover, without the same promise.
"""

from __future__ import annotations

from agent_tui.agent.events import (
    AgentEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EntryAppended,
    Notice,
    Retrying,
    SubagentEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStreaming,
    ToolFinished,
    ToolStarted,
    ToolUpdate,
    TurnDone,
    TurnError,
)
from agent_tui.agent.permissions import Decision, PermissionMode, PermissionRequest, Permissions
from agent_tui.config import Config, ConfigError, load_config
from agent_tui.projection.context import Projection
from agent_tui.sdk.agent import Agent, create_agent
from agent_tui.sdk.pi_events import PiEventStream, pi_events
from agent_tui.sdk.session import SessionHandle, open_session
from agent_tui.store.errors import StoreError

__all__ = [
    "Agent",
    "AgentEvent",
    "CompactionFailed",
    "CompactionFinished",
    "CompactionStarted",
    "Config",
    "ConfigError",
    "Decision",
    "EntryAppended",
    "Notice",
    "PermissionMode",
    "PermissionRequest",
    "Permissions",
    "PiEventStream",
    "Projection",
    "Retrying",
    "SessionHandle",
    "StoreError",
    "SubagentEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallStreaming",
    "ToolFinished",
    "ToolStarted",
    "ToolUpdate",
    "TurnDone",
    "TurnError",
    "create_agent",
    "load_config",
    "open_session",
    "pi_events",
]

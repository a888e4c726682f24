"""One open ACP session as the server keeps it (``server`` opens it, ``turn`` runs its prompts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_tui.agent.resources import Resources
from agent_tui.sdk import Agent, SessionHandle


@dataclass(slots=True)
class Live:
    """One open ACP session: its file, its agent, its templates and skills, the running turn's calls."""

    session: SessionHandle
    agent: Agent
    cwd: str
    resources: Resources
    calls: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)


__all__ = ["Live"]

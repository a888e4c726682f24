"""Building an agent loop: which model it uses, the provider that calls it (the registry's adapter
for its API), the default tools, the question about an unknown model's window."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from agent_tui.agent.extensions import Extensions
from agent_tui.agent.permissions import Permissions
from agent_tui.agent.resources import Resources
from agent_tui.agent.tools.base import Tool
from agent_tui.agent.window import WindowCache
from agent_tui.agent.window_probe import probe_context_window
from agent_tui.config import Config, next_model
from agent_tui.projection import registry
from agent_tui.projection.context import Projection, project
from agent_tui.projection.wire import route_for
from agent_tui.providers.base import Provider, adapter_class
from agent_tui.store.redact import register_secret
from agent_tui.store.session import Session

if TYPE_CHECKING:
    from agent_tui.agent.loop import AgentLoop


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


def build_agent(
    session: Session,
    config: Config,
    tools: Sequence[Tool] | None = None,
    *,
    permissions: Permissions | None = None,
    cwd: str | None = None,
    resources: Resources | None = None,
    extensions: Extensions | None = None,
) -> AgentLoop:
    """An AgentLoop with the configured provider and the default tools, keeping the session's model
    unless one was chosen explicitly. ``permissions`` gates tool calls (None: every tool runs);
    tools run in ``cwd`` (None: the process's); ``extensions`` adds MCP servers and hooks."""
    from agent_tui.agent.loop import AgentLoop  # (imported here: the loop needs none of this)
    from agent_tui.agent.subagents import add_agent_tools
    from agent_tui.agent.tools.builtin import default_tools

    model = resolve_model(config, project(session.index), config.provider)
    probe = probe_context_window(config, model)
    provider = make_provider(config, model)
    if tools is None:
        tools = default_tools()
        if config.context_tool:  # [tools] context = true
            from agent_tui.agent.tools.context import ContextTool

            tools.append(ContextTool(session))
    loop = AgentLoop(
        session,
        provider,
        tools,
        config=config,
        model=model,
        permissions=permissions,
        cwd=cwd,
        resources=resources,
        window_cache=WindowCache.default(),
        extensions=extensions,
        window_probe=probe,
    )
    add_agent_tools(loop)  # todo_write and task (agent.subagents)
    return loop


__all__ = ["build_agent", "make_provider", "resolve_model"]

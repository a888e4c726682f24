"""What a turn settles before its first model call, each step an entry when something changed.

The server's answer about an unknown model's window (awaited once, abortably); the model, the
learned window and the thinking level, each recorded when the session's differs
(``model_change``, ``agent-tui.window``, ``thinking_level_change``); the extensions (trust, MCP
servers, ``SessionStart`` hooks); the system prompt and tool declarations, a system message when
they changed (``system_prompt.system_update``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from agent_tui.agent import loop_hooks
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.permissions import Permissions
from agent_tui.agent.resources import Resources
from agent_tui.agent.system_prompt import build_sections, context_files, system_update
from agent_tui.agent.tools.base import Tool
from agent_tui.agent.turn_io import Aborted, TurnIO
from agent_tui.projection.context import Projection
from agent_tui.projection.window import learned_window, window_entry


async def await_probe(probe: Future[int | None], io: TurnIO) -> None:
    """Wait for the server's window (probe_context_window) before any figure, unless aborted."""
    with contextlib.suppress(Aborted):
        await io.abortable(asyncio.shield(asyncio.wrap_future(probe)))


async def record_settings(
    io: TurnIO, projection: Projection, provider: str, model: str, window: int | None, thinking: str | None
) -> None:
    """The model, the ``window`` known from the cache, and the thinking level (None keeps the
    session's), each appended when the session says otherwise."""
    current = projection.model or {}
    if current.get("provider") != provider or current.get("modelId") != model:
        await io.append({"type": "model_change", "provider": provider, "modelId": model})
    if window is not None and learned_window(projection.path, provider, model) != window:
        await io.append(window_entry(provider, model, window))
    if thinking is not None and thinking != projection.thinking_level:
        await io.append({"type": "thinking_level_change", "thinkingLevel": thinking})


async def prepare_extensions(
    ext: Extensions, permissions: Permissions | None, projection: Projection, io: TurnIO
) -> list[str] | None:
    """Trust, MCP servers (started, briefly waited for), SessionStart hooks: the context those add
    (for :func:`add_context`, the caller choosing where it goes); None when aborted."""
    if permissions is not None and permissions.rules is not None:
        ext.rules = permissions.rules  # allow rules new since accepted join the changes question
    try:
        await io.abortable(ext.prepare())
    except Aborted:
        return None
    loop_hooks.bind(ext, io.session, permissions)
    loop_hooks.say(ext.take_notices(), io.emit)
    spoken = any(m.role in ("user", "assistant") for m in projection.messages)
    return await loop_hooks.session_start(ext, spoken, io.emit)


async def add_context(texts: Sequence[str], event: str, io: TurnIO) -> None:
    """What ``event``'s hooks added for the model, as one ``custom_message`` entry (if anything)."""
    entry = loop_hooks.context_entry(texts, event)
    if entry is not None:
        await io.append(entry)


async def prepare_system(
    io: TurnIO,
    projection: Projection,
    cwd: str,
    tools: Sequence[Tool],
    resources: Resources | None,
    global_context_dir: str | Path | None,
) -> None:
    """The system prompt (context files, the user's prompt files and flags, skills) and the tool
    declarations: a system message when they differ from the session's latest."""
    system_messages = [m.message for m in projection.messages if m.role == "system"]
    if resources is None:
        sections = build_sections(cwd, tools, context_files(cwd, global_context_dir))
    else:
        files = (
            context_files(cwd, global_context_dir, project=resources.project_context)
            if resources.prompt.context_files
            else []
        )
        sections = build_sections(
            cwd,
            tools,
            files,
            custom=resources.prompt.custom,
            append=resources.prompt.append_text,
            skills=resources.skills_prompt([t.name for t in tools]),
        )
    update = system_update(system_messages, sections, [t.declaration() for t in tools])
    if update is not None:
        await io.append_message(update)


__all__ = ["add_context", "await_probe", "prepare_extensions", "prepare_system", "record_settings"]

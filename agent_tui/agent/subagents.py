"""Subagents: a ``task`` call runs a child agent loop on a session file of its own.

The child starts with a fresh context: its type's system prompt (:mod:`agent_tui.agent.agent_types`)
and the task prompt, nothing of the parent's history. Its transcript is an ordinary pi session
file beside the parent's, ``<parent stem>/subagents/task-<call id>.jsonl``, whose header's
``parentSession`` is the parent's path; its first entry is a ``custom`` ``agent-tui.task`` record
(type, description, the parent's call id, the tools it was given). The parent's file gets a
``custom`` ``agent-tui.subagent`` record when the child starts and another when it ends
(``status``: running, done, error, aborted), then the call's ``toolResult`` with the child's final
reply and ``details.subagent``. Nothing of the child is ever in the parent's path, so pi 1.6
projects the parent exactly as agent-tui does at every moment, a kill -9 included.

The child shares the parent's provider, model (unless its type names one), permission policy and
cwd; it runs no hooks and starts no MCP servers (the parent's MCP tools it may call). Its events go
to the parent's run as :class:`~agent_tui.agent.events.SubagentEvent`. An abort of the parent
aborts every child: each keeps its transcript so far, its last record ``aborted``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_tui.agent.agent_types import BUILTIN, AgentType, agents_text, load_agent_types
from agent_tui.agent.events import AgentEvent, EntryAppended, SubagentEvent, TurnDone, TurnError
from agent_tui.agent.permissions import PermissionRequest, Permissions
from agent_tui.agent.prompt_files import SystemPromptFiles
from agent_tui.agent.resources import Resources
from agent_tui.agent.system_prompt import current_sections
from agent_tui.agent.tools.base import Tool, ToolError, ToolResult
from agent_tui.agent.turn_io import TurnIO
from agent_tui.projection.context import project
from agent_tui.projection.pricing import session_usage
from agent_tui.projection.subagent_links import (
    LINK_TYPE,
    TASK_TYPE,
    links,
    resolve_link,
    subagent_file,
    subagent_folder,
    task_record,
)
from agent_tui.store.record import JSONObject
from agent_tui.store.session import Session

if TYPE_CHECKING:
    from agent_tui.agent.loop import AgentLoop

TASK_TOOL = "task"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a subagent's run ended: its status, its final reply, its usage."""

    status: str  # done, error, aborted
    reply: str
    usage: JSONObject
    cost: float
    error: str | None = None


def _usage_of(session: Session) -> tuple[JSONObject, float, int]:
    totals = session_usage(session.index.entries)
    usage = {
        "input": totals.input,
        "output": totals.output,
        "cacheRead": totals.cache_read,
        "cacheWrite": totals.cache_write,
        "totalTokens": totals.tokens,
    }
    return usage, round(totals.cost, 6), totals.input + totals.output


def final_reply(session: Session) -> str:
    """The text of the child's last assistant message on its branch."""
    for message in reversed(project(session.index).messages):
        if message.role == "assistant":
            blocks = message.message.get("content") or []
            return "\n".join(
                b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
            )
    return ""


class SubagentRunner:
    """Runs ``task`` calls for one parent loop (read at call time: a model switch applies)."""

    def __init__(self, parent: AgentLoop) -> None:
        self.parent = parent

    # -- types ---------------------------------------------------------------------------------

    def trusted(self) -> bool:
        ext = self.parent.extensions
        if ext is None:
            return False
        if ext.trusted is not None:
            return ext.trusted
        store = ext.trust_store
        return bool(store.decision(self.parent.cwd)) if store is not None else False

    def agent_types(self) -> tuple[list[AgentType], list[str]]:
        config_dir = self.parent.config.config_path.parent if self.parent.config.config_path else None
        home = os.environ.get("HOME") or str(Path.home())
        return load_agent_types(self.parent.cwd, home, config_dir, trusted=self.trusted())

    def agents_text(self) -> str:
        """``/agents``: the types a task call can start now."""
        types, warnings = self.agent_types()
        return agents_text(types, warnings, trusted=self.trusted())

    def type_names(self) -> list[tuple[str, str]]:
        return [(t.name, t.description) for t in self.agent_types()[0]]

    def find_type(self, name: str | None) -> AgentType:
        types, _ = self.agent_types()
        wanted = name or BUILTIN.name
        for kind in types:
            if kind.name == wanted:
                return kind
        names = ", ".join(t.name for t in types)
        raise ToolError(f"Unknown subagent_type {wanted!r}: use one of {names}")

    def tools_for(self, kind: AgentType, names: Sequence[str] | None = None) -> list[Tool]:
        """The child's tools: the parent's (MCP ones included) minus ``task``, or the ones its type
        (or ``names``, a continued child's record) lists, by name or Claude Code's name."""
        available = self.parent.active_tools()
        wanted = names if names is not None else kind.tools
        if wanted is None:
            return [t for t in available if t.name != TASK_TOOL]
        folded = {w.lower() for w in wanted}
        return [t for t in available if t.name.lower() in folded or (t.claude_name or "").lower() in folded]

    # -- running ---------------------------------------------------------------------------------

    def _child_loop(self, session: Session, kind: AgentType, tools: Sequence[Tool], prompt: str) -> AgentLoop:
        from agent_tui.agent.loop import AgentLoop

        parent = self.parent
        resources = Resources(
            SystemPromptFiles(custom=prompt, custom_source=f"agent type {kind.name}", context_files=False)
        )
        child = AgentLoop(
            session,
            parent.provider,
            tools,
            config=parent.config,
            model=kind.model or parent.model,
            permissions=parent.permissions,
            cwd=parent.cwd,
            resources=resources,
            window_cache=parent.window_cache,
            global_context_dir=parent.global_context_dir,
        )
        if any(t.name == TASK_TOOL for t in tools):  # a type that may start subagents: its own
            from agent_tui.agent.tools.task import TaskTool

            child.tools = [TaskTool(SubagentRunner(child)) if t.name == TASK_TOOL else t for t in tools]
        child.thinking = parent.thinking
        child.tool_updates = parent.tool_updates
        child.tool_grace = max(0.2, parent.tool_grace / 2)  # inside the parent's grace
        return child

    async def run_task(
        self,
        call_id: str,
        description: str,
        prompt: str,
        type_name: str | None,
        emit: Callable[[Any], None] | None,
        signal: asyncio.Event,
    ) -> ToolResult:
        """One ``task`` call: the child's session created and linked, its loop run to its end."""
        kind = self.find_type(type_name)
        parent_session = self.parent.session
        parent_path = parent_session.path
        path = subagent_file(parent_path, call_id)
        tools = self.tools_for(kind)
        if parent_session.ephemeral:  # --no-session: the child's session is not written either
            child_session = Session.in_memory(self.parent.cwd)
        else:
            folder = subagent_folder(parent_path)
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            for n in range(2, 100):
                if not path.exists():
                    break
                path = path.with_name(f"{path.stem.split('~')[0]}~{n}.jsonl")
            child_session = Session.create(
                folder, self.parent.cwd, parent_session=str(parent_path), path=path
            )
        relative = os.path.relpath(path, parent_path.parent)
        record: JSONObject = {
            "toolCallId": call_id,
            "file": relative,
            "description": description,
            "type": kind.name,
        }
        sink = emit or (lambda event: None)
        parent_io = TurnIO(parent_session, sink, signal)
        try:
            child_session.append(
                {
                    "type": "custom",
                    "customType": TASK_TYPE,
                    "data": {**record, "tools": [t.name for t in tools]},
                }
            )
            await parent_io.append(
                {"type": "custom", "customType": LINK_TYPE, "data": {**record, "status": "running"}}
            )
            child = self._child_loop(child_session, kind, tools, kind.prompt)
            child.permissions = asking_for(child.permissions, f"{kind.name}: {description}")
            outcome = await drive(child, prompt, call_id, description, kind.name, str(path), sink, signal)
            with contextlib.suppress(Exception):
                await parent_io.append(
                    {
                        "type": "custom",
                        "customType": LINK_TYPE,
                        "data": {
                            **record,
                            "status": outcome.status,
                            "usage": outcome.usage,
                            "cost": outcome.cost,
                        },
                    }
                )
        finally:
            child_session.close()
        details = {
            "subagent": {
                "file": relative,
                "type": kind.name,
                "description": description,
                "status": outcome.status,
                "usage": outcome.usage,
                "cost": outcome.cost,
            }
        }
        if outcome.status == "done":
            return ToolResult.text(outcome.reply or "(the subagent gave no reply)", details)
        if outcome.status == "aborted":
            text = "Operation aborted"
            if outcome.reply:
                text += f"; the subagent's reply so far:\n{outcome.reply}"
            return ToolResult.text(text, details, is_error=True)
        return ToolResult.text(f"The subagent failed: {outcome.error or 'error'}", details, is_error=True)

    def continue_task(self, file: Path, prompt: str) -> AsyncIterator[AgentEvent]:
        """One more turn in a subagent's transcript (``prompt`` as its new user message), its events
        as the child's own; the type and tools it was started with, the prompt it already has."""
        return self._continue(file, prompt)

    async def _continue(self, file: Path, prompt: str) -> AsyncIterator[AgentEvent]:
        session = Session.open(file)
        try:
            kind, tools, preamble = self.continued(session)
            child = self._child_loop(session, kind, tools, preamble)
            async for event in child.run(prompt):
                yield event
        finally:
            session.close()

    def continued(self, session: Session) -> tuple[AgentType, list[Tool], str]:
        """What a subagent transcript goes on with: its type (the built-in one if it went away), the
        tools it was given, the system prompt it already has."""
        task = task_record(session.index.entries) or {}
        try:
            kind = self.find_type(str(task.get("type") or BUILTIN.name))
        except ToolError:
            kind = BUILTIN
        systems = [m.message for m in project(session.index).messages if m.role == "system"]
        preamble = current_sections(systems).get("preamble") or kind.prompt
        names = task.get("tools")
        tools = self.tools_for(kind, [str(n) for n in names] if isinstance(names, list) else None)
        return kind, tools, preamble


def asking_for(permissions: Permissions | None, who: str) -> Permissions | None:
    """The parent's policy for a subagent: the same mode, rules and allowed-for-this-session
    scopes (shared: a yes to the subagent holds for the parent too), its questions saying which
    subagent asks."""
    if permissions is None or permissions.approver is None:
        return permissions
    ask = permissions.approver

    async def approver(request: PermissionRequest) -> Any:
        return await ask(replace(request, reason=f"{request.reason}; asked by the subagent {who}"))

    return replace(permissions, approver=approver)


async def drive(
    child: AgentLoop,
    prompt: str,
    call_id: str,
    description: str,
    type_name: str,
    file: str,
    emit: Callable[[Any], None],
    signal: asyncio.Event,
) -> Outcome:
    """Run ``child`` on ``prompt``, each event forwarded tagged; the parent's abort aborts it."""
    status, error = "done", None
    tokens, cost = 0, 0.0

    async def watch() -> None:
        await signal.wait()
        child.abort()

    watcher = asyncio.ensure_future(watch())
    try:
        async for event in child.run(prompt):
            if isinstance(event, EntryAppended) and event.role == "assistant":
                _, cost, tokens = _usage_of(child.session)
            if isinstance(event, TurnError):
                error = event.message
            if isinstance(event, TurnDone):
                status = {"aborted": "aborted", "error": "error"}.get(event.stop_reason, "done")
                if signal.is_set():
                    status = "aborted"
            emit(SubagentEvent(call_id, description, type_name, file, event, tokens, cost))
    finally:
        watcher.cancel()
    usage, cost, _ = _usage_of(child.session)
    return Outcome(status, final_reply(child.session), usage, cost, error)


__all__ = [
    "LINK_TYPE",
    "TASK_TOOL",
    "TASK_TYPE",
    "Outcome",
    "SubagentRunner",
    "add_agent_tools",
    "as_subagent",
    "drive",
    "final_reply",
    "links",
    "progress_line",
    "resolve_link",
    "subagent_file",
    "subagent_folder",
]


def add_agent_tools(loop: AgentLoop) -> None:
    """Give ``loop`` the ``todo_write`` and ``task`` tools (a ``task`` tool of another loop, handed
    over with its tools, is bound to this one); neither asks permission itself (a subagent's own
    calls do)."""
    from agent_tui.agent.tools.task import TaskTool
    from agent_tui.agent.tools.todo import TodoWriteTool

    tools = [t for t in loop.tools if t.name != TASK_TOOL]
    if not any(t.name == TodoWriteTool.name for t in tools):
        tools.append(TodoWriteTool())
    tools.append(TaskTool(SubagentRunner(loop)))
    loop.tools = tools
    as_subagent(loop)


def as_subagent(loop: AgentLoop) -> bool:
    """When ``loop``'s session is a subagent's transcript (opened to continue it, in any face):
    run it as that subagent, with the system prompt it has, the tools it was given and no hooks
    or MCP servers. False (nothing changed) for any other session."""
    if task_record(loop.session.index.entries) is None:
        return False
    kind, tools, preamble = SubagentRunner(loop).continued(loop.session)
    if kind.model and loop.model != kind.model:
        loop.model = kind.model
    loop.tools = tools
    loop.extensions = None
    loop.resources = Resources(
        SystemPromptFiles(custom=preamble, custom_source=f"agent type {kind.name}", context_files=False)
    )
    return True


def progress_line(event: SubagentEvent) -> str | None:
    """One line for a subagent's step a text face shows (its start, a tool it runs, its end), or
    None for the rest; redacted and made one visible line."""
    from agent_tui.agent.events import ToolStarted
    from agent_tui.store.content import args_summary
    from agent_tui.store.redact import redact_text
    from agent_tui.terminal_text import visible_line

    inner = event.event
    head = f"[{event.agent_type}: {event.description}]"
    if isinstance(inner, EntryAppended) and inner.role == "user" and event.tokens == 0:
        line = f"{head} started"
    elif isinstance(inner, ToolStarted):
        line = f"{head} > {inner.name} {args_summary(inner.arguments)}"
    elif isinstance(inner, TurnError):
        line = f"{head} error: {inner.message}"
    elif isinstance(inner, TurnDone):
        status = {"aborted": "aborted", "error": "failed"}.get(inner.stop_reason, "done")
        line = f"{head} {status} ({event.tokens:,} tokens, ${event.cost:.4f})"
    else:
        return None
    return visible_line(redact_text(line)[0])[:300]

"""The ``task`` tool (Claude Code's Task): hand one piece of work to a subagent.

The subagent runs with a fresh context (its type's system prompt and the task prompt) and its own
tools, on a session file of its own linked from this one (:mod:`agent_tui.agent.subagents`); its
final reply is this call's result, its token use and cost in ``details.subagent``. Several ``task``
calls in one message run at once (the loop starts every call of a message before awaiting any).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from agent_tui.agent.tools.base import JSONObject, Tool, ToolContext, ToolError, ToolResult

DESCRIPTION = (
    "Launch a subagent to handle a complex, multi-step task on its own. The subagent starts with a fresh "
    "context: it sees only your prompt (none of this conversation), works with its own tools, and its final "
    "reply comes back as this tool's result (it cannot see your messages, and you cannot see its tool calls). "
    "Write a detailed, self-contained prompt saying exactly what to do and what to report back. "
    "Launch several subagents at once by calling this tool several times in one message."
)


class Runner(Protocol):
    """What runs the subagent (agent.subagents.SubagentRunner)."""

    def type_names(self) -> list[tuple[str, str]]: ...

    async def run_task(
        self,
        call_id: str,
        description: str,
        prompt: str,
        type_name: str | None,
        emit: Callable[[Any], None] | None,
        signal: asyncio.Event,
    ) -> ToolResult: ...


class TaskTool(Tool):
    name = "task"
    snippet = "Hand a multi-step task to a subagent with a fresh context; its reply is the result"
    needs_permission = False  # each of the subagent's own calls is asked

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    description = DESCRIPTION

    def declaration(self) -> JSONObject:
        """The declaration, listing the subagent types there are now."""
        listed = "\n".join(f"- {name}: {about}" for name, about in self.runner.type_names())
        declared = super().declaration()
        declared["description"] = f"{DESCRIPTION}\n\nAvailable subagent types (subagent_type):\n{listed}"
        return declared

    parameters = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
            "prompt": {"type": "string", "description": "The task for the subagent to perform"},
            "subagent_type": {
                "type": "string",
                "description": "The type of subagent to use (default: general-purpose)",
            },
        },
        "required": ["description", "prompt"],
    }

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        prompt = str(args.get("prompt") or "")
        if not prompt.strip():
            raise ToolError("prompt is empty: say what the subagent should do")
        description = " ".join(str(args.get("description") or "").split())[:80] or "task"
        kind = args.get("subagent_type")
        return await self.runner.run_task(
            ctx.call_id,
            description,
            prompt,
            str(kind) if isinstance(kind, str) and kind.strip() else None,
            ctx.emit,
            ctx.signal,
        )


__all__ = ["TaskTool"]

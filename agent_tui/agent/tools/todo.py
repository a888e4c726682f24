"""The ``todo_write`` tool (Claude Code's TodoWrite): the model keeps a visible plan.

Each call replaces the whole list (``content``, ``status`` pending / in_progress / completed,
``activeForm`` the words shown while it is in progress). Nothing is stored but the call and its
result (``details.todos``); the latest list on a branch is :func:`agent_tui.projection.todos.latest_todos`.
"""

from __future__ import annotations

from agent_tui.agent.tools.base import JSONObject, Tool, ToolContext, ToolError, ToolResult
from agent_tui.projection.todos import STATUSES, TODO_TOOL, clean_todos

DESCRIPTION = (
    "Create and update a structured task list for the current work, which the user sees. Use it for "
    "tasks of three or more steps: write the whole list each time, with exactly one item in_progress while "
    "you work on it, and mark each item completed as soon as it is done. Skip it for simple one-step requests."
)

RESULT = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track your "
    "progress. Please proceed with the current tasks if applicable"
)


class TodoWriteTool(Tool):
    name = TODO_TOOL
    description = DESCRIPTION
    snippet = "Keep a visible task list (the whole list each call)"
    needs_permission = False
    parameters = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The updated todo list",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "What to do, imperative"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "description": "Present continuous form"},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
    }

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        todos = clean_todos(args.get("todos"))
        if isinstance(todos, str):
            raise ToolError(todos)
        return ToolResult.text(RESULT, {"todos": todos})


__all__ = ["TodoWriteTool"]

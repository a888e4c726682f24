"""write{path, content}: create or overwrite a file, making parent directories, as pi's write tool."""

from __future__ import annotations

import os

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolResult,
    in_thread,
    resolve_path,
)
from agent_tui.agent.tools.locks import file_lock
from agent_tui.agent.tools.safe_open import open_checked, write_all


class WriteTool(Tool):
    name = "write"
    snippet = "Create or overwrite files"
    guidelines = ("Use write only for new files or complete rewrites.",)
    description = (
        "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
        "Automatically creates parent directories."
    )
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
            "content": {"type": "string", "description": "Content to write to the file"},
        },
        "required": ["path", "content"],
    }

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        path = str(args["path"])
        content = str(args["content"])
        absolute = resolve_path(path, ctx.cwd)
        async with file_lock(absolute):
            ctx.check()

            def write() -> None:
                fd = open_checked(absolute, path, create=True, guard=ctx.write_guard)
                try:
                    write_all(fd, content.encode("utf-8"))
                finally:
                    os.close(fd)

            await in_thread(write)
        return ToolResult.text(f"Successfully wrote to {path}")

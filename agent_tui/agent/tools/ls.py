"""ls{path?, limit?}: a directory's entries, sorted, directories marked with '/', as pi's ls tool."""

from __future__ import annotations

import os

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    existing_directory,
    in_thread,
    number_arg,
)
from agent_tui.agent.tools.truncate import DEFAULT_MAX_BYTES, capped_listing

DEFAULT_LIMIT = 500


class LsTool(Tool):
    name = "ls"
    snippet = "List directory contents"
    description = (
        "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "
        f"Includes dotfiles. Output is truncated to {DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
        "(whichever is hit first)."
    )
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to list (default: current directory)"},
            "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"},
        },
    }

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        return await in_thread(self._list, args, ctx)

    def _list(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        directory = existing_directory(str(args.get("path") or "."), ctx.cwd)
        limit = max(1, number_arg(args, "limit") or DEFAULT_LIMIT)
        try:
            names = os.listdir(directory)
        except OSError as e:
            raise ToolError(f"Cannot read directory: {e}") from e
        names.sort(key=str.lower)
        results: list[str] = []
        limit_reached = False
        for name in names:
            if len(results) >= limit:
                limit_reached = True
                break
            try:
                is_dir = (directory / name).is_dir()
            except OSError:
                continue
            results.append(name + ("/" if is_dir else ""))
        if not results:
            return ToolResult.text("(empty directory)")
        notice = f"{limit} entries limit reached. Use limit={limit * 2} for more"
        reached = (notice, "entryLimitReached", limit) if limit_reached else None
        return ToolResult.text(*capped_listing(results, limit=reached))

"""find{pattern, path?, limit?}: files by glob, respecting .gitignore, as pi's find tool (fd)."""

from __future__ import annotations

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolResult,
    existing_directory,
    in_thread,
    number_arg,
)
from agent_tui.agent.tools.truncate import DEFAULT_MAX_BYTES, capped_listing
from agent_tui.agent.tools.walk import Glob, list_tree

DEFAULT_LIMIT = 1000


class FindTool(Tool):
    name = "find"
    snippet = "Find files by glob pattern (respects .gitignore)"
    description = (
        "Search for files by glob pattern. Returns matching file paths relative to the search directory. "
        f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB "
        "(whichever is hit first)."
    )
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": (
                    "Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', "
                    "it matches file names at any depth"
                ),
            },
            "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
            "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"},
        },
        "required": ["pattern"],
    }

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        return await in_thread(self._find, args, ctx)

    def _find(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        root = existing_directory(str(args.get("path") or "."), ctx.cwd)
        limit = max(1, number_arg(args, "limit") or DEFAULT_LIMIT)
        glob = Glob(str(args["pattern"]))
        files, dirs = list_tree(root, ctx.check)
        matches = sorted([f for f in files if glob.match(f)] + [d + "/" for d in dirs if glob.match(d)])
        if not matches:
            return ToolResult.text("No files found matching pattern")
        notice = f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern"
        reached = (notice, "resultLimitReached", limit) if len(matches) > limit else None
        return ToolResult.text(*capped_listing(matches[:limit], limit=reached))

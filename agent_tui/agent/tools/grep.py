"""grep{pattern, path?, glob?, ignoreCase?, literal?, context?, limit?}: search file contents, as pi's grep tool (rg)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    in_thread,
    number_arg,
    resolve_path,
)
from agent_tui.agent.tools.read import open_regular
from agent_tui.agent.tools.truncate import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_LENGTH,
    byte_len,
    capped_listing,
    truncate_line,
)
from agent_tui.agent.tools.walk import Glob, list_tree

DEFAULT_LIMIT = 100
MAX_FILE_BYTES = 20 * 1024 * 1024  # larger files are skipped


class GrepTool(Tool):
    name = "grep"
    snippet = "Search file contents for patterns (respects .gitignore)"
    description = (
        "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects "
        f".gitignore. Output is truncated to {DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB (whichever "
        f"is hit first). Long lines are truncated to {GREP_MAX_LINE_LENGTH} chars."
    )
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
            "path": {
                "type": "string",
                "description": "Directory or file to search (default: current directory)",
            },
            "glob": {
                "type": "string",
                "description": (
                    "Filter files by glob pattern relative to path, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', "
                    "it matches file names at any depth"
                ),
            },
            "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
            "literal": {
                "type": "boolean",
                "description": "Treat pattern as literal string instead of regex (default: false)",
            },
            "context": {
                "type": "number",
                "description": "Number of lines to show before and after each match (default: 0)",
            },
            "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"},
        },
        "required": ["pattern"],
    }

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        return await in_thread(self._grep, args, ctx)

    def _grep(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        pattern = str(args["pattern"])
        target = resolve_path(str(args.get("path") or "."), ctx.cwd)
        if not target.exists():
            raise ToolError(f"Path not found: {target}")
        flags = re.IGNORECASE if args.get("ignoreCase") else 0
        try:
            regex = re.compile(re.escape(pattern) if args.get("literal") else pattern, flags)
        except re.error as e:
            raise ToolError(f"regex parse error: {e}") from e
        context = max(0, number_arg(args, "context") or 0)
        limit = max(1, number_arg(args, "limit") or DEFAULT_LIMIT)
        if target.is_dir():
            files, _ = list_tree(target, ctx.check)
            glob_arg = args.get("glob")
            if glob_arg:
                text = str(glob_arg)
                negate = text.startswith("!")
                glob = Glob(text[1:] if negate else text, ignore_case=False)
                files = [f for f in files if glob.match(f) != negate]
            candidates = [(target / f, f) for f in files]
        else:
            candidates = [(target, target.name)]

        lines_out: list[str] = []
        out_bytes = 0
        out_count = 0
        matches = 0
        limit_reached = False
        long_lines = False

        def push(rel: str, number: int, line: str, is_match: bool) -> None:
            nonlocal out_bytes, out_count, long_lines
            shown, cut = truncate_line(line.rstrip("\r"))
            long_lines = long_lines or cut
            entry = f"{rel}:{number}: {shown}" if is_match else f"{rel}-{number}- {shown}"
            if out_bytes - 1 <= DEFAULT_MAX_BYTES:
                lines_out.append(entry)
            out_bytes += byte_len(entry) + 1
            out_count += 1

        for count, (path, rel) in enumerate(candidates):
            if count % 64 == 0:
                ctx.check()
            lines = _read_text_lines(path)
            if lines is None:
                continue
            hits = [i for i, line in enumerate(lines) if regex.search(line)]
            if not hits:
                continue
            if matches + len(hits) > limit:
                limit_reached = True
                hits = hits[: limit - matches]
            shown: set[int] = set()
            hit_set = set(hits)
            for i in hits:
                for j in range(max(0, i - context), min(len(lines), i + context + 1)):
                    shown.add(j)
            for j in sorted(shown):
                push(rel, j + 1, lines[j], j in hit_set)
            matches += len(hits)
            if limit_reached:
                break

        if matches == 0:
            return ToolResult.text("No matches found")
        notice = f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern"
        long_notice = f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        text, details = capped_listing(
            lines_out,
            limit=(notice, "matchLimitReached", limit) if limit_reached else None,
            # pi counts the whole output, as written before the cut
            truncation_details=lambda t: {
                **t.to_json(),
                "totalLines": out_count,
                "totalBytes": out_bytes - 1,
            },
            extra=[(long_notice, "linesTruncated", True)] if long_lines else [],
        )
        return ToolResult.text(text, details)


def _read_text_lines(path: Path) -> list[str] | None:
    """The lines of a text file; None for binary, unreadable or huge files (rg skips binary files)."""
    try:
        fd, size = open_regular(path)  # a FIFO or a device in the tree is skipped, never waited on
    except (ToolError, OSError):
        return None
    with os.fdopen(fd, "rb") as f:
        if size > MAX_FILE_BYTES:
            return None
        try:
            data = f.read(MAX_FILE_BYTES)
        except OSError:
            return None
    if b"\0" in data[:8192]:
        return None
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines

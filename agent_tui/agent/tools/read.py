"""read{path, offset?, limit?}: a text file (or an image), as pi's read tool."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    number_arg,
    resolve_read_path,
)
from agent_tui.agent.tools.images import (
    IMAGE_TYPE_SNIFF_BYTES,
    ImageDecodeError,
    ResizeOptions,
    detect_image_mime,
    process_image,
)
from agent_tui.agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head


class ReadTool(Tool):
    name = "read"
    snippet = "Read file contents"
    guidelines = ("Use read to examine files instead of cat or sed.",)
    description = (
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent "
        f"as attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or "
        f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files. When you "
        "need the full file, continue with offset until complete."
    )
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
            "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
            "limit": {"type": "number", "description": "Maximum number of lines to read"},
        },
        "required": ["path"],
    }

    def __init__(
        self, *, auto_resize_images: bool = True, resize_options: ResizeOptions | None = None
    ) -> None:
        self.auto_resize_images = auto_resize_images  # pi's images.autoResize setting, on by default
        self.resize_options = resize_options

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._read, args, ctx)

    def _read(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        path = str(args["path"])
        offset = number_arg(args, "offset")
        limit = number_arg(args, "limit")
        absolute = resolve_read_path(path, ctx.cwd)
        if not absolute.exists():
            raise ToolError(f"ENOENT: no such file or directory, access '{absolute}'")
        if absolute.is_dir():
            raise ToolError(f"EISDIR: illegal operation on a directory, read '{absolute}'")
        if not os.access(absolute, os.R_OK):
            raise ToolError(f"EACCES: permission denied, access '{absolute}'")
        with open(absolute, "rb") as f:
            head = f.read(IMAGE_TYPE_SNIFF_BYTES)
        mime = detect_image_mime(head)
        if mime is not None:
            return self._image(absolute, mime, ctx)
        return self._text(absolute, path, offset, limit, ctx)

    def _image(self, absolute: Path, mime: str, ctx: ToolContext) -> ToolResult:
        """pi's image read: converted, oriented and resized to fit, with pi's notes for the model."""
        try:
            processed = process_image(
                absolute.read_bytes(),
                mime,
                auto_resize=self.auto_resize_images,
                resize_options=self.resize_options,
                check=ctx.check,
            )
        except ImageDecodeError as e:
            detail = " ".join(str(e).split())  # Pillow's words, on one line
            raise ToolError(
                f"Could not read image {absolute} [{mime}]: the image data is corrupt or truncated ({detail})"
            ) from None
        if not processed.ok:
            return ToolResult.text(f"Read image file [{mime}]\n{processed.message}")
        note = "\n".join([f"Read image file [{processed.mime_type}]", *processed.hints])
        return ToolResult(
            [
                {"type": "text", "text": note},
                {"type": "image", "data": processed.data, "mimeType": processed.mime_type},
            ]
        )

    def _text(
        self, absolute: Path, path: str, offset: int | None, limit: int | None, ctx: ToolContext
    ) -> ToolResult:
        start = max(0, offset - 1) if offset else 0
        end = start + limit if limit is not None and limit >= 0 else None
        stored: list[str] = []
        stored_bytes = 0
        past_caps = False
        first_line_bytes = 0
        line_no = 0
        selected = 0
        ends_with_newline = True  # an empty file is one empty line, as JavaScript's split sees it

        def take(raw: bytes) -> None:
            nonlocal stored_bytes, past_caps, first_line_bytes, selected
            if selected == 0:
                first_line_bytes = len(raw)
            if not past_caps:
                if len(stored) > DEFAULT_MAX_LINES or stored_bytes > DEFAULT_MAX_BYTES:
                    past_caps = True  # one line past the caps is kept so truncation is detected
                stored.append(raw[: DEFAULT_MAX_BYTES + 1].decode("utf-8", "replace"))
                stored_bytes += min(len(raw), DEFAULT_MAX_BYTES + 1) + 1
            selected += 1

        with open(absolute, "rb") as f:
            for number, raw in enumerate(f):
                if number % 4096 == 0:
                    ctx.check()
                ends_with_newline = raw.endswith(b"\n")
                body = raw[:-1] if ends_with_newline else raw
                if line_no >= start and (end is None or line_no < end):
                    take(body)
                line_no += 1
        if ends_with_newline:
            if line_no >= start and (end is None or line_no < end):
                take(b"")
            line_no += 1
        total = line_no
        if start >= total:
            raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
        truncation = truncate_head("\n".join(stored))
        shown_from = start + 1
        details: JSONObject | None = None
        if truncation.first_line_exceeds_limit:
            text = (
                f"[Line {shown_from} is {format_size(first_line_bytes)}, exceeds {format_size(DEFAULT_MAX_BYTES)} "
                f"limit. Use bash: sed -n '{shown_from}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
            )
            details = {"truncation": truncation.to_json()}
        elif truncation.truncated:
            last = shown_from + truncation.output_lines - 1
            text = truncation.content
            if truncation.truncated_by == "lines":
                text += (
                    f"\n\n[Showing lines {shown_from}-{last} of {total}. Use offset={last + 1} to continue.]"
                )
            else:
                text += (
                    f"\n\n[Showing lines {shown_from}-{last} of {total} ({format_size(DEFAULT_MAX_BYTES)} limit). "
                    f"Use offset={last + 1} to continue.]"
                )
            details = {"truncation": truncation.to_json()}
        elif end is not None and min(end, total) < total:
            remaining = total - min(end, total)
            text = (
                f"{truncation.content}\n\n[{remaining} more lines in file. Use offset={end + 1} to continue.]"
            )
        else:
            text = truncation.content
        return ToolResult.text(text, details)

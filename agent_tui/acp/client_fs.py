"""``read``, ``write`` and ``edit`` through the editor's ``fs/read_text_file`` and ``fs/write_text_file``.

When the client offers them, the model reads what the editor has (an unsaved buffer included) and
its writes land in the editor, which tracks and can undo them. Each tool keeps the built-in's name,
schema, output and errors: ``read`` cuts and numbers what the editor returns exactly as it cuts a
file read from disk (an image, or a file the editor cannot read, is read from disk); ``edit``
applies the same matching rules to the editor's text. The permission policy has already decided on
the call; its write guard still sees the real path before anything is written.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence

from acp import RequestError
from acp.interfaces import Client

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    in_thread,
    number_arg,
    resolve_path,
    resolve_read_path,
)
from agent_tui.agent.tools.edit import EditTool, apply_edits, normalize_to_lf, unified_diff
from agent_tui.agent.tools.images import IMAGE_TYPE_SNIFF_BYTES, detect_image_mime
from agent_tui.agent.tools.read import ReadTool
from agent_tui.agent.tools.write import WriteTool


class _Editor:
    """The editor's file methods for one session."""

    def __init__(self, conn: Client, session_id: str) -> None:
        self.conn, self.session_id = conn, session_id

    async def read(self, path: str) -> str:
        response = await self.conn.read_text_file(session_id=self.session_id, path=path)
        return response.content

    async def write(self, path: str, content: str) -> None:
        await self.conn.write_text_file(session_id=self.session_id, path=path, content=content)


def _guard(ctx: ToolContext, absolute: str, shown: str) -> None:
    """The permission policy's last word on the real path about to be written."""
    if ctx.write_guard is None:
        return
    real = os.path.realpath(absolute)
    try:
        links = os.stat(real).st_nlink
    except OSError:
        links = 1
    refusal = ctx.write_guard(real, links)
    if refusal is not None:
        raise ToolError(refusal)


def _is_image(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return detect_image_mime(f.read(IMAGE_TYPE_SNIFF_BYTES)) is not None
    except OSError:
        return False


class EditorReadTool(ReadTool):
    def __init__(self, editor: _Editor) -> None:
        super().__init__()
        self.editor = editor

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        path = str(args["path"])
        absolute = str(resolve_read_path(path, ctx.cwd))
        if os.path.isdir(absolute) or await in_thread(_is_image, absolute):
            return await super().execute(args, ctx)
        try:
            text = await self.editor.read(absolute)
        except RequestError:
            return await super().execute(args, ctx)  # the disk's answer, with pi's error for a missing file
        data = text.encode("utf-8")
        return await in_thread(
            self._text,
            io.BytesIO(data),
            len(data),
            path,
            number_arg(args, "offset"),
            number_arg(args, "limit"),
            ctx,
        )


class EditorWriteTool(WriteTool):
    def __init__(self, editor: _Editor) -> None:
        self.editor = editor

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        path = str(args["path"])
        absolute = str(resolve_path(path, ctx.cwd))
        ctx.check()
        _guard(ctx, absolute, path)
        try:
            await self.editor.write(absolute, str(args["content"]))
        except RequestError as e:
            raise ToolError(f"Could not write {path}: {e}") from None
        return ToolResult.text(f"Successfully wrote to {path}")


class EditorEditTool(EditTool):
    def __init__(self, editor: _Editor) -> None:
        self.editor = editor

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        path = str(args["path"])
        edits = args.get("edits")
        if not isinstance(edits, list) or not edits:
            raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
        absolute = str(resolve_path(path, ctx.cwd))
        ctx.check()
        _guard(ctx, absolute, path)
        try:
            text = await self.editor.read(absolute)
        except RequestError:
            raise ToolError(f"Could not edit file: {path}. Error code: ENOENT.") from None
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        content = text[len(bom) :]
        normalized = normalize_to_lf(content)
        new_content, _ = apply_edits(normalized, edits, path)
        diff, first_line = unified_diff(path, normalized, new_content)
        ctx.check()
        final = (
            new_content.replace("\n", "\r\n") if content != normalized and "\r\n" in content else new_content
        )
        try:
            await self.editor.write(absolute, bom + final)
        except RequestError as e:
            raise ToolError(f"Could not edit {path}: {e}") from None
        return ToolResult.text(
            f"Successfully replaced {len(edits)} block(s) in {path}.",
            {"diff": diff, "firstChangedLine": first_line},
        )


def client_tools(
    tools: Sequence[Tool], conn: Client, session_id: str, *, read: bool, write: bool
) -> list[Tool]:
    """``tools`` with ``read`` through the editor when it can read, ``write`` and ``edit`` when it can
    read and write (an edit reads first)."""
    editor = _Editor(conn, session_id)
    out: list[Tool] = []
    for tool in tools:
        if read and tool.name == "read":
            out.append(EditorReadTool(editor))
        elif read and write and tool.name == "write":
            out.append(EditorWriteTool(editor))
        elif read and write and tool.name == "edit":
            out.append(EditorEditTool(editor))
        else:
            out.append(tool)
    return out


__all__ = ["EditorEditTool", "EditorReadTool", "EditorWriteTool", "client_tools"]

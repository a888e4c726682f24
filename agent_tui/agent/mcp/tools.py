"""An MCP server's tool as one of the model's tools: ``mcp__SERVER__TOOL`` with the server's schema.

Results go through what the built-in tools use: text is cut by ``truncate`` (2,000 lines or 50 KB,
the beginning kept), images through ``images.process_image`` (converted, resized, as ``read``'s),
embedded text resources become text, other content is one line naming it; an ``isError`` result is
a tool error; a call with no result (the server crashed, timed out) is a ``ToolError``. Redaction
happens where every tool result is written (the session's append).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import Any

from agent_tui.agent.mcp.server import McpCallError, McpServer
from agent_tui.agent.tools.base import JSONObject, Tool, ToolContext, ToolError, ToolResult
from agent_tui.agent.tools.images import ImageDecodeError, process_image
from agent_tui.agent.tools.truncate import format_size, truncate_head

PREFIX = "mcp__"
MAX_NAME = 64  # the providers' limit on a tool name
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def tool_name(server: str, tool: str) -> str:
    """pi's and Claude Code's name: ``mcp__<server>__<tool>``, other characters as ``_``; a name over
    64 characters is cut and given a hash of the whole."""
    name = f"{PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def input_schema(tool: Any) -> JSONObject:
    schema = getattr(tool, "input_schema", None)
    schema = dict(schema) if isinstance(schema, dict) else {}
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def read_only_hint(tool: Any) -> bool:
    annotations = getattr(tool, "annotations", None)
    return bool(getattr(annotations, "read_only_hint", False))


class McpTool(Tool):
    """One tool of one server; ``execute`` calls it through the server's connection."""

    def __init__(self, server: McpServer, tool: Any, name: str | None = None) -> None:
        self.server = server
        self.remote_name = str(tool.name)
        self.name = name or tool_name(server.name, self.remote_name)
        self.description = str(tool.description or getattr(tool, "title", None) or self.remote_name)
        # A server's readOnlyHint is its own claim: it decides checkpoints and the ACP kind, never a
        # permission (the policy still asks for every MCP tool in ``ask`` mode).
        self.reads_only = read_only_hint(tool)
        self.file_effect = "none" if self.reads_only else "any"
        self.claude_name = self.name
        self.acp_kind = "read" if self.reads_only else "other"
        self.parameters = input_schema(tool)
        self.read_only = read_only_hint(tool)
        self.snippet = ""
        self.guidelines = ()

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        try:
            result = await self.server.call(self.remote_name, args)
        except McpCallError as e:
            raise ToolError(str(e)) from None
        content = convert_content(result, ctx)
        return ToolResult(
            content,
            {"mcp": {"server": self.server.name, "tool": self.remote_name}},
            bool(getattr(result, "is_error", False)),
        )


def convert_content(result: Any, ctx: ToolContext) -> list[JSONObject]:
    """A CallToolResult's content as pi's content blocks: one text block first, then the images."""
    texts: list[str] = []
    images: list[JSONObject] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(str(block.text))
        elif kind == "image":
            _image(str(block.data), str(block.mime_type), texts, images, ctx)
        elif kind == "resource":
            resource = block.resource
            uri = str(getattr(resource, "uri", ""))
            mime = str(getattr(resource, "mime_type", None) or "")
            if getattr(resource, "text", None) is not None:
                texts.append(f"[resource {uri}]\n{resource.text}")
            elif mime.startswith("image/"):
                _image(str(resource.blob), mime, texts, images, ctx)
            else:
                size = len(str(getattr(resource, "blob", ""))) * 3 // 4
                texts.append(
                    f"[binary resource {uri} ({mime or 'unknown type'}, about {format_size(size)}), not shown]"
                )
        elif kind == "resource_link":
            texts.append(f"[resource link {block.uri}: {block.name}]")
        elif kind == "audio":
            size = len(str(block.data)) * 3 // 4
            texts.append(f"[audio ({block.mime_type}, about {format_size(size)}), not shown]")
        else:
            texts.append(f"[{kind or 'unknown'} content, not shown]")
    structured = getattr(result, "structured_content", None)
    if not texts and not images and structured is not None:
        texts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    text = "\n".join(texts)
    cut = truncate_head(text)
    if cut.truncated:
        text = (
            f"{cut.content}\n\n[Output truncated: {cut.output_lines} of {cut.total_lines} lines "
            f"({format_size(cut.output_bytes)} of {format_size(cut.total_bytes)}) shown.]"
        )
    if images and not text:
        return images
    blocks: list[JSONObject] = [{"type": "text", "text": text or "(no output)"}]
    return blocks + images


def _image(data: str, mime: str, texts: list[str], images: list[JSONObject], ctx: ToolContext) -> None:
    try:
        raw = base64.b64decode(data, validate=True)
        processed = process_image(raw, mime, check=ctx.check)
    except (binascii.Error, ValueError, ImageDecodeError) as e:
        texts.append(f"[image ({mime}) could not be read: {' '.join(str(e).split())}]")
        return
    if not processed.ok:
        texts.append(f"[image ({mime}): {processed.message}]")
        return
    texts.extend(processed.hints)
    images.append({"type": "image", "data": processed.data, "mimeType": processed.mime_type})


__all__ = ["PREFIX", "McpTool", "convert_content", "input_schema", "read_only_hint", "tool_name"]

"""A ``session/prompt``'s content blocks as the user message's content (pi's blocks).

Text stays text; an image is an ``image`` block (resized as ``read`` resizes); an embedded text
resource (a file the editor attached) is a ``<file name="PATH">`` text block, as an ``@path``
mention is in the app; a resource link is named by its URI (the model can ``read`` it); audio and
binary resources are named, not sent (no provider here takes them).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from agent_tui.agent.tools.images import ImageDecodeError, process_image
from agent_tui.store.record import JSONObject

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def uri_path(uri: str) -> str:
    """A ``file://`` URI's path; any other URI as it is."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def user_content(blocks: Sequence[PromptBlock]) -> list[JSONObject]:
    """The content blocks of the user message for a prompt."""
    out: list[JSONObject] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            out.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContentBlock):
            out.extend(_image(block))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            name = uri_path(resource.uri)
            if isinstance(resource, TextResourceContents):
                out.append({"type": "text", "text": f'<file name="{name}">\n{resource.text}\n</file>'})
            elif isinstance(resource, BlobResourceContents):
                out.append({"type": "text", "text": f"[attached binary file {name}, not sent]"})
        elif isinstance(block, ResourceContentBlock):
            out.append({"type": "text", "text": f"[file: {uri_path(block.uri)}]"})
        elif isinstance(block, AudioContentBlock):
            out.append({"type": "text", "text": "[an audio clip was attached, not sent]"})
    return out or [{"type": "text", "text": ""}]


def _image(block: ImageContentBlock) -> list[JSONObject]:
    try:
        data = base64.b64decode(block.data, validate=True)
        processed = process_image(data, block.mime_type)
    except (binascii.Error, ValueError, ImageDecodeError):
        return [{"type": "text", "text": "[an attached image could not be read, not sent]"}]
    if not processed.ok:
        return [{"type": "text", "text": f"[an attached image was not sent: {processed.message}]"}]
    image: JSONObject = {"type": "image", "data": processed.data, "mimeType": processed.mime_type}
    if processed.hints:
        return [{"type": "text", "text": "\n".join(processed.hints)}, image]
    return [image]


def prompt_text(blocks: Sequence[PromptBlock]) -> str:
    """The prompt's text blocks joined: what a slash command is parsed from."""
    return "".join(b.text for b in blocks if isinstance(b, TextContentBlock))


__all__ = ["PromptBlock", "prompt_text", "uri_path", "user_content"]

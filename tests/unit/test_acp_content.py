"""A ``session/prompt``'s content blocks as the user message agent-tui appends, and tool calls as
the editor is told about them."""

from __future__ import annotations

import base64
import io

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from PIL import Image

from agent_tui.acp.content import PromptBlock, prompt_text, user_content
from agent_tui.acp.updates import call_finished, call_started, tool_title


def _png(width: int, height: int) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def test_text_files_and_links_become_text_blocks() -> None:
    blocks: list[PromptBlock] = [
        TextContentBlock(type="text", text="explain "),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri="file:///work/app%20main.py", text="print('hi')\n"),
        ),
        ResourceContentBlock(type="resource_link", uri="file:///work/README.md", name="README.md"),
        AudioContentBlock(type="audio", data="AAAA", mime_type="audio/wav"),
    ]
    assert user_content(blocks) == [
        {"type": "text", "text": "explain "},
        {"type": "text", "text": "<file name=\"/work/app main.py\">\nprint('hi')\n\n</file>"},
        {"type": "text", "text": "[file: /work/README.md]"},
        {"type": "text", "text": "[an audio clip was attached, not sent]"},
    ]
    assert prompt_text(blocks) == "explain "


def test_an_image_is_attached_resized_and_a_broken_one_is_named() -> None:
    small = user_content([ImageContentBlock(type="image", data=_png(40, 30), mime_type="image/png")])
    assert small[-1]["type"] == "image" and small[-1]["mimeType"] == "image/png"
    big = user_content([ImageContentBlock(type="image", data=_png(3000, 100), mime_type="image/png")])
    assert big[0]["type"] == "text" and "3000x100" in big[0]["text"]  # pi's resize note for the model
    assert big[-1]["type"] == "image"
    broken = user_content([ImageContentBlock(type="image", data="not base64!", mime_type="image/png")])
    assert broken == [{"type": "text", "text": "[an attached image could not be read, not sent]"}]


def test_tool_calls_carry_kind_title_location_and_a_diff_for_edits() -> None:
    assert tool_title("bash", {"command": "npm   test\n--watch"}) == "bash npm test --watch"
    started = call_started("c1", "read", {"path": "src/a.py", "offset": 10}, "/work")
    assert started.kind == "read" and started.status == "pending"
    assert started.locations is not None and started.locations[0].path == "/work/src/a.py"
    assert started.locations[0].line == 10
    edit = {"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}
    done = call_finished(
        "c2", "edit", edit, {"content": [{"type": "text", "text": "ok"}], "isError": False}, "/w"
    )
    assert done.status == "completed" and done.content is not None
    diff = done.content[0]
    assert getattr(diff, "old_text", None) == "x = 1" and getattr(diff, "new_text", None) == "x = 2"
    failed = call_finished(
        "c3", "edit", edit, {"content": [{"type": "text", "text": "no match"}], "isError": True}, "/w"
    )
    assert failed.status == "failed" and failed.content is not None and len(failed.content) == 1

"""The read tool's images, as pi 1.6 prepares them: sniffed, converted, oriented, resized, noted.

Every image is drawn here with Pillow; the expected texts are pi's (utils/image-process.js,
image-resize.js, core/tools/read.js).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import io
import random
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from agent_tui.agent.tools.base import ToolContext, ToolError, ToolResult, validate_arguments
from agent_tui.agent.tools.images import (
    DEFAULT_IMAGE_MAX_BYTES,
    NOT_RESIZED,
    ResizedImage,
    ResizeOptions,
    detect_image_mime,
    exif_orientation,
    format_dimension_note,
)
from agent_tui.agent.tools.read import ReadTool
from tests.support.agent_support import Harness
from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_stream,
    call,
    openai_stream,
    text,
    tool_use,
)

pytestmark = pytest.mark.timeout(60)

RED = (255, 0, 0)
BLUE = (0, 0, 255)


async def read(path: Path, tool: ReadTool | None = None) -> ToolResult:
    tool = tool or ReadTool()
    ctx = ToolContext(str(path.parent), asyncio.Event())
    return await tool.execute(validate_arguments(tool, {"path": path.name}), ctx)


def note_of(result: ToolResult) -> str:
    assert result.content[0]["type"] == "text"
    return str(result.content[0]["text"])


def attached(result: ToolResult) -> tuple[str, bytes, Image.Image]:
    """The image block's mime type, its decoded bytes, and the decoded image."""
    (block,) = [b for b in result.content if b["type"] == "image"]
    raw = base64.b64decode(block["data"])
    assert len(block["data"]) < DEFAULT_IMAGE_MAX_BYTES
    image = Image.open(io.BytesIO(raw))
    image.load()
    assert Image.MIME[image.format or ""] == block["mimeType"]
    return str(block["mimeType"]), raw, image


def save(image: Image.Image, path: Path, fmt: str, **params: Any) -> Path:
    image.save(path, fmt, **params)
    return path


def blocks(size: tuple[int, int]) -> Image.Image:
    """Flat-colour rectangles: png compresses them far better than jpeg, so pi picks png."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    w, h = size
    draw.rectangle((0, 0, w // 2, h // 2), fill=RED)
    draw.rectangle((w // 2, h // 2, w, h), fill=BLUE)
    return image


@functools.cache
def _big_png() -> bytes:
    """:func:`blocks` at 4000x3000 as a png, encoded once for the four tests that read it (0.2 s)."""
    out = io.BytesIO()
    blocks((4000, 3000)).save(out, "PNG")
    return out.getvalue()


def big_png(path: Path) -> Path:
    path.write_bytes(_big_png())
    return path


def noise(size: tuple[int, int], seed: int = 7) -> Image.Image:
    return Image.frombytes("RGB", size, random.Random(seed).randbytes(size[0] * size[1] * 3))


def dimension_note(ow: int, oh: int, w: int, h: int, scale: str) -> str:
    return (
        f"[Image: original {ow}x{oh}, displayed at {w}x{h}. "
        f"Multiply coordinates by {scale} to map to original image.]"
    )


# -- resizing ---------------------------------------------------------------------------------------


async def test_a_4000x3000_png_is_resized_to_2000x1500_with_pi_s_note(tmp_path: Path) -> None:
    path = big_png(tmp_path / "big.png")
    result = await read(path)
    mime, _, image = attached(result)
    assert mime == "image/png" and image.size == (2000, 1500)
    assert note_of(result) == "Read image file [image/png]\n" + dimension_note(4000, 3000, 2000, 1500, "2.00")
    assert image.convert("RGB").getpixel((10, 10)) == RED


async def test_an_image_too_big_as_png_goes_as_jpeg_under_the_byte_limit(tmp_path: Path) -> None:
    # Noise: the 2000x1500 png is ~9 MB, over 4.5 MB of base64; jpeg at quality 80 fits.
    path = save(noise((2400, 1800)), tmp_path / "noise.png", "PNG", compress_level=1)
    result = await read(path)
    mime, raw, image = attached(result)
    assert mime == "image/jpeg" and image.size == (2000, 1500)
    assert len(base64.b64encode(raw)) < 4.5 * 1024 * 1024
    assert note_of(result) == "Read image file [image/jpeg]\n" + dimension_note(
        2400, 1800, 2000, 1500, "1.20"
    )


async def test_a_tight_byte_limit_shrinks_the_image_until_it_fits(tmp_path: Path) -> None:
    path = save(noise((400, 300)), tmp_path / "noise.png", "PNG")
    limit = 20_000
    result = await read(path, ReadTool(resize_options=ResizeOptions(max_bytes=limit)))
    block = result.content[1]
    assert len(block["data"]) < limit
    _, _, image = attached(result)
    w, h = image.size
    assert w < 400 and h < 300  # each step takes three quarters: 300x225, 225x168, ...
    assert note_of(result).endswith(dimension_note(400, 300, w, h, f"{400 / w:.2f}"))


async def test_an_image_that_cannot_fit_is_omitted_with_pi_s_message(tmp_path: Path) -> None:
    path = save(blocks((100, 100)), tmp_path / "pic.png", "PNG")
    result = await read(path, ReadTool(resize_options=ResizeOptions(max_bytes=50)))
    assert result.content == [{"type": "text", "text": f"Read image file [image/png]\n{NOT_RESIZED}"}]
    assert NOT_RESIZED == "[Image omitted: could not be resized below the inline image size limit.]"


async def test_an_image_within_the_limits_is_sent_as_it_is(tmp_path: Path) -> None:
    path = save(blocks((640, 480)), tmp_path / "small.png", "PNG")
    result = await read(path)
    assert result.content == [
        {"type": "text", "text": "Read image file [image/png]"},
        {"type": "image", "data": base64.b64encode(path.read_bytes()).decode(), "mimeType": "image/png"},
    ]


async def test_auto_resize_off_sends_the_original(tmp_path: Path) -> None:
    path = big_png(tmp_path / "big.png")
    result = await read(path, ReadTool(auto_resize_images=False))
    assert note_of(result) == "Read image file [image/png]"
    assert result.content[1]["data"] == base64.b64encode(path.read_bytes()).decode()


def test_the_dimension_note_rounds_as_javascript_to_fixed() -> None:
    tie = ResizedImage("", "image/png", 9, 9, 8, 8, True)  # 9 / 8 = 1.125 exactly: toFixed gives 1.13
    assert format_dimension_note(tie) == dimension_note(9, 9, 8, 8, "1.13")
    assert format_dimension_note(ResizedImage("", "image/png", 8, 8, 8, 8, False)) is None


# -- EXIF orientation -------------------------------------------------------------------------------


def oriented_jpeg(path: Path, size: tuple[int, int], orientation: int) -> Path:
    """A jpeg whose stored top-left quadrant is red, the rest blue, with an EXIF orientation tag."""
    image = Image.new("RGB", size, BLUE)
    ImageDraw.Draw(image).rectangle((0, 0, size[0] // 2, size[1] // 2), fill=RED)
    exif = Image.Exif()
    exif[0x0112] = orientation
    return save(image, path, "JPEG", quality=90, exif=exif.tobytes())


async def test_a_large_jpeg_is_turned_upright_by_its_exif_orientation(tmp_path: Path) -> None:
    # Stored 3000x2000; orientation 6 means "rotate 90 degrees clockwise to display": 2000x3000.
    path = oriented_jpeg(tmp_path / "photo.jpg", (3000, 2000), 6)
    assert exif_orientation(path.read_bytes()) == 6
    result = await read(path)
    mime, _, image = attached(result)
    assert image.size == (1333, 2000)
    assert note_of(result) == f"Read image file [{mime}]\n" + dimension_note(2000, 3000, 1333, 2000, "1.50")
    rgb = image.convert("RGB")
    # The stored top-left (red) is now the top-right; the top-left is blue.
    red_corner = rgb.getpixel((1333 - 100, 100))
    blue_corner = rgb.getpixel((100, 100))
    assert isinstance(red_corner, tuple) and isinstance(blue_corner, tuple)
    assert red_corner[0] > 200 and red_corner[2] < 60
    assert blue_corner[2] > 200 and blue_corner[0] < 60


def test_exif_orientation_is_read_from_jpeg_and_webp_only(tmp_path: Path) -> None:
    exif = Image.Exif()
    exif[0x0112] = 8
    image = blocks((40, 20))
    webp = io.BytesIO()
    image.save(webp, "WEBP", exif=exif.tobytes())
    assert exif_orientation(webp.getvalue()) == 8
    png = io.BytesIO()
    image.save(png, "PNG", exif=exif.tobytes())
    assert exif_orientation(png.getvalue()) == 1  # pi reads jpeg and webp only
    assert exif_orientation(oriented_jpeg(tmp_path / "p.jpg", (40, 20), 3).read_bytes()) == 3


# -- other formats --------------------------------------------------------------------------------


async def test_a_large_webp_is_resized(tmp_path: Path) -> None:
    path = save(blocks((2500, 1000)), tmp_path / "wide.webp", "WEBP", lossless=True)
    result = await read(path)
    mime, _, image = attached(result)
    assert mime in ("image/png", "image/jpeg") and image.size == (2000, 800)
    assert note_of(result) == f"Read image file [{mime}]\n" + dimension_note(2500, 1000, 2000, 800, "1.25")


async def test_a_small_webp_is_sent_as_webp(tmp_path: Path) -> None:
    path = save(blocks((300, 200)), tmp_path / "small.webp", "WEBP")
    result = await read(path)
    assert note_of(result) == "Read image file [image/webp]"
    assert result.content[1]["data"] == base64.b64encode(path.read_bytes()).decode()


def animated_gif(path: Path, size: tuple[int, int]) -> Path:
    frames = [Image.new("RGB", size, colour) for colour in (RED, (0, 255, 0), BLUE)]
    return save(frames[0], path, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)


async def test_a_large_animated_gif_becomes_its_first_frame_resized(tmp_path: Path) -> None:
    path = animated_gif(tmp_path / "anim.gif", (2400, 600))
    result = await read(path)
    mime, _, image = attached(result)
    assert mime in ("image/png", "image/jpeg") and image.size == (2000, 500)
    assert getattr(image, "n_frames", 1) == 1
    assert image.convert("RGB").getpixel((1000, 250)) == RED  # the first frame
    assert note_of(result) == f"Read image file [{mime}]\n" + dimension_note(2400, 600, 2000, 500, "1.20")


async def test_a_small_animated_gif_is_sent_unchanged(tmp_path: Path) -> None:
    path = animated_gif(tmp_path / "anim.gif", (120, 80))
    result = await read(path)
    mime, raw, image = attached(result)
    assert mime == "image/gif" and raw == path.read_bytes()
    assert getattr(image, "n_frames", 1) == 3
    assert note_of(result) == "Read image file [image/gif]"


async def test_a_bmp_is_converted_to_png_with_pi_s_hint(tmp_path: Path) -> None:
    path = save(blocks((64, 48)), tmp_path / "pic.bmp", "BMP")
    result = await read(path)
    mime, _, image = attached(result)
    assert mime == "image/png" and image.size == (64, 48)
    assert note_of(result) == "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"


async def test_a_large_bmp_gets_the_hint_and_the_note(tmp_path: Path) -> None:
    path = save(blocks((3000, 1500)), tmp_path / "pic.bmp", "BMP")
    result = await read(path)
    mime, _, image = attached(result)
    assert image.size == (2000, 1000)
    assert note_of(result) == (
        f"Read image file [{mime}]\n[Image converted from image/bmp to {mime}.]\n"
        + dimension_note(3000, 1500, 2000, 1000, "1.50")
    )


def test_sniffing_follows_pi() -> None:
    png_head = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + b"\0" * 17
    assert detect_image_mime(png_head) == "image/png"
    assert detect_image_mime(b"\x89PNG\r\n\x1a\n" + b"\0" * 32) is None  # no IHDR: not a png to pi
    actl = struct.pack(">I", 8) + b"acTL" + b"\0" * 12
    assert detect_image_mime(png_head + actl) is None  # animated png: read as text, as pi does
    assert detect_image_mime(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert detect_image_mime(b"\xff\xd8\xff\xf7") is None  # JPEG-LS
    assert detect_image_mime(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    assert detect_image_mime(b"GIF89a") == "image/gif"
    bmp = io.BytesIO()
    blocks((4, 4)).save(bmp, "BMP")
    assert detect_image_mime(bmp.getvalue()) == "image/bmp"
    assert detect_image_mime(b"BM not really a bitmap header") is None


# -- corrupt images -----------------------------------------------------------------------------------


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def corrupt_error(path: Path, mime: str, message: str) -> None:
    """One line: the file, its type, and Pillow's reason in parentheses."""
    prefix = f"Could not read image {path} [{mime}]: the image data is corrupt or truncated ("
    assert "\n" not in message
    assert message.startswith(prefix) and message.endswith(")") and len(message) > len(prefix) + 1


async def test_a_corrupt_png_is_a_one_line_error(tmp_path: Path) -> None:
    ihdr = png_chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0))
    path = tmp_path / "broken.png"
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + ihdr + png_chunk(b"IDAT", b"not zlib at all") + png_chunk(b"IEND", b"")
    )
    with pytest.raises(ToolError) as caught:
        await read(path)
    corrupt_error(path, "image/png", str(caught.value))


async def test_a_truncated_jpeg_is_a_one_line_error(tmp_path: Path) -> None:
    whole = oriented_jpeg(tmp_path / "whole.jpg", (400, 300), 1).read_bytes()
    path = tmp_path / "cut.jpg"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ToolError) as caught:
        await read(path)
    corrupt_error(path, "image/jpeg", str(caught.value))
    assert "truncated" in str(caught.value)


async def test_garbage_after_an_image_magic_is_a_one_line_error(tmp_path: Path) -> None:
    for name, head, mime in [
        ("fake.jpg", b"\xff\xd8\xff\xe0", "image/jpeg"),
        ("fake.gif", b"GIF89a", "image/gif"),
        ("fake.webp", b"RIFF\x10\0\0\0WEBPVP8 ", "image/webp"),
    ]:
        path = tmp_path / name
        path.write_bytes(head + b"garbage" * 10)
        with pytest.raises(ToolError) as caught:
            await read(path)
        corrupt_error(path, mime, str(caught.value))


async def test_a_corrupt_image_through_the_tool_wrapper_is_an_error_result(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    (anthropic_harness.workdir / "fake.gif").write_bytes(b"GIF89a" + b"garbage")
    server.push(
        anthropic_stream(tool_use("toolu_bad", "read", {"path": "fake.gif"})),
        anthropic_stream(text("That image is broken.")),
    )
    await anthropic_harness.run("look at fake.gif")
    (result,) = anthropic_harness.messages("toolResult")
    assert result["isError"] is True
    (block,) = result["content"]
    corrupt_error(anthropic_harness.workdir / "fake.gif", "image/gif", block["text"])


# -- start-up -----------------------------------------------------------------------------------------


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_pillow_is_imported_only_when_an_image_is_read() -> None:
    code = (
        "import sys, agent_tui.cli.main, agent_tui.cli.print_mode, agent_tui.agent.tools, "
        "agent_tui.agent.loop; print('PIL' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- through the agent loop ---------------------------------------------------------------------------


EXPECTED_NOTE = "Read image file [image/png]\n" + dimension_note(4000, 3000, 2000, 1500, "2.00")


def decoded_size(data: str) -> tuple[int, int]:
    return Image.open(io.BytesIO(base64.b64decode(data))).size


async def test_the_anthropic_request_carries_the_resized_image(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    big_png(anthropic_harness.workdir / "shot.png")
    server.push(
        anthropic_stream(tool_use("toolu_img", "read", {"path": "shot.png"})),
        anthropic_stream(text("A red and a blue block.")),
    )
    await anthropic_harness.run("what is in shot.png?")
    result = server.requests[1].body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_img"
    note, image = result["content"]
    assert note == {"type": "text", "text": EXPECTED_NOTE}
    assert image["type"] == "image" and image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png"
    assert decoded_size(image["source"]["data"]) == (2000, 1500)
    assert len(image["source"]["data"]) < DEFAULT_IMAGE_MAX_BYTES
    anthropic_harness.assert_requests_match_context()


async def test_the_openai_request_carries_the_resized_image(
    openai_harness: Harness, server: FakeModelServer
) -> None:
    big_png(openai_harness.workdir / "shot.png")
    server.push(
        openai_stream("", tool_calls=[call("call_img", "read", {"path": "shot.png"})]),
        openai_stream("A red and a blue block."),
    )
    await openai_harness.run("what is in shot.png?")
    messages = server.requests[1].body["messages"]
    tool = next(m for m in messages if m["role"] == "tool")
    assert tool["tool_call_id"] == "call_img"
    assert tool["content"] == EXPECTED_NOTE + "\n(images attached below)"
    (part,) = messages[-1]["content"]
    assert messages[-1]["role"] == "user" and part["type"] == "image_url"
    prefix = "data:image/png;base64,"
    assert part["image_url"]["url"].startswith(prefix)
    assert decoded_size(part["image_url"]["url"][len(prefix) :]) == (2000, 1500)
    openai_harness.assert_requests_match_context()

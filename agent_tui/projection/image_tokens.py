"""What an image costs a request: its size read from the first bytes of its data, and the
provider's rule (pure, standard library only).

Each API documents its own rule, and for a small image they differ a hundredfold (64x32: 3 tokens
at Anthropic, 255 at OpenAI, 258 at Gemini), so an image is priced by the rule of the API the next
request goes to (:data:`RULES`, named by the provider spec's ``images``), the same rule on both
sides of every before/after figure:

- Anthropic: ``width × height / 750`` after scaling to fit 1,568 pixels on the long edge and
  about 1.15 megapixels.
- OpenAI (high detail, the default for a data URL): scaled to fit 2,048 × 2,048, then its short
  side to 768; 85 plus 170 per 512-pixel tile.
- Gemini: 258 for an image within 384 × 384; a larger one is cut into 768 × 768 tiles of 258.

An image whose size cannot be read (a format we do not parse, damaged data) counts pi's flat
4,800 characters (1,372 tokens at 3.5 characters a token), whatever the rule.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Callable, Mapping

UNKNOWN_IMAGE_TOKENS = 1_372  # pi's estimate for any image: 4,800 characters, at 3.5 a token
ANTHROPIC_LONG_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1_150_000
#: How much of the base64 data is decoded to find the size (a JPEG's frame header may follow
#: tens of kilobytes of EXIF; past this, the size counts as unknown).
HEAD_CHARS = 96 * 1024


def image_size(data: str) -> tuple[int, int] | None:
    """(width, height) of a PNG, GIF, JPEG or WebP given as base64, else None. PNG, GIF and WebP
    say it in their first 30 bytes: only a JPEG's frame header is looked for further (every
    estimate of a message with an image asks)."""
    head = _decoded_head(data, 64)
    if head is not None and head.startswith(b"\xff\xd8"):
        head = _decoded_head(data, HEAD_CHARS)
    if head is None:
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(head)
    return None


def _decoded_head(data: str, chars: int) -> bytes | None:
    text = data[:chars]
    try:
        return base64.b64decode(text[: len(text) - len(text) % 4], validate=False)
    except (binascii.Error, ValueError):
        return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    position = 2
    while position + 9 <= len(head):
        if head[position] != 0xFF:
            return None
        marker = head[position + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            position += 2
            continue
        length = struct.unpack(">H", head[position + 2 : position + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start of frame
            height, width = struct.unpack(">HH", head[position + 5 : position + 9])
            return width, height
        position += 2 + length
    return None


#: An API's rule: (width, height) in pixels -> tokens.
ImageRule = Callable[[int, int], int]


def anthropic_tokens(width: int, height: int) -> int:
    if width <= 0 or height <= 0:
        return UNKNOWN_IMAGE_TOKENS
    scale = min(1.0, ANTHROPIC_LONG_EDGE / max(width, height))
    scale = min(scale, math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)))
    return max(1, math.ceil(width * scale * (height * scale) / 750))


def openai_tokens(width: int, height: int) -> int:
    """OpenAI's high-detail rule (GPT-4o and later): fit 2,048 square, short side to 768, tiles."""
    if width <= 0 or height <= 0:
        return UNKNOWN_IMAGE_TOKENS
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def gemini_tokens(width: int, height: int) -> int:
    """Gemini's rule: 258 within 384 x 384, else 258 per 768 x 768 tile."""
    if width <= 0 or height <= 0:
        return UNKNOWN_IMAGE_TOKENS
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


#: The rules by the name a provider spec's ``images`` gives.
RULES: dict[str, ImageRule] = {
    "area": anthropic_tokens,
    "tiles-512": openai_tokens,
    "tiles-768": gemini_tokens,
}


def image_tokens(block: Mapping[str, object], rule: ImageRule = anthropic_tokens) -> int:
    """Tokens of one image block (``{"type": "image", "data": base64, "mimeType"}``) by ``rule``,
    or pi's flat figure when its size cannot be read."""
    data = block.get("data")
    size = image_size(data) if isinstance(data, str) else None
    return rule(*size) if size is not None else UNKNOWN_IMAGE_TOKENS

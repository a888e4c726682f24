"""An image's tokens from its real size (read from the first bytes of its data), by Anthropic's
rule, for every format the tools attach; pi's flat figure only when the size cannot be read."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from agent_tui.projection.image_tokens import UNKNOWN_IMAGE_TOKENS, anthropic_tokens, image_size, image_tokens
from agent_tui.projection.tokens import estimate_message


def _encoded(width: int, height: int, fmt: str, **save: object) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(out, fmt, **save)
    return base64.b64encode(out.getvalue()).decode()


@pytest.mark.parametrize("fmt", ["PNG", "GIF", "JPEG", "WEBP"])
def test_the_size_is_read_from_each_format(fmt: str) -> None:
    assert image_size(_encoded(64, 32, fmt)) == (64, 32)
    assert image_size(_encoded(1280, 720, fmt)) == (1280, 720)


def test_a_lossless_webp_and_a_progressive_jpeg_with_exif() -> None:
    assert image_size(_encoded(300, 200, "WEBP", lossless=True)) == (300, 200)
    exif = Image.Exif()
    exif[0x010E] = "x" * 20_000  # a long ImageDescription before the frame header
    assert image_size(_encoded(333, 111, "JPEG", progressive=True, exif=exif.tobytes())) == (333, 111)


def test_anthropic_rule_and_its_limits() -> None:
    assert anthropic_tokens(64, 32) == 3  # 64 x 32 / 750, where a flat figure said about 1,371
    assert anthropic_tokens(1000, 1000) == 1334  # 1 Mpx: under both limits
    # scaled to 1,568 on the long edge, then to about 1.15 Mpx
    assert (
        anthropic_tokens(4000, 3000) == anthropic_tokens(1568, 1176) or anthropic_tokens(4000, 3000) <= 1534
    )
    assert anthropic_tokens(4000, 3000) <= 1_150_000 // 750 + 1


def test_a_message_counts_its_image_by_its_size_and_unknown_data_counts_the_flat_figure() -> None:
    small = {
        "role": "user",
        "content": [{"type": "image", "data": _encoded(64, 32, "PNG"), "mimeType": "image/png"}],
    }
    assert estimate_message(small) == 3
    broken = {"type": "image", "data": "not base64 at all!", "mimeType": "image/png"}
    assert image_tokens(broken) == UNKNOWN_IMAGE_TOKENS
    assert (
        image_tokens({"type": "image", "data": base64.b64encode(b"BM" + b"\0" * 60).decode()})
        == UNKNOWN_IMAGE_TOKENS
    )

"""An image's tokens from its real size (read from the first bytes of its data), by the rule of
the API the next request goes to (Anthropic's, OpenAI's tiles, Gemini's 258), for every format the
tools attach; pi's flat figure only when the size cannot be read. Every figure of one branch
prices its images by one rule: the panel's total, the status line's and a compaction's before."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from agent_tui.projection.context import project
from agent_tui.projection.image_tokens import (
    UNKNOWN_IMAGE_TOKENS,
    anthropic_tokens,
    gemini_tokens,
    image_size,
    image_tokens,
    openai_tokens,
)
from agent_tui.projection.models import lookup
from agent_tui.projection.rows import build_panel_model
from agent_tui.projection.tokens import context_tokens, estimate_message, estimate_request, image_rule
from tests.support.indexes import index_of
from tests.support.session_builder import Builder, user


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


def test_openai_and_gemini_rules_as_their_docs_count() -> None:
    # OpenAI's high-detail examples: 1024 square = 4 tiles; 2048 x 4096 -> 1024 x 2048 -> 768 x 1536 = 6
    assert openai_tokens(1024, 1024) == 765
    assert openai_tokens(2048, 4096) == 1105
    assert openai_tokens(64, 32) == 255  # one tile, where Anthropic's rule says 3
    assert gemini_tokens(64, 32) == gemini_tokens(384, 384) == 258
    assert gemini_tokens(1280, 720) == 2 * 258  # two 768-pixel tiles
    assert openai_tokens(0, 10) == gemini_tokens(0, 10) == UNKNOWN_IMAGE_TOKENS


@pytest.mark.parametrize(
    ("provider", "model_id", "rule"),
    [
        ("anthropic", "claude-sonnet-4-5", anthropic_tokens),
        ("amazon-bedrock", "anthropic.claude-sonnet-4-5", anthropic_tokens),
        ("openai", "gpt-6.2-sol", openai_tokens),
        ("openai", "some-local-model", openai_tokens),  # an OpenAI-compatible server
        ("azure", "gpt-6.2-sol", openai_tokens),
        ("google", "gemini-3-pro", gemini_tokens),
        ("openrouter", "anthropic/claude-sonnet-4-5", anthropic_tokens),
        ("openrouter", "google/gemini-3-pro", gemini_tokens),
        ("openrouter", "moonshotai/kimi-k2.7-code", openai_tokens),
        (None, "claude-sonnet-4-5", anthropic_tokens),
        ("no-such-provider", None, anthropic_tokens),
    ],
)
def test_the_rule_is_the_api_the_model_is_called_through(
    provider: str | None, model_id: str | None, rule: object
) -> None:
    assert image_rule({"provider": provider, "modelId": model_id}) is rule
    assert image_rule(None) is anthropic_tokens


def _branch_with_an_image(provider: str, model_id: str) -> Builder:
    b = Builder()
    b.add("model_change", provider=provider, modelId=model_id)
    image = {"type": "image", "data": _encoded(64, 32, "PNG"), "mimeType": "image/png"}
    b.message({**user("what is this?"), "content": [{"type": "text", "text": "what is this?"}, image]})
    return b


@pytest.mark.parametrize(
    ("provider", "model_id", "image"),
    [("openai", "gpt-6.2-sol", 255), ("google", "gemini-3-pro", 258), ("anthropic", "claude-sonnet-4-5", 3)],
)
def test_every_figure_of_a_branch_prices_its_image_by_the_branch_model(
    provider: str, model_id: str, image: int
) -> None:
    projection = project(index_of(_branch_with_an_image(provider, model_id)))
    text_only = estimate_message(user("what is this?"))
    figure = context_tokens(projection)
    assert figure.estimated_only
    assert figure.tokens == estimate_request(projection.messages, images=image_rule(projection.model))
    message = next(m for m in projection.messages if m.role == "user")
    assert estimate_message(message.message, image_rule(projection.model)) == text_only + image
    # the panel's total and its row are the same figure as the status line's
    panel = build_panel_model(projection, lookup(model_id, provider), model_id)
    assert panel.total == panel.estimated == figure.tokens

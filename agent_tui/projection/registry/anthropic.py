"""Anthropic: the Messages API through the ``anthropic`` SDK (context windows, outputs, thinking
modes and prices as pi 1.6's model table has them; prices in $ per million tokens)."""

from __future__ import annotations

from agent_tui.projection.specs import ModelInfo, ProviderSpec, price

NAME = "anthropic"

MODELS = (
    ModelInfo(NAME, "claude-opus-5-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-sonnet-5-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-haiku-5-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-fable-5-2", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-fable-5-1", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-fable-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-opus-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-sonnet-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-opus-4-8", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-opus-4-7", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-opus-4-6", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-sonnet-4-6", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo(NAME, "claude-opus-4-5", 200_000, 64_000, reasoning=True),
    ModelInfo(NAME, "claude-opus-4-1", 200_000, 32_000, reasoning=True),
    ModelInfo(NAME, "claude-opus-4-0", 200_000, 32_000, reasoning=True),
    ModelInfo(NAME, "claude-sonnet-4-5", 200_000, 64_000, reasoning=True),
    ModelInfo(NAME, "claude-sonnet-4-0", 200_000, 64_000, reasoning=True),
    ModelInfo(NAME, "claude-haiku-4-5", 200_000, 64_000, reasoning=True),
    ModelInfo(NAME, "claude-3-7-sonnet-latest", 200_000, 64_000, reasoning=True),
    ModelInfo(NAME, "claude-3-5-haiku-latest", 200_000, 8_192),
    ModelInfo(NAME, "claude-3-5-sonnet-latest", 200_000, 8_192),
)

PRICES = {
    "claude-opus-5-5": price(4, 20, 0.2, 5),
    "claude-sonnet-5-5": price(2, 10, 0.1, 2.5),
    "claude-haiku-5-5": price(0.1, 0.5, 0.01, 0.125, (100_000, 0.5, 2.5, 0.05, 0.625)),
    "claude-fable-5-2": price(8, 40, 0.2, 10),
    "claude-fable-5-1": price(10, 50, 0.25, 12.5),
    "claude-fable-5": price(10, 50, 1, 12.5),
    "claude-opus-5": price(5, 25, 0.5, 6.25),
    "claude-sonnet-5": price(2, 10, 0.2, 2.5),
    "claude-opus-4-8": price(5, 25, 0.5, 6.25),
    "claude-opus-4-7": price(5, 25, 0.5, 6.25),
    "claude-opus-4-6": price(5, 25, 0.5, 6.25),
    "claude-sonnet-4-6": price(3, 15, 0.3, 3.75),
    "claude-opus-4-5": price(5, 25, 0.5, 6.25),
    "claude-sonnet-4-5": price(3, 15, 0.3, 3.75),
    "claude-haiku-4-5": price(1, 5, 0.1, 1.25),
}

SPEC = ProviderSpec(
    name=NAME,
    label="Anthropic",
    api="anthropic-messages",
    adapter="agent_tui.providers.anthropic_provider:AnthropicProvider",
    sdk_module="anthropic",
    wire="anthropic_messages",
    key_env=("ANTHROPIC_API_KEY",),
    base_url_env=("ANTHROPIC_BASE_URL",),
    default_base_url="https://api.anthropic.com",
    default_model="claude-opus-5-5",  # pi 1.6's default
    models=MODELS,
    prices=PRICES,
    model_prefixes=("claude",),
    merges_roles=True,
    api_name="messages",
)

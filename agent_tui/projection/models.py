"""Context windows and output limits of common models (pure data).

Unknown models get :data:`DEFAULT`; the config can add or override entries.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ModelInfo:
    provider: str
    id: str
    context_window: int
    max_output: int
    reasoning: bool = False
    images: bool = True
    adaptive_thinking: bool = False  # thinking is {"type": "adaptive"} with an effort, not a token budget


_TABLE = [
    # Current Anthropic models (context, output and thinking mode as pi 1.6's model table has them).
    ModelInfo("anthropic", "claude-opus-5-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-sonnet-5-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-haiku-5-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-fable-5-2", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-fable-5-1", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-fable-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-opus-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-sonnet-5", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-opus-4-8", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-opus-4-7", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-opus-4-6", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-sonnet-4-6", 1_000_000, 128_000, reasoning=True, adaptive_thinking=True),
    ModelInfo("anthropic", "claude-opus-4-5", 200_000, 64_000, reasoning=True),
    ModelInfo("anthropic", "claude-opus-4-1", 200_000, 32_000, reasoning=True),
    ModelInfo("anthropic", "claude-opus-4-0", 200_000, 32_000, reasoning=True),
    ModelInfo("anthropic", "claude-sonnet-4-5", 200_000, 64_000, reasoning=True),
    ModelInfo("anthropic", "claude-sonnet-4-0", 200_000, 64_000, reasoning=True),
    ModelInfo("anthropic", "claude-haiku-4-5", 200_000, 64_000, reasoning=True),
    ModelInfo("anthropic", "claude-3-7-sonnet-latest", 200_000, 64_000, reasoning=True),
    ModelInfo("anthropic", "claude-3-5-haiku-latest", 200_000, 8_192),
    ModelInfo("anthropic", "claude-3-5-sonnet-latest", 200_000, 8_192),
    ModelInfo("openai", "gpt-6.2-sol", 272_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-6.1-sol", 272_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-6-sol", 272_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-5.5", 272_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-5.4", 272_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-5.4-mini", 400_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-5.2", 400_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-5.1", 400_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-5", 400_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-5-mini", 400_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-5-nano", 400_000, 128_000, reasoning=True),
    ModelInfo("openai", "gpt-4.1", 1_047_576, 32_768),
    ModelInfo("openai", "gpt-4.1-mini", 1_047_576, 32_768),
    ModelInfo("openai", "gpt-4.1-nano", 1_047_576, 32_768),
    ModelInfo("openai", "gpt-4o", 128_000, 16_384),
    ModelInfo("openai", "gpt-4o-mini", 128_000, 16_384),
    ModelInfo("openai", "o3", 200_000, 100_000, reasoning=True),
    ModelInfo("openai", "o4-mini", 200_000, 100_000, reasoning=True),
    ModelInfo("openai", "o3-mini", 200_000, 100_000, reasoning=True, images=False),
    ModelInfo("openai", "o1", 200_000, 100_000, reasoning=True),
]

MODELS: dict[str, ModelInfo] = {m.id: m for m in _TABLE}
DEFAULT = ModelInfo("unknown", "unknown", 128_000, 8_192, images=False)


def lookup(model_id: str | None, provider: str | None = None) -> ModelInfo:
    """The table's entry for ``model_id`` (dated ids match their base), else a conservative default."""
    if model_id:
        if model_id in MODELS:
            return MODELS[model_id]
        for known, info in MODELS.items():
            if model_id.startswith(known + "-") or model_id.startswith(known + "@"):
                return info
    return ModelInfo(
        provider or DEFAULT.provider, model_id or DEFAULT.id, DEFAULT.context_window, DEFAULT.max_output
    )


def register(info: ModelInfo) -> None:
    """Add or override a model (from the config file's ``[models]`` tables)."""
    MODELS[info.id] = info

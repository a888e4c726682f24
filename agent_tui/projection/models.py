"""Context windows and output limits of common models (pure data).

Unknown models get :data:`DEFAULT`; the config can add or override entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: The thinking levels a user picks (flag, config file, /thinking, Ctrl+T), pi 1.6's THINKING_LEVELS.
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
#: pi 1.6's EXTENDED_THINKING_LEVELS in order ("max" exists on a few models); clamping walks this list.
THINKING_LEVEL_ORDER = (*THINKING_LEVELS, "max")


@dataclass(frozen=True, slots=True)
class ModelInfo:
    provider: str
    id: str
    context_window: int
    max_output: int
    reasoning: bool = False
    images: bool = True
    adaptive_thinking: bool = False  # thinking is {"type": "adaptive"} with an effort, not a token budget
    # pi's thinkingLevelMap: the value sent for a level (reasoning_effort for Chat Completions);
    # None marks a level unsupported; a level left out sends its own name (xhigh and max: unsupported).
    thinking_level_map: Mapping[str, str | None] | None = field(default=None, hash=False)
    # pi's compat.supportsReasoningEffort for Chat Completions (pi detects it from the base URL; here
    # it is per model, true unless the config says otherwise).
    supports_reasoning_effort: bool = True


# pi 1.6's thinkingLevelMap for OpenAI's reasoning models.
_O_SERIES = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None}
_GPT_5 = {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None}
_GPT_5_1 = {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None}
_GPT_5_2 = {**_GPT_5_1, "xhigh": "xhigh"}  # 5.2 to 5.5: off is "none", xhigh exists
_GPT_6 = {**_GPT_5_2, "max": "max"}  # gpt-6-sol: max exists too
_GPT_6_1 = {**_GPT_6, "off": None}  # gpt-6.1-sol and gpt-6.2-sol cannot turn reasoning off

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
    ModelInfo("openai", "gpt-6.2-sol", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_6_1),
    ModelInfo("openai", "gpt-6.1-sol", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_6_1),
    ModelInfo("openai", "gpt-6-sol", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_6),
    ModelInfo("openai", "gpt-5.5", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_2),
    ModelInfo("openai", "gpt-5.4", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_2),
    ModelInfo("openai", "gpt-5.4-mini", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_2),
    ModelInfo("openai", "gpt-5.2", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_2),
    ModelInfo("openai", "gpt-5.1", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_1),
    ModelInfo("openai", "gpt-5", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5),
    ModelInfo("openai", "gpt-5-mini", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5),
    ModelInfo("openai", "gpt-5-nano", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5),
    ModelInfo("openai", "gpt-4.1", 1_047_576, 32_768),
    ModelInfo("openai", "gpt-4.1-mini", 1_047_576, 32_768),
    ModelInfo("openai", "gpt-4.1-nano", 1_047_576, 32_768),
    ModelInfo("openai", "gpt-4o", 128_000, 16_384),
    ModelInfo("openai", "gpt-4o-mini", 128_000, 16_384),
    ModelInfo("openai", "o3", 200_000, 100_000, reasoning=True, thinking_level_map=_O_SERIES),
    ModelInfo("openai", "o4-mini", 200_000, 100_000, reasoning=True, thinking_level_map=_O_SERIES),
    ModelInfo(
        "openai", "o3-mini", 200_000, 100_000, reasoning=True, images=False, thinking_level_map=_O_SERIES
    ),
    ModelInfo("openai", "o1", 200_000, 100_000, reasoning=True, thinking_level_map=_O_SERIES),
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


def supported_thinking_levels(info: ModelInfo) -> list[str]:
    """pi's getSupportedThinkingLevels: only "off" without reasoning; levels mapped to None are left
    out, and xhigh and max only when the map names them."""
    if not info.reasoning:
        return ["off"]
    levels = info.thinking_level_map or {}
    return [
        level
        for level in THINKING_LEVEL_ORDER
        if not (level in levels and levels[level] is None)
        and (level not in ("xhigh", "max") or levels.get(level) is not None)
    ]


def clamp_thinking_level(info: ModelInfo, level: str) -> str:
    """pi's clampThinkingLevel: the level if supported, else the next one up, else the next one down."""
    available = supported_thinking_levels(info)
    if level in available:
        return level
    if level not in THINKING_LEVEL_ORDER:
        return available[0] if available else "off"
    index = THINKING_LEVEL_ORDER.index(level)
    for candidate in (*THINKING_LEVEL_ORDER[index:], *reversed(THINKING_LEVEL_ORDER[:index])):
        if candidate in available:
            return candidate
    return available[0] if available else "off"

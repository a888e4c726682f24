"""Context windows and output limits of the models the registry knows (pure data).

Unknown models get :data:`DEFAULT`; the config can add or override entries.
"""

from __future__ import annotations

from agent_tui.projection.registry import builtin_models
from agent_tui.projection.specs import THINKING_LEVEL_ORDER, THINKING_LEVELS, ModelInfo

#: Every provider's built-in models, then the config file's ``[models]`` (by id).
MODELS: dict[str, ModelInfo] = {m.id: m for m in builtin_models()}
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


def is_known(model_id: str) -> bool:
    """The table (or the config file) has ``model_id``, or the base of a dated id."""
    return model_id in MODELS or any(
        model_id.startswith(known + "-") or model_id.startswith(known + "@") for known in MODELS
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


def selectable_thinking_levels(info: ModelInfo) -> list[str]:
    """The levels a user may choose for the model: pi's supported ones with "off" always among them
    (it sends no level at all, so a level once chosen can always be undone). Every face's rule."""
    levels = supported_thinking_levels(info)
    return levels if "off" in levels else ["off", *levels]


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


__all__ = [
    "DEFAULT",
    "MODELS",
    "THINKING_LEVELS",
    "THINKING_LEVEL_ORDER",
    "ModelInfo",
    "clamp_thinking_level",
    "is_known",
    "lookup",
    "register",
    "selectable_thinking_levels",
    "supported_thinking_levels",
]

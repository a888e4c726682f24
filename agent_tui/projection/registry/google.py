"""Google Gemini through the ``google-genai`` SDK (``GEMINI_API_KEY``): the Gemini API's own
stream (``streamGenerateContent``), thinking as a token budget (Gemini 2.5) or a level (Gemini 3
and later). Context windows, outputs, thinking maps and prices as pi 1.6's model table has them."""

from __future__ import annotations

from agent_tui.projection.specs import ModelInfo, ProviderSpec, price

NAME = "google"

# pi 1.6's thinkingLevelMap for Gemini 3 and later: thinking cannot be turned off.
_FLASH = {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None}
_PRO = {**_FLASH, "minimal": None}
_XHIGH = {**_PRO, "xhigh": "xhigh"}

MODELS = (
    ModelInfo(NAME, "gemini-4-argon", 1_048_576, 32_768, reasoning=True, thinking_level_map=_PRO),
    ModelInfo(NAME, "gemini-4-carbon", 1_048_576, 32_768, reasoning=True, thinking_level_map=_PRO),
    ModelInfo(NAME, "gemini-4-hydrogen", 1_048_576, 65_536, reasoning=True, thinking_level_map=_XHIGH),
    ModelInfo(NAME, "gemini-4-neon", 1_048_576, 65_536, reasoning=True, thinking_level_map=_XHIGH),
    ModelInfo(NAME, "gemini-3.8-flash", 1_048_576, 65_536, reasoning=True, thinking_level_map=_PRO),
    ModelInfo(NAME, "gemini-3.5-flash", 1_048_576, 65_536, reasoning=True, thinking_level_map=_FLASH),
    ModelInfo(NAME, "gemini-3.1-pro-preview", 1_048_576, 65_536, reasoning=True, thinking_level_map=_PRO),
    ModelInfo(NAME, "gemini-3-flash-preview", 1_048_576, 65_536, reasoning=True, thinking_level_map=_FLASH),
    ModelInfo(NAME, "gemini-flash-latest", 1_048_576, 65_536, reasoning=True, thinking_level_map=_FLASH),
    ModelInfo(NAME, "gemini-pro-latest", 1_048_576, 65_536, reasoning=True, thinking_level_map=_PRO),
    ModelInfo(NAME, "gemini-2.5-pro", 1_048_576, 65_536, reasoning=True),
    ModelInfo(NAME, "gemini-2.5-flash", 1_048_576, 65_536, reasoning=True),
    ModelInfo(NAME, "gemini-2.5-flash-lite", 1_048_576, 65_536, reasoning=True),
)

_PRO_PRICE = price(2, 12, 0.2, 0, (200_000, 4, 18, 0.4, 0))
PRICES = {
    "gemini-4-argon": price(2, 10, 0.1, 0),
    "gemini-4-carbon": price(2, 10, 0.1, 0),
    "gemini-4-hydrogen": price(1.5, 7.5, 0.075, 0),
    "gemini-4-neon": price(3, 15, 0.15, 0),
    "gemini-3.8-flash": price(0.75, 3.75, 0.075, 0),
    "gemini-3.5-flash": price(1.5, 9, 0.15, 0),
    "gemini-3.1-pro-preview": _PRO_PRICE,
    "gemini-3-flash-preview": price(0.5, 3, 0.05, 0),
    "gemini-flash-latest": price(1.5, 9, 0.15, 0),
    "gemini-pro-latest": _PRO_PRICE,
    "gemini-2.5-pro": price(1.25, 10, 0.125, 0, (200_000, 2.5, 15, 0.25, 0)),
    "gemini-2.5-flash": price(0.3, 2.5, 0.03, 0),
    "gemini-2.5-flash-lite": price(0.1, 0.4, 0.01, 0),
}

SPEC = ProviderSpec(
    name=NAME,
    label="Google Gemini",
    api="google-generative-ai",
    adapter="agent_tui.providers.gemini_provider:GeminiProvider",
    sdk_module="google.genai",
    wire="google_generative_ai",
    key_env=("GEMINI_API_KEY",),
    base_url_env=("GEMINI_BASE_URL",),
    default_base_url="https://generativelanguage.googleapis.com",
    default_model="gemini-4-argon",  # pi 1.6's default
    models=MODELS,
    prices=PRICES,
    model_prefixes=("gemini", "gemma"),
    api_name="gemini",
    images="tiles-768",
)

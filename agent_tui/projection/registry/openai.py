"""OpenAI through the ``openai`` SDK: Chat Completions for OpenAI itself and every compatible server
(Ollama, vLLM, llama.cpp, LM Studio), which is why a bare base URL and models nobody's table knows
go here, and the Responses API for OpenAI's reasoning models (``--api responses|chat``). Context windows, outputs, thinking maps and prices as pi 1.6's model table has them."""

from __future__ import annotations

from agent_tui.projection.specs import ApiRoute, ModelInfo, ProviderSpec, price

NAME = "openai"

# pi 1.6's thinkingLevelMap for OpenAI's reasoning models.
_O_SERIES = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None}
_GPT_5 = {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None}
_GPT_5_1 = {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None}
_GPT_5_2 = {**_GPT_5_1, "xhigh": "xhigh"}  # 5.2 to 5.5: off is "none", xhigh exists
_GPT_6 = {**_GPT_5_2, "max": "max"}  # gpt-6-sol: max exists too
_GPT_6_1 = {**_GPT_6, "off": None}  # gpt-6.1-sol and gpt-6.2-sol cannot turn reasoning off

MODELS = (
    ModelInfo(NAME, "gpt-6.2-sol", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_6_1),
    ModelInfo(NAME, "gpt-6.1-sol", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_6_1),
    ModelInfo(NAME, "gpt-6-sol", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_6),
    ModelInfo(NAME, "gpt-5.5", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_2),
    ModelInfo(NAME, "gpt-5.4", 272_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_2),
    ModelInfo(NAME, "gpt-5.4-mini", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_2),
    ModelInfo(NAME, "gpt-5.2", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_2),
    ModelInfo(NAME, "gpt-5.1", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5_1),
    ModelInfo(NAME, "gpt-5", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5),
    ModelInfo(NAME, "gpt-5-mini", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5),
    ModelInfo(NAME, "gpt-5-nano", 400_000, 128_000, reasoning=True, thinking_level_map=_GPT_5),
    ModelInfo(NAME, "gpt-4.1", 1_047_576, 32_768),
    ModelInfo(NAME, "gpt-4.1-mini", 1_047_576, 32_768),
    ModelInfo(NAME, "gpt-4.1-nano", 1_047_576, 32_768),
    ModelInfo(NAME, "gpt-4o", 128_000, 16_384),
    ModelInfo(NAME, "gpt-4o-mini", 128_000, 16_384),
    ModelInfo(NAME, "o3", 200_000, 100_000, reasoning=True, thinking_level_map=_O_SERIES),
    ModelInfo(NAME, "o4-mini", 200_000, 100_000, reasoning=True, thinking_level_map=_O_SERIES),
    ModelInfo(NAME, "o3-mini", 200_000, 100_000, reasoning=True, images=False, thinking_level_map=_O_SERIES),
    ModelInfo(NAME, "o1", 200_000, 100_000, reasoning=True, thinking_level_map=_O_SERIES),
)

PRICES = {
    "gpt-6.2-sol": price(2, 10, 0.1, 2.5, (272_000, 4, 15, 0.2, 5)),
    "gpt-6.1-sol": price(2, 10, 0.1, 2.5, (272_000, 4, 15, 0.2, 5)),
    "gpt-6-sol": price(2, 10, 0.2, 2.5, (272_000, 4, 15, 0.4, 5)),
    "gpt-5.5": price(5, 30, 0.5, 0, (272_000, 10, 45, 1, 0)),
    "gpt-5.4": price(2.5, 15, 0.25, 0, (272_000, 5, 22.5, 0.5, 0)),
    "gpt-5.4-mini": price(0.75, 4.5, 0.075, 0),
    "gpt-5.2": price(1.75, 14, 0.175, 0),
    "gpt-5.1": price(1.25, 10, 0.125, 0),
    "gpt-5": price(1.25, 10, 0.125, 0),
    "gpt-5-mini": price(0.25, 2, 0.025, 0),
    "gpt-5-nano": price(0.05, 0.4, 0.005, 0),
    "gpt-4.1": price(2, 8, 0.5, 0),
    "gpt-4.1-mini": price(0.4, 1.6, 0.1, 0),
    "gpt-4.1-nano": price(0.1, 0.4, 0.025, 0),
    "gpt-4o": price(2.5, 10, 1.25, 0),
    "gpt-4o-mini": price(0.15, 0.6, 0.075, 0),
    "o3": price(2, 8, 0.5, 0),
    "o4-mini": price(1.1, 4.4, 0.275, 0),
    "o3-mini": price(1.1, 4.4, 0.55, 0),
    "o1": price(15, 60, 7.5, 0),
}

SPEC = ProviderSpec(
    name=NAME,
    label="OpenAI",
    api="openai-completions",
    adapter="agent_tui.providers.openai_provider:OpenAIProvider",
    sdk_module="openai",
    wire="openai_completions",
    key_env=("OPENAI_API_KEY",),
    base_url_env=("OPENAI_BASE_URL",),
    default_base_url="https://api.openai.com/v1",
    default_model="gpt-6.2-sol",  # pi 1.6's default
    models=MODELS,
    prices=PRICES,
    serves_any_model=True,
    api_name="chat",
    # The Responses API, which OpenAI recommends for its reasoning models: the default for them at
    # OpenAI's own base URL; compatible servers (another base URL) get Chat Completions.
    other_apis={
        "responses": ApiRoute(
            "openai-responses",
            "agent_tui.providers.openai_responses_provider:OpenAIResponsesProvider",
            "openai_responses",
            "openai",
        )
    },
    reasoning_api="responses",
    images="tiles-512",
)

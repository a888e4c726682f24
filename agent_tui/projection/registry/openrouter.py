"""OpenRouter: many providers' models behind one OpenAI-compatible gateway (Chat Completions through
the ``openai`` SDK, ``OPENROUTER_API_KEY``), with the attribution headers it reads (pi's)."""

from __future__ import annotations

from agent_tui.projection.specs import ModelInfo, ProviderSpec, price

NAME = "openrouter"

# A few of OpenRouter's models as pi 1.6's table has them; any other id works too (the table's
# defaults apply, or a [models."id"] table of the config file).
_GPT_6_2 = {
    "off": None,
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
MODELS = (
    ModelInfo(
        NAME, "moonshotai/kimi-k2.7-code", 262_144, 235_929, reasoning=True, thinking_level_map={"off": None}
    ),
    ModelInfo(NAME, "openai/gpt-6.2-sol", 1_050_000, 128_000, reasoning=True, thinking_level_map=_GPT_6_2),
)
PRICES = {
    "moonshotai/kimi-k2.7-code": price(0.6, 3, 0.12, 0),
    "openai/gpt-6.2-sol": price(2, 10, 0.1, 2.5, (272_000, 4, 15, 0.2, 5)),
}

SPEC = ProviderSpec(
    name=NAME,
    label="OpenRouter",
    api="openai-completions",
    adapter="agent_tui.providers.openai_provider:OpenAIProvider",
    sdk_module="openai",
    wire="openai_completions",
    key_env=("OPENROUTER_API_KEY",),
    base_url_env=("OPENROUTER_BASE_URL",),
    default_base_url="https://openrouter.ai/api/v1",
    default_model="moonshotai/kimi-k2.7-code",  # pi 1.6's default
    models=MODELS,
    prices=PRICES,
    gateway=True,
    api_name="chat",
    headers={"HTTP-Referer": "https://github.com/agent-tui/agent-tui", "X-OpenRouter-Title": "agent-tui"},
    images="tiles-512",
)

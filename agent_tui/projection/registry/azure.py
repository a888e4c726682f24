"""Azure OpenAI through the ``openai`` SDK's ``AsyncAzureOpenAI`` (``AZURE_OPENAI_API_KEY``,
``AZURE_OPENAI_BASE_URL``: the resource's URL, e.g. https://NAME.openai.azure.com): OpenAI's models
through the Responses API, as pi serves them, and Chat Completions (``--api chat``) for deployments
of other models. The model id is the deployment name."""

from __future__ import annotations

from agent_tui.projection.specs import ApiRoute, ProviderSpec

NAME = "azure"

SPEC = ProviderSpec(
    name=NAME,
    label="Azure OpenAI",
    api="openai-responses",
    adapter="agent_tui.providers.azure_provider:AzureResponsesProvider",
    sdk_module="openai",
    wire="openai_responses",
    key_env=("AZURE_OPENAI_API_KEY",),
    base_url_env=("AZURE_OPENAI_BASE_URL",),
    default_base_url="",  # each resource has its own
    default_model="gpt-6.2-sol",  # pi 1.6's default
    gateway=True,
    api_name="responses",
    other_apis={
        "chat": ApiRoute(
            "openai-completions",
            "agent_tui.providers.azure_provider:AzureChatProvider",
            "openai_completions",
            "openai",
        )
    },
    images="tiles-512",
)

"""Azure OpenAI through the ``openai`` SDK's ``AsyncAzureOpenAI``: the same streams as OpenAI's
(Responses, or Chat Completions for ``--api chat``), with Azure's ``api-key`` header, its
``api-version`` query and its URLs. The base URL is the resource's: a bare resource root
(``https://NAME.openai.azure.com``, ``.cognitiveservices.azure.com``, ``.ai.azure.com``) becomes
its ``/openai/v1`` API, as pi normalizes it; the model id is the deployment name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from agent_tui.projection import registry
from agent_tui.providers.openai_provider import OpenAIProvider
from agent_tui.providers.openai_responses_provider import OpenAIResponsesProvider

if TYPE_CHECKING:
    from openai import AsyncOpenAI

#: The API version sent (pi's DEFAULT_AZURE_API_VERSION): the v1 API, which needs no dated version.
API_VERSION = "v1"
_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")


def azure_base_url(base_url: str) -> str:
    """pi's normalizeAzureBaseUrl: a resource root of an Azure host gets the ``/openai/v1`` path."""
    parts = urlsplit(base_url.strip().rstrip("/"))
    path = parts.path.rstrip("/")
    if (parts.hostname or "").endswith(_AZURE_HOSTS) and path in ("", "/openai", "/openai/v1/responses"):
        return urlunsplit((parts.scheme, parts.netloc, "/openai/v1", "", ""))
    return urlunsplit(parts).rstrip("/")


def _azure_client(provider: Any, timeout_class: Any) -> AsyncOpenAI:
    from openai import AsyncAzureOpenAI, DefaultAsyncHttpxClient

    options = provider._client_options(timeout_class, DefaultAsyncHttpxClient)
    if not provider.base_url:
        raise ValueError("Azure OpenAI needs the resource's URL: set AZURE_OPENAI_BASE_URL or --base-url")
    options["base_url"] = azure_base_url(provider.base_url)
    return AsyncAzureOpenAI(api_version=API_VERSION, **options)


class AzureResponsesProvider(OpenAIResponsesProvider):
    name = registry.azure.NAME

    def client(self) -> AsyncOpenAI:
        if self._client is None:
            import openai

            self._client = _azure_client(self, openai.Timeout)
        return self._client


class AzureChatProvider(OpenAIProvider):
    name = registry.azure.NAME

    def client(self) -> AsyncOpenAI:
        if self._client is None:
            import openai

            self._client = _azure_client(self, openai.Timeout)
        return self._client


__all__ = ["API_VERSION", "AzureChatProvider", "AzureResponsesProvider", "azure_base_url"]

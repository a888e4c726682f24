"""Claude on Amazon Bedrock and Google Vertex AI, through the ``anthropic`` SDK's own clients
(``AsyncAnthropicBedrock``, ``AsyncAnthropicVertex``): the Messages API stream and body of
:mod:`agent_tui.providers.anthropic_provider`, with the cloud's authentication and URLs.

Bedrock: a key is ``AWS_BEARER_TOKEN_BEDROCK``; without one the SDK signs with the AWS
credentials it finds (profile, keys, role) in ``AWS_REGION``. Vertex: a key is an OAuth access
token; without one the SDK uses Google's application default credentials; the project and region
are ``ANTHROPIC_VERTEX_PROJECT_ID`` and ``CLOUD_ML_REGION``, which the SDK reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from agent_tui.projection import registry
from agent_tui.providers.anthropic_provider import AnthropicProvider
from agent_tui.providers.base import NO_KEY

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic


class AnthropicBedrockProvider(AnthropicProvider):
    name = registry.anthropic_cloud.BEDROCK

    def client(self) -> AsyncAnthropic:
        if self._client is None:
            import anthropic
            from anthropic import AsyncAnthropicBedrock

            options = self._client_options(anthropic.Timeout, anthropic.DefaultAsyncHttpxClient)
            if options.get("api_key") == NO_KEY:
                del options["api_key"]  # the SDK signs with the AWS credentials it finds
            # the Bedrock client is AsyncAnthropic's sibling with the same messages API
            self._client = cast("AsyncAnthropic", AsyncAnthropicBedrock(**options))
        return self._client


class AnthropicVertexProvider(AnthropicProvider):
    name = registry.anthropic_cloud.VERTEX

    def client(self) -> AsyncAnthropic:
        if self._client is None:
            import anthropic
            from anthropic import AsyncAnthropicVertex

            options = self._client_options(anthropic.Timeout, anthropic.DefaultAsyncHttpxClient)
            token = options.pop("api_key")
            if token != NO_KEY:
                options["access_token"] = token  # else Google's application default credentials
            self._client = cast("AsyncAnthropic", AsyncAnthropicVertex(**options))
        return self._client


__all__ = ["AnthropicBedrockProvider", "AnthropicVertexProvider"]

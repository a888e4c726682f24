"""Every model client in a process shares one TLS context (providers/base.py ``tls_context``): the
CA bundle is read once, not once a client (25-70 ms of CPU each), and the context still verifies."""

from __future__ import annotations

import ssl
import time
from typing import Any

import pytest

from agent_tui.providers.anthropic_cloud_provider import AnthropicBedrockProvider
from agent_tui.providers.anthropic_provider import AnthropicProvider
from agent_tui.providers.azure_provider import AzureChatProvider
from agent_tui.providers.base import SdkProvider, tls_context
from agent_tui.providers.openai_provider import OpenAIProvider

BASE = "http://127.0.0.1:9"


def _context_of(sdk_client: Any) -> object:
    """The SSL context under an SDK client's HTTP client (httpx2's transport, its pool)."""
    return sdk_client._client._transport._pool._ssl_context


@pytest.mark.parametrize(
    "adapter",
    [AnthropicProvider, OpenAIProvider, AnthropicBedrockProvider, AzureChatProvider],
    ids=["anthropic", "openai", "bedrock", "azure"],
)
def test_each_sdk_client_is_made_on_the_shared_context_with_its_timeout(
    adapter: type[SdkProvider[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "us-east-1")  # Bedrock's client insists on one
    client: Any = adapter(api_key="k", base_url=BASE).client()  # type: ignore[attr-defined]
    assert _context_of(client) is tls_context()
    assert client._client.timeout == client.timeout  # the SDK's timeout, 10 s to connect
    assert client.timeout.connect == 10.0 and client.timeout.read == 600.0


def test_the_shared_context_verifies_servers_with_the_systems_ca_bundle() -> None:
    context = tls_context()
    assert context is tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0


def test_a_new_client_costs_no_bundle_read() -> None:
    tls_context()
    started = time.process_time()
    for _ in range(20):
        AnthropicProvider(api_key="k", base_url=BASE).client()
    assert (time.process_time() - started) / 20 < 0.01  # one read of the bundle alone is ~25 ms

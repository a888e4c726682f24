"""Azure OpenAI, OpenRouter, Claude on Vertex AI and on Amazon Bedrock: each through its official SDK
client against the fake server (base URL override), checked on the wire: the path, the
authentication header, the query, the body the SDK sends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.build import make_provider
from agent_tui.config import ConfigError, load_config
from agent_tui.projection.request import Prepared, PreparedMessage
from agent_tui.providers.azure_provider import azure_base_url
from agent_tui.providers.events import MessageBuilder, Stop
from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_stream,
    bedrock_stream,
    message_item,
    openai_stream,
    responses_stream,
    text,
)

pytestmark = pytest.mark.timeout(30)


def prepared() -> Prepared:
    return Prepared(
        "sys", [], [PreparedMessage("user", [{"type": "text", "text": "hi"}], "u1", {"role": "user"})]
    )


async def turn(config: Any, model: str | None = None) -> dict[str, Any]:
    provider = make_provider(config, model)
    body = provider.request_body(prepared(), model or config.model)
    builder = MessageBuilder(provider.name, provider.api, model or config.model, 1)
    async for event in provider.stream(body):
        builder.add(event)
    await provider.aclose()
    return builder.message()


def no_config(tmp_path: Path) -> Path:
    return tmp_path / "absent.toml"


async def test_azure_responses_with_api_key_header_and_version(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.push(responses_stream(message_item("from azure")))
    env = {"AZURE_OPENAI_API_KEY": "az-key", "AZURE_OPENAI_BASE_URL": server.base_url + "/openai/v1"}
    config = load_config(provider="azure", model="my-gpt-deployment", env=env, path=no_config(tmp_path))
    message = await turn(config)
    request = server.requests[0]
    assert request.path == "/openai/v1/responses?api-version=v1"
    assert request.headers["api-key"] == "az-key" and "authorization" not in request.headers
    assert request.body["model"] == "my-gpt-deployment" and request.body["store"] is False
    assert (message["provider"], message["api"]) == ("azure", "openai-responses")
    assert message["content"][0]["text"] == "from azure"


async def test_azure_chat_for_other_deployments(server: FakeModelServer, tmp_path: Path) -> None:
    server.push(openai_stream("chat on azure"))
    env = {"AZURE_OPENAI_API_KEY": "az-key", "AZURE_OPENAI_BASE_URL": server.base_url + "/openai"}
    config = load_config(provider="azure", model="deepseek", api="chat", env=env, path=no_config(tmp_path))
    message = await turn(config)
    assert server.requests[0].path == "/openai/deployments/deepseek/chat/completions?api-version=v1"
    assert message["api"] == "openai-completions" and message["content"][0]["text"] == "chat on azure"


def test_azure_resource_roots_become_the_v1_api() -> None:
    assert azure_base_url("https://res.openai.azure.com") == "https://res.openai.azure.com/openai/v1"
    assert azure_base_url("https://res.ai.azure.com/openai/") == "https://res.ai.azure.com/openai/v1"
    assert azure_base_url("https://proxy.example/v1/") == "https://proxy.example/v1"


async def test_openrouter_sends_its_attribution_headers(server: FakeModelServer, tmp_path: Path) -> None:
    server.push(openai_stream("routed"))
    env = {"OPENROUTER_API_KEY": "or-key", "OPENROUTER_BASE_URL": server.openai_base_url}
    config = load_config(
        provider="openrouter", model="moonshotai/kimi-k2.7-code", env=env, path=no_config(tmp_path)
    )
    message = await turn(config)
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer or-key"
    assert request.headers["x-openrouter-title"] == "agent-tui" and request.headers["http-referer"]
    assert message["provider"] == "openrouter" and message["content"][0]["text"] == "routed"


async def test_claude_on_vertex(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")  # the SDK reads the region and project itself
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "my-project")
    server.push(anthropic_stream(text("from vertex")))
    env = {
        "ANTHROPIC_VERTEX_ACCESS_TOKEN": "ya29.token",
        "ANTHROPIC_VERTEX_BASE_URL": server.base_url + "/v1",
    }
    config = load_config(
        provider="anthropic-vertex", model="claude-sonnet-4-5@20250929", env=env, path=no_config(tmp_path)
    )
    message = await turn(config)
    request = server.requests[0]
    assert request.path == (
        "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929:streamRawPredict"
    )
    assert request.headers["authorization"] == "Bearer ya29.token"
    assert (
        request.body["anthropic_version"] and "model" not in request.body
    )  # the SDK moves the model to the URL
    assert request.body["max_tokens"] == 64_000  # the table knows the dated Vertex id by its base
    assert (message["provider"], message["api"]) == ("anthropic-vertex", "anthropic-messages")
    assert message["content"][0]["text"] == "from vertex"


def test_bedrock_and_vertex_need_no_key_when_the_cloud_has_credentials(tmp_path: Path) -> None:
    path = no_config(tmp_path)
    with pytest.raises(ConfigError, match="AWS_BEARER_TOKEN_BEDROCK"):
        load_config(provider="amazon-bedrock", env={}, path=path)
    config = load_config(provider="amazon-bedrock", env={"AWS_PROFILE": "work"}, path=path)
    assert config.api_key is None and config.model == "us.anthropic.claude-opus-5-5"
    assert (
        load_config(provider="anthropic-vertex", env={"ANTHROPIC_VERTEX_PROJECT_ID": "p"}, path=path).api_key
        is None
    )


async def test_stop_reasons_pass_through_the_cloud_clients(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUD_ML_REGION", "europe-west1")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "p")
    server.push(anthropic_stream(text("cut"), stop_reason="max_tokens"))
    env = {"ANTHROPIC_VERTEX_ACCESS_TOKEN": "t", "ANTHROPIC_VERTEX_BASE_URL": server.base_url + "/v1"}
    config = load_config(
        provider="anthropic-vertex", model="claude-opus-5-5", env=env, path=no_config(tmp_path)
    )
    message = await turn(config)
    assert message["stopReason"] == "length"
    assert Stop("length").stop_reason == message["stopReason"]


async def test_claude_on_bedrock_over_the_aws_event_stream(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bearer token (AWS_BEARER_TOKEN_BEDROCK) instead of SigV4; the reply arrives as Bedrock
    sends it, Anthropic's events inside the AWS event stream encoding, which the SDK decodes."""
    pytest.importorskip(
        "botocore", reason="Bedrock's stream decoder is botocore's: pip install 'agent-tui[bedrock]'"
    )
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    server.push(bedrock_stream(anthropic_stream(text("from bedrock"), input_tokens=12, output_tokens=3)))
    env = {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-token", "ANTHROPIC_BEDROCK_BASE_URL": server.base_url}
    model = "us.anthropic.claude-sonnet-4-5"
    config = load_config(provider="amazon-bedrock", model=model, env=env, path=no_config(tmp_path))
    message = await turn(config)
    request = server.requests[0]
    assert request.path == f"/model/{model}/invoke-with-response-stream"
    assert request.headers["authorization"] == "Bearer bedrock-token"
    assert request.body["anthropic_version"] and "model" not in request.body  # the model is in the path
    assert request.body["max_tokens"] == 64_000  # the Bedrock id's entry, from Claude's table
    assert (message["provider"], message["api"]) == ("amazon-bedrock", "anthropic-messages")
    assert message["content"][0]["text"] == "from bedrock" and message["usage"]["input"] == 12

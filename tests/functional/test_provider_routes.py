"""Which API a provider is called through (``--api``, the config file, the registry's rule), and a
whole print-mode turn through the Responses API and through Gemini, against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.agent.build import make_provider
from agent_tui.config import ConfigError, load_config
from agent_tui.projection import registry
from agent_tui.projection.models import lookup
from tests.support.fake_model_server import (
    FakeModelServer,
    function_call_item,
    gemini_call,
    gemini_stream,
    gemini_text,
    message_item,
    openai_stream,
    reasoning_item,
    responses_stream,
)
from tests.support.print_env import Env


def test_responses_for_openais_reasoning_models_at_openai_chat_elsewhere() -> None:
    responses, chat = "openai-responses", "openai-completions"
    assert registry.route("openai", lookup("gpt-5.4")).api == responses
    assert registry.route("openai", lookup("gpt-5.4"), base_url="https://api.openai.com/v1/").api == responses
    assert registry.route("openai", lookup("gpt-4.1")).api == chat  # not a reasoning model
    assert registry.route("openai", lookup("gpt-5.4"), base_url="http://127.0.0.1:8080/v1").api == chat
    assert registry.route("openai", lookup("llama3.1")).api == chat  # a model no table knows
    assert registry.route("openai", lookup("gpt-4.1"), choice="responses").api == responses
    assert registry.route("openai", lookup("gpt-5.4"), choice="chat").api == chat
    assert registry.route("google", lookup("gemini-2.5-flash")).api == "google-generative-ai"
    with pytest.raises(KeyError):
        registry.route("anthropic", lookup("claude-sonnet-5-5"), choice="responses")


def test_the_api_comes_from_the_flag_the_provider_table_or_the_models_table(tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        '[openai]\napi = "responses"\n\n[models."my-model"]\nprovider = "openai"\napi = "chat"\n'
    )
    env = {"OPENAI_API_KEY": "sk-test"}
    config = load_config(provider="openai", model="gpt-4.1", env=env, path=config_file)
    assert config.api == "responses"
    assert make_provider(config).api == "openai-responses"
    flagged = load_config(provider="openai", model="gpt-4.1", api="chat", env=env, path=config_file)
    assert make_provider(flagged).api == "openai-completions"
    # a model's own api applies when neither the flag nor the provider's table says
    config_file.write_text('[models."my-model"]\nprovider = "openai"\napi = "responses"\n')
    own = load_config(provider="openai", model="my-model", env=env, path=config_file)
    assert own.api is None and make_provider(own).api == "openai-responses"
    with pytest.raises(ConfigError, match="speaks messages"):
        load_config(provider="anthropic", api="responses", env={"ANTHROPIC_API_KEY": "k"}, path=config_file)


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    return Env(tmp_path, server)


@pytest.mark.slow
def test_a_print_mode_turn_through_the_responses_api(env: Env, server: FakeModelServer) -> None:
    """A tool round trip: the second request carries the reasoning item back, encrypted, and the
    session records pi's blocks (api openai-responses, ids call_id|item_id)."""
    bare = {k: v for k, v in env.env.items() if not k.startswith("ANTHROPIC_")}
    (env.work / "a.txt").write_text("apples\n")
    server.push(
        responses_stream(
            reasoning_item("Read the file.", "ENC-1", item_id="rs_a"),
            function_call_item("call_a", "read", {"path": "a.txt"}, item_id="fc_a"),
        ),
        responses_stream(message_item("It says apples.", item_id="msg_b")),
    )
    result = env.run(
        "-p",
        "what is in a.txt?",
        "--provider",
        "openai",
        "--base-url",
        server.openai_base_url,
        "--model",
        "gpt-5.4",
        "--api",
        "responses",
        "--thinking",
        "medium",
        env={**bare, "OPENAI_API_KEY": "sk-test"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "It says apples."
    assert [r.path for r in server.requests] == ["/v1/responses", "/v1/responses"]
    second = server.requests[1].body
    assert second["store"] is False and second["reasoning"]["effort"] == "medium"
    replayed = [i for i in second["input"] if i.get("type") == "reasoning"]
    assert replayed == [
        {
            "id": "rs_a",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Read the file."}],
            "encrypted_content": "ENC-1",
        }
    ]
    output = next(i for i in second["input"] if i.get("type") == "function_call_output")
    assert output["call_id"] == "call_a" and "apples" in output["output"]
    (session,) = env.sessions()
    assistants = [e["message"] for e in env.entries(session) if e["type"] == "message"]
    first = next(m for m in assistants if m["role"] == "assistant")
    assert first["api"] == "openai-responses" and first["provider"] == "openai"
    assert [b["type"] for b in first["content"]] == ["thinking", "toolCall"]
    assert json.loads(first["content"][0]["thinkingSignature"])["encrypted_content"] == "ENC-1"
    assert first["content"][1]["id"] == "call_a|fc_a"


@pytest.mark.slow
def test_a_print_mode_turn_through_gemini(env: Env, server: FakeModelServer) -> None:
    bare = {k: v for k, v in env.env.items() if not k.startswith("ANTHROPIC_")}
    (env.work / "a.txt").write_text("pears\n")
    server.push(
        gemini_stream(gemini_call("read", {"path": "a.txt"})),
        gemini_stream(gemini_text("It says pears.")),
    )
    result = env.run(
        "-p",
        "what is in a.txt?",
        "--provider",
        "google",
        "--model",
        "gemini-2.5-flash",
        "--thinking",
        "low",
        env={**bare, "GEMINI_API_KEY": "gem-test", "GEMINI_BASE_URL": server.base_url},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "It says pears."
    first, second = (r.body for r in server.requests)
    assert server.requests[0].headers["x-goog-api-key"] == "gem-test"
    assert first["generationConfig"]["thinkingConfig"] == {"include_thoughts": True, "thinking_budget": 2048}
    response = second["contents"][-1]["parts"][0]["functionResponse"]
    assert response["name"] == "read" and "pears" in response["response"]["output"]
    (session,) = env.sessions()
    change = next(e for e in env.entries(session) if e["type"] == "model_change")
    assert (change["provider"], change["modelId"]) == ("google", "gemini-2.5-flash")


def test_chat_completions_stays_the_api_for_a_compatible_server(server: FakeModelServer) -> None:
    """A reasoning model's name at another base URL is a compatible server's model: Chat."""
    server.push(openai_stream("hi"))
    config = load_config(
        provider="openai", model="gpt-5.4", base_url=server.openai_base_url, env={}, path=None
    )
    assert make_provider(config).api == "openai-completions"


def test_context_prints_the_body_of_the_api_the_session_used(tmp_path: Path) -> None:
    """`context --format openai` of a session whose replies came through the Responses API is the
    Responses body (its reasoning item sent back); --api chat asks for the other."""
    from tests.support.agent_support import context_body
    from tests.support.session_builder import Builder, user

    reasoning = json.dumps({"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "ENC"})
    reply = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "", "thinkingSignature": reasoning},
            {"type": "text", "text": "hello", "textSignature": '{"v":1,"id":"msg_1"}'},
        ],
        "provider": "openai",
        "api": "openai-responses",
        "model": "gpt-5.4",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop",
        "timestamp": 2,
    }
    builder = Builder()
    builder.add("model_change", provider="openai", modelId="gpt-5.4")
    builder.message(user("hi"))
    builder.message(reply)
    builder.message(user("again", ts=3))
    path = builder.write(tmp_path / "s.jsonl")
    body = context_body(path, "openai")
    assert [i.get("type") for i in body["input"]] == [None, "reasoning", "message", None]  # users: no type
    assert body["input"][1] == json.loads(reasoning) and body["store"] is False
    assert "messages" in context_body(path, "openai", api="chat")

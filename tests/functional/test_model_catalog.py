"""Models: one catalog (the table, the config's [models], what a server lists) searched as pi
searches it; ``--model`` as pi takes it; the window of an unknown local model from its server."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from agent_tui.agent.loop import learn_context_window
from agent_tui.cli.main import main
from agent_tui.cli.model_flags import apply_model_flags
from agent_tui.config import load_config
from agent_tui.projection import registry
from agent_tui.projection.catalog import CatalogModel, ModelChoiceError, choose, search, split_level
from agent_tui.projection.models import lookup
from tests.support.fake_model_server import FakeModelServer


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in [v for s in registry.PROVIDERS.values() for v in (*s.key_env, *s.base_url_env)]:
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    config.write_text("")
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(config))
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    return config


CATALOG = [
    CatalogModel("anthropic", "claude-sonnet-4-5", 200_000, "built-in", True),
    CatalogModel("anthropic", "claude-sonnet-5-5", 1_000_000, "built-in", True),
    CatalogModel("anthropic", "claude-opus-5-5", 1_000_000, "built-in", True),
    CatalogModel("openai", "gpt-5.4-mini", 400_000, "built-in", False),
    CatalogModel("openai", "qwen2.5-coder:14b", 32_768, "server", True),
]


def test_model_names_as_pi_takes_them() -> None:
    assert split_level("sonnet-4-5:high") == ("sonnet-4-5", "high")
    assert split_level("qwen2.5-coder:14b") == ("qwen2.5-coder:14b", None)  # a tag, not a level
    assert choose(CATALOG, "anthropic/claude-opus-5-5")[0] == CATALOG[2]
    assert choose(CATALOG, "opus-5-5:xhigh") == (CATALOG[2], "xhigh")  # unambiguous part of an id
    assert choose(CATALOG, "qwen2.5-coder:14b") == (CATALOG[4], None)
    assert choose(CATALOG, "openai/some-local-model") == (None, None)  # taken as given
    with pytest.raises(ModelChoiceError, match="several models: anthropic/claude-sonnet-4-5"):
        choose(CATALOG, "sonnet")
    assert [m.id for m in search(CATALOG, "son 4")] == ["claude-sonnet-4-5"]  # every word matches
    assert {m.id for m in search(CATALOG, "sn")} == {"claude-sonnet-4-5", "claude-sonnet-5-5"}  # in order
    assert search(CATALOG, "zzz") == []


def test_the_model_flag_sets_provider_model_and_thinking(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")  # several providers serve Claude: the keyed one
    args = argparse.Namespace(
        model="opus-5-5:high", provider=None, thinking=None, models="gpt-5.4-mini,sonnet-4-5"
    )
    assert apply_model_flags(args) is None
    assert (args.provider, args.model, args.thinking) == ("anthropic", "claude-opus-5-5", "high")
    assert args.scoped_models == ["openai/gpt-5.4-mini", "anthropic/claude-sonnet-4-5"]
    ambiguous = argparse.Namespace(model="sonnet", provider=None, thinking=None, models=None)
    assert "several models" in (apply_model_flags(ambiguous) or "")


def test_list_models_shows_the_table_and_what_the_server_lists(
    server: FakeModelServer,
    clean_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.serve_models("qwen-local-7b", "llama-local", max_model_len=32_768)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    assert main(["--list-models", "local"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "openai/qwen-local-7b  (32,768 tokens, server)" in lines
    assert "openai/llama-local  (32,768 tokens, server)" in lines
    assert main(["--list-models", "opus-5-5"]) == 0
    # best first: the id holding the text; models holding its letters in order follow
    assert capsys.readouterr().out.splitlines()[0] == (
        "anthropic/claude-opus-5-5  (1,000,000 tokens, built-in · no key)"
    )
    assert main(["--list-models", "nothing-like-this"]) == 1


@pytest.mark.parametrize(
    ("setup", "window"),
    [
        (lambda s: setattr(s, "props", {"default_generation_settings": {"n_ctx": 1024}}), 1024),  # llama.cpp
        (lambda s: setattr(s, "ollama_show", {"model_info": {"qwen2.context_length": 32768}}), 32768),
        (lambda s: setattr(s, "ollama_show", {"parameters": "num_ctx 8192\nstop x"}), 8192),
        (lambda s: s.serve_models("registry-vllm-model", max_model_len=4096), 4096),  # vLLM
    ],
    ids=["llama.cpp", "ollama-model-info", "ollama-num-ctx", "vllm"],
)
def test_an_unknown_local_model_gets_its_window_from_the_server(
    server: FakeModelServer, clean_env: Path, setup: object, window: int, request: pytest.FixtureRequest
) -> None:
    model = (
        "registry-vllm-model"
        if request.node.callspec.id == "vllm"
        else f"registry-{request.node.callspec.id}"
    )
    assert callable(setup)
    setup(server)
    config = load_config(provider="openai", base_url=server.openai_base_url, model=model)
    assert lookup(model).context_window == 128_000  # the guess, before
    assert learn_context_window(config, model) == window
    assert lookup(model).context_window == window
    assert lookup(model).max_output <= window // 4 or lookup(model).max_output == 8_192
    assert server.requests == []  # nothing reached the model-call queue


def test_a_server_that_says_nothing_leaves_the_guess(server: FakeModelServer, clean_env: Path) -> None:
    config = load_config(provider="openai", base_url=server.openai_base_url, model="registry-silent")
    assert learn_context_window(config, "registry-silent") is None
    assert lookup("registry-silent").context_window == 128_000


def test_anthropics_model_list_is_asked_with_the_key(server: FakeModelServer) -> None:
    from agent_tui.providers.model_list import list_models

    server.serve_models("claude-listed-1", "claude-listed-2")
    spec = registry.spec("anthropic")
    listed = list_models(spec, server.anthropic_base_url, "sk-ant-test")
    assert [m.id for m in listed] == ["claude-listed-1", "claude-listed-2"]
    (asked,) = server.model_requests
    assert asked.path == "/v1/models" and asked.headers["x-api-key"] == "sk-ant-test"
    assert "anthropic-version" in asked.headers
    assert list_models(spec, None, None) == []  # Anthropic's own service without a key: not asked

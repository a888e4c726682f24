"""The provider registry, and what a real local server showed: one resolver for every command,
no key for a local base URL, print mode's notices, and compaction that does not fire twice."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from agent_tui.agent.build import make_provider
from agent_tui.agent.events import CompactionStarted
from agent_tui.cli.main import main
from agent_tui.cli.print_mode import stream_turn
from agent_tui.config import ConfigError, load_config
from agent_tui.projection import registry
from agent_tui.providers import events as pe
from agent_tui.providers.anthropic_provider import AnthropicProvider
from agent_tui.providers.openai_provider import OpenAIProvider
from agent_tui.sdk import Agent, SessionHandle
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, openai_stream, text
from tests.support.session_builder import Builder, assistant, tool_result, user
from tests.support.sources import package_trees

ROOT = Path(__file__).resolve().parents[2] / "agent_tui"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No key or base URL from the developer's environment; a config file of the test's own."""
    for name in [v for s in registry.PROVIDERS.values() for v in (*s.key_env, *s.base_url_env)]:
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    config.write_text("")
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(config))
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    return config


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- the registry --------------------------------------------------------------------------------


def test_no_module_outside_the_registry_names_a_provider() -> None:
    """Adding a provider touches its registry entry and its adapter: no other code spells a name."""
    names = set(registry.NAMES)
    found = []
    for path, tree in package_trees():
        if path.parent.name == "registry":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_each_entry_names_an_adapter_a_wire_format_and_its_tables() -> None:
    from agent_tui.projection.models import MODELS
    from agent_tui.projection.pricing import PRICES
    from agent_tui.projection.wire import wire_format
    from agent_tui.providers.base import adapter_class

    for spec in registry.PROVIDERS.values():
        assert spec.api == wire_format(spec.name).API
        provider = adapter_class(spec.name)(api_key="k", name=spec.name)
        assert provider.name == spec.name and provider.api == spec.api
        # a default model is in the entry's table, or another entry's (Azure serves OpenAI's
        # models, Vertex Anthropic's: one table entry per model id)
        assert spec.default_model in {m.id for m in spec.models} or spec.default_model in MODELS
        assert all(MODELS[m.id].provider == spec.name for m in spec.models)
        assert set(spec.prices) <= set(PRICES)


# -- no key for a local server ------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_local_base_url_needs_no_key_on_either_api(
    provider: str, server: FakeModelServer, clean_env: Path
) -> None:
    base = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
    with pytest.raises(ConfigError, match="no API key"):
        load_config(provider=provider)  # the provider's own service still needs one
    config = load_config(provider=provider, base_url=base, model="local-model")
    assert config.api_key is None
    server.push(anthropic_stream(text("hi")) if provider == "anthropic" else openai_stream("hi"))
    client = make_provider(config)
    assert isinstance(client, AnthropicProvider | OpenAIProvider)
    from agent_tui.projection.request import prepare

    events = [e async for e in client.stream(client.request_body(prepare([]), "local-model"))]
    await client.aclose()
    assert any(isinstance(e, pe.TextDelta) and e.text == "hi" for e in events)
    assert not any(isinstance(e, pe.ProviderError) for e in events)


# -- one resolver for every command --------------------------------------------------------------


def _session(tmp_path: Path, provider: str, model: str, words: int = 10) -> Path:
    b = Builder()
    b.add("model_change", provider=provider, modelId=model)
    for i in range(4):
        b.message(user(f"question {i} " + "word " * words))
        b.message({**assistant(f"answer {i} " + "word " * words, model=model), "provider": provider})
    return b.write(tmp_path / "s.jsonl")


def test_context_text_and_the_request_body_use_the_configured_window_and_output(
    tmp_path: Path, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.write_text('[models."registry-test-8k"]\ncontext_window = 8192\nmax_output = 1024\n')
    path = _session(tmp_path, "openai", "registry-test-8k")
    code, out, _ = _run(capsys, "context", str(path), "--format", "text")
    assert code == 0
    assert "tokens of 8,192" in out  # not the 128,000 guess for an unknown model
    code, out, _ = _run(capsys, "context", str(path), "--format", "openai")
    assert code == 0 and '"max_completion_tokens": 1024' in out


def test_compact_preview_uses_the_settings_the_run_would(
    tmp_path: Path, clean_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session's model has its own compaction settings: keep almost nothing verbatim.
    clean_env.write_text('[compaction.models."claude-haiku-4-5"]\nkeep_recent_tokens = 50\n')
    path = _session(tmp_path, "anthropic", "claude-haiku-4-5", words=200)
    # Without a key (the preview calls no model) ...
    code, out, err = _run(capsys, "compact", str(path), "--preview")
    assert code == 0, err
    # (the latest question stays verbatim: the cut is at it, not inside its turn)
    assert out.startswith("summarize: 7 entries") and "keep:      2 entries from e0008" in out
    # ... and with one (the configured default is another model: the session's settings still apply).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    code, again, _ = _run(capsys, "compact", str(path), "--preview")
    assert code == 0 and again == out
    from agent_tui.config import resolve

    resolved = resolve({"provider": "anthropic", "modelId": "claude-haiku-4-5"})
    assert resolved.model == "claude-haiku-4-5" and resolved.compaction.keep_recent_tokens == 50


# -- print mode's notices --------------------------------------------------------------------------


async def test_a_retried_reply_is_not_glued_to_the_dropped_one(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(text("The partial answer that", chunks=2)).dropped(5),
        anthropic_stream(text("The whole answer.")),
    )
    out, err = io.StringIO(), io.StringIO()
    assert (
        await stream_turn(
            Agent(SessionHandle(anthropic_harness.session), anthropic_harness.loop), "hi", out, err
        )
        == 0
    )
    assert out.getvalue() == "The partial answer that\nThe whole answer.\n"
    assert "[retrying]" in err.getvalue()
    assert "the server closed the connection mid-reply" in err.getvalue()


async def test_a_reply_cut_off_by_the_output_limit_says_so(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("A long answer that stops"), stop_reason="max_tokens"))
    out, err = io.StringIO(), io.StringIO()
    assert (
        await stream_turn(
            Agent(SessionHandle(anthropic_harness.session), anthropic_harness.loop), "hi", out, err
        )
        == 0
    )
    assert out.getvalue() == "A long answer that stops\n"
    assert "cut off by the output limit (128,000 tokens for claude-sonnet-5-5)" in err.getvalue()


async def test_a_connection_dropped_after_the_headers_is_not_unreachable(server: FakeModelServer) -> None:
    from agent_tui.projection.request import prepare

    server.push(anthropic_stream(text("never sent")).dropped(0))
    client = AnthropicProvider(api_key="k", base_url=server.anthropic_base_url)
    events = [e async for e in client.stream(client.request_body(prepare([]), "claude-sonnet-5-5"))]
    await client.aclose()
    error = events[-1]
    assert isinstance(error, pe.ProviderError) and error.retryable
    assert "the server closed the connection mid-reply" in error.message
    assert "could not reach" not in error.message


# -- compaction ------------------------------------------------------------------------------------


async def test_a_compaction_is_not_followed_at_once_by_another_on_an_estimate(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    """Just after compacting, everything is estimated (and estimates run high): the next call waits
    for a reply's reported usage before compacting again."""
    from dataclasses import replace

    from agent_tui.config import CompactionConfig
    from agent_tui.projection.compaction import CompactionSettings
    from agent_tui.projection.models import ModelInfo, register

    # A window the fixed part (system prompt and tool definitions, ~1,700 tokens) nearly fills.
    register(ModelInfo("anthropic", "registry-small-window", 2_200, 500))
    settings = CompactionSettings(reserve_tokens=300, keep_recent_tokens=10)
    anthropic_harness.loop.config = replace(anthropic_harness.config, compaction=CompactionConfig(settings))
    anthropic_harness.loop.model = "registry-small-window"
    server.responder = lambda _request: anthropic_stream(text("SUMMARY"))  # every summarization call
    server.push(anthropic_stream(text("ok"), input_tokens=1_750, output_tokens=5))
    await anthropic_harness.run(
        "zero " * 100
    )  # a turn to summarize: the next one's question is kept verbatim
    server.push(anthropic_stream(text("first " * 300), input_tokens=1_800, output_tokens=200))
    first = await anthropic_harness.run("one " * 50)
    # The reply reported 2,000 tokens, over the threshold (1,900): compacted at the end of the turn.
    assert [e.reason for e in first if isinstance(e, CompactionStarted)] == ["threshold"]
    server.push(anthropic_stream(text("second"), input_tokens=900, output_tokens=5))
    second = await anthropic_harness.run("two")
    assert [e for e in second if isinstance(e, CompactionStarted)] == []
    assert anthropic_harness.messages("assistant")[-1]["content"][0]["text"] == "second"


def test_compact_preview_plans_in_the_window_an_overflow_taught(
    tmp_path: Path, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The preview planned in the model's nominal window while the compaction itself used the
    server's learned one (a session's ``agent-tui.window`` entry): the two could disagree."""
    from agent_tui.projection.window import window_entry

    b = Builder()
    b.add("model_change", provider="anthropic", modelId="claude-haiku-4-5")
    for i in range(6):
        question = b.message(user(f"question {i} " + "word " * 300))
        reading = assistant("reading", [(f"c{i}", "read", {"path": "a.txt"})], model="claude-haiku-4-5")
        b.message({**reading, "provider": "anthropic"})
        b.message(tool_result(f"c{i}", "line " * 900))
        answer = b.message(
            {**assistant(f"answer {i} " + "word " * 900, model="claude-haiku-4-5"), "provider": "anthropic"}
        )
    path = b.write(tmp_path / "s.jsonl")
    code, nominal, err = _run(capsys, "compact", str(path), "--preview")
    assert code == 0, err
    learned = window_entry("anthropic", "claude-haiku-4-5", 2_000)
    b.add("custom", customType=learned["customType"], data=learned["data"])
    b.write(path)
    code, fitted, err = _run(capsys, "compact", str(path), "--preview")
    assert code == 0, err
    first_kept = [
        line.split(" from ")[1].split(",")[0]
        for out in (nominal, fitted)
        for line in out.splitlines()
        if line.startswith("keep:")
    ]
    # the nominal 200,000 keeps the last question with its answer; in 2,000 that turn cannot be
    # kept whole, and the cut falls inside it, as the compaction's own would
    assert first_kept == [question, answer], (nominal, fitted)
    assert "split turn" in fitted and "split turn" not in nominal

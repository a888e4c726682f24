"""``agent-tui compact FILE --from A --to B`` summarizes with the model a whole compaction and the
next turn would use: the flags', else the session's own (it took the config's default)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.cli.main import main as agent_tui_main
from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_stream,
    message_item,
    responses_stream,
    text,
)
from tests.support.model_env import fake_anthropic_env
from tests.support.session_builder import Builder, assistant, user


def _session(tmp_path: Path) -> Path:
    b = Builder()
    for i in range(6):  # long enough that a summary makes the context smaller (else it is refused)
        b.message(user(f"question {i} " + "about the parser and its tests " * 30))
        b.message(assistant(f"answer {i} " + "the parser reads each line once " * 30))
    b.add("model_change", provider="anthropic", modelId="claude-haiku-4-5")  # after the replies' model
    return b.write(tmp_path / "s.jsonl")


@pytest.fixture
def model_env(server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeModelServer:
    config = tmp_path / "config.toml"  # the whole compaction summarizes the first turns, keeps the last
    config.write_text("[compaction]\nkeep_recent_tokens = 200\n")
    fake_anthropic_env(monkeypatch, server, config)
    return server


@pytest.mark.parametrize("flags", [[], ["--model", "claude-opus-4-1"]])
def test_a_range_is_summarized_by_the_model_a_whole_compaction_uses(
    model_env: FakeModelServer, tmp_path: Path, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    server = model_env
    path = _session(tmp_path)
    server.push(anthropic_stream(text("## Goal\nanswers")))
    assert agent_tui_main(["compact", str(path), "--from", "e0001", "--to", "e0004", *flags]) == 0
    server.push(anthropic_stream(text("## Goal\nall of it")))
    assert agent_tui_main(["compact", str(path), *flags]) == 0, capsys.readouterr().err
    ranged, whole = (r.body["model"] for r in server.requests)
    assert ranged == whole == (flags[-1] if flags else "claude-haiku-4-5")


def test_a_range_is_summarized_through_the_api_of_the_sessions_model(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's model speaks the Responses API (its [models] entry), the provider's default
    model chat completions: the summary goes where the session's model is (it went by the
    default's route, with the session's model name)."""
    config = tmp_path / "config.toml"
    config.write_text('[models."resp-model"]\nprovider = "openai"\napi = "responses"\n')
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(config))
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):  # (openai's are set above)
        monkeypatch.delenv(name, raising=False)
    b = Builder()
    for i in range(3):
        b.message(user(f"question {i}"))
        b.message(assistant(f"answer {i}"))
    b.add("model_change", provider="openai", modelId="resp-model")
    path = b.write(tmp_path / "s.jsonl")
    server.push(responses_stream(message_item("## Goal\nanswers"), model="resp-model"))
    assert agent_tui_main(["compact", str(path), "--from", "e0001", "--to", "e0004"]) == 0
    (request,) = server.requests
    assert request.path.endswith("/responses") and request.body["model"] == "resp-model"

"""Configuration: flags over environment over the config file; a clear message when nothing is set."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.agent.system_prompt import build_sections, context_files, current_sections, system_update
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.config import ConfigError, RetryPolicy, load_config
from agent_tui.projection.models import (
    MODELS,
    ModelInfo,
    clamp_thinking_level,
    lookup,
    supported_thinking_levels,
)
from agent_tui.projection.request import system_prompt
from agent_tui.projection.wire.anthropic_messages import anthropic_thinking
from agent_tui.projection.wire.openai_completions import openai_reasoning_effort, openai_thinking
from agent_tui.store.session import Session


def cfg(tmp_path: Path, text: str = "", **env: str) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path, env


def test_no_key_gives_one_paragraph_with_local_servers(tmp_path: Path) -> None:
    path, env = cfg(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_config(env=env, path=path)
    message = str(info.value)
    assert "\n" not in message
    for needle in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "--base-url",
        "OPENAI_BASE_URL",
        "Ollama",
        "http://localhost:11434/v1",
        "llama.cpp",
        "vLLM",
        "LM Studio",
        str(path),
    ):
        assert needle in message


def test_whichever_key_is_present(tmp_path: Path) -> None:
    path, _ = cfg(tmp_path)
    a = load_config(env={"ANTHROPIC_API_KEY": "ka"}, path=path)
    assert (a.provider, a.model, a.api_key, a.provider_explicit) == (
        "anthropic",
        "claude-opus-5-5",
        "ka",
        False,
    )
    o = load_config(env={"OPENAI_API_KEY": "ko", "OPENAI_BASE_URL": "http://proxy/v1"}, path=path)
    assert (o.provider, o.model, o.api_key, o.base_url) == ("openai", "gpt-6.2-sol", "ko", "http://proxy/v1")
    assert "ka" not in repr(a) and "ko" not in repr(o)


def test_flags_win_over_environment_and_file(tmp_path: Path) -> None:
    path, _ = cfg(
        tmp_path,
        'provider = "anthropic"\nmodel = "claude-haiku-5-5"\n[anthropic]\napi_key = "from-file"\n'
        '[openai]\nbase_url = "http://file/v1"\nmodel = "file-model"\n',
    )
    env = {"ANTHROPIC_API_KEY": "from-env"}
    from_file = load_config(env=env, path=path)
    assert (from_file.provider, from_file.model, from_file.api_key) == (
        "anthropic",
        "claude-haiku-5-5",
        "from-env",
    )
    assert from_file.key_source == "ANTHROPIC_API_KEY" and from_file.model_explicit
    flagged = load_config(provider="openai", base_url="http://flag/v1", env=env, path=path)
    assert (flagged.provider, flagged.model, flagged.base_url, flagged.api_key) == (
        "openai",
        "file-model",
        "http://flag/v1",
        None,
    )
    both = {"ANTHROPIC_API_KEY": "ka", "OPENAI_API_KEY": "ko"}
    missing = tmp_path / "missing.toml"
    assert load_config(model="gpt-5", env=both, path=missing).provider == "openai"  # the model says which
    assert load_config(model="claude-sonnet-5-5", env=both, path=missing).provider == "anthropic"


def test_local_server_needs_no_key_but_openai_does(tmp_path: Path) -> None:
    path, _ = cfg(tmp_path)
    local = load_config(
        provider="openai", base_url="http://localhost:11434/v1", model="llama3.1", env={}, path=path
    )
    assert (
        local.api_key is None and local.base_url == "http://localhost:11434/v1" and local.model == "llama3.1"
    )
    with pytest.raises(ConfigError, match="no API key for openai: set OPENAI_API_KEY"):
        load_config(provider="openai", env={}, path=path)
    with pytest.raises(ConfigError, match="unknown provider 'gemini'"):
        load_config(provider="gemini", env={"OPENAI_API_KEY": "k"}, path=path)


def test_model_table_entries_from_the_config_file(tmp_path: Path) -> None:
    path, _ = cfg(
        tmp_path,
        '[openai]\nbase_url = "http://localhost:8080/v1"\n'
        '[models."my-local-coder"]\ncontext_window = 32768\nmax_output = 4096\n'
        "[retry]\nmax_retries = 5\nbase_delay = 0.5\n",
    )
    config = load_config(model="my-local-coder", env={}, path=path)
    try:
        assert config.provider == "openai"
        info = lookup("my-local-coder")
        assert (info.context_window, info.max_output) == (32768, 4096)
        assert config.retry == RetryPolicy(5, 0.5, 60.0)
    finally:
        MODELS.pop("my-local-coder", None)


def test_invalid_config_file_is_reported(tmp_path: Path) -> None:
    path, _ = cfg(tmp_path, "provider = [unclosed\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(env={"ANTHROPIC_API_KEY": "k"}, path=path)


def test_retry_delays_honour_retry_after_and_the_cap() -> None:
    policy = RetryPolicy(3, 2.0, 60.0)
    assert [policy.delay(n) for n in (1, 2, 3)] == [2.0, 4.0, 8.0]
    assert policy.delay(1, retry_after=10) == 10.0
    assert policy.delay(1, retry_after=600) == 60.0


def test_thinking_for_adaptive_and_budget_models() -> None:
    assert anthropic_thinking("medium", "claude-opus-5-5") == {"thinking_effort": "medium"}
    assert anthropic_thinking("high", "claude-opus-4-5") == {"thinking_budget": 16384}
    assert anthropic_thinking("off", "claude-opus-5-5") == {}


def test_thinking_levels_clamp_as_pi_does() -> None:
    assert supported_thinking_levels(lookup("gpt-4.1")) == ["off"]
    assert supported_thinking_levels(lookup("o3")) == ["low", "medium", "high"]
    assert supported_thinking_levels(lookup("gpt-5.1")) == ["off", "low", "medium", "high"]
    assert supported_thinking_levels(lookup("gpt-6-sol")) == ["off", "low", "medium", "high", "xhigh", "max"]
    unmapped = ModelInfo("openai", "local", 32_000, 8_000, reasoning=True)
    assert supported_thinking_levels(unmapped) == ["off", "minimal", "low", "medium", "high"]
    assert clamp_thinking_level(lookup("gpt-5.1"), "minimal") == "low"  # up first
    assert clamp_thinking_level(lookup("o3"), "xhigh") == "high"  # then down
    assert clamp_thinking_level(lookup("o3"), "off") == "low"
    assert clamp_thinking_level(lookup("o3"), "bogus") == "low"  # an unknown level: the lowest supported
    assert clamp_thinking_level(unmapped, "xhigh") == "high"
    assert clamp_thinking_level(lookup("gpt-4.1"), "high") == "off"


def test_openai_reasoning_effort_for_each_level() -> None:
    levels = ("off", "minimal", "low", "medium", "high", "xhigh")
    table = {
        "gpt-6.2-sol": [None, "low", "low", "medium", "high", "xhigh"],
        "gpt-6-sol": ["none", "low", "low", "medium", "high", "xhigh"],
        "gpt-5.2": ["none", "low", "low", "medium", "high", "xhigh"],
        "gpt-5.1": ["none", "low", "low", "medium", "high", "high"],
        "gpt-5-mini": [None, "minimal", "low", "medium", "high", "high"],
        "o4-mini": [None, "low", "low", "medium", "high", "high"],
        "gpt-5.4-2026-03-05": ["none", "low", "low", "medium", "high", "xhigh"],  # dated ids match their base
        "gpt-4o": [None] * 6,
        "some-local-model": [None] * 6,  # unknown models are not reasoning models
    }
    for model, efforts in table.items():
        assert [openai_reasoning_effort(level, model) for level in levels] == efforts, model
    assert openai_reasoning_effort(None, "gpt-5.2") == "none"
    assert openai_thinking("high", "o3") == {"reasoning_effort": "high"}
    assert openai_thinking("off", "o3") == {}
    MODELS["unmapped-reasoner"] = ModelInfo("openai", "unmapped-reasoner", 32_000, 8_000, reasoning=True)
    MODELS["effortless"] = ModelInfo(
        "openai", "effortless", 32_000, 8_000, reasoning=True, supports_reasoning_effort=False
    )
    try:
        efforts = [openai_reasoning_effort(level, "unmapped-reasoner") for level in levels]
        assert efforts == [None, "minimal", "low", "medium", "high", "high"]
        assert [openai_reasoning_effort(level, "effortless") for level in levels] == [None] * 6
    finally:
        MODELS.pop("unmapped-reasoner", None)
        MODELS.pop("effortless", None)


def test_thinking_level_map_in_the_config_file(tmp_path: Path) -> None:
    path, _ = cfg(
        tmp_path,
        '[models."o3"]\nthinking_level_map = { minimal = "low" }\n'
        '[models."my-reasoner"]\nreasoning = true\nsupports_reasoning_effort = false\n'
        'thinking_level_map = { off = "none", high = false }\n',
    )
    built_in = MODELS["o3"]
    try:
        load_config(provider="openai", env={"OPENAI_API_KEY": "k"}, path=path)
        o3 = lookup("o3")
        assert o3.context_window == built_in.context_window  # the rest of the built-in entry stays
        assert o3.thinking_level_map == {**(built_in.thinking_level_map or {}), "minimal": "low"}
        assert openai_reasoning_effort("minimal", "o3") == "low"
        mine = lookup("my-reasoner")
        assert mine.thinking_level_map == {"off": "none", "high": None}
        assert not mine.supports_reasoning_effort
        assert openai_reasoning_effort("high", "my-reasoner") is None
    finally:
        MODELS["o3"] = built_in
        MODELS.pop("my-reasoner", None)
    for bad in ('{ huge = "x" }', "{ low = 3 }", '"low"'):
        path, _ = cfg(tmp_path, f'[models."bad"]\nthinking_level_map = {bad}\n')
        with pytest.raises(ConfigError, match="thinking_level_map"):
            load_config(provider="openai", env={"OPENAI_API_KEY": "k"}, path=path)
        MODELS.pop("bad", None)


# -- system prompt --------------------------------------------------------------------------------


def test_context_files_from_root_to_cwd(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # the walk up stops at the repository root (test_safety_prompt_sources)
    (tmp_path / "AGENTS.md").write_text("outer rules")
    inner = tmp_path / "repo" / "pkg"
    inner.mkdir(parents=True)
    (tmp_path / "repo" / "CLAUDE.md").write_text("repo rules")
    (tmp_path / "global").mkdir()
    (tmp_path / "global" / "AGENTS.md").write_text("global rules")
    files = context_files(inner, tmp_path / "global")
    assert [f.content for f in files] == ["global rules", "outer rules", "repo rules"]


def test_system_update_is_a_patch_and_replays_to_the_prompt(tmp_path: Path) -> None:
    tools = default_tools()
    declarations = [t.declaration() for t in tools]
    sections = build_sections("/work", tools, [])
    first = system_update([], sections, declarations)
    assert first is not None and first["content"] == "" and list(first["sections"]) == list(sections)
    assert system_update([first], sections, declarations) is None
    prompt, replayed_tools = system_prompt([first])
    assert prompt == "\n\n".join(sections.values()) and replayed_tools == declarations

    fewer = [d for d in declarations if d["name"] != "ls"]
    changed = build_sections("/elsewhere", tools, [])
    second = system_update([first], changed, fewer)
    assert second is not None
    assert second["sections"] == {"cwd": "<cwd>\n/elsewhere\n</cwd>"}
    assert second["toolsRemoved"] == [{"name": "ls"}] and "toolsAdded" not in second
    assert current_sections([first, second])["cwd"].endswith("/elsewhere\n</cwd>")
    assert [t["name"] for t in system_prompt([first, second])[1]] == [d["name"] for d in fewer]


def test_a_continued_session_keeps_its_model_unless_one_is_chosen(tmp_path: Path) -> None:
    from agent_tui.agent.build import resolve_model
    from agent_tui.projection.context import project
    from agent_tui.store.session import Session

    with Session.create(tmp_path / "s", tmp_path) as session:
        session.append({"type": "model_change", "provider": "anthropic", "modelId": "claude-haiku-5-5"})
        projection = project(session.index)
        missing = tmp_path / "none.toml"
        default = load_config(env={"ANTHROPIC_API_KEY": "k"}, path=missing)
        assert resolve_model(default, projection, "anthropic") == "claude-haiku-5-5"
        chosen = load_config(model="claude-opus-5-5", env={"ANTHROPIC_API_KEY": "k"}, path=missing)
        assert resolve_model(chosen, projection, "anthropic") == "claude-opus-5-5"
        other = load_config(env={"OPENAI_API_KEY": "k"}, path=missing)
        assert resolve_model(other, projection, "openai") == "gpt-6.2-sol"


def test_steering_and_follow_up_modes_default_to_pis_and_are_checked(tmp_path: Path) -> None:
    from agent_tui.agent.build import make_provider
    from agent_tui.agent.loop import AgentLoop

    env = {"ANTHROPIC_API_KEY": "ka"}
    default = load_config(env=env, path=tmp_path / "missing.toml")
    assert (default.steering_mode, default.follow_up_mode) == ("one-at-a-time", "one-at-a-time")
    path = tmp_path / "config.toml"
    path.write_text('steering_mode = "all"\nfollow_up_mode = "one-at-a-time"\n')
    config = load_config(env=env, path=path)
    assert config.steering_mode == "all"
    session = Session.create(tmp_path / "s", tmp_path)
    loop = AgentLoop(session, make_provider(config), [], config=config)
    assert loop.queue.steering_mode == "all" and loop.queue.follow_up_mode == "one-at-a-time"
    session.close()
    path.write_text('follow_up_mode = "sometimes"\n')
    with pytest.raises(ConfigError, match="follow_up_mode"):
        load_config(env=env, path=path)


# -- one config reader -------------------------------------------------------------------------

ONE_FILE = """\
permissions = "read-only"
ascii_symbols = false
tree_pane = true

[compaction]
summarize_branches = true

[retry]
base_delay = 0.01
"""


def test_the_config_file_is_parsed_once_and_again_after_a_rewrite(tmp_path: Path) -> None:
    from agent_tui.config import parse_count, read_config_file

    path = tmp_path / "config.toml"
    path.write_text(ONE_FILE + '[openai]\nbase_url = "http://127.0.0.1:9/v1"\n')
    before = parse_count()
    first = read_config_file(path)
    first["permissions"] = "auto"  # a caller's change does not reach the next reader
    config = load_config(env={}, path=path)
    assert parse_count() - before == 1
    assert config.permissions == "read-only" and config.summarize_branches is True
    path.write_text(ONE_FILE + '[openai]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "other-model"\n')
    assert load_config(env={}, path=path).model == "other-model"
    assert parse_count() - before == 2
    path.write_text("permissions = 3\n[openai]\nbase_url = 'http://127.0.0.1:9/v1'\n")
    with pytest.raises(ConfigError, match="permissions must be a string"):
        load_config(env={}, path=path)


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_print_mode_reads_the_config_file_once(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.support.fake_model_server import FakeModelServer, openai_stream

    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "config.toml"
    with FakeModelServer() as server:
        server.push(openai_stream("Hello."))
        config.write_text(ONE_FILE + f'[openai]\nbase_url = "{server.openai_base_url}"\nmodel = "m"\n')
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))
        }
        env.update(AGENT_TUI_HOME=str(tmp_path / "home"), AGENT_TUI_CONFIG=str(config))
        script = (
            "import sys\nimport agent_tui.config as c\nfrom agent_tui.cli.main import main\n"
            "rc = main(sys.argv[1:])\nprint('config parses:', c.parse_count(), file=sys.stderr)\nsys.exit(rc)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, "-p", "hi"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=50,
        )
    assert done.returncode == 0, done.stderr
    assert "Hello." in done.stdout
    assert "config parses: 1" in done.stderr.splitlines()[-1]


@pytest.mark.slow  # the app, a real agent and server: 1.4 s of CPU
async def test_the_app_reads_the_config_file_once_for_its_settings_and_its_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_tui.agent.agent_session import AgentSession
    from agent_tui.agent.loop import AgentLoop
    from agent_tui.agent.permissions import MODE_ENV, PermissionMode
    from agent_tui.config import parse_count
    from tests.support.fake_model_server import FakeModelServer, openai_stream
    from tests.support.pilot import wait_for
    from tests.support.tui_fixtures import SIZE, make_app

    for name in (MODE_ENV, "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    with FakeModelServer() as server:
        server.push(openai_stream("Hello."))
        config.write_text(ONE_FILE + f'[openai]\nbase_url = "{server.openai_base_url}"\nmodel = "m"\n')
        before = parse_count()
        app = make_app(tmp_path, None, agent_factory=None, theme=None)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"hi", "enter")
            await wait_for(
                pilot,
                lambda: app.session is not None and not app.busy and len(server.requests) == 1,
                "the turn",
            )
            assert app.session is not None and len(server.requests) == 1, "the turn ran"
            turns = app.turns_for_session()
            core = getattr(turns, "built", None)  # the session core, built in a thread
            assert isinstance(core, AgentSession)
            loop = core.loop
            assert isinstance(loop, AgentLoop) and loop.permissions is not None
            assert loop.permissions.mode is PermissionMode.READ_ONLY  # from the file
        assert parse_count() - before == 1

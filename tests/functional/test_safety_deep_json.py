"""JSON nested too deeply is one line, never a traceback, wherever agent-tui reads it from
someone else: a repository's ``.claude/settings.json`` or ``.mcp.json``, the user's
``~/.claude.json``, a hook's reply, a model's tool-call arguments, a session's signatures.
100,000 ``[`` made Python's and msgspec's decoders raise RecursionError (not ValueError), and a
hostile repository's settings file ended ``agent-tui -p`` with a traceback before any question.
(Issue 24, finding 8: every reader of untrusted JSON bounds depth and answers with one line.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.agent.hooks import HookCommand, Hooks
from agent_tui.agent.mcp.config import read_servers
from agent_tui.agent.permission_rules import PermissionRules, RuleError
from agent_tui.agent.tools.edit import EditTool
from agent_tui.config_schema import MAX_JSON_FILE_BYTES, read_json_file
from agent_tui.projection.wire.openai_responses import _reasoning_item, _text_signature
from agent_tui.providers.events import parse_arguments
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.print_env import Env

DEEP = "[" * 100_000


def test_a_config_file_nested_too_deeply_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"hooks": ' + DEEP)
    found, problems = read_json_file(path, dict, ".claude/settings.json", "not read")
    assert found is None
    assert problems == [".claude/settings.json: not valid JSON (nested too deeply); not read"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("where", "flags"),
    [
        ("project/.claude/settings.json", ()),
        ("project/.claude/settings.local.json", ("--trust-project",)),
        ("project/.mcp.json", ("--trust-project",)),
        ("user/.claude.json", ()),
        ("user/.claude/settings.json", ()),
    ],
)
def test_print_mode_in_a_folder_with_a_deep_file_says_one_line_and_answers(
    tmp_path: Path, server: FakeModelServer, where: str, flags: tuple[str, ...]
) -> None:
    env = Env(tmp_path, server)
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"mcpServers": ' + DEEP)
    server.push(anthropic_stream(text("Hello.")))
    out = env.run("-p", "hi", *flags)
    assert "Traceback" not in out.stderr and "RecursionError" not in out.stderr, out.stderr[-2000:]
    assert out.returncode == 0 and "Hello." in out.stdout, out.stderr[-2000:]
    said = [x for x in out.stderr.splitlines() if "nested too deeply" in x]
    # one line per reader of the file (a settings.json has the rules' and the hooks' readers)
    assert 1 <= len(said) <= 2 and all(str(path) in x or path.name in x for x in said), said


async def test_a_hook_replying_with_deep_json_is_taken_as_text(tmp_path: Path) -> None:
    command = 'python3 -c "print(\'{\\"a\\":\' * 100000)"'
    hooks = Hooks([HookCommand("UserPromptSubmit", "", command, 60, "t")], str(tmp_path))
    outcome = await hooks.run("UserPromptSubmit", {"prompt": "x"}, None)
    assert not outcome.blocked
    (context,) = outcome.context  # not JSON it can read: its output is context, capped
    assert context.startswith('{"a":{"a":')


def test_a_models_deep_arguments_are_an_error_for_the_call() -> None:
    value, error = parse_arguments(DEEP)
    assert value == {} and error is not None and "nested too deeply" in error
    assert EditTool().prepare_arguments({"path": "x", "edits": DEEP})["edits"] == DEEP


def test_a_sessions_deep_signatures_are_ignored() -> None:
    assert _reasoning_item(DEEP) is None
    assert _text_signature("{" + '"a":[' * 100_000) == ("{" + '"a":[' * 100_000, None)


def test_keeping_a_rule_in_a_deep_settings_file_is_one_error_and_the_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.local.json"
    path.parent.mkdir()
    path.write_text('{"permissions": ' + DEEP)
    rules = PermissionRules.load(str(tmp_path))  # the deep file is a warning there, not a crash
    with pytest.raises(RuleError, match="nested too deeply"):
        rules.keep("Bash(npm test:*)")
    assert path.read_text() == '{"permissions": ' + DEEP


@pytest.mark.slow
def test_a_repositorys_deep_config_toml_is_one_line_and_the_users_one_error(
    tmp_path: Path, server: FakeModelServer
) -> None:
    """The same for TOML: tomllib raises RecursionError too. A repository's .agent-tui/config.toml
    (read for its rules) is one warning and the run goes on; the user's own config is one error."""
    env = Env(tmp_path, server)
    project = env.work / ".agent-tui" / "config.toml"
    project.parent.mkdir()
    project.write_text("[permissions]\nallow = " + DEEP)
    server.push(anthropic_stream(text("Hello.")))
    out = env.run("-p", "hi")
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    assert out.returncode == 0 and "Hello." in out.stdout, out.stderr[-2000:]
    assert [x for x in out.stderr.splitlines() if "nested too deeply" in x and "config.toml" in x]
    project.unlink()
    own = tmp_path / "own.toml"
    own.write_text("model = " + DEEP)
    bad = env.run("-p", "hi", env={**env.env, "AGENT_TUI_CONFIG": str(own)})
    assert "Traceback" not in bad.stderr and bad.returncode != 0, bad.stderr[-2000:]
    (line,) = [x for x in bad.stderr.splitlines() if x.strip()]
    assert "nested too deeply" in line and str(own) in line, line


def test_a_settings_file_over_its_size_is_one_line_and_claude_json_is_not_capped(tmp_path: Path) -> None:
    """A repository's 200 MB settings.json cost 450 MB at the start; a settings or MCP file over
    16 MiB is now one line, unread. ``~/.claude.json`` grows with Claude Code's history: read whole."""
    big = tmp_path / "settings.json"
    with big.open("wb") as f:
        f.truncate(MAX_JSON_FILE_BYTES + 1)  # sparse: its size is all that is looked at
    found, problems = read_json_file(big, dict, ".claude/settings.json", "not read")
    assert found is None and len(problems) == 1
    assert problems[0].startswith(".claude/settings.json: 16,777,217 bytes, over the 16,777,216")
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    home.mkdir()
    history = {"history": "x" * (MAX_JSON_FILE_BYTES + 10)}
    servers = {"mcpServers": {"mine": {"command": "my-server"}}, "projects": {"/elsewhere": history}}
    (home / ".claude.json").write_text(json.dumps(servers))
    read = read_servers({}, str(work), home=home)
    assert [s.name for s in read.servers] == ["mine"] and not read.warnings


def test_a_repositorys_config_toml_over_the_size_is_one_warning(tmp_path: Path) -> None:
    config = tmp_path / ".agent-tui" / "config.toml"
    config.parent.mkdir()
    with config.open("wb") as f:
        f.truncate(MAX_JSON_FILE_BYTES + 1)
    rules = PermissionRules.load(str(tmp_path))
    assert [w for w in rules.warnings if "config.toml" in w and "16,777,217 bytes" in w], rules.warnings


@pytest.mark.slow
def test_acp_says_a_line_it_cannot_parse_in_one_line_and_answers_the_next(tmp_path: Path) -> None:
    """The ACP SDK logs each line it cannot parse with a traceback (18 lines for 100,000 '['); the
    editor's log gets one line per bad line, and the next request is answered."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(tmp_path), "AGENT_TUI_HOME": str(tmp_path / "data")}
    initialize = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'
    stdin = f"{DEEP}\nxx\n{initialize}\n"
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui", "acp"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert '"id":1,"result"' in done.stdout.replace(" ", ""), done.stdout[:500]
    assert "Traceback" not in done.stderr, done.stderr[:3000]
    lines = [line for line in done.stderr.splitlines() if "Error parsing JSON-RPC message" in line]
    assert len(lines) == 2 and "RecursionError" in lines[0] and "JSONDecodeError" in lines[1], done.stderr

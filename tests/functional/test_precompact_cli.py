"""``agent-tui compact FILE`` (whole, ``--review``, or a range with ``--from``/``--to``) runs the
PreCompact hooks first, as the agent does before every compaction: a hook that blocks it (exit 2
with a reason on stderr, or ``{"decision": "block"}``) leaves the file untouched and the command
exits 1 before the model is asked; the folder's own hooks run only when the folder is trusted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.precompact_hooks import parser_session, precompact_hook
from tests.support.print_env import Env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]  # the CLI in a subprocess, a hook process

SUMMARY = "## Goal\nfix the parser"


def _settings(folder: Path, command: str) -> None:
    """``command`` as a PreCompact hook in ``folder/.claude/settings.json`` (Claude Code's format)."""
    (folder / ".claude").mkdir(parents=True, exist_ok=True)
    hooks = {"PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": command}]}]}
    (folder / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def _events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize(
    ("flags", "block"),
    [
        ((), "exit2"),
        ((), "json"),
        (("--review",), "exit2"),
        (("--from", "e0001", "--to", "e0002"), "exit2"),
        (("--from", "e0001", "--to", "e0002"), "json"),
    ],
    ids=["whole-exit2", "whole-json", "review", "range-exit2", "range-json"],
)
def test_a_precompact_hook_that_blocks_it_leaves_the_file_untouched(
    server: FakeModelServer, tmp_path: Path, flags: tuple[str, ...], block: str
) -> None:
    env = Env(tmp_path, server)
    command, log = precompact_hook(env.tmp, block=block)
    _settings(env.user_home, command)  # the user's own hooks: trusted without asking
    path = parser_session(env.tmp / "s.jsonl")
    before = path.read_bytes()
    server.push(anthropic_stream(text(SUMMARY)))  # what the model would say, were it asked
    out = env.run(
        "compact", str(path), "--focus", "parser", *flags, env={**env.env, "VISUAL": "", "EDITOR": "true"}
    )
    assert out.returncode == 1, out.stderr
    assert "compaction blocked by a PreCompact hook: a release is being cut" in out.stderr
    assert server.requests == []  # the model was never asked for a summary
    assert path.read_bytes() == before
    (event,) = _events(log)
    assert (event["hook_event_name"], event["trigger"], event["custom_instructions"]) == (
        "PreCompact",
        "manual",
        "parser",
    )
    assert (event["session_id"], event["transcript_path"]) == ("s1", str(path))


def test_a_precompact_hook_that_lets_it_through_is_run_before_the_summary(
    server: FakeModelServer, tmp_path: Path
) -> None:
    env = Env(tmp_path, server)
    command, log = precompact_hook(env.tmp, block=None)
    _settings(env.user_home, command)
    path = parser_session(env.tmp / "s.jsonl")
    server.push(anthropic_stream(text(SUMMARY)))
    out = env.run("compact", str(path))
    assert out.returncode == 0, out.stderr
    assert env.entries(path)[-1]["type"] == "compaction"
    (event,) = _events(log)
    assert (event["trigger"], event["custom_instructions"]) == ("manual", "")


def test_the_folders_own_precompact_hooks_run_only_when_it_is_trusted(
    server: FakeModelServer, tmp_path: Path
) -> None:
    env = Env(tmp_path, server)
    command, log = precompact_hook(env.tmp, block="exit2")
    _settings(env.work, command)  # the project's hooks: they need the folder's trust
    path = parser_session(env.tmp / "s.jsonl")
    server.push(anthropic_stream(text(SUMMARY)))
    untrusted = env.run("compact", str(path), "--from", "e0001", "--to", "e0002")
    assert untrusted.returncode == 0, untrusted.stderr
    assert "not loaded" in untrusted.stderr and "--trust-project" in untrusted.stderr
    assert _events(log) == []
    after = path.read_bytes()
    trusted = env.run("compact", str(path), "--trust-project")
    assert trusted.returncode == 1, trusted.stderr
    assert "compaction blocked by a PreCompact hook: a release is being cut" in trusted.stderr
    assert len(_events(log)) == 1
    assert path.read_bytes() == after

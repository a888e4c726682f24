"""``agent-tui -p`` with the user's files: a template or skill command is expanded before the turn,
the session stores the expanded text, the prompt flags reach the request. A real subprocess
against the fake model server, with its own HOME (tests.support.print_env)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.files import write
from tests.support.print_env import Env

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    return Env(tmp_path, server)


def test_print_mode_expands_a_template_and_stores_the_expanded_text(
    env: Env, server: FakeModelServer
) -> None:
    write(
        env.user_home / ".claude/commands/review.md",
        "---\ndescription: Review a file\nargument-hint: <path> [focus]\n---\nReview $1 for ${2:-bugs}.",
    )
    write(env.work / ".agent-tui/prompts/broken.md", "---\ndescription: [\n---\nx")
    server.push(anthropic_stream(text("Looks fine.")))
    result = env.run("-p", '/review src/x.py "error handling"')
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Looks fine."
    assert env.user_texts() == ["Review src/x.py for error handling."]
    sent = server.requests[0].body["messages"][-1]["content"]
    assert "Review src/x.py for error handling." in json.dumps(sent)
    warnings = [line for line in result.stderr.splitlines() if "broken.md" in line]
    assert len(warnings) == 1 and "skipped" in warnings[0]


def test_print_mode_skill_command_and_prompt_flags(env: Env, server: FakeModelServer) -> None:
    write(
        env.user_home / ".agents/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Ship.\n---\nRun make ship.",
    )
    write(env.work / "AGENTS.md", "Use tabs.")
    write(env.work / "rules.md", "Answer in French.")
    server.push(anthropic_stream(text("ok")))
    result = env.run(
        "-p",
        "/skill:deploy now",
        "--system-prompt",
        "You ship code.",
        "--append-system-prompt",
        "@rules.md",
        "-nc",
    )
    assert result.returncode == 0, result.stderr
    (message,) = env.user_texts()
    assert (
        message.startswith('<skill name="deploy"') and "Run make ship." in message and message.endswith("now")
    )
    system = server.requests[0].body["system"][0]["text"]
    assert system.startswith("You ship code.") and "Answer in French." in system
    assert "Use tabs." not in system
    assert "<name>deploy</name>" in system


def test_an_unreadable_prompt_file_is_one_line_and_no_session(env: Env, server: FakeModelServer) -> None:
    result = env.run("-p", "hi", "--system-prompt", "@nowhere.md")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "agent-tui: --system-prompt @nowhere.md: No such file or directory"
    ]
    assert not list(env.sessions()) and not server.requests


def test_a_template_that_expands_to_nothing_is_one_line_and_no_call(
    env: Env, server: FakeModelServer
) -> None:
    write(env.work / ".agent-tui/prompts/empty.md", "---\ndescription: nothing here\n---\n")
    result = env.run("-p", "/empty", "--trust-project")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == "agent-tui: the prompt template expands to nothing"
    assert not server.requests

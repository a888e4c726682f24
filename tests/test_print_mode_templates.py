"""``agent-tui -p`` with the user's files: a template or skill command is expanded before the turn,
the session stores the expanded text, the prompt flags reach the request. A real subprocess
against the fake model server, with its own HOME and config folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fake_model_server import FakeModelServer, anthropic_stream, text

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


class Run:
    def __init__(self, tmp: Path, server: FakeModelServer) -> None:
        self.work = tmp / "project"
        self.home = tmp / "home"
        self.data = tmp / "data"
        self.config_dir = tmp / "config"
        for folder in (self.work, self.home, self.config_dir):
            folder.mkdir()
        config = write(self.config_dir / "config.toml", "[retry]\nbase_delay = 0.01\n")
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "PI_CODING_AGENT"))
        }
        self.env.update(
            HOME=str(self.home),
            AGENT_TUI_HOME=str(self.data),
            AGENT_TUI_CONFIG=str(config),
            ANTHROPIC_API_KEY="sk-test",
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
        )

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_tui", *args],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def user_messages(self) -> list[str]:
        """The text of each user message the session stores."""
        (path,) = sorted(self.data.glob("sessions/*/*.jsonl"))
        entries: list[dict[str, Any]] = [json.loads(line) for line in path.read_text().splitlines()[1:]]
        out = []
        for e in entries:
            if e["type"] == "message" and e["message"]["role"] == "user":
                content = e["message"]["content"]
                out.append(
                    content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                )
        return out


@pytest.fixture
def run(tmp_path: Path, server: FakeModelServer) -> Run:
    return Run(tmp_path, server)


def test_print_mode_expands_a_template_and_stores_the_expanded_text(
    run: Run, server: FakeModelServer
) -> None:
    write(
        run.home / ".claude/commands/review.md",
        "---\ndescription: Review a file\nargument-hint: <path> [focus]\n---\nReview $1 for ${2:-bugs}.",
    )
    write(run.work / ".agent-tui/prompts/broken.md", "---\ndescription: [\n---\nx")
    server.push(anthropic_stream(text("Looks fine.")))
    result = run("-p", '/review src/x.py "error handling"')
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Looks fine."
    assert run.user_messages() == ["Review src/x.py for error handling."]
    sent = server.requests[0].body["messages"][-1]["content"]
    assert "Review src/x.py for error handling." in json.dumps(sent)
    warnings = [line for line in result.stderr.splitlines() if "broken.md" in line]
    assert len(warnings) == 1 and "skipped" in warnings[0]


def test_print_mode_skill_command_and_prompt_flags(run: Run, server: FakeModelServer) -> None:
    write(
        run.home / ".agents/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Ship.\n---\nRun make ship.",
    )
    write(run.work / "AGENTS.md", "Use tabs.")
    write(run.work / "rules.md", "Answer in French.")
    server.push(anthropic_stream(text("ok")))
    result = run(
        "-p",
        "/skill:deploy now",
        "--system-prompt",
        "You ship code.",
        "--append-system-prompt",
        "@rules.md",
        "-nc",
    )
    assert result.returncode == 0, result.stderr
    (message,) = run.user_messages()
    assert (
        message.startswith('<skill name="deploy"') and "Run make ship." in message and message.endswith("now")
    )
    system = server.requests[0].body["system"][0]["text"]
    assert system.startswith("You ship code.") and "Answer in French." in system
    assert "Use tabs." not in system
    assert "<name>deploy</name>" in system


def test_an_unreadable_prompt_file_is_one_line_and_no_session(run: Run, server: FakeModelServer) -> None:
    result = run("-p", "hi", "--system-prompt", "@nowhere.md")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "agent-tui: --system-prompt @nowhere.md: No such file or directory"
    ]
    assert not list(run.data.glob("sessions/*/*.jsonl")) and not server.requests

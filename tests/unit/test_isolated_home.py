"""Every test runs in a home of its own (tests/conftest.py): the developer's ``~/.pi``, ``~/.claude``,
``~/.claude.json``, ``~/.agents``, config dir and keys are never read, and nothing is written there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.agent.resources import load_resources
from agent_tui.config import config_path
from agent_tui.store.paths import data_home


def test_the_home_is_the_tests_own_under_the_pytest_tmp_root(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    root = tmp_path_factory.getbasetemp().resolve()
    home = Path.home().resolve()
    assert Path(os.environ["HOME"]).resolve() == home
    assert home.is_relative_to(root) and home != root
    assert not tmp_path.resolve().is_relative_to(home), "the test's tmp_path stays its own to fill"
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        assert Path(os.environ[name]).resolve().is_relative_to(home), name
    tmux = Path(os.environ["TMUX_TMPDIR"]).resolve()  # the home, or a short folder for a long one
    assert tmux.is_relative_to(home) if len(str(Path.home())) < 70 else list(tmux.iterdir()) == []
    # agent-tui's own folders follow: its config file and its data dir (sessions, history, index)
    assert config_path().resolve().is_relative_to(home)
    assert data_home().resolve().is_relative_to(home)


#: What tests/functional/test_isolated_home_pytest.py exports before it runs the test below in pytest.
DEVELOPER_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "AGENT_TUI_CONFIG",
    "AGENT_TUI_HOME",
    "PI_CODING_AGENT_DIR",
    "CLAUDE_CONFIG_DIR",
    "TMUX",
    "TEXTUAL",
)


def test_no_key_endpoint_or_agent_setting_of_the_developer_is_left(tmp_path: Path) -> None:
    assert [k for k in DEVELOPER_VARIABLES if k in os.environ] == []
    # nor a file of the developer's home: a command of theirs is not one of ours
    project = tmp_path / "project"
    project.mkdir()
    assert "poisoned" not in load_resources(project, None).command_names()


@pytest.mark.parametrize("turn", ["first", "second"])
def test_each_test_starts_with_an_empty_home(turn: str) -> None:
    """Whichever of the two runs second would see what the first left if homes were shared."""
    home = Path.home()
    assert list(home.iterdir()) == []
    poisoned = home / ".claude" / "commands" / "x.md"
    poisoned.parent.mkdir(parents=True)
    poisoned.write_text(f"left by the {turn} test\n")


def test_agent_tui_reads_user_files_from_the_tests_home(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """The same resolution as the app's (no ``env`` given): the home it reads is the test's."""
    root = tmp_path_factory.getbasetemp().resolve()
    assert Path.home().resolve().is_relative_to(root), "not the test's home: nothing is written"
    project = tmp_path / "project"
    project.mkdir()
    assert "x" not in load_resources(project, None).command_names()
    command = Path.home() / ".claude" / "commands" / "x.md"
    command.parent.mkdir(parents=True)
    command.write_text("from the test's home\n")
    # new since the first load: waiting for the user's yes (agent.prompt_trust), then it loads
    waiting = load_resources(project, None)
    assert "x" not in waiting.command_names()
    assert any("~/.claude/commands/x.md" in w for w in waiting.warnings), waiting.warnings
    assert "x" in load_resources(project, None, screen=False).command_names()


def test_a_subprocess_started_with_the_inherited_environment_sees_the_tests_home() -> None:
    shown = subprocess.run(
        [sys.executable, "-c", "import os, pathlib; print(os.environ['HOME']); print(pathlib.Path.home())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert shown == [str(Path.home()), str(Path.home())]

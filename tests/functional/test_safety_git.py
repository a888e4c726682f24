"""Find, grep and ls never run what a repository configures (core.fsmonitor, hooks).

agent-tui lists a repository's files without git (agent_tui.agent.tools.gitignore); these tests
check it lists what ``git ls-files --cached --others --exclude-standard`` lists (git runs here, in
the tests only, with its configuration neutralised), and that a hostile repository runs nothing,
through the tools and end to end in ``agent-tui -p --permissions read-only``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.agent.tools.base import ToolContext
from agent_tui.agent.tools.find import FindTool
from agent_tui.agent.tools.gitignore import parse_rules, tracked_files, work_tree_top
from agent_tui.agent.tools.grep import GrepTool
from agent_tui.agent.tools.ls import LsTool
from agent_tui.agent.tools.walk import list_tree
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own, with a global excludes file (git and agent-tui both read it)."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.swp\n")
    (home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@example.com\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    safe = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]
    out = subprocess.run(["git", *safe, "-C", str(repo), *args], env=env, capture_output=True, check=True)
    return out.stdout.decode("utf-8", "surrogateescape")


def git_listing(root: Path) -> list[str]:
    raw = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({p for p in raw.split("\0") if p and (root / p).is_file()})


def write(path: Path, content: str = "x\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)


def make_repo(repo: Path) -> None:
    """A repository with every kind of rule and entry git ls-files distinguishes."""
    git(repo.parent, "init", "-q", repo.name)
    write(
        repo / ".gitignore",
        "*.log\n!important.log\nbuild/\n/only-top.txt\ndocs/*\n!docs/keep.md\ndeep/**/gen\n# comment\n\\\n",
    )
    write(repo / "sub" / ".gitignore", "*.tmp\n!again.log\n")
    write(repo / ".git" / "info" / "exclude", "local-only/\n")
    for name in (
        "a.py",
        "x.log",
        "important.log",
        "only-top.txt",
        "sub/only-top.txt",
        "sub/again.log",
        "sub/other.log",
        "sub/t.tmp",
        "sub/deeper/n.tmp",
        "docs/drop.md",
        "docs/keep.md",
        "deep/a/b/gen/out.c",
        "deep/a/gen.c",
        "build/out.o",
        "build/tracked.txt",
        "local-only/x",
        "edit.swp",
        "with space/ünïcode name.txt",
        "nested/.keep",
        "gone.txt",
        "intent.txt",
    ):
        write(repo / name)
    git(repo / "nested", "init", "-q")  # a nested repository: git does not enter it
    write(repo / "nested" / "inner.py")
    (repo / "link-file").symlink_to("a.py")
    (repo / "link-dir").symlink_to("sub")
    (repo / "link-broken").symlink_to("missing")
    (repo / "empty-dir").mkdir()
    git(repo, "add", "a.py", "gone.txt", ".gitignore")
    git(repo, "add", "-f", "build/tracked.txt")  # tracked although ignored: git lists it
    git(repo, "add", "-N", "intent.txt")  # an intent-to-add entry (extended flags: index v3)
    (repo / "gone.txt").unlink()  # deleted but still in the index: not listed


@pytest.mark.parametrize("version", [2, 3, 4])
def test_listing_matches_git_ls_files(tmp_path: Path, home: Path, version: int) -> None:
    repo = tmp_path / "repo"
    make_repo(repo)
    git(repo, "update-index", "--index-version", str(version))
    for root in (repo, repo / "sub", repo / "build", repo / "deep" / "a"):
        files, _ = list_tree(root)
        assert files == git_listing(root), root
    files, dirs = list_tree(repo)
    assert "build/tracked.txt" in files and "build/out.o" not in files
    assert "sub/again.log" in files and "nested/inner.py" not in files and "edit.swp" not in files
    assert "link-file" in files and "link-dir" not in files and "empty-dir" not in dirs


def test_index_paths_are_read_as_git_reads_them(tmp_path: Path, home: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo)
    for version in (2, 3, 4):
        git(repo, "update-index", "--index-version", str(version))
        expected = sorted(p for p in git(repo, "ls-files", "-z", "--cached").split("\0") if p)
        assert sorted(tracked_files(repo / ".git") or []) == expected
    (repo / ".git" / "index").write_bytes(b"DIRC\0\0\0\x02\0\0\0\x09garbage")
    assert tracked_files(repo / ".git") is None  # a damaged index: no tracked extras, no crash


def test_work_tree_discovery_and_bad_rules(tmp_path: Path) -> None:
    fake = tmp_path / "fake"
    (fake / ".git").mkdir(parents=True)  # no HEAD: git would not take it for a repository
    assert work_tree_top(fake) is None
    (fake / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert work_tree_top(fake / ".git") is None  # inside the git directory: not a work tree
    assert work_tree_top(fake) == (fake.resolve(), fake.resolve() / ".git")
    spec = parse_rules(b"\\\n*.o\n")  # a line pathspec refuses does not drop the others
    assert spec is not None and spec.check_file("a.o").include is True
    assert parse_rules(b"# only a comment\n") is None


def hostile_repo(repo: Path) -> Path:
    """A repository whose config and hooks would create MARKER if git ran anything."""
    marker = repo.parent / "MARKER"
    git(repo.parent, "init", "-q", repo.name)
    write(repo / "src" / "main.py", "print('hello')\n")
    write(repo / ".gitignore", "ignored/\n")
    write(repo / "ignored" / "x.py", "hello\n")
    git(repo, "config", "core.fsmonitor", f"touch {marker}")
    git(repo, "config", "core.hooksPath", ".git/hooks")
    hook = repo / ".git" / "hooks" / "post-index-change"
    write(hook, f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    git(repo, "add", "src/main.py")
    assert not marker.exists()
    return marker


async def test_find_grep_ls_run_nothing_the_repository_configures(tmp_path: Path, home: Path) -> None:
    repo = tmp_path / "repo"
    marker = hostile_repo(repo)
    ctx = ToolContext(str(repo), asyncio.Event())
    found = await FindTool().execute({"pattern": "*.py"}, ctx)
    hits = await GrepTool().execute({"pattern": "hello"}, ctx)
    listed = await LsTool().execute({}, ctx)
    assert found.content[0]["text"] == "src/main.py"  # .gitignore still applies
    assert hits.content[0]["text"] == "src/main.py:1: print('hello')"
    assert "src/" in listed.content[0]["text"]
    assert not marker.exists()


@pytest.mark.slow  # another process
def test_read_only_print_mode_runs_nothing_the_repository_configures(
    tmp_path: Path, home: Path, server: FakeModelServer
) -> None:
    repo = tmp_path / "repo"
    marker = hostile_repo(repo)
    server.push(
        anthropic_stream(
            tool_use("t1", "find", {"pattern": "*.py"}),
            tool_use("t2", "grep", {"pattern": "hello"}),
            tool_use("t3", "ls", {}),
        ),
        anthropic_stream(text("Listed.")),
    )
    config = tmp_path / "config.toml"
    config.write_text("[retry]\nbase_delay = 0.01\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))}
    env.update(
        AGENT_TUI_HOME=str(tmp_path / "agent-home"),
        AGENT_TUI_CONFIG=str(config),
        ANTHROPIC_API_KEY="test-key-0123456789",
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
    )
    result = subprocess.run(
        [sys.executable, "-m", "agent_tui", "-p", "list", "--permissions", "read-only"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Listed.\n"
    results = server.requests[1].body["messages"][-1]["content"]
    assert [r["content"][0]["text"].splitlines()[0] for r in results] == [
        "src/main.py",
        "src/main.py:1: print('hello')",
        ".git/",
    ]
    assert not marker.exists()


def test_agent_tui_runs_no_git() -> None:
    """No module starts git (a subprocess argument list beginning with "git"): listing reads files."""
    import re

    import agent_tui

    package = Path(agent_tui.__file__).parent
    starts_git = re.compile(r"""\[\s*["']git["']\s*,""")
    offenders = [str(p) for p in package.rglob("*.py") if starts_git.search(p.read_text("utf-8"))]
    assert offenders == []

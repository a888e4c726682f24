"""What shapes the model's view from outside the project is bounded (issue 24, finding 11):

- a hook printing hundreds of megabytes costs a bounded amount of memory, and what it adds for
  the model is cut as a tool's output is (head and tail kept, the cut said);
- AGENTS.md / CLAUDE.md are read from cwd up to the repository's root or the home directory,
  never from a folder (or a file) another user can write, such as ``/tmp``.
"""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path

import pytest

from agent_tui.agent.hooks import CONTEXT_LIMIT, HookCommand, Hooks
from agent_tui.agent.prompt_files import context_dirs, foreign_writable
from agent_tui.agent.system_prompt import context_files

pytestmark = pytest.mark.timeout(120)

MB = 1024 * 1024


# -- hook output ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "command", "kind"),
    [
        ("UserPromptSubmit", "head -c {n} /dev/zero | tr '\\0' a", "context"),
        ("SessionStart", "printf 'HEAD-'; head -c {n} /dev/zero | tr '\\0' b; printf -- '-TAIL'", "context"),
        ("UserPromptSubmit", "head -c {n} /dev/zero | tr '\\0' c >&2; exit 2", "reason"),
        ("PreToolUse", "head -c {n} /dev/zero | tr '\\0' d >&2; exit 1", "notice"),
    ],
)
async def test_a_hook_printing_hundreds_of_megabytes_costs_little(
    tmp_path: Path, event: str, command: str, kind: str
) -> None:
    size = 128 * MB
    hooks = Hooks([HookCommand(event, "", command.format(n=size), 60, "t")], str(tmp_path))
    tracemalloc.start()
    try:
        started = time.monotonic()
        outcome = await hooks.run(event, {"prompt": "x"}, "bash" if event == "PreToolUse" else None)
        took = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    print(f"{event} {kind}: {size / MB:.0f} MB printed, peak {peak / MB:.1f} MB in Python, {took:.1f} s")
    assert peak < 24 * MB, peak  # (before: the whole output, then a copy: over 400 MB)
    if kind == "context":
        (added,) = outcome.context
        assert len(added.encode()) <= CONTEXT_LIMIT + 200
        assert "bytes of the hook's output cut" in added
        if "HEAD-" in command:
            assert added.startswith("HEAD-") and added.endswith("-TAIL")  # head and tail kept
    elif kind == "reason":
        assert outcome.blocked and len(outcome.reason.encode()) <= CONTEXT_LIMIT + 200
        assert "bytes of the hook's output cut" in outcome.reason
    else:
        (notice,) = outcome.notices
        assert len(notice) <= 400 and "failed (exit 1)" in notice


async def test_small_hook_replies_are_untouched(tmp_path: Path) -> None:
    reply = '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "why"}}'
    hooks = Hooks([HookCommand("PreToolUse", "", f"cat >/dev/null; echo '{reply}'", 10, "t")], str(tmp_path))
    outcome = await hooks.run("PreToolUse", {"tool_name": "Bash", "tool_input": {"x": "y" * 300_000}}, "bash")
    assert outcome.decision == "ask" and outcome.decision_reason == "why"
    exact = "x" * (CONTEXT_LIMIT - 10)
    hooks = Hooks([HookCommand("SessionStart", "", f"printf {exact}", 10, "t")], str(tmp_path))
    assert (await hooks.run("SessionStart", {}, "startup")).context == [exact]


# -- AGENTS.md -----------------------------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def contents(cwd: Path) -> list[str]:
    return [f.content for f in context_files(cwd)]


def test_a_world_writable_parent_such_as_tmp_never_reaches_the_prompt(tmp_path: Path, home: Path) -> None:
    shared = tmp_path / "shared"  # as /tmp: every user may write it (sticky or not)
    write(shared / "AGENTS.md", "injected by another user")
    project = shared / "proj"
    write(project / "AGENTS.md", "project rules")
    for mode in (0o1777, 0o777):
        shared.chmod(mode)
        assert contents(project) == ["project rules"], oct(mode)
    # in a repository too: a world-writable folder between cwd and the root is left out
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "AGENTS.md", "repo rules")
    write(repo / "open" / "AGENTS.md", "injected in the middle")
    write(repo / "open" / "pkg" / "CLAUDE.md", "pkg rules")
    (repo / "open").chmod(0o777)
    assert contents(repo / "open" / "pkg") == ["repo rules", "pkg rules"]
    # the cwd itself, when every user may write it
    (repo / "open").chmod(0o1777)
    assert contents(repo / "open") == ["repo rules"]
    assert foreign_writable(repo / "open") == "writable by every user"


def test_the_walk_stops_at_the_repository_root_or_home(tmp_path: Path, home: Path) -> None:
    write(tmp_path / "AGENTS.md", "above everything")
    repo = home / "code" / "repo"
    (repo / ".git").mkdir(parents=True)
    write(home / "AGENTS.md", "home rules")
    write(home / "code" / "AGENTS.md", "above the repository")
    write(repo / "AGENTS.md", "repo rules")
    write(repo / "src" / "AGENTS.md", "src rules")
    assert contents(repo / "src") == ["repo rules", "src rules"]
    loose = home / "notes" / "today"  # no repository: up to home
    write(loose / "AGENTS.md", "today")
    assert contents(loose) == ["home rules", "today"]
    assert context_dirs(loose) == [home, home / "notes", loose]
    outside = tmp_path / "elsewhere" / "deep"  # neither above: the folder itself only
    write(outside / "AGENTS.md", "here")
    write(tmp_path / "elsewhere" / "AGENTS.md", "a parent nobody vouches for")
    assert contents(outside) == ["here"]
    # a repository marked by a .git file (a worktree, a submodule) stops the walk as well
    worktree = tmp_path / "elsewhere" / "wt"
    write(worktree / ".git", "gitdir: /somewhere\n")
    write(worktree / "sub" / "AGENTS.md", "wt sub")
    write(worktree / "AGENTS.md", "wt root")
    assert contents(worktree / "sub") == ["wt root", "wt sub"]


def test_a_file_or_folder_of_another_user_is_not_read(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    theirs = write(repo / "AGENTS.md", "another user's")
    write(repo / "pkg" / "AGENTS.md", "mine")
    if os.geteuid() == 0:
        os.chown(theirs, 65534, 65534)  # nobody's
    else:  # not root: take the files for another user's by seeing ourselves as someone else
        me = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: me + 1)
    if os.geteuid() == 0:
        assert contents(repo / "pkg") == ["mine"]
        assert foreign_writable(theirs) == "owned by user 65534"
        os.chown(repo / "pkg", 65534, 65534)  # a folder of theirs between
        assert contents(repo / "pkg") == []
    else:
        assert contents(repo / "pkg") == []

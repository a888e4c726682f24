"""Each permission mode's decisions (ask, accept-edits, plan, auto, read-only), by the tools' own
metadata (``Tool.file_effect``), and the order Shift+Tab cycles them in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.permission_modes import CYCLE, mode_entry, next_mode, plan_note
from agent_tui.agent.permissions import (
    Decision,
    PermissionMode,
    PermissionModeError,
    PermissionRequest,
    Permissions,
    parse_mode,
)
from agent_tui.agent.tools.base import FileEffect, Tool, ToolContext, ToolResult
from agent_tui.agent.tools.builtin import default_tools

pytestmark = pytest.mark.timeout(30)


class Asked:
    def __init__(self) -> None:
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.asked.append(request)
        return Decision.DENY


class FakeTool(Tool):
    def __init__(self, name: str, effect: FileEffect, path_argument: str | None = None) -> None:
        self.name = name
        self.file_effect = effect
        self.path_argument = path_argument
        self.reads_only = effect == "none"

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text("ok")


TOOLS = {t.name: t for t in default_tools()}


def test_shift_tab_cycles_every_mode_in_order() -> None:
    assert [m.value for m in CYCLE] == ["ask", "accept-edits", "plan", "auto", "read-only"]
    seen = [PermissionMode.ASK]
    for _ in range(5):
        seen.append(next_mode(seen[-1]))
    assert seen[-1] is PermissionMode.ASK and set(seen) == set(PermissionMode)
    assert (
        parse_mode("Accept-Edits") is PermissionMode.ACCEPT_EDITS
        and parse_mode(" plan ") is PermissionMode.PLAN
    )
    with pytest.raises(PermissionModeError, match="use one of ask, accept-edits, plan, auto, read-only"):
        parse_mode("acceptEdits")


async def test_plan_mode_refuses_every_tool_that_changes_files_or_runs_programs(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    asked = Asked()
    plan = Permissions(PermissionMode.PLAN, asked)
    calls = [
        ("write", {"path": "a.txt", "content": "x"}),  # inside the cwd: ask mode lets it pass
        ("edit", {"path": "a.txt", "oldText": "x", "newText": "y"}),
        ("bash", {"command": "ls"}),
    ]
    for name, args in calls:
        verdict = await plan.check(name, args, cwd, "c", info=TOOLS[name])
        assert not verdict.allowed and verdict.decision == "plan-refused", name
        assert verdict.message is not None and "plan mode" in verdict.message
    for tool in (
        FakeTool("task", "any"),
        FakeTool("notebook", "path", "path"),
        FakeTool("mcp__s__run", "any"),
    ):
        verdict = await plan.check(tool.name, {"path": "a.txt"}, cwd, "c", info=tool)
        assert verdict.decision == "plan-refused", tool.name
    verdict = await plan.check("write", {"path": "a.txt", "content": "x"}, cwd)  # known by name only
    assert verdict.decision == "plan-refused"
    for name in ("read", "ls", "grep", "find"):
        verdict = await plan.check(name, {"path": "."}, cwd, info=TOOLS[name])
        assert verdict.allowed and verdict.decision is None, name
    # a tool that claims to change nothing but is not trusted still asks, as in ask mode
    claims = FakeTool("mcp__s__lookup", "none")
    verdict = await plan.check(claims.name, {}, cwd, "c", info=claims)
    assert (
        not verdict.allowed and verdict.decision == "deny" and [r.tool for r in asked.asked] == [claims.name]
    )
    assert not (tmp_path / "a.txt").exists()


async def test_accept_edits_lets_file_edits_inside_pass_and_still_asks_for_commands(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    (tmp_path / "hard.txt").write_text("x")
    (tmp_path / "hard2.txt").hardlink_to(tmp_path / "hard.txt")
    asked = Asked()
    edits = Permissions(PermissionMode.ACCEPT_EDITS, asked)
    notebook = FakeTool("notebook", "path", "path")
    assert (
        await edits.check("write", {"path": "src/a.py", "content": "x"}, cwd, info=TOOLS["write"])
    ).allowed
    verdict = await edits.check(notebook.name, {"path": "src/n.ipynb"}, cwd, "c1", info=notebook)
    assert verdict.allowed and verdict.decision == "accept-edits"
    # the same tool asks in ask mode
    assert not (
        await Permissions(PermissionMode.ASK, Asked()).check(notebook.name, {"path": "n"}, cwd, info=notebook)
    ).allowed
    for path in (
        str(outside / "x"),
        ".mcp.json",
        ".git/config",
        "CLAUDE.md",
        ".claude/settings.json",
        "hard.txt",
    ):
        for tool in (TOOLS["write"], notebook):
            verdict = await edits.check(tool.name, {"path": path, "content": "x"}, cwd, "c", info=tool)
            assert not verdict.allowed and verdict.decision == "deny", (tool.name, path)
    verdict = await edits.check("bash", {"command": "touch b"}, cwd, "c", info=TOOLS["bash"])
    assert not verdict.allowed and verdict.decision == "deny"
    assert asked.asked[-1].tool == "bash"


def test_a_mode_change_is_a_custom_entry_and_plan_mode_is_told_to_the_model() -> None:
    entry = mode_entry(PermissionMode.PLAN, PermissionMode.ASK)
    assert entry == {
        "type": "custom",
        "customType": "agent-tui.permission-mode",
        "data": {"mode": "plan", "previous": "ask"},
    }
    on = plan_note(PermissionMode.PLAN, PermissionMode.ASK)
    off = plan_note(PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN)
    assert on is not None and on["type"] == "custom_message" and "Plan mode is on" in on["content"]
    assert off is not None and "Plan mode is off" in off["content"] and "accept-edits" in off["content"]
    assert plan_note(PermissionMode.AUTO, PermissionMode.ASK) is None


def test_print_modes_terminal_question_takes_no_bare_a(tmp_path: Path) -> None:
    from dataclasses import replace

    from agent_tui.cli.print_mode import choices_text, terminal_answer

    request = Permissions.describe("bash", {"command": "git clean -fdx"}, str(tmp_path))
    assert choices_text(request) == "[1] yes, [2] for this session, [3] no: "
    for line, decision in [
        ("a\n", Decision.DENY),
        ("also run the tests\n", Decision.DENY),
        ("always\n", Decision.DENY),  # no rule to keep
        ("s\n", Decision.DENY),
        ("1\n", Decision.ALLOW_ONCE),
        ("y\n", Decision.ALLOW_ONCE),
        ("2\n", Decision.ALLOW_SESSION),
        ("session\n", Decision.ALLOW_SESSION),
        ("3\n", Decision.DENY),
        ("9\n", Decision.DENY),
    ]:
        assert terminal_answer(line, request) is decision, line
    ruled = replace(request, rule="Bash(git clean:*)")
    assert (
        choices_text(ruled)
        == "[1] yes, [2] don't ask again for Bash(git clean:*), [3] for this session, [4] no: "
    )
    assert terminal_answer("2", ruled) is Decision.ALLOW_ALWAYS
    assert terminal_answer("3", ruled) is Decision.ALLOW_SESSION
    assert terminal_answer("a", ruled) is Decision.DENY


@pytest.mark.slow
def test_the_flags_take_every_mode(tmp_path: Path) -> None:
    import subprocess
    import sys

    for args in (["-p", "x", "--permissions", "sometimes"], ["acp", "--permissions", "sometimes"]):
        proc = subprocess.run(
            [sys.executable, "-m", "agent_tui", *args], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 2
        for mode in CYCLE:
            assert mode.value in proc.stderr, (args, proc.stderr)

"""Writes land only where they were checked (hard links, symlinks swapped mid-write)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.events import TurnDone
from agent_tui.agent.permissions import PermissionMode, Permissions
from agent_tui.agent.tools.base import Tool, ToolContext, ToolError
from agent_tui.agent.tools.edit import EditTool
from agent_tui.agent.tools.write import WriteTool
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    return project, outside


async def gated_call(perms: Permissions, tool: Tool, args: dict[str, Any], cwd: Path) -> str:
    """What the agent loop does with one call: the policy's verdict, then the tool with its guard."""
    verdict = await perms.check(tool.name, args, str(cwd))
    if not verdict.allowed:
        return "refused"
    approved = verdict.request.path if verdict.request is not None else None
    ctx = ToolContext(str(cwd), asyncio.Event(), write_guard=perms.write_guard(str(cwd), approved))
    try:
        await tool.execute(args, ctx)
    except ToolError:
        return "tool-refused"
    return "written"


EDIT = {"edits": [{"oldText": "secret", "newText": "owned"}]}


async def test_a_hard_link_to_an_outside_file_asks(places: tuple[Path, Path]) -> None:
    project, outside = places
    secret = outside / "secret.txt"
    secret.write_text("secret\n")
    os.link(secret, project / "linked.txt")
    nobody = Permissions(PermissionMode.ACCEPT_EDITS, None)
    for tool, args in ((WriteTool(), {"content": "owned\n"}), (EditTool(), EDIT)):
        verdict = await nobody.check(tool.name, {"path": "linked.txt", **args}, str(project))
        assert not verdict.allowed and verdict.request is not None
        assert "2 hard links" in verdict.request.reason
        assert await gated_call(nobody, tool, {"path": "linked.txt", **args}, project) == "refused"
        read_only = Permissions(PermissionMode.READ_ONLY)
        assert await gated_call(read_only, tool, {"path": "linked.txt", **args}, project) == "refused"
    assert secret.read_text() == "secret\n"
    # Once the user says yes, it is written (through the link, as asked).
    yes = Permissions(PermissionMode.ACCEPT_EDITS, _always)
    assert await gated_call(yes, WriteTool(), {"path": "linked.txt", "content": "ok\n"}, project) == "written"
    assert secret.read_text() == "ok\n"


async def _always(_: object) -> Any:
    from agent_tui.agent.permissions import Decision

    return Decision.ALLOW_ONCE


async def test_a_hard_link_made_after_the_check_is_refused_by_the_tool(places: tuple[Path, Path]) -> None:
    project, outside = places
    secret = outside / "secret.txt"
    secret.write_text("secret\n")
    (project / "plain.txt").write_text("secret\n")
    nobody = Permissions(PermissionMode.ACCEPT_EDITS, None)
    for tool, args in ((WriteTool(), {"content": "owned\n"}), (EditTool(), EDIT)):
        call = {"path": "plain.txt", **args}
        verdict = await nobody.check(tool.name, call, str(project))
        assert verdict.allowed and verdict.decision == "accept-edits"  # an ordinary file inside: no question
        (project / "plain.txt").unlink()
        os.link(secret, project / "plain.txt")  # swapped for a link before the tool opens it
        ctx = ToolContext(str(project), asyncio.Event(), write_guard=nobody.write_guard(str(project)))
        with pytest.raises(ToolError, match="hard links"):
            await tool.execute(call, ctx)
        (project / "plain.txt").unlink()
        (project / "plain.txt").write_text("secret\n")
    assert secret.read_text() == "secret\n"


FLIPPER = r"""
import os, sys
link, spare, targets = sys.argv[1], sys.argv[1] + ".new", sys.argv[2:4]
flips = 0
open(sys.argv[4] + ".ready", "w").close()
while not os.path.exists(sys.argv[4]):
    try:
        os.unlink(spare)
    except FileNotFoundError:
        pass
    os.symlink(targets[flips % 2], spare)
    os.replace(spare, link)
    flips += 1
print(flips)
"""


def start_flipper(link: Path, targets: tuple[Path, Path], stop: Path) -> subprocess.Popen[str]:
    """Another process swapping ``link`` between two targets (atomically, by rename) until ``stop`` exists."""
    args = [sys.executable, "-c", FLIPPER, str(link), str(targets[0]), str(targets[1]), str(stop)]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    while not Path(f"{stop}.ready").exists():
        time.sleep(0.01)
    return process


@pytest.mark.slow  # another process
@pytest.mark.parametrize("kind", ["folder", "file"])
async def test_a_symlink_flipped_during_writes_never_lands_outside(
    places: tuple[Path, Path], kind: str
) -> None:
    """A thread flips a symlink between a target inside and one outside while 300 writes and 300
    edits go through the policy and the tools: none lands outside (the old code: 33 of 300 did)."""
    project, outside = places
    inside_dir = project / "inside"
    inside_dir.mkdir()
    if kind == "folder":
        targets = (inside_dir, outside)
        path = "link/f.txt"
        for folder in targets:
            (folder / "f.txt").write_text("secret\n")
    else:
        targets = (inside_dir / "f.txt", outside / "f.txt")
        path = "link"
        for target in targets:
            target.write_text("secret\n")
    link = project / "link"
    link.symlink_to(targets[0])
    nobody = Permissions(PermissionMode.ACCEPT_EDITS, None)
    stop = project.parent / "stop"
    flipper = start_flipper(link, targets, stop)
    outcomes: dict[str, int] = {}
    try:
        for i in range(300):
            for tool, args in ((WriteTool(), {"content": f"secret {i}\n"}), (EditTool(), EDIT)):
                outcome = await gated_call(nobody, tool, {"path": path, **args}, project)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                if outcome == "written" and tool.name == "edit":
                    (inside_dir / "f.txt").write_text("secret\n")
    finally:
        stop.touch()
        flips = int(flipper.communicate(timeout=30)[0])
    assert (outside / "f.txt").read_text() == "secret\n", outcomes
    # The race was run: writes went through, others were refused, the link flipped all along.
    assert outcomes.get("written", 0) > 0 and outcomes.get("refused", 0) > 0 and flips > 10, (
        outcomes,
        flips,
    )


async def test_writes_through_symlinks_inside_still_work(places: tuple[Path, Path]) -> None:
    project, _ = places  # (AGENTS.md and CLAUDE.md always ask: test_safety_config_files)
    (project / "README.md").write_text("one\n")
    (project / "NOTES.md").symlink_to("README.md")
    (project / "docs").symlink_to(project / "real-docs")
    nobody = Permissions(PermissionMode.ACCEPT_EDITS, None)
    assert (
        await gated_call(nobody, WriteTool(), {"path": "NOTES.md", "content": "two\n"}, project) == "written"
    )
    assert (project / "README.md").read_text() == "two\n" and (project / "NOTES.md").is_symlink()
    call = {"path": "docs/new/deep.md", "content": "x"}  # a dangling folder link: made, inside
    assert await gated_call(nobody, WriteTool(), call, project) == "written"
    assert (project / "real-docs" / "new" / "deep.md").read_text() == "x"
    edit = {"path": "NOTES.md", "edits": [{"oldText": "two", "newText": "three"}]}
    assert await gated_call(nobody, EditTool(), edit, project) == "written"
    assert (project / "README.md").read_text() == "three\n"


async def test_writing_a_fifo_is_refused_at_once(places: tuple[Path, Path]) -> None:
    project, _ = places
    os.mkfifo(project / "pipe")
    ctx = ToolContext(str(project), asyncio.Event())
    with pytest.raises(ToolError, match="not a regular file"):
        await asyncio.wait_for(WriteTool().execute({"path": "pipe", "content": "x"}, ctx), 5)


async def test_a_hard_link_through_the_agent_loop(
    places: tuple[Path, Path], server: FakeModelServer, tmp_path: Path
) -> None:
    h = Harness(server, tmp_path)
    secret = places[1] / "secret.txt"
    secret.write_text("secret\n")
    os.link(secret, h.workdir / "linked.txt")
    h.loop.permissions = Permissions(PermissionMode.ACCEPT_EDITS, None)
    server.push(
        anthropic_stream(tool_use("toolu_1", "write", {"path": "linked.txt", "content": "owned"})),
        anthropic_stream(text("Could not.")),
    )
    events = await h.run("go")
    assert events[-1] == TurnDone("stop") and secret.read_text() == "secret\n"
    result = server.requests[1].body["messages"][-1]["content"][0]
    assert result["is_error"] and "needs the user's confirmation" in result["content"][0]["text"]

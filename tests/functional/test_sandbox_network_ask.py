"""A sandboxed command reaching a host no rule allows is asked about (agent.sandbox_proxy's hold
and ask): bwrap, the proxy in this process, the forwarder inside and curl, for real; the approver
is the test's (the app's question: tests/e2e/test_tui_sandbox_network_question.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_tui.agent import sandbox as sandbox_module
from agent_tui.agent.child_env import child_environment
from agent_tui.agent.permission_rules import PermissionRules
from agent_tui.agent.permissions import Decision, PermissionMode, PermissionRequest, Permissions
from agent_tui.agent.sandbox import Sandbox
from agent_tui.agent.sandbox_proxy import for_commands
from agent_tui.agent.tools.base import ToolContext, ToolResult
from agent_tui.agent.tools.bash import BashTool
from tests.support.web_pages import page_server

pytestmark = pytest.mark.slow  # bwrap sandboxes and curl
BWRAP = sandbox_module.bwrap_program()
HOST = "127.0.0.2"  # no rule allows it


@pytest.fixture
def web() -> Iterator[int]:
    with page_server(HOST, "page ") as port:
        yield port


def run(
    tmp_path: Path, commands: list[str], answers: list[str]
) -> tuple[list[ToolResult], list[PermissionRequest]]:
    problem = sandbox_module.probe(BWRAP)
    assert BWRAP is not None and problem is None, f"{problem} (make setup installs bubblewrap)"
    work, home, tmp = (tmp_path / n for n in ("work", "home", "tmp"))
    for folder in (work, home, tmp):
        folder.mkdir()
    env = child_environment()
    env["HOME"] = str(home)
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        env.pop(name, None)
        env.pop(name.upper(), None)
    asked: list[PermissionRequest] = []

    async def approver(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision(answers.pop(0))

    rules = PermissionRules.load(str(work), config_data={}, home=home)
    policy = Permissions(PermissionMode.ASK, approver, rules=rules)
    sandbox = for_commands(policy, Sandbox("workspace-write", False, BWRAP, None, str(tmp)))
    assert sandbox is not None

    async def main() -> list[ToolResult]:
        tool = BashTool(env=env)
        return [await tool.execute({"command": c}, ToolContext(str(work), sandbox=sandbox)) for c in commands]

    return asyncio.run(main()), asked


def text(result: ToolResult) -> str:
    return "".join(str(b.get("text", "")) for b in result.content)


def test_curl_to_an_unlisted_host_is_asked_and_allowed(tmp_path: Path, web: int) -> None:
    url = f"http://{HOST}:{web}"
    # two connections of one command: one question; allowed once, so the next command asks again
    first = f"curl -sS {url}/a {url}/b"
    results, asked = run(tmp_path, [first, f"curl -sS --proxytunnel {url}/c"], ["allow-once", "deny"])
    assert [r.tool for r in asked] == ["bash", "bash"]
    assert asked[0].summary == f"{HOST}:{web}" and asked[0].rule == f"WebFetch(domain:{HOST})"
    assert asked[0].details() == first  # the question shows the command that wants the host
    assert not results[0].is_error and text(results[0]).split() == ["page", "/a", "page", "/b"]
    denied = text(results[1])
    assert results[1].is_error and "page /c" not in denied
    assert f"refused a connection to {HOST}:{web}" in denied  # the forwarder's line for the model


def test_allowed_for_the_session_is_not_asked_again(tmp_path: Path, web: int) -> None:
    url = f"http://{HOST}:{web}"
    results, asked = run(tmp_path, [f"curl -sS {url}/a", f"curl -sS {url}/b"], ["allow-session"])
    assert len(asked) == 1
    assert [text(r).strip() for r in results] == ["page /a", "page /b"]

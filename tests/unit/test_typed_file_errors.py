"""The files agent-tui shares with Claude Code and pi (``.mcp.json``, ``.pi/mcp.json``,
``~/.claude.json``, ``.claude/settings*.json``) and its own config's MCP servers, hooks and
permission rules are read through msgspec structs: a value of the wrong type is one line naming the
key and the file, and every other server, hook and rule still loads."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agent_tui.agent.extensions import Extensions
from agent_tui.agent.hooks import parse_hooks, read_hooks
from agent_tui.agent.mcp.config import read_servers
from agent_tui.agent.permission_rules import PermissionRules
from agent_tui.config_schema import convert, convert_fields


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    (work / ".claude").mkdir(parents=True)
    return home, work


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


# -- the converter every reader uses ---------------------------------------------------------------


class Inner(msgspec.Struct):
    allow: list[Any] = msgspec.field(default_factory=list)
    deny: list[Any] = msgspec.field(default_factory=list)


class Outer(msgspec.Struct, rename="camel"):
    inner: str | Inner | None = None
    wait_seconds: float = 10.0


def test_convert_names_the_key_and_what_it_must_be() -> None:
    with pytest.raises(ValueError, match=r'^hooks\.Stop\[0\]\.inner\.allow must be a list, not "x"$'):
        convert({"inner": {"allow": "x"}}, Outer, key="hooks.Stop[0]")
    with pytest.raises(ValueError, match=r"^the file must be an object, not \[\]$"):
        convert([], Outer, json_words=True)
    assert convert({"waitSeconds": "5"}, Outer).wait_seconds == 5.0  # a number as a string reads


def test_convert_fields_leaves_out_only_the_wrong_field_at_any_depth() -> None:
    data = {"inner": {"allow": "x", "deny": ["Read(.env)"]}, "waitSeconds": "soon", "other": 1}
    read, problems = convert_fields(data, Outer)
    assert read == Outer(inner=Inner(deny=["Read(.env)"]), wait_seconds=10.0)
    assert problems == ['inner.allow must be a list, not "x"', 'waitSeconds must be a number, not "soon"']
    assert data["inner"] == {"allow": "x", "deny": ["Read(.env)"]}  # the caller's value is not changed


# -- MCP servers -----------------------------------------------------------------------------------


def test_a_wrong_type_in_each_mcp_file_is_one_line_and_the_other_servers_load(
    folders: tuple[Path, Path],
) -> None:
    home, work = folders
    write_json(
        work / ".mcp.json", {"mcpServers": {"bad": {"command": "x", "args": "a b"}, "good": {"command": "g"}}}
    )
    write_json(work / ".pi" / "mcp.json", {"mcpServers": [], "settings": {"pi's own": True}})
    write_json(
        home / ".claude.json",
        {
            "numStartups": 3,  # Claude Code's own keys are left alone
            "mcpServers": {"user": {"url": "http://127.0.0.1:1/mcp", "timeout": "soon"}},
            "projects": {
                str(work.resolve()): {"mcpServers": {"local": {"command": "l", "env": {"K": ["v"]}}}},
                "/elsewhere": {"mcpServers": 5},  # another folder's mistake is not ours to report
            },
        },
    )
    write_json(home / ".pi" / "agent" / "mcp.json", {"mcpServers": {"pi-user": {"command": "p"}}})
    data = tomllib.loads(
        '[mcp.servers.conf]\ncommand = "c"\nstartup = "later"\n[mcp.servers.ok]\ncommand = "o"\n'
    )
    found = read_servers(data, work, home=home, trusted=True, env={}, config_name="config.toml")
    assert [s.name for s in found.servers] == ["ok", "good", "pi-user"]
    assert found.warnings == [
        'MCP server \'conf\' in config.toml skipped: startup must be one of "lazy", "eager", not "later"',
        "MCP server 'bad' in .mcp.json skipped: args must be an array, not \"a b\"",
        ".pi/mcp.json: mcpServers must be an object, not []",
        "MCP server 'local' in ~/.claude.json skipped: env.K must be true or false or a number or a string, "
        'not ["v"]',
        "MCP server 'user' in ~/.claude.json skipped: timeout must be a number, not \"soon\"",
    ]


def test_mcp_servers_of_the_wrong_type_in_the_config_is_one_line(tmp_path: Path) -> None:
    found = read_servers({"mcp": {"servers": ["x"], "wait": 3}}, tmp_path, home=tmp_path / "nobody", env={})
    assert found.servers == [] and found.warnings == ['config.toml: mcp.servers must be a table, not ["x"]']


def test_mcp_wait_and_read_only_hints_come_from_the_typed_config(tmp_path: Path) -> None:
    def manager(data: dict[str, Any]) -> tuple[float, bool]:
        ext = Extensions(str(tmp_path), data, home=tmp_path / "nobody")
        mcp = ext.read_servers()
        assert mcp is not None
        return mcp.wait, mcp.trust_read_only_hints

    assert manager({}) == (10.0, False)
    assert manager({"mcp": {"wait": 3, "trust_read_only_hints": True}}) == (3.0, True)
    # a wrong value is the config check's line; the default applies (as the schema says)
    assert manager({"mcp": {"wait": "soon", "trust_read_only_hints": "yes"}}) == (10.0, False)


# -- hooks -----------------------------------------------------------------------------------------


def hook_group(*hooks: dict[str, Any], matcher: Any = "") -> dict[str, Any]:
    return {"matcher": matcher, "hooks": list(hooks)}


def test_a_wrong_type_in_claude_codes_hooks_is_one_line_and_the_other_hooks_load(
    folders: tuple[Path, Path],
) -> None:
    home, work = folders
    write_json(
        home / ".claude" / "settings.json",
        {
            "model": "opus",  # Claude Code's own keys are left alone
            "hooks": {
                "PreToolUse": [
                    hook_group(
                        {"type": "command", "command": "slow", "timeout": "soon"}, {"command": "ok-1"}
                    ),
                    hook_group({"command": "never"}, matcher=["Bash"]),
                    hook_group({"command": "ok-2", "statusMessage": "Claude Code's key"}, matcher="Bash"),
                ],
                "Stop": {"command": "not a list"},
            },
        },
    )
    write_json(work / ".claude" / "settings.json", {"hooks": []})
    write_json(
        work / ".claude" / "settings.local.json", {"hooks": {"Stop": [hook_group({"command": "ok-3"})]}}
    )
    commands, warnings = read_hooks({}, work, home=home, trusted=True)
    assert [(c.command, c.matcher) for c in commands] == [("ok-1", ""), ("ok-2", "Bash"), ("ok-3", "")]
    assert warnings == [
        '~/.claude/settings.json: hooks.PreToolUse[0].hooks[0].timeout must be a number, not "soon" '
        "(that hook skipped)",
        '~/.claude/settings.json: hooks.PreToolUse[1].matcher must be a string, not ["Bash"] (its hooks skipped)',
        '~/.claude/settings.json: hooks.Stop must be an array, not {"command": "not a list"}',
        f"{work / '.claude' / 'settings.json'}: hooks must be an object, not []; its hooks not read",
    ]


def test_a_wrong_type_in_the_configs_hooks_is_one_line_and_the_other_hooks_load() -> None:
    data = tomllib.loads(
        """
[[hooks.Stop]]
[[hooks.Stop.hooks]]
command = 3
[[hooks.Stop.hooks]]
command = "fine"
[[hooks.UserPromptSubmit]]
hooks = "x"
"""
    )
    commands, warnings = parse_hooks(data["hooks"], "config.toml")
    assert [c.command for c in commands] == ["fine"]
    assert warnings == [
        "config.toml: hooks.Stop[0].hooks[0].command must be a string, not 3 (that hook skipped)",
        'config.toml: hooks.UserPromptSubmit[0].hooks must be a list, not "x" (its hooks skipped)',
    ]
    assert parse_hooks(3, "config.toml") == ([], ["config.toml: hooks must be a table, not 3"])


# -- permission rules ------------------------------------------------------------------------------


def test_a_wrong_type_in_each_rules_file_is_one_line_and_the_other_rules_load(
    folders: tuple[Path, Path],
) -> None:
    home, work = folders
    write_json(
        home / ".claude" / "settings.json",
        {"permissions": {"allow": "Bash(ls:*)", "deny": ["Read(.env)"], "defaultMode": "plan"}},
    )
    write_json(work / ".claude" / "settings.json", {"permissions": {"ask": ["Bash(git push:*)", 7]}})
    write_json(work / ".claude" / "settings.local.json", {"permissions": [], "sandbox": {"network": 3}})
    (work / ".agent-tui").mkdir()
    (work / ".agent-tui" / "config.toml").write_text('[permissions]\nallow = ["Bash(make:*)"]\ndeny = "x"\n')
    config = {"permissions": {"mode": "ask", "allow": ["Bash(npm test)", {"rule": 1}]}}
    rules = PermissionRules.load(str(work), config_data=config, config_name="config.toml", home=home)
    assert sorted((r.kind, r.text) for r in rules.rules) == [
        ("allow", "Bash(make:*)"),
        ("allow", "Bash(npm test)"),
        ("ask", "Bash(git push:*)"),
        ("deny", "Read(.env)"),
    ]
    settings = str(home / ".claude" / "settings.json")
    project, local = work / ".claude" / "settings.json", work / ".claude" / "settings.local.json"
    shown = settings.replace(str(Path.home()), "~", 1) if settings.startswith(str(Path.home())) else settings
    assert rules.warnings == [
        'config.toml: permissions.allow[1] must be a string, not {"rule": 1}; that rule ignored',
        f'{shown}: permissions.allow must be an array, not "Bash(ls:*)"; not read',
        f"{project}: permissions.ask[1] must be a string, not 7; that rule ignored",
        f"{local}: permissions must be an object, not []; not read",
        f"{local}: sandbox.network must be an object, not 3; not read",
        f'{work / ".agent-tui" / "config.toml"}: permissions.deny must be a list, not "x"; not read',
    ]


def test_the_config_check_leaves_these_lines_to_the_readers() -> None:
    # each wrong value above is said once: by its reader, not again by the config check
    from agent_tui.config_schema import check

    data = tomllib.loads(
        '[mcp.servers.x]\ncommand = 3\n[[hooks.Stop]]\nmatcher = 3\n[permissions]\nallow = "Bash"\n'
    )
    assert check(data).problems == ()
    assert read_servers(data, Path("/"), home=Path("/nonexistent"), env={}).warnings == [
        "MCP server 'x' in config.toml skipped: command must be a string, not 3"
    ]
    assert parse_hooks(data["hooks"], "config.toml")[1] == [
        "config.toml: hooks.Stop[0].matcher must be a string, not 3 (its hooks skipped)"
    ]
    rules = PermissionRules.load("/nonexistent", config_data=data, home=Path("/nonexistent"))
    assert rules.warnings == ['config.toml: permissions.allow must be a list, not "Bash"; not read']

"""pi's ``--skill`` / ``--prompt-template`` paths and ``--no-skills`` / ``--no-prompt-templates``:
explicit paths load after the discovered ones and still load when discovery is off. A real
``agent-tui -p`` against the fake model server, with its own HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.files import write
from tests.support.print_env import Env

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def system_text(server: FakeModelServer) -> str:
    return json.dumps(server.requests[0].body.get("system", ""))


def test_explicit_skill_and_template_paths_load_with_discovery_off(
    tmp_path: Path, server: FakeModelServer
) -> None:
    env = Env(tmp_path, server)
    # discovered ones, which -ns / -np leave out
    write(
        env.work / ".agents/skills/found/SKILL.md", "---\nname: found\ndescription: Discovered skill.\n---\nx"
    )
    write(env.work / ".agent-tui/prompts/found.md", "discovered template $1")
    # explicit ones, outside every discovered folder: a skill folder, a lone .md skill, a template file
    write(
        tmp_path / "extra/release/SKILL.md", "---\nname: release\ndescription: Cut a release.\n---\nTag it."
    )
    write(tmp_path / "notes.md", "---\nname: notes\ndescription: Keep notes.\n---\nWrite NOTES.md.")
    write(tmp_path / "tpl/ship.md", "---\ndescription: Ship it\n---\nShip $1 now.")
    server.push(anthropic_stream(text("Shipped.")))
    result = env.run(
        "-p",
        "/ship v2",
        "--skill",
        str(tmp_path / "extra"),
        "--skill",
        "../notes.md",  # relative to the folder agent-tui runs in
        "--skill",
        str(tmp_path / "missing"),
        "--prompt-template",
        str(tmp_path / "tpl"),
        "-ns",
        "-np",
    )
    assert result.returncode == 0, result.stderr
    assert env.user_texts() == ["Ship v2 now."]
    system = system_text(server)
    assert "<name>release</name>" in system and "<name>notes</name>" in system
    assert "<name>found</name>" not in system
    assert f"--skill {tmp_path / 'missing'}: skipped: no such file or folder" in result.stderr

    # a discovered template is not a command with -np: the text goes as typed
    server.push(anthropic_stream(text("ok")))
    again = env.run("-p", "/found x", "-np", "-c")
    assert again.returncode == 0, again.stderr
    assert env.user_texts()[-1] == "/found x"


def test_a_skill_path_loads_after_the_discovered_ones(tmp_path: Path, server: FakeModelServer) -> None:
    env = Env(tmp_path, server)
    write(
        env.work / ".agents/skills/dup/SKILL.md", "---\nname: dup\ndescription: The discovered one.\n---\nA"
    )
    write(tmp_path / "extra/dup/SKILL.md", "---\nname: dup\ndescription: The explicit one.\n---\nB")
    server.push(anthropic_stream(text("ok")))
    result = env.run("-p", "/skill:dup go", "--skill", str(tmp_path / "extra"), "--trust-project")
    assert result.returncode == 0, result.stderr
    assert "The discovered one." in system_text(server) and "The explicit one." not in system_text(server)
    assert f"skill {tmp_path / 'extra/dup/SKILL.md'}: skipped: 'dup' is already" in result.stderr
    assert env.user_texts()[0].endswith("A\n</skill>\n\ngo")


def test_the_app_loads_the_same_paths(tmp_path: Path) -> None:
    import argparse

    from agent_tui.tui.launch import start_loading

    write(
        tmp_path / "extra/release/SKILL.md", "---\nname: release\ndescription: Cut a release.\n---\nTag it."
    )
    write(tmp_path / "tpl/ship.md", "Ship $1 now.")
    work = tmp_path / "work"
    write(work / ".agent-tui/prompts/found.md", "discovered")
    args = argparse.Namespace(
        skill=[str(tmp_path / "extra")], prompt_template=["../tpl/ship.md"], no_prompt_templates=True
    )
    resources = start_loading(args, work, tmp_path / "config" / "config.toml").get()
    assert list(resources.skills) == ["release"] and list(resources.templates) == ["ship"]


def test_acp_takes_the_same_flags() -> None:
    import argparse

    from agent_tui.acp import stdio
    from agent_tui.agent.prompt_files import PromptFlags

    parser = argparse.ArgumentParser(prog="agent-tui")
    stdio.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(
        ["acp", "--skill", "a", "--skill", "b", "-ns", "--prompt-template", "t.md", "-np"]
    )
    flags = PromptFlags.of(args)
    assert (flags.skill_paths, flags.no_skills, flags.template_paths, flags.no_templates) == (
        ("a", "b"),
        True,
        ("t.md",),
        True,
    )

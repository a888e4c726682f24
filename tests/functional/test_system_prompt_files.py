"""SYSTEM.md / APPEND_SYSTEM.md and the prompt flags: which file wins, how they reach the model
through the system message's sections, and that they survive compaction and a branch.
Every test uses its own home and config folders."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agent_tui.agent.events import CompactionFinished
from agent_tui.agent.prompt_files import Places, PromptFileError, PromptFlags, system_prompt_files
from agent_tui.agent.resources import Resources, load_resources
from agent_tui.config import CompactionConfig
from agent_tui.projection.compaction import CompactionSettings
from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.files import write


def make_places(tmp_path: Path) -> Places:
    for name in ("home", "project", "config"):
        (tmp_path / name).mkdir(exist_ok=True)
    return Places(tmp_path / "project", tmp_path / "home", tmp_path / "config")


def test_the_project_file_wins_then_agent_tui_before_pi(tmp_path: Path) -> None:
    p = make_places(tmp_path)
    pi_user = write(p.home / ".pi/agent/SYSTEM.md", "pi user")
    assert system_prompt_files(p).custom_source == str(pi_user)
    ours = write(p.config_dir / "SYSTEM.md", "agent-tui user")  # type: ignore[operator]
    assert system_prompt_files(p).custom == "agent-tui user" and system_prompt_files(p).custom_source == str(
        ours
    )
    write(p.cwd / ".pi/SYSTEM.md", "pi project")
    assert system_prompt_files(p).custom == "pi project"
    write(p.cwd / ".agent-tui/SYSTEM.md", "agent-tui project")
    write(p.home / ".pi/agent/APPEND_SYSTEM.md", "also this")
    files = system_prompt_files(p)
    assert files.custom == "agent-tui project"
    assert files.appends == ("also this",) and files.append_sources == (
        str(p.home / ".pi/agent/APPEND_SYSTEM.md"),
    )


def test_flags_win_over_the_files_and_take_text_or_a_file(tmp_path: Path) -> None:
    p = make_places(tmp_path)
    write(p.cwd / ".agent-tui/SYSTEM.md", "from the file")
    write(p.cwd / ".agent-tui/APPEND_SYSTEM.md", "appended file")
    extra = write(p.cwd / "extra.md", "extra rules")
    flags = PromptFlags("You are terse.", ("@extra.md", "one more", "extra.md"), no_context_files=True)
    files = system_prompt_files(p, flags)
    assert files.custom == "You are terse." and files.custom_source == "--system-prompt"
    assert files.appends == ("extra rules", "one more", "extra rules")  # @FILE, text, a bare path (pi's rule)
    assert files.append_sources == (str(extra), "--append-system-prompt", str(extra))
    assert files.context_files is False
    with pytest.raises(PromptFileError, match=r"--system-prompt @missing\.md"):
        system_prompt_files(p, PromptFlags("@missing.md"))
    for odd in ("no\x00path", "x" * 300):  # not a possible file name: text, never an error
        assert system_prompt_files(p, PromptFlags(odd)).custom == odd


def test_an_empty_system_md_keeps_the_default_prompt(tmp_path: Path) -> None:
    p = make_places(tmp_path)
    write(p.cwd / ".agent-tui/SYSTEM.md", "  \n")
    assert system_prompt_files(p).custom is None


def system_text(anthropic_harness: Harness) -> str:
    return prepare(project(anthropic_harness.session.index).messages).system


async def test_system_md_replaces_the_default_and_append_and_skills_follow_it(
    anthropic_harness: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    write(anthropic_harness.workdir / ".agent-tui/SYSTEM.md", "You are a release engineer.")
    write(anthropic_harness.workdir / ".pi/APPEND_SYSTEM.md", "Always cite the file.")
    write(anthropic_harness.workdir / "AGENTS.md", "Use tabs.")
    write(home / ".agents/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Ship it.\n---\nsteps")
    anthropic_harness.loop.resources = load_resources(  # a trusted folder: its own files load
        anthropic_harness.workdir, tmp_path / "config", env={"HOME": str(home)}, trust_project=True
    )
    server.push(anthropic_stream(text("ok")))
    await anthropic_harness.run("hi")
    prompt = server.requests[0].body["system"][0]["text"]
    assert prompt.startswith("You are a release engineer.")
    assert "agent-tui, a terminal coding agent" not in prompt  # the default preamble is replaced
    assert "<addendum>\nAlways cite the file.\n</addendum>" in prompt
    assert "Use tabs." in prompt and "<name>deploy</name>" in prompt and "<cwd>" in prompt
    system = anthropic_harness.messages("system")[0]
    assert list(system["sections"]) == ["preamble", "addendum", "project_context", "skills", "cwd"]
    anthropic_harness.assert_requests_match_context()


async def test_no_context_files_leaves_agents_md_out(
    anthropic_harness: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    write(anthropic_harness.workdir / "AGENTS.md", "Use tabs.")
    anthropic_harness.loop.resources = load_resources(
        anthropic_harness.workdir,
        tmp_path / "config",
        flags=PromptFlags(no_context_files=True),
        env={"HOME": str(tmp_path)},
    )
    server.push(anthropic_stream(text("ok")))
    await anthropic_harness.run("hi")
    assert "Use tabs." not in server.requests[0].body["system"][0]["text"]


async def test_the_prompt_parts_survive_compaction_and_a_branch_from_before_them(
    anthropic_harness: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    anthropic_harness.config = replace(
        anthropic_harness.config, compaction=CompactionConfig(CompactionSettings(keep_recent_tokens=1))
    )
    anthropic_harness.loop = anthropic_harness.new_loop()
    # (a first turn long enough that its summary makes the context smaller: else it is refused)
    server.push(anthropic_stream(text("first " + "the reply goes on " * 40)))
    await anthropic_harness.run("before any user files " + "and a long question " * 40)  # default prompt
    early_leaf = anthropic_harness.session.index.leaf_id
    home = tmp_path / "home"
    write(anthropic_harness.workdir / ".agent-tui/APPEND_SYSTEM.md", "Mind the release notes.")
    write(home / ".claude/skills/notes/SKILL.md", "---\nname: notes\ndescription: Release notes.\n---\nx")
    anthropic_harness.loop.resources = load_resources(  # a trusted folder: its own files load
        anthropic_harness.workdir, tmp_path / "config", env={"HOME": str(home)}, trust_project=True
    )
    server.push(anthropic_stream(text("second")))
    await anthropic_harness.run("now with them")
    patch = anthropic_harness.messages("system")[-1]["sections"]
    assert set(patch) == {"addendum", "skills"}  # only what changed is appended
    # one summary: the latest turn (its question and reply) is kept whole, not split
    server.push(anthropic_stream(text("## Goal\nsummary")))
    events = [e async for e in anthropic_harness.loop.compact()]
    assert [e for e in events if isinstance(e, CompactionFinished)], events
    after = system_text(anthropic_harness)
    assert "Mind the release notes." in after and "<name>notes</name>" in after
    # A branch from before the parts were added: the next turn brings them back on that branch.
    assert early_leaf is not None
    anthropic_harness.session.branch(early_leaf)
    assert "Mind the release notes." not in system_text(anthropic_harness)
    server.push(anthropic_stream(text("third")))
    await anthropic_harness.run("on the old branch")
    assert "Mind the release notes." in server.requests[-1].body["system"][0]["text"]
    assert server.pending == 0


def test_describe_names_the_files_loaded(tmp_path: Path) -> None:
    p = make_places(tmp_path)
    system = write(p.cwd / ".agent-tui/SYSTEM.md", "custom")
    write(p.cwd / ".agent-tui/prompts/review.md", "r")
    write(p.home / ".agents/skills/x/SKILL.md", "---\nname: x\ndescription: y\n---\n")
    write(p.home / ".agents/skills/bad/SKILL.md", "---\nname: [\n---\n")
    resources = load_resources(p.cwd, p.config_dir, env={"HOME": str(p.home)}, trust_project=True)
    lines = resources.describe()
    assert f"system prompt: {system}" in lines
    assert "prompt templates (1): /review" in lines and "skills (1): x" in lines
    assert any(line.startswith("warning: skill ") and "bad/SKILL.md" in line for line in lines)
    assert resources.summary() == "prompt SYSTEM.md · 1 template · 1 skill"
    assert Resources().describe() == ["system prompt: the default"]

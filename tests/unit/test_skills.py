"""Skills (Agent Skills' SKILL.md): where they are found, what their frontmatter must hold, what
the system prompt lists and what ``/skill:name`` sends. Every test uses its own home folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent_tui.agent.prompt_files import Places
from agent_tui.agent.skills import expand_skill, load_skills, skills_prompt


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill(
    folder: Path, name: str, description: str = "Does a thing. Use when asked.", extra: str = ""
) -> Path:
    return write(
        folder / name / "SKILL.md",
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nStep one.\n",
    )


def make_places(tmp_path: Path) -> Places:
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "repo/sub").mkdir(parents=True, exist_ok=True)
    return Places(tmp_path / "repo/sub", tmp_path / "home", tmp_path / "config")


def test_skills_are_found_in_every_ecosystem_folder(tmp_path: Path) -> None:
    p = make_places(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    skill(p.cwd / ".agent-tui/skills", "ours")
    skill(p.cwd / ".pi/skills", "pi-project")
    skill(tmp_path / "repo/.agents/skills", "at-the-repo-root")  # a parent, up to the repo's root
    skill(tmp_path / ".agents/skills", "above-the-repo")  # beyond the repo root: not read
    skill(p.cwd / ".claude/skills", "claude-project")
    skill(tmp_path / "config/skills/group", "nested")  # found below a plain folder
    skill(p.home / ".pi/agent/skills", "pi-user")
    skill(p.home / ".agents/skills", "agents-user")
    skill(p.home / ".claude/skills", "claude-user")
    skills, warnings = load_skills(p)
    assert warnings == []
    assert [s.name for s in skills] == [
        "ours",
        "pi-project",
        "at-the-repo-root",
        "claude-project",
        "nested",
        "pi-user",
        "agents-user",
        "claude-user",
    ]


def test_malformed_frontmatter_is_one_warning_naming_the_file_and_the_skill_is_skipped(
    tmp_path: Path,
) -> None:
    p = make_places(tmp_path)
    broken = write(
        p.home / ".claude/skills/broken/SKILL.md", "---\nname: broken\ndescription: a: b: c\n---\n"
    )
    listed = write(p.home / ".claude/skills/listed/SKILL.md", "---\n- just\n- a list\n---\n")
    nodesc = write(p.home / ".claude/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nbody\n")
    skill(p.home / ".claude/skills", "fine")
    skills, warnings = load_skills(p)
    assert [s.name for s in skills] == ["fine"]
    assert len(warnings) == 3
    for path, words in ((broken, "YAML"), (listed, "not a mapping"), (nodesc, "no description")):
        line = next(w for w in warnings if str(path) in w)
        assert words in line and "skipped" in line and "\n" not in line


def test_a_name_outside_the_spec_warns_but_loads_and_a_missing_name_is_the_folder(tmp_path: Path) -> None:
    p = make_places(tmp_path)
    write(p.home / ".agents/skills/Odd_Name/SKILL.md", "---\ndescription: odd\n---\n")
    skills, warnings = load_skills(p)
    assert [s.name for s in skills] == ["Odd_Name"]
    assert len(warnings) == 1 and "lowercase" in warnings[0]


def test_the_first_found_wins_a_name_with_one_warning(tmp_path: Path) -> None:
    p = make_places(tmp_path)
    project = skill(p.cwd / ".claude/skills", "dup", "project's")
    user = skill(p.home / ".claude/skills", "dup", "user's")
    skills, warnings = load_skills(p)
    assert [(s.name, s.path) for s in skills] == [("dup", str(project))]
    assert len(warnings) == 1 and str(user) in warnings[0] and str(project) in warnings[0]


def test_only_name_description_and_path_reach_the_prompt_and_hidden_skills_stay_out(tmp_path: Path) -> None:
    p = make_places(tmp_path)
    shown = skill(p.home / ".agents/skills", "pdf-tools", "Extract <tables> & text from PDFs.")
    skill(p.home / ".agents/skills", "deploy", "Deploys.", "disable-model-invocation: true\n")
    skills, _ = load_skills(p)
    prompt = skills_prompt(skills, ["read", "bash"])
    assert prompt is not None
    assert "<name>pdf-tools</name>" in prompt and f"<location>{shown}</location>" in prompt
    assert "Extract &lt;tables&gt; &amp; text from PDFs." in prompt  # escaped: data, not tags
    assert "Step one." not in prompt  # the body is read by the model when it decides to
    assert "deploy" not in prompt
    assert "Use the read tool" in prompt
    assert skills_prompt(skills, ["ls"]) is None  # no tool could read a skill
    assert skills_prompt([s for s in skills if s.name == "deploy"], ["read"]) is None


def test_skill_command_sends_the_body_then_the_arguments(tmp_path: Path) -> None:
    p = make_places(tmp_path)
    path = skill(p.home / ".agents/skills", "deploy", "Deploys.", "disable-model-invocation: true\n")
    skills = {s.name: s for s in load_skills(p)[0]}
    out = expand_skill("/skill:deploy to staging", skills)
    assert out == (
        f'<skill name="deploy" location="{path}">\nReferences are relative to {path.parent}.\n\n'
        "# deploy\n\nStep one.\n</skill>\n\nto staging"
    )
    assert expand_skill("/skill:deploy", skills) == out.split("\n\nto staging")[0]
    assert expand_skill("/skill:unknown x", skills) is None
    assert expand_skill("/deploy", skills) is None

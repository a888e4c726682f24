"""Prompt templates: pi's argument splitting and substitution, and where template files are found.

Every test builds its own home and project folders: nothing reads the real ``~``."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.agent.prompt_files import Places
from agent_tui.agent.resources import load_resources
from agent_tui.agent.templates import expand, load_templates, split_args, substitute


@pytest.mark.parametrize(
    ("typed", "args"),
    [
        ("a b  c", ["a", "b", "c"]),
        ('"API compatibility" now', ["API compatibility", "now"]),
        ("'single quoted' x", ["single quoted", "x"]),
        ("doesn't matter", ["doesn't", "matter"]),  # a quote inside a word is text
        ('"the \\"fast\\" path"', ['the "fast" path']),  # backslash before the same quote
        ('"a\\b"', ["a\\b"]),  # other backslashes stay as typed
        ('"unclosed and more', ['"unclosed', "and", "more"]),  # an unclosed quote is text
        ('"" x', ["", "x"]),  # an empty quoted argument is kept
        ("", []),
        ("  \n ", []),
    ],
)
def test_arguments_split_as_pi_splits_them(typed: str, args: list[str]) -> None:
    assert split_args(typed) == args


@pytest.mark.parametrize(
    ("body", "args", "out"),
    [
        ("Review $1 then $2.", ["a.py", "b.py"], "Review a.py then b.py."),
        ("All: $@ / $ARGUMENTS", ["x", "y z"], "All: x y z / x y z"),
        ("Focus on ${1:-correctness}.", [], "Focus on correctness."),
        ("Focus on ${1:-correctness}.", ["speed"], "Focus on speed."),
        ("Focus on ${1:-correctness}.", [""], "Focus on correctness."),  # empty takes the default
        ("${@:-everything}", [], "everything"),
        ("${@:2}", ["a", "b", "c"], "b c"),
        ("${@:2:1}", ["a", "b", "c"], "b"),
        ("${@:0}", ["a", "b"], "a b"),  # 0 counts as 1 (bash)
        ("missing: [$3]", ["a"], "missing: []"),
        ("$1", ["$2 is literal"], "$2 is literal"),  # values are not substituted again
        ("costs $ 5 and $$", ["a"], "costs $ 5 and $$"),
    ],
)
def test_substitution_follows_pi(body: str, args: list[str], out: str) -> None:
    assert substitute(body, args) == out


def places(tmp_path: Path) -> Places:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    return Places(project, home, tmp_path / "config")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_templates_come_from_every_folder_with_frontmatter_or_the_first_line(tmp_path: Path) -> None:
    p = places(tmp_path)
    write(
        p.cwd / ".agent-tui/prompts/review.md",
        '---\ndescription: Review staged changes\nargument-hint: "[focus]"\n---\nReview. Focus on ${1:-bugs}.\n',
    )
    write(p.cwd / ".pi/prompts/pi-one.md", "\n\nFirst line of pi's template\nmore\n")
    write(p.cwd / ".claude/commands/frontend/component.md", "Make a component named $ARGUMENTS")
    write(tmp_path / "config/prompts/mine.md", "mine")
    write(p.home / ".pi/agent/prompts/pi-user.md", "pi user")
    write(p.home / ".claude/commands/cc-user.md", "---\ndescription: Claude Code's\n---\nbody")
    write(p.home / ".claude/commands/notes.txt", "not markdown")
    templates, warnings = load_templates(p)
    assert warnings == []
    assert set(templates) == {"review", "pi-one", "component", "mine", "pi-user", "cc-user"}
    review = templates["review"]
    assert review.description == "Review staged changes" and review.usage == "/review [focus]"
    assert templates["pi-one"].description == "First line of pi's template"
    assert templates["cc-user"].description == "Claude Code's"
    assert expand("/review", templates) == "Review. Focus on bugs."
    assert expand('/review "error handling"', templates) == "Review. Focus on error handling."
    assert expand("/component Nav Bar", templates) == "Make a component named Nav Bar"
    assert expand("/nothing here", templates) is None
    assert expand("plain text", templates) is None


def test_the_project_wins_a_name_and_a_built_in_beats_any_template(tmp_path: Path) -> None:
    p = places(tmp_path)
    write(p.cwd / ".agent-tui/prompts/fix.md", "project fix")
    user = write(p.home / ".claude/commands/fix.md", "user fix")
    builtin = write(p.cwd / ".pi/prompts/compact.md", "not the built-in")
    templates, warnings = load_templates(p, reserved={"compact", "model"})
    assert templates["fix"].body == "project fix"
    assert "compact" not in templates
    assert len(warnings) == 2
    assert any(str(user) in w and "/fix is already" in w for w in warnings)
    assert any(str(builtin) in w and "/compact is a built-in command" in w for w in warnings)
    assert all("\n" not in w for w in warnings)


def test_a_template_with_broken_frontmatter_is_one_warning_and_the_others_load(tmp_path: Path) -> None:
    p = places(tmp_path)
    bad = write(p.cwd / ".agent-tui/prompts/bad.md", "---\ndescription: [unclosed\n---\nbody")
    write(p.cwd / ".agent-tui/prompts/good.md", "good $1")
    templates, warnings = load_templates(p)
    assert list(templates) == ["good"]
    assert len(warnings) == 1 and str(bad) in warnings[0] and "YAML" in warnings[0]


def test_the_frontmatter_is_not_part_of_the_expansion_and_crlf_files_work(tmp_path: Path) -> None:
    p = places(tmp_path)
    write(
        p.cwd / ".agent-tui/prompts/t.md", "\ufeff---\r\ndescription: d\r\n---\r\nLine one $1\r\nLine two\r\n"
    )
    templates, _ = load_templates(p)
    assert expand("/t x", templates) == "Line one x\nLine two"


def test_skill_commands_and_templates_expand_through_the_resources(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    write(project / ".agent-tui/prompts/hello.md", "Hello $1")
    resources = load_resources(project, tmp_path / "config", env={"HOME": str(home)}, trust_project=True)
    assert resources.expand("/hello world") == "Hello world"
    assert resources.expand("//hello world") is None  # //text sends /text, never a template
    assert resources.expand("hello") is None
    assert "hello" in resources.command_names()


def readme_blocks() -> list[str]:
    """The Markdown code blocks of the README's "Extending agent-tui" section."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Extending agent-tui", 1)[1].split("\n## ", 1)[0]
    return [block.split("\n", 1)[1] for block in section.split("```markdown")[1:]]


def test_the_readme_examples_load_and_expand_as_it_says(tmp_path: Path) -> None:
    from agent_tui.agent.skills import load_skill

    template, skill_file = (block.split("\n```", 1)[0] + "\n" for block in readme_blocks()[:2])
    p = places(tmp_path)
    write(tmp_path / "config/prompts/review.md", template)
    templates, warnings = load_templates(p)
    assert warnings == [] and templates["review"].usage == "/review <path> [focus]"
    out = expand('/review src/parser.py "error handling"', templates)
    assert out is not None and out.startswith("Review src/parser.py. Focus on error handling.")
    skill, problems = load_skill(write(tmp_path / "skills/release-notes/SKILL.md", skill_file))
    assert problems == [] and skill is not None and skill.name == "release-notes"

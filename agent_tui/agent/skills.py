"""Skills in the Agent Skills format: a folder whose ``SKILL.md`` has a ``name`` and a ``description``.

Only each skill's name, description and path go into the system prompt (its ``skills``
section, so the replay keeps it through compaction and branches); the model reads the file
with ``read`` when a task matches. ``/skill:name ARGS`` loads one explicitly: its body becomes
the user message, the arguments after it (pi's expansion). ``disable-model-invocation: true``
keeps a skill out of the prompt (``/skill:name`` still loads it).

Folders, first found wins a name (project before user, as pi orders them):
``.agent-tui/skills/``, ``.pi/skills/``, ``.agents/skills/`` of the cwd and each parent up to the
repository's root, ``.claude/skills/``; then the user config dir's ``skills/``,
``~/.pi/agent/skills/``, ``~/.agents/skills/``, ``~/.claude/skills/``. A folder holding
``SKILL.md`` is a skill (not searched further); other folders are searched below it. Then pi's
``--skill PATH`` (repeatable: a folder searched the same way, or one ``.md`` file), which still load
with ``--no-skills`` (no folder above is searched then).

A SKILL.md whose frontmatter does not parse, or that has no description, is skipped with one
warning naming the file; a name outside the spec (lowercase letters, digits, single hyphens,
64 characters) is a warning but the skill loads, as in pi.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_tui.agent.prompt_files import FrontmatterError, Places, flag_files, parse_frontmatter, read_text

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_DEPTH = 4  # folders below a skills folder searched for SKILL.md
MAX_FOLDERS = 2000  # per skills folder: a link to a huge tree must not stall the start
_VALID_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    path: str  # the SKILL.md
    model_invocable: bool = True  # False: disable-model-invocation, only /skill:name loads it
    #: The SKILL.md's text as accepted (agent.prompt_trust): /skill:name refuses a file changed since
    sha256: str | None = None

    @property
    def base_dir(self) -> str:
        return os.path.dirname(self.path)


def _git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def skill_dirs(places: Places) -> list[Path]:
    """The skills folders, in the order that decides a name."""
    cwd = places.cwd.resolve()
    root = _git_root(cwd)
    ancestors: list[Path] = []
    for folder in (cwd, *cwd.parents):
        ancestors.append(folder / ".agents" / "skills")
        if folder == root:
            break
    user_agents = places.home / ".agents" / "skills"
    return [
        *(d / "skills" for d in places.project_dirs()),
        *(d for d in ancestors if d != user_agents),
        places.cwd / ".claude" / "skills",
        *(d / "skills" for d in places.user_dirs()),
        user_agents,
        places.home / ".claude" / "skills",
    ]


def _skill_files(folder: Path) -> list[Path]:
    """Every ``SKILL.md`` under ``folder``: a folder holding one is not searched further; hidden
    folders and ``node_modules`` are skipped; at most :data:`MAX_DEPTH` levels down."""
    found: list[Path] = []
    visited = 0
    stack: list[tuple[Path, int]] = [(folder, 0)]
    while stack and visited < MAX_FOLDERS:
        current, depth = stack.pop()
        visited += 1
        candidate = current / "SKILL.md"
        try:
            if candidate.is_file():
                found.append(candidate)
                continue
            names = sorted(os.listdir(current), reverse=True)
        except OSError:
            continue
        if depth >= MAX_DEPTH:
            continue
        for name in names:
            if name.startswith(".") or name == "node_modules":
                continue
            child = current / name
            try:
                if child.is_dir():
                    stack.append((child, depth + 1))
            except OSError:
                continue
    return found


def load_skill(path: Path) -> tuple[Skill | None, list[str]]:
    """One SKILL.md: the skill (None when it must be skipped) and its warnings."""
    try:
        meta, _ = parse_frontmatter(read_text(path))
    except OSError as e:
        return None, [f"skill {path}: skipped: {e.strerror or e}"]
    except FrontmatterError as e:
        return None, [f"skill {path}: skipped: {e}"]
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        return None, [f"skill {path}: skipped: its frontmatter has no description"]
    name = meta.get("name")
    name = name.strip() if isinstance(name, str) and name.strip() else path.parent.name
    warnings: list[str] = []
    if len(name) > MAX_NAME or not _VALID_NAME.match(name):
        warnings.append(
            f"skill {path}: the name {name!r} is not lowercase letters, digits and single hyphens "
            f"(at most {MAX_NAME})"
        )
    if len(description) > MAX_DESCRIPTION:
        warnings.append(f"skill {path}: the description is over {MAX_DESCRIPTION} characters")
    if any(c.isspace() for c in name):
        return None, [*warnings, f"skill {path}: skipped: /skill:{name} would hold a space"]
    invocable = meta.get("disable-model-invocation") is not True
    return Skill(name, " ".join(description.split()), str(path), invocable), warnings


def load_skills(
    places: Places, folders: Collection[Path] | None = None, *, paths: Sequence[str] = ()
) -> tuple[list[Skill], list[str]]:
    """Every skill (first found wins a name), and one warning line per problem. ``folders``: the
    folders searched (None: :func:`skill_dirs`; empty: ``--no-skills``); ``paths``: pi's ``--skill``
    paths, after them (a folder is searched as a skills folder, a ``.md`` file is one skill)."""
    skills: dict[str, Skill] = {}
    warnings: list[str] = []
    seen: set[str] = set()

    def add(path: Path) -> None:
        real = os.path.realpath(path)
        if real in seen:
            return
        seen.add(real)
        skill, problems = load_skill(path)
        warnings.extend(problems)
        if skill is None:
            return
        if skill.name in skills:
            warnings.append(f"skill {path}: skipped: {skill.name!r} is already {skills[skill.name].path}")
            return
        skills[skill.name] = skill

    for folder in folders if folders is not None else skill_dirs(places):
        if folder.is_dir():
            for path in _skill_files(folder):
                add(path)
    for path in flag_files(paths, places.cwd, "--skill", _skill_files, warnings):
        add(path)
    return list(skills.values()), warnings


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def skills_prompt(skills: Collection[Skill], tool_names: Collection[str]) -> str | None:
    """The system prompt's list of skills the model may load (pi's wording and XML), or None when
    there are none, or no tool could read them."""
    visible = [s for s in skills if s.model_invocable]
    reader = "read" if "read" in tool_names else "bash" if "bash" in tool_names else None
    if not visible or reader is None:
        return None
    lines = [
        "The following skills provide specialized instructions for specific tasks.",
        "Use the read tool to load a skill's file when the task matches its description."
        if reader == "read"
        else "Use bash to load a skill's file when the task matches its description.",
        "Resolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{_escape(skill.name)}</name>",
            f"    <description>{_escape(skill.description)}</description>",
            f"    <location>{_escape(skill.path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


class SkillError(Exception):
    """``/skill:name``'s file cannot be read any more; the message names it."""


def expand_skill(text: str, skills: dict[str, Skill]) -> str | None:
    """``/skill:name ARGS`` as the user message pi sends: the skill's body in a ``<skill>`` block,
    then the arguments; None when ``text`` names no known skill. Raises SkillError."""
    if not text.startswith("/skill:"):
        return None
    head, _, args = text.partition(" ")
    skill = skills.get(head.removeprefix("/skill:"))
    if skill is None:
        return None
    try:
        text = read_text(Path(skill.path))
        _, body = parse_frontmatter(text)
    except (OSError, FrontmatterError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise SkillError(f"/skill:{skill.name}: {skill.path}: {reason}") from e
    if skill.sha256 is not None and hashlib.sha256(text.encode("utf-8")).hexdigest() != skill.sha256:
        raise SkillError(
            f"/skill:{skill.name}: {skill.path}: changed since it was loaded (not sent): "
            "/reload to review the change"
        )
    block = (
        f'<skill name="{_escape(skill.name)}" location="{_escape(skill.path)}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body.strip()}\n</skill>"
    )
    args = args.strip()
    return f"{block}\n\n{args}" if args else block


__all__ = ["Skill", "SkillError", "expand_skill", "load_skill", "load_skills", "skill_dirs", "skills_prompt"]

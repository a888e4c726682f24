"""Subagent types: what the ``task`` tool can start (Claude Code's ``.claude/agents/*.md``).

A type is a Markdown file whose YAML frontmatter names it (``name``), says when to use it
(``description``), optionally limits its tools (``tools``: a comma list, or a YAML list) and its
model (``model``; ``inherit`` and Claude Code's aliases ``sonnet``/``opus``/``haiku`` keep the
parent's); the body is its system prompt. Looked for, first found wins a name:

- the project's ``.agent-tui/agents/*.md`` then ``.claude/agents/*.md`` (only in a trusted folder:
  a repository's file would otherwise choose the prompt of a model that runs tools),
- the user's ``~/.claude/agents/*.md`` and agent-tui's config dir ``agents/*.md``,
- the built-in ``general-purpose`` type (all the parent's tools but ``task``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_tui.agent.prompt_files import FrontmatterError, parse_frontmatter, read_text

GENERAL_PURPOSE = "general-purpose"

GENERAL_PROMPT = (
    "You are a subagent of agent-tui, a terminal coding agent: another agent handed you one task. "
    "Do it with the tools you have, then answer with what you found or did, concisely and completely: "
    "your final reply is all the other agent will read (it cannot see your tool calls)."
)

#: Claude Code's model aliases: a type naming one runs on the parent's model.
MODEL_ALIASES = frozenset({"inherit", "sonnet", "opus", "haiku", ""})


@dataclass(frozen=True, slots=True)
class AgentType:
    name: str
    description: str
    prompt: str  # the system prompt (the file's body)
    tools: tuple[str, ...] | None = None  # None: the parent's tools but ``task``
    model: str | None = None  # None: the parent's
    source: str = "built-in"  # the file it came from


BUILTIN = AgentType(
    GENERAL_PURPOSE,
    "General-purpose agent for researching complex questions, searching for code, and executing "
    "multi-step tasks. Use it when a search or a piece of work may take several steps.",
    GENERAL_PROMPT,
)


def type_dirs(
    cwd: str | Path, home: str | Path, config_dir: str | Path | None, *, trusted: bool
) -> list[Path]:
    """The folders types are read from, in order (the first found wins a name)."""
    cwd, home = Path(cwd), Path(home)
    project = [cwd / ".agent-tui" / "agents", cwd / ".claude" / "agents"] if trusted else []
    user = [home / ".claude" / "agents"]
    if config_dir is not None:
        user.append(Path(config_dir) / "agents")
    return [*project, *user]


def parse_type(path: Path, text: str) -> AgentType:
    """One type file. Raises ValueError naming what is wrong."""
    try:
        meta, body = parse_frontmatter(text)
    except FrontmatterError as e:
        raise ValueError(str(e)) from e
    name = meta.get("name") if isinstance(meta.get("name"), str) else path.stem
    name = str(name).strip()
    if not name or any(c.isspace() for c in name):
        raise ValueError(f"the name {name!r} is empty or holds a space")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("no description in the frontmatter")
    if not body.strip():
        raise ValueError("no system prompt (the body after the frontmatter is empty)")
    raw_tools = meta.get("tools")
    tools: tuple[str, ...] | None
    if raw_tools is None:
        tools = None
    elif isinstance(raw_tools, str):
        tools = tuple(t.strip() for t in raw_tools.split(",") if t.strip())
    elif isinstance(raw_tools, list):
        tools = tuple(str(t).strip() for t in raw_tools if str(t).strip())
    else:
        raise ValueError("tools is neither a comma list nor a list")
    model = meta.get("model")
    model = str(model).strip() if model is not None else None
    if model in MODEL_ALIASES:
        model = None
    return AgentType(name, " ".join(description.split()), body.strip(), tools, model, str(path))


def load_agent_types(
    cwd: str | Path, home: str | Path, config_dir: str | Path | None = None, *, trusted: bool = False
) -> tuple[list[AgentType], list[str]]:
    """Every type (the built-in one last unless a file takes its name) and one warning per bad file."""
    return load_from(type_dirs(cwd, home, config_dir, trusted=trusted))


def load_from(folders: Sequence[Path]) -> tuple[list[AgentType], list[str]]:
    found: dict[str, AgentType] = {}
    warnings: list[str] = []
    for folder in folders:
        try:
            files = sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
        except OSError:
            continue
        for path in files:
            try:
                kind = parse_type(path, read_text(path))
            except (OSError, ValueError) as e:
                warnings.append(f"agent type {path}: skipped: {e}")
                continue
            if kind.name in found:
                continue
            found[kind.name] = kind
    found.setdefault(BUILTIN.name, BUILTIN)
    return list(found.values()), warnings


def type_lines(types: Sequence[AgentType]) -> list[str]:
    """One line per type (``/agents``): name, where from, tools, description."""
    lines = []
    for t in types:
        tools = ", ".join(t.tools) if t.tools is not None else "all but task"
        model = f"; model {t.model}" if t.model else ""
        lines.append(f"{t.name} ({t.source}; tools: {tools}{model}): {t.description}")
    return lines


def agents_text(types: Sequence[AgentType], warnings: Sequence[str], *, trusted: bool) -> str:
    """``/agents``: every type, one line each, then what was skipped and why."""
    lines = ["Subagent types (the task tool's subagent_type):", *(f"- {line}" for line in type_lines(types))]
    if not trusted:
        lines.append("(this folder is not trusted: its .claude/agents and .agent-tui/agents are not loaded)")
    lines += [f"warning: {w}" for w in warnings]
    return "\n".join(lines)


__all__ = [
    "BUILTIN",
    "GENERAL_PURPOSE",
    "AgentType",
    "agents_text",
    "load_agent_types",
    "load_from",
    "parse_type",
    "type_dirs",
    "type_lines",
]

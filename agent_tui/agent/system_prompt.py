"""The system prompt: a template (or the user's SYSTEM.md), the tools, the user's additions, the
project's AGENTS.md / CLAUDE.md, the skills the model may load, and the cwd.

It is stored in the session the way pi 1.6 stores it: ``system`` messages whose
``sections`` patch the prompt by name (``null`` removes a section) and whose
``toolsAdded`` / ``toolsRemoved`` change the declared tools.
:func:`system_update` compares what the current projection already declares
(replayed by :func:`agent_tui.projection.request.system_prompt`) with what it
should be, and returns the message to append, or None when nothing changed.
Compaction snapshots the replayed message, so the prompt survives it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_tui.agent.prompt_files import context_dirs, foreign_writable
from agent_tui.agent.tools.base import Tool
from agent_tui.projection.request import system_prompt
from agent_tui.store.clock import now_ms

JSONObject = dict[str, Any]

CONTEXT_FILE_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")

PREAMBLE = (
    "You are an expert coding assistant running inside agent-tui, a terminal coding agent. You help users by "
    "reading files, running commands, editing code, and writing new files."
)

BASE_RULES = (
    "Read files before changing them, and keep changes focused on what was asked",
    "Be concise in your responses",
    "Show file paths clearly when working with files",
)


@dataclass(frozen=True, slots=True)
class ContextFile:
    path: str
    content: str


def context_files(
    cwd: str | Path, global_dir: str | Path | None = None, *, project: bool = True
) -> list[ContextFile]:
    """The global AGENTS.md (in ``global_dir``), then one context file per directory from the
    repository's root (or home) down to cwd (see :func:`agent_tui.agent.prompt_files.context_dirs`);
    ``project=False``: the global one only (a folder the user answered "not trusted")."""
    found: list[ContextFile] = []
    seen: set[str] = set()

    def load(directory: Path) -> ContextFile | None:
        for name in CONTEXT_FILE_NAMES:
            candidate = directory / name
            try:
                if candidate.is_file() and foreign_writable(candidate) is None:
                    text = candidate.read_text(encoding="utf-8", errors="replace")
                    return ContextFile(str(candidate), text.removeprefix("\ufeff"))
            except OSError:
                continue
        return None

    if global_dir is not None:
        file = load(Path(global_dir))
        if file is not None:
            found.append(file)
            seen.add(os.path.realpath(file.path))
    ancestors: list[ContextFile] = []
    for current in context_dirs(cwd) if project else []:  # up to the root or home, none others can write
        file = load(current)
        if file is not None and os.path.realpath(file.path) not in seen:
            ancestors.append(file)
            seen.add(os.path.realpath(file.path))
    return found + ancestors


def build_sections(
    cwd: str,
    tools: Sequence[Tool],
    files: Sequence[ContextFile],
    *,
    custom: str | None = None,
    append: str = "",
    skills: str | None = None,
) -> dict[str, str]:
    """The prompt as named sections, in pi's order; every section but the preamble is wrapped in a
    tag, as pi does. ``custom`` (SYSTEM.md, --system-prompt) replaces the preamble, the tool list and
    the rules; ``append`` (APPEND_SYSTEM.md, --append-system-prompt) is the ``addendum``; ``skills``
    the list of skills the model may load."""
    parts: dict[str, str] = {}
    if custom is None:
        listed = [f"- {t.name}: {t.snippet}" for t in tools if t.snippet]
        rules: list[str] = []
        for rule in [g for t in tools for g in t.guidelines] + list(BASE_RULES):
            if rule.strip() and rule.strip() not in rules:
                rules.append(rule.strip())
        parts["tools"] = "\n".join(listed) if listed else "(none)"
        parts["rules"] = "\n".join(f"- {r}" for r in rules)
    if append.strip():
        parts["addendum"] = append
    if files:
        parts["project_context"] = "\n\n".join(
            [
                "Project-specific instructions and guidelines:",
                *(
                    f'<project_instructions path="{f.path}">\n{f.content}\n</project_instructions>'
                    for f in files
                ),
            ]
        )
    if skills:
        parts["skills"] = skills
    parts["cwd"] = cwd.replace("\\", "/")
    sections = {"preamble": custom if custom is not None else PREAMBLE}
    for name, content in parts.items():
        sections[name] = f"<{name}>\n{content}\n</{name}>"
    return sections


def current_sections(system_messages: Sequence[JSONObject]) -> dict[str, str]:
    """The sections the model has now: every system message's patch replayed in order."""
    sections: dict[str, str] = {}
    for message in system_messages:
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            elif isinstance(value, str):
                sections[name] = value
    return sections


def system_update(
    system_messages: Sequence[JSONObject], sections: dict[str, str], tools: Sequence[JSONObject]
) -> JSONObject | None:
    """The system message that brings the projection's prompt and tools to ``sections`` and ``tools``, or None."""
    _, current_tools = system_prompt(system_messages)
    have = current_sections(system_messages)
    patch: dict[str, str | None] = {name: text for name, text in sections.items() if have.get(name) != text}
    patch.update({name: None for name in have if name not in sections})
    by_name = {str(t.get("name")): t for t in current_tools}
    wanted = {str(t["name"]): t for t in tools}
    added = [t for name, t in wanted.items() if by_name.get(name) != t]
    removed = [{"name": name} for name, t in by_name.items() if wanted.get(name) != t]
    if not patch and not added and not removed:
        return None
    message: JSONObject = {"role": "system", "content": ""}
    if patch:
        message["sections"] = patch
    if removed:
        message["toolsRemoved"] = removed
    if added:
        message["toolsAdded"] = added
    message["timestamp"] = now_ms()
    return message


__all__ = [
    "CONTEXT_FILE_NAMES",
    "ContextFile",
    "build_sections",
    "context_files",
    "current_sections",
    "system_update",
]

"""pi's tool flags: ``--tools/-t LIST``, ``--exclude-tools/-xt LIST``, ``--no-tools/-nt`` and
``--no-builtin-tools/-nbt``, as one selection over the tools an agent has.

- ``--tools read,grep``: only those (names, or patterns where ``*`` matches anything); MCP tools
  (``mcp__...``) stay unless an entry starts with ``mcp__``.
- ``--tools +name,-name``: the default tools with those added or removed (exact names; plain names
  and ``+``/``-`` entries cannot be mixed).
- ``--no-builtin-tools``: none of the built-in tools; the others (MCP, todo_write, task) stay.
- ``--no-tools``: no tool at all, unless ``--tools`` names some.
- ``--exclude-tools``: names or patterns removed last, MCP tools included.

The agent loop declares only the selected tools to the model (and lists only them in the system
prompt); a call of another tool is answered as a call of an unknown tool.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_tui.projection.tool_facts import TOOL_FACTS, builtin_tool_names

if TYPE_CHECKING:
    from agent_tui.agent.tools.base import Tool

#: The built-in tools (the ones ``--no-builtin-tools`` removes): pi's, and Claude Code's web_fetch.
BUILTIN_TOOLS = builtin_tool_names()
#: Every other tool agent-tui itself may have (``--tools`` may name them).
OTHER_TOOLS = tuple(name for name in TOOL_FACTS if name not in BUILTIN_TOOLS)
MCP_PREFIX = "mcp__"


class ToolSelectionError(ValueError):
    """A flag's list names something it cannot (one line)."""


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def _match(name: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern) if "*" in pattern else name == pattern


@dataclass(frozen=True, slots=True)
class ToolSelection:
    allow: tuple[str, ...] | None = None  # --tools with plain names or patterns
    add: tuple[str, ...] = ()  # --tools +name
    remove: tuple[str, ...] = ()  # --tools -name
    exclude: tuple[str, ...] = ()  # --exclude-tools
    no_tools: bool = False
    no_builtin: bool = False

    @classmethod
    def parse(
        cls,
        tools: str | None = None,
        exclude: str | None = None,
        *,
        no_tools: bool = False,
        no_builtin: bool = False,
    ) -> ToolSelection | None:
        """The selection the flags give (None: no flag, every tool). Raises ToolSelectionError."""
        entries = _split(tools)
        if tools is not None and not entries:
            raise ToolSelectionError("--tools: an empty list (--no-tools disables every tool)")
        signed = [e for e in entries if e[0] in "+-"]
        if signed and len(signed) != len(entries):
            raise ToolSelectionError(
                "--tools: plain names and +name/-name entries cannot be mixed (name every tool, "
                "or only add and remove)"
            )
        known = (*BUILTIN_TOOLS, *OTHER_TOOLS)
        for entry in entries:
            name = entry.lstrip("+-")
            if signed and "*" in name:
                raise ToolSelectionError(f"--tools: {entry}: +name and -name take exact names, not patterns")
            if "*" not in name and not name.startswith(MCP_PREFIX) and name not in known:
                raise ToolSelectionError(
                    f"--tools: unknown tool {name!r} (built-in: {', '.join(BUILTIN_TOOLS)})"
                )
        excluded = _split(exclude)
        if exclude is not None and not excluded:
            raise ToolSelectionError("--exclude-tools: an empty list")
        if entries == () and not excluded and not no_tools and not no_builtin:
            return None
        return cls(
            allow=None if signed or not entries else entries,
            add=tuple(e[1:] for e in signed if e[0] == "+"),
            remove=tuple(e[1:] for e in signed if e[0] == "-"),
            exclude=excluded,
            no_tools=no_tools,
            no_builtin=no_builtin,
        )

    def apply(self, tools: Sequence[Tool]) -> list[Tool]:
        """The selected ones of ``tools``, in their order."""
        filters_mcp = self.allow is not None and any(p.startswith(MCP_PREFIX) for p in self.allow)

        def chosen(tool: Tool) -> bool:
            name = tool.name
            mcp = name.startswith(MCP_PREFIX)
            if any(_match(name, p) for p in self.exclude):
                return False
            if self.allow is not None:
                if mcp and not filters_mcp:
                    return not self.no_tools
                return any(_match(name, p) for p in self.allow)
            if name in self.add:
                return True
            if self.no_tools or name in self.remove:
                return False
            return not (self.no_builtin and name in BUILTIN_TOOLS)

        return [t for t in tools if chosen(t)]

    def describe(self) -> str:
        """One line for ``/session``: which tools the flags leave."""
        parts = []
        if self.no_tools:
            parts.append("--no-tools")
        if self.no_builtin:
            parts.append("--no-builtin-tools")
        if self.allow is not None:
            parts.append("--tools " + ",".join(self.allow))
        if self.add or self.remove:
            parts.append(
                "--tools " + ",".join([*(f"+{n}" for n in self.add), *(f"-{n}" for n in self.remove)])
            )
        if self.exclude:
            parts.append("--exclude-tools " + ",".join(self.exclude))
        return " ".join(parts)


__all__ = ["BUILTIN_TOOLS", "ToolSelection", "ToolSelectionError"]

"""What each tool is, as plain data: the one place a tool's facts are written.

The agent's ``Tool`` classes take their ``reads_only``, ``file_effect``, ``path_argument``,
``claude_name`` and ``acp_kind`` from their row here (``Tool.__init_subclass__``), and
``default_tools()`` builds the built-in tools from the rows that name a ``module``. The layers
below the agent read the same rows by a call's name, because they read sessions where a call has
only its name (a session pi wrote names pi's tools, which are ours): ACP's kinds, titles,
locations and diffs, hooks' Claude Code names, compaction's read and modified files, the exports'
and the chat's diffs, print mode's tool line.

A name with no row (an MCP tool ``mcp__server__tool``, an extension's tool, a tool of a session
written elsewhere) gets :data:`UNKNOWN`: it may change anything, names no file, shows no diff,
and is ``other`` to an editor. Adding a tool is its module, one row in :data:`TOOL_FACTS`, and
the README's tool list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

#: What a tool may do to files: nothing (``none``), the one file its ``path_argument`` names
#: (``path``), or anything (``any``: a shell command, an MCP tool not marked read-only).
FileEffect = Literal["none", "path", "any"]
#: ACP's ToolKind values a tool reports to editors.
AcpKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
#: How a call is shown as a diff: ``edits`` its replacements (old -> new, ``store.content.
#: edit_diff``), ``content`` the whole new text of the file it writes; None: not as a diff.
DiffStyle = Literal["edits", "content"] | None


@dataclass(frozen=True, slots=True)
class ToolFacts:
    #: It only reads: it never changes a file or runs a program.
    reads_only: bool = False
    file_effect: FileEffect = "any"
    #: The argument naming the file (or folder) it reads or changes.
    path_argument: str | None = None
    #: Claude Code's name for it (permission rules, hooks' matchers and ``tool_name``, a
    #: subagent's tool list); "": none.
    claude_name: str = ""
    acp_kind: AcpKind = "other"
    #: The argument a one-line title shows after the name (``bash npm test``).
    title_argument: str | None = None
    #: Its ``path_argument`` names a file whose text it reads (compaction's read files, an
    #: editor's location, an export's syntax highlighting of the result).
    reads_file: bool = False
    #: The argument holding the line it starts at (an editor's location).
    line_argument: str | None = None
    diff: DiffStyle = None
    #: ``"module:Class"`` of a built-in tool ``default_tools()`` builds (in this table's order);
    #: None: a tool built elsewhere (``todo_write``, ``task``, ``context``) or only read in
    #: sessions.
    module: str | None = None


UNKNOWN = ToolFacts()

_TOOLS = "agent_tui.agent.tools."
#: What the tools that only read the file or folder ``path`` names share, those that change it, and
#: those that search it for a ``pattern``.
_READS = ToolFacts(reads_only=True, file_effect="none", path_argument="path", title_argument="path")
_CHANGES = ToolFacts(file_effect="path", path_argument="path", acp_kind="edit", title_argument="path")
_SEARCHES = replace(_READS, acp_kind="search", title_argument="pattern")

TOOL_FACTS: dict[str, ToolFacts] = {
    "read": replace(
        _READS,
        claude_name="Read",
        acp_kind="read",
        reads_file=True,
        line_argument="offset",
        module=_TOOLS + "read:ReadTool",
    ),
    "bash": ToolFacts(
        claude_name="Bash", acp_kind="execute", title_argument="command", module=_TOOLS + "bash:BashTool"
    ),
    "edit": replace(_CHANGES, claude_name="Edit", diff="edits", module=_TOOLS + "edit:EditTool"),
    "write": replace(_CHANGES, claude_name="Write", diff="content", module=_TOOLS + "write:WriteTool"),
    "grep": replace(_SEARCHES, claude_name="Grep", module=_TOOLS + "grep:GrepTool"),
    "find": replace(_SEARCHES, claude_name="Glob", module=_TOOLS + "find:FindTool"),
    "ls": replace(_READS, claude_name="LS", acp_kind="read", module=_TOOLS + "ls:LsTool"),
    # it reads the web, which the user allows host by host: not reads_only
    "web_fetch": ToolFacts(
        file_effect="none",
        claude_name="WebFetch",
        acp_kind="fetch",
        title_argument="url",
        module=_TOOLS + "web_fetch:WebFetchTool",
    ),
    # it changes no file and runs nothing: the list lives in the session
    "todo_write": ToolFacts(reads_only=True, file_effect="none", claude_name="TodoWrite", acp_kind="think"),
    # the subagent's own calls change files, each gated as the parent's
    "task": ToolFacts(file_effect="none", claude_name="Task", acp_kind="think"),
    # it changes what the model sees, never a file
    "context": ToolFacts(file_effect="none", acp_kind="think"),
}

#: Other agents' tools that sessions imported into ours hold, by lower-case name, where their
#: facts differ from ours of the same lower-case name (Claude Code's ``Edit`` is our ``edit``).
FOREIGN_FACTS: dict[str, ToolFacts] = {
    "multiedit": ToolFacts(
        file_effect="path", path_argument="file_path", claude_name="MultiEdit", diff="edits"
    ),
    "str_replace_editor": ToolFacts(file_effect="path", path_argument="path", diff="edits"),
}


def tool_facts(name: str) -> ToolFacts:
    """The facts of the tool a call names, as our sessions and pi's name it (UNKNOWN: none)."""
    return TOOL_FACTS.get(name, UNKNOWN)


def shown_facts(name: str) -> ToolFacts:
    """As :func:`tool_facts`, also for another agent's tool in an imported session (any case:
    Claude Code's ``Edit``, ``MultiEdit``), for showing a call."""
    found = TOOL_FACTS.get(name)
    if found is not None:
        return found
    lowered = name.lower()
    return FOREIGN_FACTS.get(lowered) or TOOL_FACTS.get(lowered, UNKNOWN)


def shown_path(name: str, args: Mapping[str, Any]) -> Any:
    """The file a call works on, for showing it: its tool's ``path_argument``, else ``path`` or
    Claude Code's ``file_path`` (a tool with no facts)."""
    named = shown_facts(name).path_argument
    value = args.get(named) if named is not None else None
    return value if isinstance(value, str) and value else args.get("path") or args.get("file_path")


def builtin_tool_names() -> tuple[str, ...]:
    """The built-in tools, in the order the model is told about them."""
    return tuple(name for name, facts in TOOL_FACTS.items() if facts.module is not None)


__all__ = [
    "FOREIGN_FACTS",
    "TOOL_FACTS",
    "UNKNOWN",
    "AcpKind",
    "DiffStyle",
    "FileEffect",
    "ToolFacts",
    "builtin_tool_names",
    "shown_facts",
    "shown_path",
    "tool_facts",
]

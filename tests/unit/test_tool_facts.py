"""A tool's facts are written once (``projection.tool_facts.TOOL_FACTS``): a new tool registered
there with its facts is known to its ``Tool`` class, ACP, hooks, compaction, the exports, the
chat and print mode, none of which names it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Collapsible

from agent_tui.acp.updates import diff_content, tool_kind, tool_locations, tool_title
from agent_tui.agent.hooks import HookCommand, Hooks, hook_tool_name, tool_input
from agent_tui.agent.tool_selection import BUILTIN_TOOLS
from agent_tui.agent.tools.base import Tool
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.cli.print_mode import _describe_call
from agent_tui.library.export import export_markdown
from agent_tui.library.html_export import export_html
from agent_tui.projection.compaction import file_operations
from agent_tui.projection.tool_facts import TOOL_FACTS, UNKNOWN, ToolFacts, shown_facts, tool_facts
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import parse_session
from agent_tui.tui.widgets.chat_entry import LazyCollapsible, tool_call_widget
from tests.support.session_builder import Builder, assistant, tool_result, user

#: A tool that rewrites the file its ``target`` names, and one that reads ``source`` from ``start``.
PATCH = ToolFacts(file_effect="path", path_argument="target", claude_name="Patch", diff="edits")
PATCH = replace(PATCH, acp_kind="edit", title_argument="target")
PEEK = ToolFacts(reads_only=True, file_effect="none", path_argument="source", claude_name="Peek")
PEEK = replace(PEEK, acp_kind="read", title_argument="source", reads_file=True, line_argument="start")
EDITS: dict[str, Any] = {"target": "src/app.py", "edits": [{"oldText": "x = 1\n", "newText": "x = 2\n"}]}


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(TOOL_FACTS, "patch", PATCH)
    monkeypatch.setitem(TOOL_FACTS, "peek", PEEK)


@pytest.mark.usefixtures("registered")
def test_the_tool_class_takes_its_facts_from_its_row() -> None:
    class PatchTool(Tool):
        name = "patch"

    assert (PatchTool.reads_only, PatchTool.file_effect, PatchTool.path_argument) == (False, "path", "target")
    assert (PatchTool.claude_name, PatchTool.acp_kind) == ("Patch", "edit")


@pytest.mark.usefixtures("registered")
def test_acp_tells_the_editor_its_kind_title_location_and_diff() -> None:
    assert tool_kind("patch") == "edit" and tool_kind("peek") == "read"
    assert tool_title("patch", EDITS) == "patch src/app.py"
    [patched] = tool_locations("patch", EDITS, "/w") or []
    assert (patched.path, patched.line) == ("/w/src/app.py", None)
    [peeked] = tool_locations("peek", {"source": "/etc/x.txt", "start": 40}, "/w") or []
    assert (peeked.path, peeked.line) == ("/etc/x.txt", 40)
    [diff] = diff_content("patch", EDITS, "/w")
    assert diff.model_dump()["path"] == "/w/src/app.py"
    assert (diff.model_dump()["old_text"], diff.model_dump()["new_text"]) == ("x = 1\n", "x = 2\n")
    assert diff_content("peek", {"source": "a"}, "/w") == []


@pytest.mark.usefixtures("registered")
def test_hooks_name_it_as_claude_code_and_match_that_name(tmp_path: Path) -> None:
    assert hook_tool_name("patch") == "Patch"
    assert tool_input("patch", EDITS)["file_path"] == "src/app.py"
    seen = tmp_path / "seen.json"
    hooks = Hooks(
        [
            HookCommand("PreToolUse", "Patch", f"cat > {seen}", 5, "t"),
            HookCommand("PreToolUse", "Peek", f"echo no > {tmp_path / 'peek'}", 5, "t"),
        ],
        str(tmp_path),
    )
    fields = {"tool_name": hook_tool_name("patch"), "tool_input": tool_input("patch", EDITS)}
    asyncio.run(hooks.run("PreToolUse", fields, "patch"))
    assert json.loads(seen.read_text())["tool_name"] == "Patch"
    assert not (tmp_path / "peek").exists()


@pytest.mark.usefixtures("registered")
def test_compaction_lists_the_files_it_read_and_changed() -> None:
    message = assistant(
        calls=[
            ("c1", "peek", {"source": "docs/a.md"}),
            ("c2", "patch", EDITS),
            ("c3", "peek", {"source": "src/app.py"}),  # read, then changed: modified only
            ("c4", "mcp__files__write", {"path": "z.txt"}),  # an MCP tool has no file effect
        ]
    )
    assert file_operations([message], None) == (["docs/a.md"], ["src/app.py"])


def _session() -> SessionIndex:
    b = Builder()
    b.message(user("fix it"))
    b.message(assistant(calls=[("c1", "patch", EDITS), ("c2", "peek", {"source": "notes.py"})]))
    b.message(tool_result("c1", "done", name="patch"))
    b.message(tool_result("c2", "def f():\n    return 1", name="peek"))
    return SessionIndex(parse_session(b.text().encode()), "s.jsonl")


@pytest.mark.usefixtures("registered")
def test_the_exports_show_its_call_as_a_diff_and_its_read_highlighted() -> None:
    markdown = export_markdown(_session())
    assert "```diff\n--- a/file\n+++ b/file\n@@ -1 +1 @@\n-x = 1\n+x = 2\n```" in markdown
    assert "```python\ndef f():" in markdown  # the file it read, in its language
    html = export_html(_session())
    assert 'class="gd">-x = 1' in html and 'class="gi">+x = 2' in html
    assert '<span class="k">def</span>' in html


def test_the_same_session_without_the_rows_shows_plain_calls() -> None:
    markdown = export_markdown(_session())
    assert "```diff" not in markdown and "```python" not in markdown
    assert tool_kind("patch") == "other" and hook_tool_name("patch") == "patch"


@pytest.mark.usefixtures("registered")
def test_print_mode_and_the_chat_read_it_too() -> None:
    assert _describe_call("patch", EDITS) == "patch src/app.py"
    shown = tool_call_widget({"type": "toolCall", "name": "patch", "arguments": EDITS})
    assert isinstance(shown, Collapsible) and not isinstance(shown, LazyCollapsible)  # the diff, open
    plain = tool_call_widget({"type": "toolCall", "name": "peek", "arguments": EDITS})
    assert isinstance(plain, LazyCollapsible)  # its arguments, as any call
    assert shown_facts("PATCH") is PATCH


def test_pi_tools_and_imported_ones_are_known_by_name() -> None:
    """A session pi wrote names pi's tools: they have facts without the agent's tool classes."""
    for name in ("read", "write", "edit", "bash", "grep", "find", "ls"):
        assert tool_facts(name) is not UNKNOWN
    assert tool_facts("mcp__server__tool") is UNKNOWN and UNKNOWN.file_effect == "any"
    assert shown_facts("MultiEdit").diff == "edits" and shown_facts("Write").diff == "content"
    assert tool_facts("Write") is UNKNOWN  # our own sessions' names are matched exactly


def test_the_built_in_tools_are_the_rows_naming_a_module() -> None:
    tools = default_tools()
    assert (
        tuple(t.name for t in tools)
        == BUILTIN_TOOLS
        == ("read", "bash", "edit", "write", "grep", "find", "ls", "web_fetch")
    )
    for tool in tools:
        facts = TOOL_FACTS[tool.name]
        assert (tool.reads_only, tool.file_effect, tool.path_argument, tool.claude_name, tool.acp_kind) == (
            facts.reads_only,
            facts.file_effect,
            facts.path_argument,
            facts.claude_name,
            facts.acp_kind,
        )


#: The modules that read calls of sessions by their tool's name: they ask the facts table instead.
READERS = (
    "acp/updates.py",
    "agent/hooks.py",
    "projection/compaction.py",
    "library/export.py",
    "library/html_export.py",
    "tui/widgets/chat_entry.py",
    "cli/print_mode.py",
)


def test_the_readers_of_calls_compare_no_tool_name() -> None:
    """No ``name == "edit"``, ``name in ("write", "edit")`` or ``{"read": ...}`` table left to
    miss a new tool: a tool's name is compared only in the facts table."""
    import ast

    package = Path(__file__).resolve().parents[2] / "agent_tui"
    found = []
    for module in READERS:
        tree = ast.parse((package / module).read_text())
        for node in ast.walk(tree):
            literals = [
                *(n for n in ast.walk(node) if isinstance(node, ast.Compare) and n is not node),
                *(node.keys if isinstance(node, ast.Dict) else []),
            ]
            for literal in literals:
                if isinstance(literal, ast.Constant) and literal.value in TOOL_FACTS:
                    found.append(f"{module}:{literal.lineno} {literal.value!r}")
    assert found == []

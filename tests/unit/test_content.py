"""The content helpers every view shares: text of a content, one-line arguments, edit diffs (pi's
and Claude Code's argument names alike, so imported sessions show diffs in the app too)."""

from __future__ import annotations

from textual.widgets import Collapsible

from agent_tui.store.content import args_summary, content_text, edit_diff
from agent_tui.tui.widgets.chat_entry import LazyCollapsible, tool_call_widget

CONTENT = [
    {"type": "text", "text": "look"},
    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/a.py"}},
    {"type": "text", "text": "done"},
    "not a block",
]


def test_content_text_says_what_each_view_asks_for() -> None:
    assert content_text(CONTENT) == "look\n\ndone"  # the exports
    assert content_text(CONTENT, "\n", image="[image]") == "look\n[image]\ndone"  # the chat
    assert (
        content_text(CONTENT, "\n", image="[image]", calls=True)
        == 'look\n[image]\n→ read(path="src/a.py")\ndone'
    )
    assert content_text("plain") == "plain" and content_text(None) == "" and content_text({"x": 1}) == ""


def test_args_summary_is_one_line_within_its_width() -> None:
    args = {"command": "pytest -x\n  tests/unit", "timeout": 30, "note": "x" * 100}
    line = args_summary(args, 60)
    assert "\n" not in line and len(line) <= 60
    assert line.startswith('command="pytest -x\\n tests/unit", timeout=30')
    assert "\x1b" not in args_summary("\x1b[31mred")  # terminal controls are shown, never sent


def test_edit_diff_reads_pi_and_claude_code_arguments() -> None:
    pi = edit_diff({"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]})
    claude = edit_diff({"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})
    multi = edit_diff(
        {
            "file_path": "a.py",
            "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}],
        }
    )
    assert pi == claude and pi is not None and pi.splitlines()[:2] == ["--- a/a.py", "+++ b/a.py"]
    assert "-x = 1" in pi and "+x = 2" in pi
    assert multi is not None and all(line in multi.splitlines() for line in ("-a", "+b", "-c", "+d"))
    assert edit_diff({"path": "a.py"}) is None and edit_diff("nope") is None


def test_the_chat_shows_an_imported_claude_code_edit_as_a_diff() -> None:
    """Claude Code's ``Edit`` with ``old_string``/``new_string``: the HTML export showed its diff, the
    app a JSON blob."""
    widget = tool_call_widget(
        {
            "type": "toolCall",
            "name": "Edit",
            "arguments": {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
        }
    )
    assert isinstance(widget, Collapsible) and not isinstance(widget, LazyCollapsible)
    odd = tool_call_widget({"type": "toolCall", "name": "Edit", "arguments": {"file_path": "a.py"}})
    assert isinstance(odd, LazyCollapsible)  # no replacement in it: its arguments, as any call

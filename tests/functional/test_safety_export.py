"""Exports, forks and clones: nothing from a transcript is raw HTML in Markdown, and a full disk
leaves no truncated file behind to block the retry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from agent_tui.library.export import export_markdown
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from tests.support.limits import limit_file_size
from tests.support.session_builder import Builder, assistant, tool_result, user

pytestmark = pytest.mark.timeout(120)

X = "<img src=x onerror=alert(1)>"


def _html_tokens(markdown: str) -> list[str]:
    found: list[str] = []
    pending: list[Any] = list(MarkdownIt("commonmark").parse(markdown))
    while pending:
        token = pending.pop()
        if token.type.startswith("html"):
            found.append(token.content)
        pending.extend(token.children or ())
    return found


def _hostile_session(path: Path) -> Path:
    b = Builder()
    b.message(user(f"hi {X}"))
    reply = assistant(
        f"reply {X}\n\n<script>alert(2)</script>", calls=[("c1", "read", {"path": f"a`{X}`.py"})]
    )
    reply["content"].insert(0, {"type": "thinking", "thinking": f"think {X}\n<script>alert(3)</script>"})
    reply["errorMessage"] = f"err {X}"
    b.message(reply)
    b.message(tool_result("c1", f"out {X}\n```\n<script>alert(4)</script>"))
    # a reply that leaves a fence open must not turn the next entry's fenced output back into HTML
    b.message(assistant("an open fence\n```"))
    b.message(tool_result("c2", f"<script>alert(5)</script> {X}", name="bash"))
    b.message(
        {"role": "custom", "customType": f"ct{X}", "content": f"custom {X}", "display": True, "timestamp": 5}
    )
    b.add("custom_message", customType="x", content=f"cm {X}", display=True)
    b.add("compaction", summary=f"sum {X}", firstKeptEntryId=f"k`{X}`", tokensBefore=5)
    b.add("branch_summary", summary=f"bs {X}", fromId=f"f`{X}`")
    b.add("label", targetId="e0001", label=f"lab {X}")
    b.message(
        {"role": "bashExecution", "command": f"ls {X}", "output": f"o {X}", "exitCode": 0, "timestamp": 6}
    )
    b.add("message", message=assistant("` id with a backtick"))
    b.lines[-1]["id"] = f"x`{X}`"
    b.lines[-1]["parentId"] = b.leaf
    return b.write(path)


def test_markdown_export_holds_no_raw_html_from_the_transcript(tmp_path: Path) -> None:
    path = _hostile_session(tmp_path / "s.jsonl")
    index = SessionIndex(read_file(path), str(path))
    markdown = export_markdown(index, source_name=f"src`{X}`", all_branches=True)
    assert _html_tokens(markdown) == []
    # the text is all still there, shown rather than run
    for visible in ("hi", "reply", "think", "out", "custom", "cm", "sum", "bs", "alert(5)"):
        assert f"{visible} {X}" in markdown or f"{visible}" in markdown
    assert markdown.count(X) >= 10


def test_ordinary_markdown_replies_stay_markdown(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("how?"))
    reply = "Use `Vec<String>`:\n\n```rust\nlet v: Vec<String> = vec![];\n```\n\n- **bold** and a [link](https://x.example)"
    b.message(assistant(reply))
    path = b.write(tmp_path / "s.jsonl")
    markdown = export_markdown(SessionIndex(read_file(path), str(path)))
    assert reply in markdown
    assert _html_tokens(markdown) == []


# -- a full disk -------------------------------------------------------------------------


def _cli(*args: str, room: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TUI_")}
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        preexec_fn=(lambda: limit_file_size(room)) if room is not None else None,
    )


@pytest.mark.parametrize(
    "command",
    [
        ["export", "--format", "md"],
        ["export", "--format", "html"],
        ["export", "--format", "jsonl"],
        ["export", "--format", "jsonl", "--all"],
        ["fork", "e0070"],
        ["clone"],
    ],
)
def test_a_full_disk_leaves_nothing_that_blocks_the_retry(tmp_path: Path, command: list[str]) -> None:
    b = Builder()
    for i in range(40):
        b.message(user(f"question {i} " + "q" * 300))
        b.message(assistant(f"answer {i} " + "a" * 300))
    source = b.write(tmp_path / "source.jsonl")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / ("copy.jsonl" if command[0] != "export" else "copy.out")
    verb, *rest = command
    args = [verb, str(source), *rest, "-o", str(out)]
    full = _cli(*args, room=4096)
    assert full.returncode == 1, full.stderr
    assert len(full.stderr.strip().splitlines()) == 1 and "Traceback" not in full.stderr
    assert str(out) in full.stderr
    assert list(out_dir.iterdir()) == [], "a truncated file (or a temporary one) was left behind"
    again = _cli(*args)
    assert again.returncode == 0, again.stderr
    assert out.stat().st_size > 4096
    assert [p.name for p in out_dir.iterdir()] == [out.name]
    # and still never over an existing file
    before = out.read_bytes()
    third = _cli(*args)
    assert third.returncode == 1 and "already exists" in third.stderr
    assert out.read_bytes() == before

"""The built-in tools: behaviour as pi's tools, truncation, timeouts, aborts."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, validate_arguments
from agent_tui.agent.tools.bash import BashTool, OutputAccumulator
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.agent.tools.edit import EditTool
from agent_tui.agent.tools.find import FindTool
from agent_tui.agent.tools.grep import GrepTool
from agent_tui.agent.tools.ls import LsTool
from agent_tui.agent.tools.read import ReadTool
from agent_tui.agent.tools.truncate import truncate_head, truncate_tail
from agent_tui.agent.tools.walk import Glob
from agent_tui.agent.tools.write import WriteTool

pytestmark = pytest.mark.timeout(30)


def text_of(result: ToolResult) -> str:
    return "".join(b["text"] for b in result.content if b["type"] == "text")


async def run(tool: Tool, args: dict[str, Any], cwd: Path, signal: asyncio.Event | None = None) -> ToolResult:
    ctx = ToolContext(str(cwd), signal or asyncio.Event())
    return await tool.execute(validate_arguments(tool, tool.prepare_arguments(args)), ctx)


# -- truncation ---------------------------------------------------------------------------------


def test_truncate_head_and_tail_limits() -> None:
    lines = "\n".join(f"line {i}" for i in range(1, 3001))
    head = truncate_head(lines)
    assert head.truncated and head.truncated_by == "lines" and head.output_lines == 2000
    assert head.content.splitlines()[-1] == "line 2000"
    tail = truncate_tail(lines)
    assert tail.truncated and tail.content.splitlines()[0] == "line 1001"
    wide = "\n".join("x" * 1000 for _ in range(100))  # 100 KB in 100 lines
    assert truncate_head(wide).truncated_by == "bytes" and truncate_head(wide).output_lines == 51
    one_long_line = "y" * 100_000
    partial = truncate_tail(one_long_line)
    assert partial.last_line_partial and len(partial.content) == 50 * 1024
    assert not truncate_head("short\n").truncated


# -- read ---------------------------------------------------------------------------------------


async def test_read_whole_file_offset_and_limit(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"{i}\n" for i in range(1, 11)))
    assert text_of(await run(ReadTool(), {"path": "f.txt"}, tmp_path)) == "".join(
        f"{i}\n" for i in range(1, 11)
    )
    part = text_of(await run(ReadTool(), {"path": "f.txt", "offset": 3, "limit": 2}, tmp_path))
    assert part == "3\n4\n\n[7 more lines in file. Use offset=5 to continue.]"
    with pytest.raises(ToolError, match=r"Offset 50 is beyond end of file \(11 lines total\)"):
        await run(ReadTool(), {"path": "f.txt", "offset": 50}, tmp_path)
    with pytest.raises(ToolError, match="no such file"):
        await run(ReadTool(), {"path": "nope.txt"}, tmp_path)


async def test_read_truncates_long_files_with_a_continuation_notice(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 5001)))
    result = await run(ReadTool(), {"path": "big.txt"}, tmp_path)
    body = text_of(result)
    assert body.endswith("row 2000\n\n[Showing lines 1-2000 of 5001. Use offset=2001 to continue.]")
    assert result.details is not None and result.details["truncation"]["truncatedBy"] == "lines"
    more = text_of(await run(ReadTool(), {"path": "big.txt", "offset": 2001}, tmp_path))
    assert more.startswith("row 2001\n")


async def test_read_a_line_over_the_byte_limit_points_to_bash(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("a" * 60_000 + "\nsecond\n")
    body = text_of(await run(ReadTool(), {"path": "min.js"}, tmp_path))
    assert body.startswith("[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js")


async def test_read_an_image_attaches_it(tmp_path: Path) -> None:
    from PIL import Image  # the test draws its image; the tool imports Pillow only when it reads one

    Image.new("RGB", (8, 8), (255, 0, 0)).save(tmp_path / "pic.png", "PNG")
    png = (tmp_path / "pic.png").read_bytes()
    result = await run(ReadTool(), {"path": "pic.png"}, tmp_path)
    assert result.content[0] == {"type": "text", "text": "Read image file [image/png]"}
    assert result.content[1] == {
        "type": "image",
        "data": base64.b64encode(png).decode(),
        "mimeType": "image/png",
    }
    # A png signature without pi's IHDR check passing is not an image to pi: it is read as text.
    (tmp_path / "magic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    assert (await run(ReadTool(), {"path": "magic.png"}, tmp_path)).content[0]["type"] == "text"
    assert len((await run(ReadTool(), {"path": "magic.png"}, tmp_path)).content) == 1


# -- write and edit -------------------------------------------------------------------------------


async def test_write_creates_parent_directories(tmp_path: Path) -> None:
    result = await run(WriteTool(), {"path": "deep/er/new.txt", "content": "hello\n"}, tmp_path)
    assert text_of(result) == "Successfully wrote to deep/er/new.txt"
    assert (tmp_path / "deep/er/new.txt").read_text() == "hello\n"


async def test_edit_replaces_unique_text(tmp_path: Path) -> None:
    f = tmp_path / "code.py"
    f.write_text("def a():\n    return 1\n\ndef b():\n    return 2\n")
    result = await run(
        EditTool(),
        {
            "path": "code.py",
            "edits": [
                {"oldText": "return 1", "newText": "return 10"},
                {"oldText": "def b():", "newText": "def bee():"},
            ],
        },
        tmp_path,
    )
    assert text_of(result) == "Successfully replaced 2 block(s) in code.py."
    assert f.read_text() == "def a():\n    return 10\n\ndef bee():\n    return 2\n"
    assert result.details is not None and "-    return 1" in result.details["diff"]
    assert result.details["firstChangedLine"] == 1


async def test_edit_rejects_ambiguous_missing_and_overlapping_text(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_text("same\nsame\nother\n")
    with pytest.raises(
        ToolError, match=r"Found 2 occurrences of the text in x\.txt\. The text must be unique"
    ):
        await run(EditTool(), {"path": "x.txt", "edits": [{"oldText": "same", "newText": "new"}]}, tmp_path)
    with pytest.raises(ToolError, match=r"Could not find the exact text in x\.txt"):
        await run(EditTool(), {"path": "x.txt", "edits": [{"oldText": "absent", "newText": "new"}]}, tmp_path)
    with pytest.raises(ToolError, match=r"edits\[0\] and edits\[1\] overlap"):
        await run(
            EditTool(),
            {
                "path": "x.txt",
                "edits": [{"oldText": "same\nother", "newText": "a"}, {"oldText": "other", "newText": "b"}],
            },
            tmp_path,
        )
    with pytest.raises(ToolError, match="No changes made"):
        await run(
            EditTool(), {"path": "x.txt", "edits": [{"oldText": "other", "newText": "other"}]}, tmp_path
        )
    assert f.read_text() == "same\nsame\nother\n"  # nothing was written


async def test_edit_keeps_crlf_and_bom_and_matches_smart_quotes(tmp_path: Path) -> None:
    f = tmp_path / "win.txt"
    f.write_bytes("\ufeffsay \u201chello\u201d  \r\nbye\r\n".encode())
    await run(
        EditTool(), {"path": "win.txt", "edits": [{"oldText": 'say "hello"', "newText": "say hi"}]}, tmp_path
    )
    assert f.read_bytes() == "\ufeffsay hi\r\nbye\r\n".encode()


async def test_edit_accepts_edits_as_a_json_string_and_legacy_fields(tmp_path: Path) -> None:
    f = tmp_path / "y.txt"
    f.write_text("alpha beta\n")
    await run(EditTool(), {"path": "y.txt", "edits": '[{"oldText": "alpha", "newText": "ALPHA"}]'}, tmp_path)
    await run(EditTool(), {"path": "y.txt", "oldText": "beta", "newText": "BETA"}, tmp_path)
    assert f.read_text() == "ALPHA BETA\n"


async def test_parallel_edits_of_one_file_do_not_lose_changes(tmp_path: Path) -> None:
    f = tmp_path / "z.txt"
    f.write_text("".join(f"v{i}\n" for i in range(20)))
    await asyncio.gather(
        *(
            run(
                EditTool(),
                {"path": "z.txt", "edits": [{"oldText": f"v{i}\n", "newText": f"w{i}\n"}]},
                tmp_path,
            )
            for i in range(20)
        )
    )
    assert f.read_text() == "".join(f"w{i}\n" for i in range(20))


# -- bash ---------------------------------------------------------------------------------------


async def test_bash_output_and_exit_codes(tmp_path: Path) -> None:
    ok = await run(BashTool(), {"command": "echo out; echo err >&2; pwd"}, tmp_path)
    assert not ok.is_error and text_of(ok) == f"out\nerr\n{tmp_path}\n"
    empty = await run(BashTool(), {"command": "true"}, tmp_path)
    assert text_of(empty) == "(no output)"
    failed = await run(BashTool(), {"command": "echo partial; exit 7"}, tmp_path)
    assert failed.is_error and text_of(failed) == "partial\n\n\nCommand exited with code 7"


async def test_bash_huge_output_keeps_the_tail_and_saves_everything(tmp_path: Path) -> None:
    result = await run(BashTool(), {"command": 'for i in $(seq 1 30000); do echo "line $i"; done'}, tmp_path)
    body = text_of(result)
    assert result.details is not None
    saved = Path(result.details["fullOutputPath"])
    assert body.startswith("line 28001\n")
    assert body.endswith(f"[Showing lines 28001-30000 of 30000. Full output: {saved}]")
    assert saved.read_text().splitlines() == [f"line {i}" for i in range(1, 30001)]
    saved.unlink()
    wide = await run(BashTool(), {"command": "head -c 200000 /dev/zero | tr '\\0' 'x'; echo"}, tmp_path)
    assert "(line is 195.3KB)" in text_of(wide) and len(text_of(wide).encode()) < 52 * 1024
    assert wide.details is not None
    Path(wide.details["fullOutputPath"]).unlink()


async def test_bash_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    with pytest.raises(ToolError) as info:  # the sleep outlives the test's timeout: the group is killed
        await run(
            BashTool(),
            {"command": f"sleep 600 & echo $! > {pidfile}; echo started; wait", "timeout": 0.5},
            tmp_path,
        )
    assert str(info.value) == "started\n\n\nCommand timed out after 0.5 seconds"
    assert await _dies(int(pidfile.read_text()))


async def test_bash_abort_kills_the_process_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    signal = asyncio.Event()
    first_output = asyncio.Event()  # the command's output reached the tool: abort only then
    append = OutputAccumulator.append

    def appended(self: OutputAccumulator, data: bytes) -> None:
        append(self, data)
        first_output.set()

    monkeypatch.setattr(OutputAccumulator, "append", appended)
    pidfile = tmp_path / "bg.pid"
    task = asyncio.ensure_future(
        run(BashTool(), {"command": f"sleep 60 & echo $! > {pidfile}; echo running; wait"}, tmp_path, signal)
    )
    await asyncio.wait_for(first_output.wait(), 20)
    signal.set()
    with pytest.raises(ToolError, match=r"running\n\n\nCommand aborted$"):
        await asyncio.wait_for(task, 5)
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:  # SIGKILL is delivered, not awaited
        await asyncio.sleep(0.01)
    assert not _alive(pid)


async def test_bash_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    task = asyncio.ensure_future(run(BashTool(), {"command": f"echo $$ > {pidfile}; sleep 60"}, tmp_path))
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _dies(int(pidfile.read_text()))


async def test_bash_leaves_background_jobs_of_a_finished_command_alone(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    result = await run(
        BashTool(), {"command": f"sleep 30 >/dev/null 2>&1 & echo $! > {pidfile}; echo done"}, tmp_path
    )
    assert text_of(result) == "done\n"
    pid = int(pidfile.read_text())
    try:
        assert _alive(pid), "a background job of a command that finished normally was killed"
    finally:
        os.kill(pid, 9)


async def test_bash_rejects_a_bad_timeout(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="Invalid timeout"):
        await run(BashTool(), {"command": "true", "timeout": -1}, tmp_path)


async def _dies(pid: int, within: float = 5.0) -> bool:
    """Whether the process is gone within ``within`` seconds (polled, not a fixed sleep)."""
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return True


# -- ls, find, grep -----------------------------------------------------------------------------


def _tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("import os\nprint('hello')\n")
    (root / "src" / "pkg" / "util.py").write_text("def helper():\n    return 'hello world'\n")
    (root / "src" / "pkg" / "data.bin").write_bytes(b"\x00hello\x00")
    (root / "README.md").write_text("# Hello\n")
    (root / ".hidden").write_text("hello from a dotfile\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("hello = 1\n")
    (root / ".gitignore").write_text("build/\n")


async def test_ls_sorts_marks_directories_and_limits(tmp_path: Path) -> None:
    _tree(tmp_path)
    listing = text_of(await run(LsTool(), {}, tmp_path))
    assert listing == ".gitignore\n.hidden\nbuild/\nREADME.md\nsrc/"
    limited = text_of(await run(LsTool(), {"limit": 2}, tmp_path))
    assert limited == ".gitignore\n.hidden\n\n[2 entries limit reached. Use limit=4 for more]"
    with pytest.raises(ToolError, match="Not a directory"):
        await run(LsTool(), {"path": "README.md"}, tmp_path)


async def test_find_and_grep_respect_gitignore_in_a_repository(tmp_path: Path) -> None:
    _tree(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    found = text_of(await run(FindTool(), {"pattern": "*.py"}, tmp_path)).splitlines()
    assert found == ["src/main.py", "src/pkg/util.py"]  # build/ is ignored
    anchored = text_of(await run(FindTool(), {"pattern": "src/*.py"}, tmp_path)).splitlines()
    assert anchored == ["src/main.py"]
    deep = text_of(await run(FindTool(), {"pattern": "src/**/*.py"}, tmp_path)).splitlines()
    assert deep == ["src/main.py", "src/pkg/util.py"]
    assert text_of(await run(FindTool(), {"pattern": "*.rs"}, tmp_path)) == "No files found matching pattern"

    hits = text_of(await run(GrepTool(), {"pattern": "hello"}, tmp_path)).splitlines()
    assert hits == [
        ".hidden:1: hello from a dotfile",
        "src/main.py:2: print('hello')",
        "src/pkg/util.py:2:     return 'hello world'",
    ]
    insensitive = text_of(
        await run(GrepTool(), {"pattern": "HELLO", "ignoreCase": True, "glob": "*.md"}, tmp_path)
    )
    assert insensitive == "README.md:1: # Hello"


async def test_grep_context_literal_limit_and_long_lines(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo (x)\nthree\nfour (x)\nfive\n" + "z" * 600 + " (x)\n")
    ctx = text_of(
        await run(GrepTool(), {"pattern": "(x)", "literal": True, "context": 1, "limit": 2}, tmp_path)
    )
    assert ctx.splitlines()[:5] == [
        "a.txt-1- one",
        "a.txt:2: two (x)",
        "a.txt-3- three",
        "a.txt:4: four (x)",
        "a.txt-5- five",
    ]
    assert ctx.endswith("[2 matches limit reached. Use limit=4 for more, or refine pattern]")
    long = text_of(await run(GrepTool(), {"pattern": "z+ \\(x\\)"}, tmp_path))
    assert "... [truncated]" in long and "Some lines truncated to 500 chars" in long
    single = text_of(await run(GrepTool(), {"pattern": "three", "path": "a.txt"}, tmp_path))
    assert single == "a.txt:3: three"
    assert text_of(await run(GrepTool(), {"pattern": "absent"}, tmp_path)) == "No matches found"
    with pytest.raises(ToolError, match="regex parse error"):
        await run(GrepTool(), {"pattern": "(unclosed"}, tmp_path)


def test_glob_matching() -> None:
    assert Glob("*.ts").match("a/b/c.ts") and not Glob("*.ts").match("a/b/c.tsx")
    assert Glob("src/*.ts").match("src/a.ts") and not Glob("src/*.ts").match("pkg/src/a.ts")
    assert Glob("**/src/*.ts").match("pkg/src/a.ts") and Glob("**/src/*.ts").match("src/a.ts")
    assert Glob("*.{js,ts}").match("x.js") and Glob("*.{js,ts}").match("y.ts")
    assert Glob("readme*").match("README.md")  # smart case: lowercase ignores case
    assert not Glob("Readme*").match("README.md")
    assert Glob("./src/**").match("src/deep/file") and not Glob("src/**").match("src")


# -- arguments ------------------------------------------------------------------------------------


def test_validate_arguments_lists_every_problem() -> None:
    with pytest.raises(ToolError) as info:
        validate_arguments(ReadTool(), {"offset": "ten"})
    message = str(info.value)
    assert message.startswith('Validation failed for tool "read":')
    assert "path: is required" in message and "offset: must be number" in message
    with pytest.raises(ToolError, match=r"edits\[0\].newText: is required"):
        validate_arguments(EditTool(), {"path": "a", "edits": [{"oldText": "x"}]})
    assert validate_arguments(BashTool(), {"command": "ls", "timeout": 5}) == {"command": "ls", "timeout": 5}


def test_default_tools_declare_pi_schemas() -> None:
    declarations = [t.declaration() for t in default_tools()]
    assert [d["name"] for d in declarations] == [
        "read",
        "bash",
        "edit",
        "write",
        "grep",
        "find",
        "ls",
        "web_fetch",
    ]
    for d in declarations:
        assert d["parameters"]["type"] == "object" and d["description"]
    edit = declarations[2]["parameters"]
    assert edit["required"] == ["path", "edits"]
    assert edit["properties"]["edits"]["items"]["required"] == ["oldText", "newText"]

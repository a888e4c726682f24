"""pi 1.6's flags on the real command (``agent-tui -p`` and ``--mode json`` in a subprocess, against
the fake server): ``--no-session``, ``--fork``, ``-n/--name``, ``--tools`` / ``--exclude-tools`` /
``--no-tools`` / ``--no-builtin-tools``, piped stdin, ``@file`` arguments and ``--session ID``.
Every file they write is read back by pi 1.6 itself (``tests/support/pi_compat/pi_read.mjs``)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.pi_install import pi_node
from tests.support.print_env import Env

# 600: the first test to need pi may install it (`npm ci`, tests/support/pi_install)
pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PI_READ = ROOT / "tests" / "support" / "pi_compat" / "pi_read.mjs"
# a 1x1 PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def pi_read(*files: Path) -> list[dict[str, Any]]:
    """What pi 1.6 makes of each file (its SessionManager, its projection)."""
    proc = subprocess.run(
        [pi_node(), str(PI_READ), *map(str, files)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    for r in results:
        assert "error" not in r, r
    return results


class Run(Env):
    def run_in(
        self, *args: str, stdin: str | None = None, tty_stdin: bool = False
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_tui", *args],
            cwd=self.work,
            env=self.env,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def files_everywhere(self) -> list[Path]:
        """Every file under the data dir and the project (what a run may have written)."""
        return sorted(
            p for root in (self.home, self.work) if root.exists() for p in root.rglob("*") if p.is_file()
        )


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Run:
    return Run(tmp_path, server)


def user_content(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The blocks of the last user message a request sent (Anthropic's shape)."""
    message = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def user_text(body: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in user_content(body) if b["type"] == "text")


def _session_files(env: Run) -> list[Path]:
    return [p for p in env.files_everywhere() if p.suffix == ".jsonl"]


def test_no_session_writes_nothing_in_print_and_json_mode(env: Run, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("Ephemeral.")), anthropic_stream(text("Still ephemeral.")))
    printed = env.run_in("-p", "hello", "--no-session")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == "Ephemeral.\n"
    assert "session" not in printed.stderr  # no "agent-tui: session PATH": there is none
    as_json = env.run_in("-p", "hello", "--no-session", "--mode", "json")
    assert as_json.returncode == 0, as_json.stderr
    records = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert records[0]["type"] == "session" and records[-1]["type"] in ("agent_end", "agent_settled")
    assert any(r["type"] == "message_end" for r in records)
    # nothing of either run on disk: no session file, no folder for it, no library index
    assert _session_files(env) == []
    assert not (env.home / "sessions").exists()
    assert [p.name for p in env.files_everywhere()] in ([], ["trust.json"])
    assert user_text(server.requests[0].body) == "hello"


def test_no_session_in_rpc_mode_writes_nothing(env: Run, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("Over RPC.")))
    command = json.dumps({"type": "prompt", "id": "1", "message": "hi"}) + "\n"
    result = env.run_in("--mode", "rpc", "--no-session", stdin=command)
    assert result.returncode == 0, result.stderr
    assert "rpc on an in-memory session (--no-session)" in result.stderr
    assert [json.loads(line)["type"] for line in result.stdout.splitlines()][-1] == "agent_settled"
    assert _session_files(env) == []


def test_no_session_keeps_a_subagents_session_in_memory_too(env: Run, server: FakeModelServer) -> None:
    server.push(
        anthropic_stream(tool_use("toolu_t", "task", {"description": "look around", "prompt": "list files"})),
        anthropic_stream(text("The child found nothing.")),
        anthropic_stream(text("Done.")),
    )
    result = env.run_in("-p", "delegate", "--no-session")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("Done.\n")
    assert len(server.requests) == 3  # the parent, the child, the parent again
    assert _session_files(env) == []
    assert [p.name for p in env.files_everywhere()] in ([], ["trust.json"])


def test_no_session_refuses_a_session_to_continue(env: Run) -> None:
    for flags in (["-c"], ["--session", "x.jsonl"], ["--fork", "abc"]):
        result = env.run_in("-p", "hi", "--no-session", *flags)
        assert result.returncode == 1
        (line,) = result.stderr.splitlines()
        assert line.startswith("agent-tui: --no-session cannot be combined with"), line
    assert _session_files(env) == []


def test_name_is_a_session_info_entry_pi_reads(env: Run, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("One.")), anthropic_stream(text("Two.")))
    first = env.run_in("-p", "hello", "-n", "Refactor   auth module")
    assert first.returncode == 0, first.stderr
    (path,) = env.sessions()
    names = [e for e in env.entries(path) if e["type"] == "session_info"]
    assert [e["name"] for e in names] == ["Refactor auth module"]
    # the same name again adds nothing; another one renames
    assert env.run_in("-p", "again", "-c", "--name", "Refactor auth module").returncode == 0
    assert len([e for e in env.entries(path) if e["type"] == "session_info"]) == 1
    (read,) = pi_read(path)
    assert read["name"] == "Refactor auth module"
    assert env.run_in("-p", "x", "--name", "   ").returncode == 1  # an empty name: one line, nothing run


def test_session_id_and_prefix_resolve_among_the_folders_sessions(env: Run, server: FakeModelServer) -> None:
    server.push(*(anthropic_stream(text(f"Reply {n}.")) for n in range(4)))
    assert env.run_in("-p", "first").returncode == 0
    (path,) = env.sessions()
    session_id = json.loads(path.read_text().splitlines()[0])["id"]
    by_prefix = env.run_in("-p", "second", "--session", session_id[:8])
    assert by_prefix.returncode == 0, by_prefix.stderr
    by_id = env.run_in("-p", "third", "--session", session_id)
    assert by_id.returncode == 0, by_id.stderr
    assert env.sessions() == [path]  # continued: no new file, and none named after the id
    assert list(env.work.iterdir()) == []
    users = [e["message"]["content"] for e in env.entries(path) if e["type"] == "message"]
    assert [c for c in users if isinstance(c, str)][-3:] == ["first", "second", "third"] or len(users) >= 6

    unknown = env.run_in("-p", "x", "--session", "zzzz")
    assert unknown.returncode == 1
    (line,) = unknown.stderr.splitlines()
    assert "--session zzzz: no session of this folder has that id" in line
    assert list(env.work.iterdir()) == []  # no stray file named zzzz

    # a path still works: created when missing (with -p), as before
    own = env.work / "mine.jsonl"
    assert env.run_in("-p", "to a file", "--session", str(own)).returncode == 0
    assert own.is_file()
    for read in pi_read(path, own):
        assert read["messages"][-1]["role"] == "assistant"


def test_an_ambiguous_prefix_is_one_line(env: Run, server: FakeModelServer) -> None:
    folder = env.home / "sessions"
    server.push(anthropic_stream(text("A.")))
    assert env.run_in("-p", "one").returncode == 0
    (path,) = env.sessions()
    header = json.loads(path.read_text().splitlines()[0])
    twin = path.with_name("twin.jsonl")  # the same id prefix, another session
    twin.write_text(
        json.dumps({**header, "id": header["id"][:4] + "ffff-0000-4000-8000-000000000000"}) + "\n"
    )
    result = env.run_in("-p", "x", "--session", header["id"][:4])
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert "2 sessions of this folder have an id starting so" in line and "give more of the id" in line
    assert sorted(folder.rglob("*.jsonl")) == sorted([path, twin])


def test_fork_copies_the_session_into_a_new_file_and_continues(env: Run, server: FakeModelServer) -> None:
    server.push(*(anthropic_stream(text(t)) for t in ("Original.", "In the fork.", "Again.")))
    assert env.run_in("-p", "start").returncode == 0
    (source,) = env.sessions()
    before = source.read_bytes()
    session_id = json.loads(before.splitlines()[0])["id"]
    forked = env.run_in("-p", "go on in a copy", "--fork", session_id[:6])
    assert forked.returncode == 0, forked.stderr
    assert source.read_bytes() == before  # the source is never changed
    (new,) = [p for p in env.sessions() if p != source]
    assert f"forked {source} into {new}" in forked.stderr
    src, copy = pi_read(source, new)
    assert copy["parentSession"] == str(source)
    assert copy["id"] != src["id"]
    assert copy["ids"][: len(src["ids"])] == src["ids"]  # the whole tree, then the new turn
    assert copy["messages"][: len(src["messages"])] == src["messages"]
    assert copy["messages"][-1]["role"] == "assistant"
    # by path too; an unknown one is one line
    assert env.run_in("-p", "again", "--fork", str(source)).returncode == 0
    bad = env.run_in("-p", "x", "--fork", "nothing-like-it")
    assert bad.returncode == 1 and len(bad.stderr.splitlines()) == 1


def _tool_names(server: FakeModelServer) -> list[str]:
    return [t["name"] for t in server.requests[-1].body.get("tools", [])]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], ["read", "bash", "edit", "write", "grep", "find", "ls", "web_fetch", "todo_write", "task"]),
        (["--tools", "read,grep,find,ls"], ["read", "grep", "find", "ls"]),
        (
            ["-t", "+context,-bash,-task"],
            ["read", "edit", "write", "grep", "find", "ls", "web_fetch", "todo_write"],
        ),
        (["--exclude-tools", "bash,t*"], ["read", "edit", "write", "grep", "find", "ls", "web_fetch"]),
        (["-xt", "write", "--tools", "read,write"], ["read"]),
        (["--no-builtin-tools"], ["todo_write", "task"]),
        (["-nbt", "-t", "+ls"], ["ls", "todo_write", "task"]),
        (["--no-tools"], []),
        (["-nt", "--tools", "read"], ["read"]),
    ],
)
def test_tool_flags_choose_the_declared_tools(
    env: Run, server: FakeModelServer, flags: list[str], expected: list[str]
) -> None:
    server.push(anthropic_stream(text("Ok.")))
    result = env.run_in("-p", "which tools?", *flags)
    assert result.returncode == 0, result.stderr
    assert _tool_names(server) == expected
    system = json.dumps(server.requests[-1].body.get("system"))
    if "bash" not in expected:
        assert "- bash:" not in system  # the prompt's tool list follows the selection
    (read,) = pi_read(*env.sessions())  # the file the run wrote, as pi 1.6 reads it
    assert [m["role"] for m in read["messages"]][-2:] == ["user", "assistant"]


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--tools", "read,nosuch"], "--tools: unknown tool 'nosuch'"),
        (["--tools", "read,+ls"], "--tools: plain names and +name/-name entries cannot be mixed"),
        (["--tools", ""], "--tools: an empty list"),
    ],
)
def test_a_bad_tool_list_is_one_line(env: Run, server: FakeModelServer, flags: list[str], says: str) -> None:
    result = env.run_in("-p", "x", *flags)
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert says in line
    assert server.requests == [] and _session_files(env) == []


def test_piped_stdin_comes_before_the_prompt(env: Run, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("Reviewed.")), anthropic_stream(text("Read it.")))
    result = env.run_in("-p", "Review this change", stdin="diff --git a/x b/x\n+new line\n")
    assert result.returncode == 0, result.stderr
    assert user_text(server.requests[-1].body) == "diff --git a/x b/x\n+new line\n\nReview this change"
    alone = env.run_in("-p", "", stdin="only what was piped\n")  # pi: stdin alone is the prompt
    assert alone.returncode == 0, alone.stderr
    assert user_text(server.requests[-1].body) == "only what was piped"
    for read in pi_read(*env.sessions()):
        assert read["messages"][1]["role"] == "user"


def test_a_bare_p_takes_what_is_piped_or_the_message_after_the_flags(
    env: Run, server: FakeModelServer
) -> None:
    """pi's ``-p`` is a flag: ``cat prompt.md | pi -p`` and ``pi -p --model M "question"`` both
    work there; agent-tui's ``-p`` wanted a value and stopped with argparse's usage."""
    server.push(anthropic_stream(text("From the pipe.")), anthropic_stream(text("After the flags.")))
    piped = env.run_in("-p", stdin="what was piped\n")
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == "From the pipe.\n"
    assert user_text(server.requests[-1].body) == "what was piped"
    flags = env.run_in("-p", "--thinking", "off", "the question", "-n", "after flags")
    assert flags.returncode == 0, flags.stderr
    assert user_text(server.requests[-1].body) == "the question"
    alone = env.run_in("-p")  # nothing piped, no message: one line, nothing sent
    assert alone.returncode == 1 and alone.stderr.strip() == "agent-tui: empty prompt"
    assert len(server.requests) == 2
    reads = pi_read(*sorted(env.sessions(), key=lambda p: p.stat().st_mtime))
    texts = ["".join(b["text"] for b in r["messages"][1]["content"]) for r in reads]
    assert texts == ["what was piped", "the question"]
    assert reads[1]["name"] == "after flags"


def test_file_arguments_attach_text_and_images(env: Run, server: FakeModelServer) -> None:
    (env.work / "notes.txt").write_text("remember the milk\n")
    outside = env.tmp / "elsewhere"
    outside.mkdir()
    (outside / "pic.png").write_bytes(PNG)
    server.push(anthropic_stream(text("Seen.")), anthropic_stream(text("Seen too.")))
    result = env.run_in("-p", "What do these say?", "@notes.txt", f"@{outside / 'pic.png'}")
    assert result.returncode == 0, result.stderr
    blocks = user_content(server.requests[-1].body)
    kinds = [b["type"] for b in blocks]
    assert kinds.count("image") == 1
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    assert texts[0] == "What do these say?"
    # pi's shape: <file name="ABSOLUTE">\nCONTENT\n</file> (CONTENT keeps its own last newline)
    assert f'<file name="{env.work / "notes.txt"}">\nremember the milk\n\n</file>' in texts
    # -p @file "question": the file is attached, the message is the prompt
    again = env.run_in("-p", "@notes.txt", "Summarize it")
    assert again.returncode == 0, again.stderr
    assert user_content(server.requests[-1].body)[0] == {"type": "text", "text": "Summarize it"}
    read_first, read_second = pi_read(*sorted(env.sessions(), key=lambda p: p.stat().st_mtime))
    user = read_first["messages"][1]
    assert user["role"] == "user" and any(b["type"] == "image" for b in user["content"])
    assert read_second["messages"][1]["content"][0] == {"type": "text", "text": "Summarize it"}
    missing = env.run_in("-p", "x", "@nope.txt")
    assert missing.returncode == 1 and missing.stderr.strip() == "agent-tui: @nope.txt: no such file"

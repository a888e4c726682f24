"""``!cmd`` / ``!!cmd``: the user's shell commands, recorded as pi's bashExecution messages."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_tui.agent.user_bash import clean_output, parse_user_command, run_user_command
from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from agent_tui.store.session import Session

pytestmark = pytest.mark.timeout(30)


def test_parse_user_command() -> None:
    assert parse_user_command("!ls -la") == parse_user_command("  ! ls -la ")
    c = parse_user_command("!ls -la")
    assert c is not None and c.command == "ls -la" and not c.exclude_from_context
    cc = parse_user_command("!!git status")
    assert cc is not None and cc.command == "git status" and cc.exclude_from_context
    assert parse_user_command("!") is None and parse_user_command("!!  ") is None
    assert parse_user_command("hello !ls") is None


async def test_a_command_becomes_a_bash_execution_message_the_projection_sends(tmp_path: Path) -> None:
    chunks: list[str] = []
    cmd = parse_user_command("!printf 'one\\n\\033[31mred\\033[0m\\n'; exit 3")
    assert cmd is not None
    message = await run_user_command(cmd, str(tmp_path), asyncio.Event(), chunks.append)
    assert message["role"] == "bashExecution"
    assert message["output"] == "one\nred\n"  # ANSI colour removed
    assert "".join(chunks) == "one\nred\n"
    assert message["exitCode"] == 3 and message["cancelled"] is False and message["truncated"] is False
    assert "fullOutputPath" not in message and "excludeFromContext" not in message

    session = Session.create(tmp_path / "sessions", tmp_path)
    session.append({"type": "message", "message": message})
    sent = prepare(project(session.index).messages).messages
    assert sent[-1].role == "user"
    text = sent[-1].message["content"][0]["text"]
    assert text.startswith("Ran `printf") and "Command exited with code 3" in text
    session.close()


async def test_double_bang_is_shown_but_never_sent(tmp_path: Path) -> None:
    cmd = parse_user_command("!!echo private")
    assert cmd is not None
    message = await run_user_command(cmd, str(tmp_path), asyncio.Event())
    assert message["excludeFromContext"] is True and message["output"] == "private\n"
    session = Session.create(tmp_path / "sessions", tmp_path)
    session.append({"type": "message", "message": message})
    assert prepare(project(session.index).messages).messages == []
    session.close()


async def test_a_command_that_never_ends_is_cancelled_and_its_group_killed(tmp_path: Path) -> None:
    abort = asyncio.Event()
    cmd = parse_user_command("!echo started; sleep 600")
    assert cmd is not None
    seen = asyncio.Event()
    task = asyncio.ensure_future(run_user_command(cmd, str(tmp_path), abort, lambda _: seen.set()))
    await asyncio.wait_for(seen.wait(), 10)
    abort.set()
    message = await task  # the sleep outlives the test's timeout: it ends only if the abort ends it
    assert message["cancelled"] is True and "exitCode" not in message
    assert message["output"] == "started\n"


async def test_long_output_is_cut_and_spilled_to_a_file(tmp_path: Path) -> None:
    cmd = parse_user_command("!seq 1 5000")
    assert cmd is not None
    message = await run_user_command(cmd, str(tmp_path), asyncio.Event())
    assert message["truncated"] is True
    assert message["output"].splitlines()[-1] == "5000"
    full = Path(message["fullOutputPath"])
    assert full.read_text().splitlines() == [str(i) for i in range(1, 5001)]
    assert full.stat().st_mode & 0o777 == 0o600


def test_clean_output_removes_control_sequences() -> None:
    assert clean_output("a\x1b]0;title\x07b\x1b[2Jc\rd\x00e\tf\n") == "abcde\tf\n"
    assert clean_output("a\x1b[1;31mb\x1b[0m\r\n") == "ab\n"
    assert "\x1b" not in clean_output("x\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\")

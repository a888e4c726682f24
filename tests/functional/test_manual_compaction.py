"""Compaction the user asks for does what was asked, and compaction in print mode is reported.

A branch smaller than the keep budget is summarized up to its latest user turn (pi would say
"nothing to compact"); only a branch with nothing before its latest turn is "nothing to compact",
in the same words from the loop, the CLI and its preview, as a notice and not a failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.agent.compaction import NOTHING_TO_COMPACT
from agent_tui.agent.events import CompactionFailed, CompactionFinished, TurnDone
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_error, anthropic_stream, text
from tests.support.print_env import Env

pytestmark = pytest.mark.timeout(60)

SUMMARY = "## Goal\nSay hello.\n\n## Progress\n### Done\n- [x] said hello"


async def test_compact_on_a_branch_smaller_than_the_keep_budget_summarizes_up_to_the_latest_turn(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("hello to you")), anthropic_stream(text("fine, thanks")))
    # two turns far below the 20,000-token keep budget (the first long enough that a summary of it
    # is shorter: one that grows the context is not applied)
    await anthropic_harness.run("hello " + "context " * 300)
    await anthropic_harness.run("how are you?")
    latest_user = [
        e for e in anthropic_harness.entries() if e["type"] == "message" and e["message"]["role"] == "user"
    ][-1]
    server.push(anthropic_stream(text(SUMMARY)))
    events = [e async for e in anthropic_harness.loop.compact()]
    assert any(isinstance(e, CompactionFinished) for e in events), events
    assert events[-1] == TurnDone("stop")
    compaction = anthropic_harness.entries()[-1]
    assert compaction["type"] == "compaction" and compaction["firstKeptEntryId"] == latest_user["id"]
    summarized = json.dumps(server.requests[-1].body["messages"])
    assert "hello to you" in summarized and "fine, thanks" not in summarized


async def test_a_branch_with_nothing_before_its_latest_turn_is_nothing_to_compact_not_a_failure(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("hello to you")))
    await anthropic_harness.run("hello")
    before = anthropic_harness.session.path.read_bytes()
    requests = len(server.requests)
    events = [e async for e in anthropic_harness.loop.compact()]
    failed = [e for e in events if isinstance(e, CompactionFailed)]
    assert failed == [CompactionFailed(NOTHING_TO_COMPACT, nothing_to_do=True)]
    assert events[-1] == TurnDone("stop")
    assert anthropic_harness.session.path.read_bytes() == before and len(server.requests) == requests


@pytest.mark.slow
def test_the_cli_says_nothing_to_compact_in_the_same_words_and_exits_0(
    server: FakeModelServer, tmp_path: Path
) -> None:
    env = Env(tmp_path, server)
    server.push(anthropic_stream(text("hello to you")))
    assert env.run("-p", "hello").returncode == 0
    (session,) = env.sessions()
    before = session.read_bytes()
    for args in (("compact", str(session)), ("compact", str(session), "--preview")):
        out = env.run(*args)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == NOTHING_TO_COMPACT and out.stderr == ""
    assert session.read_bytes() == before and len(server.requests) == 1


@pytest.mark.slow
def test_print_mode_reports_compaction_and_why_it_failed_on_stderr(
    server: FakeModelServer, tmp_path: Path
) -> None:
    env = Env(tmp_path, server)
    server.push(anthropic_stream(text("first answer")))
    # a history worth summarizing: an overflow's summary longer than what it replaces is not applied
    assert env.run("-p", "hello " + "context " * 400).returncode == 0
    overflow = anthropic_error(
        400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"
    )
    # the overflow is compacted; the summarization call is refused too: the reason is printed
    server.push(overflow, anthropic_error(400, "invalid_request_error", "summaries are not allowed today"))
    out = env.run("-p", "a long question", "-c")
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    assert any(line.startswith("compacting (overflow, ") for line in lines), out.stderr
    assert any(
        line.startswith("compaction failed: ") and "summaries are not allowed today" in line for line in lines
    ), out.stderr
    assert any(  # the turn's one-line error carries the reason too
        line.startswith("agent-tui: ")
        and "prompt is too long" in line
        and "summaries are not allowed" in line
        for line in lines
    ), out.stderr
    # and when it works, progress and the figures
    server.push(overflow, anthropic_stream(text(SUMMARY)), anthropic_stream(text("the answer")))
    out = env.run("-p", "a long question", "-c")
    assert out.returncode == 0, out.stderr
    assert "the answer" in out.stdout
    assert any(line.startswith("compacted: ≈") and "tokens" in line for line in out.stderr.splitlines()), (
        out.stderr
    )


#: A summary far longer than the two short turns it replaces: a small model's (≈1,568 → ≈2,635
#: tokens on a real llama.cpp server).
LONG_SUMMARY = "## Goal\n" + "padding words " * 600


async def test_a_manual_compaction_that_would_grow_the_context_is_not_applied(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    """The session core refuses a growing summary whoever asked (it applied the user's before)."""
    server.push(anthropic_stream(text("hello to you")), anthropic_stream(text("fine, thanks")))
    await anthropic_harness.run("hello")
    await anthropic_harness.run("how are you?")
    before = anthropic_harness.session.path.read_bytes()
    server.push(anthropic_stream(text(LONG_SUMMARY)))
    events = [e async for e in anthropic_harness.loop.compact()]
    failed = [e for e in events if isinstance(e, CompactionFailed)]
    assert len(failed) == 1 and "would make the context larger (≈" in failed[0].message, events
    assert " → ≈" in failed[0].message and "\n" not in failed[0].message
    assert not any(isinstance(e, CompactionFinished) for e in events)
    assert anthropic_harness.session.path.read_bytes() == before


def _two_turns(env: Env, server: FakeModelServer) -> Path:
    server.push(anthropic_stream(text("hello to you")), anthropic_stream(text("fine, thanks")))
    assert env.run("-p", "hello").returncode == 0
    assert env.run("-p", "how are you?", "-c").returncode == 0
    (session,) = env.sessions()
    return session


@pytest.mark.slow
def test_print_json_and_cli_compact_refuse_a_growing_summary_in_one_line(
    server: FakeModelServer, tmp_path: Path
) -> None:
    env = Env(tmp_path, server)
    session = _two_turns(env, server)
    before = session.read_bytes()
    server.push(anthropic_stream(text(LONG_SUMMARY)))
    out = env.run("-p", "/compact", "--session", str(session))
    (line,) = [x for x in out.stderr.splitlines() if "would make the context larger" in x]
    assert " → ≈" in line and "nothing was applied" in line, out.stderr
    server.push(anthropic_stream(text(LONG_SUMMARY)))
    out = env.run("--mode", "json", "-p", "/compact", "--session", str(session))
    records = [json.loads(x) for x in out.stdout.splitlines()]
    ends = [r for r in records if r.get("type") == "compaction_end"]
    assert ends and "would make the context larger" in json.dumps(ends[-1]), records
    server.push(anthropic_stream(text(LONG_SUMMARY)))
    out = env.run("compact", str(session))
    assert out.returncode == 1 and out.stdout == "", out.stdout
    (line,) = out.stderr.splitlines()
    assert "would make the context larger (≈" in line and "nothing was applied" in line
    assert session.read_bytes() == before and len(server.requests) == 5

"""Compaction through the agent loop, against the fake model server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.compaction import undo_compaction
from agent_tui.agent.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    TurnDone,
    TurnError,
)
from agent_tui.config import CompactionConfig
from agent_tui.projection.compaction import SUMMARIZATION_SYSTEM_PROMPT, CompactionSettings
from agent_tui.projection.context import Status, project
from agent_tui.projection.models import ModelInfo, register
from agent_tui.projection.tokens import estimate_text
from tests.support.agent_support import Harness, context_body
from tests.support.compaction_growth import compaction_sizes
from tests.support.fake_model_server import (
    FakeModelServer,
    RecordedRequest,
    Response,
    anthropic_error,
    anthropic_stream,
    text,
    tool_use,
)

pytestmark = pytest.mark.timeout(30)

SUMMARY = "## Goal\nRead the files.\n\n## Progress\n### Done\n- [x] read a.txt"


@pytest.fixture(autouse=True)
def _small_windows() -> None:
    """The small-window models these tests use, for each test only (the model table is
    restored after every test; registered at import, they were in every other test's too)."""
    register(ModelInfo("anthropic", "tiny-window", 8_000, 1_000))
    register(ModelInfo("anthropic", "micro-window", 6_000, 1_000))


def harness(server: FakeModelServer, tmp_path: Path, model: str, settings: CompactionSettings) -> Harness:
    h = Harness(server, tmp_path, model=model)
    h.config = replace(h.config, compaction=CompactionConfig(settings))
    h.loop = h.new_loop()
    (h.workdir / "a.txt").write_text("alpha line\n" * 700)  # ~2,200 tokens as a tool result
    (h.workdir / "b.txt").write_text("bravo line\n" * 700)
    return h


@pytest.fixture
async def anthropic_harness(server: FakeModelServer, tmp_path: Path) -> AsyncIterator[Harness]:
    harness_ = harness(
        server, tmp_path, "tiny-window", CompactionSettings(reserve_tokens=1_000, keep_recent_tokens=400)
    )
    yield harness_
    await harness_.close()


def is_summary_request(body: dict[str, Any]) -> bool:
    return bool(body.get("system", [{}])[0].get("text") == SUMMARIZATION_SYSTEM_PROMPT)


def check_turn_requests(anthropic_harness: Harness) -> None:
    """Every request except the summarization calls equals the projection at that moment."""
    for number, (snapshot, request) in enumerate(
        zip(anthropic_harness.snapshots, anthropic_harness.server.requests, strict=True)
    ):
        if is_summary_request(request.body):
            continue
        copy = anthropic_harness.tmp / f"snapshot-{number}.jsonl"
        copy.write_bytes(snapshot)
        assert request.body == context_body(copy, "anthropic"), (
            f"request {number} differs from the projection"
        )


async def test_threshold_crossed_compacts_on_its_own(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(tool_use("c1", "read", {"path": "a.txt"}), input_tokens=300, model="tiny-window"),
        anthropic_stream(text("a.txt holds alpha lines."), input_tokens=7_200, model="tiny-window"),
        anthropic_stream(text(SUMMARY), model="tiny-window"),
    )
    events = await anthropic_harness.run("read a.txt")
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "stop"
    started = [e for e in events if isinstance(e, CompactionStarted)]
    finished = [e for e in events if isinstance(e, CompactionFinished)]
    assert [s.reason for s in started] == ["threshold"] and len(finished) == 1
    assert finished[0].tokens_before > 7_000 and finished[0].tokens_after < finished[0].tokens_before
    compaction = next(e for e in anthropic_harness.entries() if e["type"] == "compaction")
    # the cut falls inside the only turn: its start is summarized as a split turn, as pi does
    assert "**Turn Context (split turn):**\n\n" + SUMMARY in compaction["summary"]
    # and its question word for word after it: the model answers the question, not a summary of it
    assert "**The user's message that began this turn, verbatim:**\n\nread a.txt\n\n" in compaction["summary"]
    assert compaction["summary"].endswith("<read-files>\na.txt\n</read-files>")
    assert compaction["details"] == {"readFiles": ["a.txt"], "modifiedFiles": [], "lost": []}
    assert compaction["systemMessage"]["role"] == "system" and compaction["systemMessage"]["toolsAdded"]
    assert compaction["tokensBefore"] == finished[0].tokens_before and compaction["usage"]["output"] == 20
    # the real-server test's check of growth, worked out from the file, agrees with the event's figures
    assert compaction_sizes(anthropic_harness.session.path) == [
        (compaction["id"], finished[0].tokens_before, finished[0].tokens_after)
    ]
    summary_request = server.requests[2].body
    assert is_summary_request(summary_request)
    assert "alpha line" in summary_request["messages"][0]["content"][0]["text"]
    # the next turn sends the summary, the kept tail, and nothing of the summarized range verbatim
    server.push(anthropic_stream(text("ok"), model="tiny-window"))
    await anthropic_harness.run("thanks")
    body = server.requests[3].body
    first_user = body["messages"][0]["content"][0]["text"]
    assert "compacted into the following summary" in first_user and SUMMARY in first_user
    assert all("alpha line\nalpha line" not in json.dumps(m) for m in body["messages"])
    check_turn_requests(anthropic_harness)


async def test_context_overflow_hides_the_attempt_compacts_and_retries_once(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(tool_use("c1", "read", {"path": "a.txt"}), model="tiny-window"),
        anthropic_stream(text("read it"), model="tiny-window"),
    )
    await anthropic_harness.run("read a.txt")
    server.push(
        anthropic_error(400, "invalid_request_error", "prompt is too long: 9000 tokens > 8000 maximum"),
        anthropic_stream(text(SUMMARY), model="tiny-window"),
        anthropic_stream(text("answer after compaction"), model="tiny-window"),
    )
    events = await anthropic_harness.run("and now?")
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "stop"
    assert [e.reason for e in events if isinstance(e, CompactionStarted)] == ["overflow"]
    entries = anthropic_harness.entries()
    failed = [e for e in entries if e["type"] == "message" and e["message"].get("stopReason") == "error"]
    assert len(failed) == 1 and "prompt is too long" in failed[0]["message"]["errorMessage"]
    hides = [e for e in entries if e["type"] == "context_edit" and e["replacement"] is None]
    assert [x["targetId"] for x in hides] == [failed[0]["id"]]
    assert any(e["type"] == "compaction" for e in entries)
    assert anthropic_harness.messages("assistant")[-1]["content"][0]["text"] == "answer after compaction"
    p = project(anthropic_harness.session.index)
    assert (
        any(ce.entry.id == failed[0]["id"] and ce.status is Status.HIDDEN for ce in p.entries)
        or failed[0]["id"] in p.summarized_ids
    )
    check_turn_requests(anthropic_harness)


async def test_after_an_overflow_the_retry_asks_the_question_verbatim(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    """Turn 1 and turn 2 each ~1,300 words in an 8,000-token window; the server refuses turn 2. The
    recovery summarized turn 2's prompt into a "Turn Context (split turn)" (pi's recovery-omission
    cut) and the retry held one user message, the summary: the model answered the summary, not the
    question. Now the retry's last message is turn 2's prompt, whole."""
    server.push(anthropic_stream(text("first answer"), model="tiny-window"))
    await anthropic_harness.run("first: " + "alpha " * 1_300)
    question = "second: " + "word " * 1_300
    server.push(
        anthropic_error(400, "invalid_request_error", "prompt is too long: 9000 tokens > 8000 maximum"),
        anthropic_stream(text(SUMMARY), model="tiny-window"),  # the history before the question
        anthropic_stream(text("answer after compaction"), model="tiny-window"),
    )
    events = await anthropic_harness.run(question)
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "stop", events[-4:]
    summary_request, retry = server.requests[-2].body, server.requests[-1].body
    assert is_summary_request(summary_request)
    assert "alpha alpha" in json.dumps(summary_request["messages"])
    assert "word word" not in json.dumps(summary_request["messages"])  # the question is not summarized
    last = retry["messages"][-1]  # the summary and the question, merged into one user message
    assert last["role"] == "user" and last["content"][-1]["text"] == question
    assert json.dumps(SUMMARY)[1:-1] in json.dumps(retry["messages"])
    assert "split turn" not in json.dumps(retry)
    assert anthropic_harness.messages("assistant")[-1]["content"][0]["text"] == "answer after compaction"
    check_turn_requests(anthropic_harness)


async def test_a_question_that_cannot_fit_is_one_line_and_is_not_sent_as_a_summary(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    """A prompt larger than the window itself was summarized by the recovery and the summary sent
    in its place; now one line says it cannot fit and nothing more is sent (the threshold's
    compaction before the call summarizes the history before it, never the prompt)."""
    server.push(anthropic_stream(text("first answer"), model="tiny-window"))
    await anthropic_harness.run("first: " + "alpha " * 300)
    server.push(
        anthropic_stream(text(SUMMARY), model="tiny-window"),  # the threshold's, before the call
        anthropic_error(400, "invalid_request_error", "prompt is too long: 12000 tokens > 8000 maximum"),
    )
    start = len(server.requests)
    events = await anthropic_harness.run("paste: " + "word " * 8_000)
    errors = [e for e in events if isinstance(e, TurnError)]
    assert len(errors) == 1 and "\n" not in errors[0].message, errors
    assert "your message" in errors[0].message and "nothing was sent" in errors[0].message
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "error"
    sent = server.requests[start:]
    assert len(sent) == 2 and is_summary_request(sent[0].body)  # no summary of the prompt, no retry
    assert "word word" not in json.dumps(sent[0].body["messages"])


async def test_a_server_that_keeps_refusing_is_reported_in_one_line_after_bounded_retries(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("first"), model="tiny-window"))
    await anthropic_harness.run("hello " * 600)
    server.push(anthropic_stream(text("second"), model="tiny-window"))
    await anthropic_harness.run("more " * 600)
    overflow = anthropic_error(400, "invalid_request_error", "prompt is too long: 9000 tokens > 8000 maximum")

    def respond(request: RecordedRequest) -> Response:
        return (
            anthropic_stream(text(SUMMARY), model="tiny-window")
            if is_summary_request(request.body)
            else overflow
        )

    server.responder = respond
    start = len(server.requests)
    events = await anthropic_harness.run("again")
    errors = [e for e in events if isinstance(e, TurnError)]
    assert len(errors) == 1 and "prompt is too long" in errors[0].message and "\n" not in errors[0].message
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "error"
    turn_calls = [r for r in server.requests[start:] if not is_summary_request(r.body)]
    assert 2 <= len(turn_calls) <= 3  # compacted and retried, but not forever


async def test_summarization_requests_never_exceed_the_window(
    server: FakeModelServer, tmp_path: Path
) -> None:
    h = harness(server, tmp_path, "micro-window", CompactionSettings(enabled=False, keep_recent_tokens=300))
    try:
        for name in ("a.txt", "b.txt") * 5:  # tool results are clipped to 2,000 characters each
            server.push(
                anthropic_stream(
                    tool_use(f"c-{name}-{len(server.requests)}", "read", {"path": name}), model="micro-window"
                ),
                anthropic_stream(text(f"read {name}"), model="micro-window"),
            )
            await h.run(f"read {name}")
        before = len(server.requests)
        server.push(*[anthropic_stream(text(f"{SUMMARY} part {i}"), model="micro-window") for i in range(12)])
        events = [e async for e in h.loop.compact("the file contents")]
        assert any(isinstance(e, CompactionFinished) for e in events), events
        summary_requests = [r.body for r in server.requests[before:]]
        assert len(summary_requests) >= 2  # it had to be done in parts
        for body in summary_requests:
            size = estimate_text(json.dumps(body["messages"])) + estimate_text(body["system"][0]["text"])
            assert size + body["max_tokens"] <= 6_000, size
            assert "Additional focus: the file contents" in body["messages"][0]["content"][0]["text"]
        # later parts update the summary of the earlier ones
        assert any(
            "<previous-summary>" in r["messages"][0]["content"][0]["text"] for r in summary_requests[1:]
        )
    finally:
        await h.close()


async def test_a_summary_cut_off_is_asked_again_shorter_then_kept_marked(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    """A summary cut by the output limit failed the compaction ("nothing was saved"): on a 1,024-token
    window every compaction failed and the conversation could not go on. The request says the
    length the budget allows; a cut summary is asked again at half that, and a second cut one is
    kept, marked as cut."""
    server.push(
        anthropic_stream(tool_use("c1", "read", {"path": "a.txt"}), model="tiny-window"),
        anthropic_stream(text("done"), model="tiny-window"),
    )
    await anthropic_harness.run("read a.txt")
    start = len(server.requests)
    server.push(
        anthropic_stream(text("## Goal\nhalf a summ"), stop_reason="max_tokens", model="tiny-window"),
        anthropic_stream(text(SUMMARY), model="tiny-window"),
    )
    events = [e async for e in anthropic_harness.loop.compact()]
    assert any(isinstance(e, CompactionFinished) for e in events), events
    first, second = (r.body["messages"][-1]["content"][-1]["text"] for r in server.requests[start:])
    words = [
        int(t.rsplit("Keep the summary under ", 1)[1].split(" words")[0].replace(",", ""))
        for t in (first, second)
    ]
    assert words[1] == words[0] // 2 and words[0] * 4 // 3 <= anthropic_harness.loop.summarizer().max_output
    compaction = [e for e in anthropic_harness.entries() if e["type"] == "compaction"][-1]
    assert SUMMARY in compaction["summary"] and "cut off" not in compaction["summary"]

    server.push(anthropic_stream(text("again"), model="tiny-window"))
    await anthropic_harness.run("and more")
    server.push(
        anthropic_stream(text("## Goal\nhalf a summ"), stop_reason="max_tokens", model="tiny-window"),
        anthropic_stream(text("## Goal\nstill half"), stop_reason="max_tokens", model="tiny-window"),
    )
    events = [e async for e in anthropic_harness.loop.compact()]
    assert any(isinstance(e, CompactionFinished) for e in events), events
    marked = [e for e in anthropic_harness.entries() if e["type"] == "compaction"][-1]["summary"]
    assert "## Goal\nstill half\n\n[This summary was cut off by the output limit (" in marked


async def test_a_compaction_that_would_grow_the_context_is_not_applied(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    """A small model's summary longer than what it replaced was applied (≈1,568 → ≈2,635 tokens on
    a real llama.cpp server); now an automatic compaction's is refused, said in one line, and the
    branch stays as it was (one the user asks for is applied: its line shows both figures)."""
    server.push(anthropic_stream(text("short answer"), model="tiny-window"))
    await anthropic_harness.run("a short question")
    size = anthropic_harness.session.path.stat().st_size
    server.push(
        anthropic_error(400, "invalid_request_error", "prompt is too long: 9000 tokens > 8000 maximum"),
        anthropic_stream(text("## Goal\n" + "padding words " * 600), model="tiny-window"),
        anthropic_stream(text("the answer"), model="tiny-window"),  # the retry, uncompacted
    )
    events = await anthropic_harness.run("another short question")
    failed = [e for e in events if isinstance(e, CompactionFailed)]
    assert len(failed) == 1 and "would make the context larger" in failed[0].message, events
    assert "nothing was applied" in failed[0].message and "\n" not in failed[0].message
    assert not any(isinstance(e, CompactionFinished) for e in events)
    assert (
        events[-1] == TurnDone("stop")
        and anthropic_harness.messages("assistant")[-1]["content"][0]["text"] == "the answer"
    )
    assert not any(e["type"] == "compaction" for e in anthropic_harness.entries())
    assert (
        anthropic_harness.session.path.stat().st_size > size
    )  # the turn's entries, appended; nothing rewritten


async def test_undo_restores_the_view_before_the_compaction(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(tool_use("c1", "read", {"path": "a.txt"}), model="tiny-window"),
        anthropic_stream(text("done"), model="tiny-window"),
    )
    await anthropic_harness.run("read a.txt")
    before = [m.message for m in project(anthropic_harness.session.index).messages]
    server.push(anthropic_stream(text(SUMMARY), model="tiny-window"))
    events = [e async for e in anthropic_harness.loop.compact()]
    assert any(isinstance(e, CompactionFinished) for e in events)
    assert [m.message for m in project(anthropic_harness.session.index).messages] != before
    size = anthropic_harness.session.path.stat().st_size
    undo_compaction(anthropic_harness.session)
    assert [m.message for m in project(anthropic_harness.session.index).messages] == before
    assert (
        anthropic_harness.session.path.read_bytes()[:size]
        == anthropic_harness.session.path.read_bytes()[:size]
    )  # appended, not rewritten


async def test_branch_summary_under_the_new_position(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("plan A it is"), model="tiny-window"))
    await anthropic_harness.run("try plan A")
    plan_a_user = next(
        e for e in anthropic_harness.entries() if e["type"] == "message" and e["message"]["role"] == "user"
    )
    target = plan_a_user["parentId"]
    server.push(anthropic_stream(text("## Goal\nPlan A was tried."), model="tiny-window"))
    events = [e async for e in anthropic_harness.loop.branch_with_summary(target)]
    assert any(isinstance(e, CompactionFinished) for e in events), events
    summary = anthropic_harness.entries()[-1]
    assert summary["type"] == "branch_summary" and summary["parentId"] == target
    assert summary["summary"].startswith("The user explored a different conversation branch")
    assert "Plan A was tried." in summary["summary"]
    assert "plan A it is" in server.requests[-1].body["messages"][0]["content"][0]["text"]
    view = project(anthropic_harness.session.index).messages
    assert view[-1].kind == "branchSummary" and view[-1].role == "user"


def test_cli_compact_preview_undo_and_a_real_compaction(server: FakeModelServer, tmp_path: Path) -> None:
    from tests.support.session_builder import Builder, assistant, tool_result, user

    b = Builder()
    for t in range(4):
        b.message(user(f"turn {t}"))
        b.message(assistant("", [(f"c{t}", "read", {"path": f"f{t}.py"})]))
        b.message(tool_result(f"c{t}", "data " * 600))
        b.message(assistant(f"answer {t}"))
    path = b.write(tmp_path / "s.jsonl")
    env = {
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "AGENT_TUI_CONFIG": str(tmp_path / "none.toml"),
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        import os

        return subprocess.run(
            [sys.executable, "-m", "agent_tui", *args],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
        )

    before = path.read_bytes()
    out = cli("compact", str(path), "--preview", "--keep", "500")
    assert out.returncode == 0 and "summarize:" in out.stdout and "tokens:" in out.stdout
    assert path.read_bytes() == before
    server.push(
        anthropic_stream(text(SUMMARY)), anthropic_stream(text("turn prefix"))
    )  # a split turn: 2 calls
    out = cli("compact", str(path), "--keep", "500", "--focus", "tests", "--model", "claude-sonnet-5-5")
    assert out.returncode == 0, out.stderr
    assert "compacted: entry" in out.stdout
    assert all(
        "Additional focus: tests" in r.body["messages"][0]["content"][0]["text"] for r in server.requests
    )
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[-1]["type"] == "compaction" and path.read_bytes().startswith(before)
    out = cli("compact", str(path), "--undo")
    assert out.returncode == 0 and "continuing from" in out.stdout
    assert json.loads(path.read_text().splitlines()[-1])["parentId"] == lines[-1]["parentId"]
    out = cli("compact", str(path), "--undo")
    assert out.returncode == 1 and "no compaction on the active branch" in out.stderr


async def test_the_preview_and_the_result_are_one_estimate(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    """The preview said "1,627 → 232" and the result "1,627 → about 1,978": the preview
    left out the system prompt and tools. Both are now the panel's figure of the next request."""
    from agent_tui.agent.compaction import estimated_after, preview
    from agent_tui.projection.compaction import tokens_after_compaction
    from agent_tui.projection.tokens import context_tokens

    server.push(
        anthropic_stream(tool_use("c1", "read", {"path": "a.txt"}), model="tiny-window"),
        anthropic_stream(text("done"), model="tiny-window"),
        anthropic_stream(text("and the next one"), model="tiny-window"),
    )
    await anthropic_harness.run("read a.txt")
    await anthropic_harness.run("go on")
    settings = CompactionSettings(reserve_tokens=1_000, keep_recent_tokens=400)
    plan = preview(anthropic_harness.session, settings)
    assert plan is not None
    projection = project(anthropic_harness.session.index)
    guess = estimated_after(plan)
    system_and_tools = context_tokens(projection).tokens - plan.tokens_before  # 0: same projection
    assert system_and_tools == 0 and guess > plan.kept_tokens  # the system prompt and tools count too
    server.push(anthropic_stream(text(SUMMARY), model="tiny-window"))
    events = [e async for e in anthropic_harness.loop.compact()]
    finished = next(e for e in events if isinstance(e, CompactionFinished))
    compaction = next(e for e in anthropic_harness.entries() if e["type"] == "compaction")
    # the same function on the plan with the real summary gives exactly the result
    assert tokens_after_compaction(projection, plan, compaction["summary"]) == finished.tokens_after
    assert finished.tokens_after == context_tokens(project(anthropic_harness.session.index)).tokens
    # and the preview is that function with a summary of the guessed size, so the two differ by the
    # summary's size alone
    same_size = "x" * (len(compaction["summary"]))
    assert tokens_after_compaction(projection, plan, same_size) == finished.tokens_after

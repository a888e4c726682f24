"""Compaction planning (pure): token accounting, the cut, split turns, pins, repeated compactions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_tui.projection.compaction import (
    CompactionSettings,
    context_tokens,
    plan_compaction,
    serialize_conversation,
    should_compact,
    summary_request_text,
)
from agent_tui.projection.context import Status, project
from agent_tui.projection.request import prepare
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from agent_tui.projection.wire.openai_completions import openai_request
from tests.support.indexes import index_of
from tests.support.random_sessions import random_session
from tests.support.request_validity import anthropic_problems, openai_problems
from tests.support.session_builder import Builder, assistant, tool_result, user


def long_session(turns: int = 10, words: int = 700) -> Builder:
    """Turns of ~1,000 tokens each: user, assistant tool call, result, answer."""
    b = Builder()
    for t in range(turns):
        b.message(user(f"turn {t}: " + "word " * 20))
        b.message(assistant(f"reading for {t}", [(f"c{t}", "read", {"path": f"src/f{t}.py"})]))
        b.message(tool_result(f"c{t}", "line " * words))
        b.message(assistant(f"answer {t} " + "ok " * 50))
    return b


def test_context_tokens_use_last_usage_plus_estimate_and_ignore_stale_usage() -> None:
    b = Builder()
    b.message(user("q"))
    a = b.message(
        {
            **assistant("a"),
            "usage": {"input": 1000, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1050},
        }
    )
    b.message(user("x" * 35))
    t = context_tokens(project(index_of(b)))
    assert (t.tokens, t.usage_tokens, t.trailing_tokens, t.usage_entry_id) == (1060, 1050, 10, a)
    b.message({**assistant("aborted"), "stopReason": "aborted", "usage": {"totalTokens": 99999}})
    assert context_tokens(project(index_of(b))).usage_tokens == 1050  # aborted usage ignored
    b.add("context_edit", targetId="e0001", replacement={"content": "new"})
    stale = context_tokens(project(index_of(b)))
    assert stale.usage_tokens == 0 and stale.usage_entry_id is None  # usage before an edit no longer applies


def test_should_compact_threshold() -> None:
    s = CompactionSettings()
    assert not should_compact(200_000 - 16_384, 200_000, s)
    assert should_compact(200_000 - 16_383, 200_000, s)
    assert not should_compact(10**9, 200_000, CompactionSettings(enabled=False))


def test_cut_keeps_recent_tokens_at_a_turn_boundary_never_at_a_tool_result() -> None:
    b = long_session()
    p = project(index_of(b))
    plan = plan_compaction(p, CompactionSettings(keep_recent_tokens=2_500))
    assert plan is not None
    first = index_of(b).by_id[plan.first_kept_entry_id]
    assert first.role in ("user", "assistant")
    # the walk stops inside a turn's big tool result and moves to the next cut point, as pi does
    assert 1_200 <= plan.kept_tokens <= 2_500 + 1_400
    assert plan.summarized_entry_ids[0] == "e0001"
    assert len(plan.summarized_entry_ids) + len(plan.kept_entry_ids) == len(p.entries)
    summarized_turns = {
        int(index_of(b).by_id[i].data["message"]["content"].split(":")[0][5:])
        for i in plan.summarized_entry_ids
        if index_of(b).by_id[i].role == "user"
    }
    assert plan.read_files == sorted(f"src/f{t}.py" for t in summarized_turns)


def test_split_turn_summarizes_its_prefix_separately() -> None:
    b = Builder()
    b.message(user("one big turn"))
    for t in range(6):
        b.message(assistant(f"step {t}", [(f"c{t}", "read", {"path": "a"})]))
        b.message(tool_result(f"c{t}", "data " * 700))
    plan = plan_compaction(project(index_of(b)), CompactionSettings(keep_recent_tokens=1_500))
    assert plan is not None and plan.is_split_turn
    assert plan.messages_to_summarize == []  # nothing before the turn
    assert plan.turn_prefix_messages[0]["content"] == "one big turn"
    assert index_of(b).by_id[plan.first_kept_entry_id].role == "assistant"


def test_repeated_compactions_lose_no_message_between_kept_ranges() -> None:
    b = long_session(turns=12)
    settings = CompactionSettings(keep_recent_tokens=2_500)
    plan1 = plan_compaction(project(index_of(b)), settings)
    assert plan1 is not None
    c1 = b.add(
        "compaction",
        summary="FIRST",
        firstKeptEntryId=plan1.first_kept_entry_id,
        tokensBefore=plan1.tokens_before,
    )
    for t in range(12, 16):
        b.message(user(f"turn {t}"))
        b.message(assistant(f"answer {t} " + "ok " * 1500))
    p = project(index_of(b))
    plan2 = plan_compaction(p, settings)
    assert plan2 is not None and plan2.previous_summary == "FIRST"
    # the second summary covers exactly the first kept range up to the new cut: nothing twice, nothing lost
    assert plan2.summarized_entry_ids[0] == plan1.first_kept_entry_id
    all_ids = [e.id for e in index_of(b).active_path() if e.id != c1]
    covered = plan1.summarized_entry_ids + plan2.summarized_entry_ids + plan2.kept_entry_ids
    assert [i for i in all_ids if i not in covered] == []
    assert len(covered) == len(set(covered))
    text = summary_request_text(plan2.messages_to_summarize, plan2.previous_summary, "the parser")
    assert (
        "<previous-summary>\nFIRST" in text and "Additional focus: the parser" in text and "## Goal" in text
    )


def test_pins_survive_compaction_with_their_tool_partner() -> None:
    b = long_session(turns=6)
    b.add("pin", targetId="e0002", pinned=True)  # an assistant tool call of turn 0
    b.add("pin", targetId="e0005", pinned=True)  # the user message of turn 1
    b.add("compaction", summary="S", firstKeptEntryId="e0017", tokensBefore=1)
    b.message(user("after the compaction"))
    p = project(index_of(b))
    pinned = [(ce.entry.id, ce.status) for ce in p.entries if ce.status is Status.PINNED]
    assert pinned == [("e0002", Status.PINNED), ("e0003", Status.PINNED), ("e0005", Status.PINNED)]
    assert [ce.entry.id for ce in p.entries[:2]] == [p.compaction_id, "e0002"]
    assert "e0002" not in p.summarized_ids and "e0001" in p.summarized_ids
    assert anthropic_problems(anthropic_request(prepare(p.messages), "claude-sonnet-4-5")) == []
    plan = plan_compaction(p, CompactionSettings(keep_recent_tokens=500))
    assert plan is not None and "e0002" not in plan.summarized_entry_ids
    assert plan.first_kept_entry_id not in ("e0002", "e0003", "e0005")
    # unpinning (a later pin entry) folds it back into the summary
    b.add("pin", targetId="e0002", pinned=False)
    b.add("pin", targetId="e0005", pinned=False)
    assert all(ce.status is not Status.PINNED for ce in project(index_of(b)).entries)


def test_summarization_request_clips_tool_results() -> None:
    text = serialize_conversation([tool_result("c", "x" * 10_000)])
    assert len(text) < 2_100 and "more characters truncated" in text


def test_nothing_to_compact() -> None:
    b = Builder()
    b.message(user("hi"))
    b.add("compaction", summary="S", firstKeptEntryId="e0001", tokensBefore=1)
    assert plan_compaction(project(index_of(b)), CompactionSettings()) is None


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.integers(2, 60), keep=st.integers(1, 3_000))
def test_projection_after_compaction_is_summary_plus_path_from_first_kept(
    seed: int, size: int, keep: int
) -> None:
    """For random sessions: plan, append the compaction, and the view is the summary followed by the
    path from firstKeptEntryId (system messages left out), then everything after; always a valid request."""
    b = random_session(seed, size)
    b.message(user("the last prompt"))
    index = index_of(b)
    plan = plan_compaction(project(index), CompactionSettings(keep_recent_tokens=keep))
    if plan is None:
        return
    path_ids = [e.id for e in index.active_path()]
    c = b.add("compaction", summary="SUMMARY", firstKeptEntryId=plan.first_kept_entry_id, tokensBefore=1)
    b.message(user("after"))
    after = project(index_of(b))
    assert after.entries[0].entry.id == c
    assert after.messages[0].source_id == c and "SUMMARY" in after.messages[0].message["content"][0]["text"]
    kept = path_ids[path_ids.index(plan.first_kept_entry_id) :]
    by_id = index_of(b).by_id
    expected = [i for i in kept if not (by_id[i].type == "message" and by_id[i].role == "system")]
    got = [ce.entry.id for ce in after.entries[1:] if ce.status is not Status.PINNED]
    assert got == [*expected, after.path[-1].id]
    prepared = prepare(after.messages)
    assert anthropic_problems(anthropic_request(prepared, "claude-sonnet-4-5")) == []
    assert openai_problems(openai_request(prepared, "gpt-4.1")) == []


def test_after_a_hidden_overflow_attempt_an_input_too_big_is_kept_whole_not_summarized() -> None:
    """pi's recovery-omission rule (when all that follows the cut is the hidden failed attempt and
    its edit, the cut moves past the last input) summarized the input itself: the ≈5,000-token
    paste in a 4,000 window. A split turn whose prefix is the question alone saves nothing and loses
    the words: the plan keeps it whole, and the overflow recovery says it cannot fit."""
    b = long_session(turns=3)
    huge = b.message(user("paste: " + "word " * 4_000))
    attempt = b.message(assistant(stop="error"))
    b.add("context_edit", targetId=attempt, replacement=None)
    settings = CompactionSettings(keep_recent_tokens=2_000, reserve_tokens=500)
    plan = plan_compaction(project(index_of(b)), settings, window=4_000)
    assert plan is not None
    assert plan.first_kept_entry_id == huge and not plan.is_split_turn
    assert huge not in plan.summarized_entry_ids and plan.turn_prefix_messages == []

    # a turn with more than its question before the cut is still split as pi splits it
    c = long_session(turns=3)
    c.message(user("explain " + "word " * 50))
    c.message(assistant("reading", [("k1", "read", {"path": "big.py"})]))
    c.message(tool_result("k1", "line " * 3_000))
    last = c.message(assistant("the answer " * 20))
    plan = plan_compaction(project(index_of(c)), CompactionSettings(keep_recent_tokens=50), window=3_000)
    assert plan is not None and plan.is_split_turn and plan.first_kept_entry_id == last


def test_the_latest_question_is_kept_verbatim_whenever_it_fits() -> None:
    """After an overflow (turn 2's prompt refused) the recovery's compaction summarized the prompt
    into a "Turn Context (split turn)" and kept only the failed attempt: the retried request held
    the summary alone, and the model answered it, not the question. Where the prompt, what follows
    it, the system prompt and the reserve fit the window, the cut is at the prompt, whole."""
    b = long_session(turns=3)
    question = b.message(user("second: " + "word " * 1_300))
    attempt = b.message(assistant(stop="error"))
    b.add("context_edit", targetId=attempt, replacement=None)
    settings = CompactionSettings(keep_recent_tokens=200, reserve_tokens=500)
    for window in (4_000, None):  # the server's learned window, or the model's own
        plan = plan_compaction(project(index_of(b)), settings, window=window)
        assert plan is not None
        assert plan.first_kept_entry_id == question and not plan.is_split_turn
        assert question not in plan.summarized_entry_ids and plan.turn_prefix_messages == []
    # a small keep budget inside a long answered turn: the turn's question stays too
    c = long_session(turns=3)
    asked = c.message(user("explain the parser"))
    c.message(assistant("part " * 2_000))
    plan = plan_compaction(project(index_of(c)), CompactionSettings(keep_recent_tokens=100), window=200_000)
    assert plan is not None and plan.first_kept_entry_id == asked and not plan.is_split_turn

    # anything else after the input keeps the usual cut at that input
    c = long_session(turns=3)
    huge = c.message(user("paste: " + "word " * 4_000))
    c.message(assistant("a real reply"))
    plan = plan_compaction(project(index_of(c)), CompactionSettings(keep_recent_tokens=2_000))
    assert plan is not None and plan.first_kept_entry_id == huge

    # and a hidden attempt next to a replacement of some other entry is not a recovery suffix
    d = long_session(turns=3)
    huge = d.message(user("paste: " + "word " * 4_000))
    attempt = d.message(assistant(stop="error"))
    d.add("context_edit", targetId=attempt, replacement=None)
    d.add("context_edit", targetId="e0001", replacement={"content": "shorter"})
    plan = plan_compaction(project(index_of(d)), CompactionSettings(keep_recent_tokens=2_000))
    assert plan is not None and plan.first_kept_entry_id == huge

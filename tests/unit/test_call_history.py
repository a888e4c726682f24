"""The call history: why each call's cache missed, and what each entry cost by riding along.

Every figure is checked against a brute-force recomputation: the request of each reply is the
projection of the reply's parent, rebuilt from a fresh index of the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_tui.projection.call_history import cache_reports, carry_costs, model_calls
from agent_tui.projection.context import project
from agent_tui.projection.pricing import price_for
from agent_tui.projection.request import prepare
from agent_tui.projection.tokens import estimate_message
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.store.session import Session

MODEL = "claude-sonnet-4-5"


def reply(
    text: str, *, model: str = MODEL, cache_read: int = 0, cache_write: int = 0, input_: int = 50
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "anthropic",
        "model": model,
        "usage": {"input": input_, "output": 5, "cacheRead": cache_read, "cacheWrite": cache_write},
        "stopReason": "stop",
        "timestamp": 2,
    }


def system(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text, "timestamp": 1}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def _index(path: Path) -> SessionIndex:
    return SessionIndex(read_file(path), str(path))


def _conversation(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Six calls, each a different reason for the cache to miss (or not)."""
    ids: dict[str, str] = {}
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message(system("You are terse."))
        s.append_message(user("first question " + "x" * 400))
        ids["r1"] = s.append_message(reply("one", cache_write=120)).id
        ids["u2"] = s.append_message(user("second " + "y" * 800)).id
        ids["r2"] = s.append_message(reply("two", cache_read=120, cache_write=200)).id
        ids["hide"] = s.hide(ids["u2"]).id
        s.append_message(user("third"))
        ids["r3"] = s.append_message(reply("three", cache_read=120)).id
        ids["sys"] = s.append_message(system("You are verbose.")).id
        s.append_message(user("fourth"))
        ids["r4"] = s.append_message(reply("four")).id
        s.append_message(user("fifth"))
        ids["r5"] = s.append_message(reply("five", model="claude-opus-4-5")).id
        s.append_message(user("sixth"))
        ids["r6"] = s.append_message(reply("six", model="claude-opus-4-5", cache_read=90)).id
        path = s.path
    return Path(path), ids


def test_each_call_names_why_its_cache_missed(tmp_path: Path) -> None:
    path, ids = _conversation(tmp_path)
    reports = cache_reports(model_calls(_index(path)))
    by_reply = {r.call.entry_id: r for r in reports}
    assert [r.call.entry_id for r in reports] == [ids[k] for k in ("r1", "r2", "r3", "r4", "r5", "r6")]
    assert by_reply[ids["r1"]].cause.kind == "first call"
    # r2 extends r1's request: everything r1 sent is shared
    r2 = by_reply[ids["r2"]]
    assert r2.cause.kind == "none" and r2.first_difference is None
    assert r2.shared_prefix_tokens == by_reply[ids["r1"]].call.tokens
    # r3: the hidden second question ends the shared prefix, and the hide is named
    r3 = by_reply[ids["r3"]]
    assert (r3.cause.kind, r3.cause.entry_id, r3.first_difference) == ("hidden", ids["hide"], ids["u2"])
    assert 0 < r3.shared_prefix_tokens < r2.call.tokens
    # r4: a new system message changes the system prompt at the start: nothing shared
    r4 = by_reply[ids["r4"]]
    assert (r4.cause.kind, r4.cause.entry_id, r4.shared_prefix_tokens) == ("system prompt", ids["sys"], 0)
    assert by_reply[ids["r5"]].cause.kind == "model change"
    assert by_reply[ids["r6"]].cause.kind == "none"
    assert by_reply[ids["r6"]].as_json()["reported"]["cacheRead"] == 90


def _brute_force_requests(path: Path) -> dict[str, list[tuple[str | None, int]]]:
    """Each reply's request as (source entry, tokens) pieces, from a fresh projection per reply."""
    index = _index(path)
    requests: dict[str, list[tuple[str | None, int]]] = {}
    for entry in index.path_to(index.leaf_id):
        if entry.type == "message" and entry.role == "assistant":
            prepared = prepare(project(index, entry.parent_id).messages)
            pieces: list[tuple[str | None, int]] = []
            for m in prepared.messages:
                sent: dict[str, Any] = {"role": m.role, "content": m.content}
                if m.role == "toolResult":
                    sent["toolCallId"] = m.message.get("toolCallId")
                pieces.append((m.source_id, estimate_message(sent)))
            requests[entry.id] = pieces
    return requests


def test_carried_tokens_equal_a_brute_force_sum_over_every_request(tmp_path: Path) -> None:
    path, ids = _conversation(tmp_path)
    calls = model_calls(_index(path))
    expected: dict[str, tuple[int, int]] = {}
    for pieces in _brute_force_requests(path).values():
        for source, tokens in pieces:
            assert source is not None
            calls_, carried = expected.get(source, (0, 0))
            expected[source] = (calls_ + 1, carried + tokens)
    carries = {c.entry_id: c for c in carry_costs(calls) if c.entry_id in expected}
    assert {k: (c.calls, c.carried_tokens) for k, c in carries.items()} == expected
    # the hidden question rode in r2 only (once: it is gone from r3 on), so hiding it saves nothing more
    assert carries[ids["u2"]].calls == 1
    assert carries[ids["u2"]].saving(10)[0] == 0


def test_carry_cost_prices_cache_reads_as_cache_reads(tmp_path: Path) -> None:
    """One call whose whole request the server read from its cache: each entry's share is priced
    at the cache-read rate, and the shares add up to the call's prompt cost."""
    with Session.create(tmp_path, tmp_path) as s:
        first = s.append_message(user("a" * 400)).id
        s.append_message(reply("ok", cache_read=0, cache_write=0, input_=100))
        second = s.append_message(user("b" * 400)).id
        s.append_message(reply("ok", cache_read=100, input_=100))
        path = Path(s.path)
    price = price_for(MODEL)
    assert price is not None
    rates = price.base
    carries = {c.entry_id: c for c in carry_costs(model_calls(_index(path)))}
    # call 1: 100 input tokens for the first question alone; call 2: the first 100 from the cache
    expected_first = (100 * rates.input + 100 * rates.cache_read) / 1_000_000
    assert carries[first].cost == pytest.approx(expected_first, rel=0.05)
    assert carries[second].cost == pytest.approx(100 * rates.input / 1_000_000, rel=0.05)
    tokens, dollars = carries[first].saving(10)
    assert tokens == carries[first].last_tokens * 10
    assert dollars == pytest.approx(10 * 100 * rates.cache_read / 1_000_000, rel=0.05)


def test_a_compaction_is_named_as_the_cause(tmp_path: Path) -> None:
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message(user("old " + "z" * 400))
        s.append_message(reply("old reply"))
        kept = s.append_message(user("kept question")).id
        s.append_message(reply("kept reply"))
        compaction = s.append(
            {
                "type": "compaction",
                "summary": "They asked about z.",
                "firstKeptEntryId": kept,
                "tokensBefore": 200,
            }
        ).id
        s.append_message(user("after"))
        s.append_message(reply("after reply"))
        path = Path(s.path)
    last = cache_reports(model_calls(_index(path)))[-1]
    assert (last.cause.kind, last.cause.entry_id, last.shared_prefix_tokens) == ("compaction", compaction, 0)


def _tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"the {name} tool",
        "parameters": {"type": "object", "properties": {}},
    }


def test_a_change_of_the_tool_list_alone_is_named_as_the_cause(tmp_path: Path) -> None:
    """System messages that only add or remove tools (the prompt's text stays the same): each call
    after one names the tool list, with the tools, and shares nothing (the tools come first)."""
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message({**system("You are terse."), "toolsAdded": [_tool("read")]})
        s.append_message(user("first " + "x" * 400))
        s.append_message(reply("one"))
        added = s.append_message({"role": "system", "toolsAdded": [_tool("bash")], "timestamp": 1}).id
        s.append_message(user("second"))
        s.append_message(reply("two"))
        s.append_message(user("third"))
        s.append_message(reply("three"))
        removed = s.append_message(
            {"role": "system", "toolsRemoved": [{"name": "read"}, {"name": "bash"}], "timestamp": 1}
        ).id
        s.append_message(user("fourth"))
        s.append_message(reply("four"))
        path = Path(s.path)
    reports = cache_reports(model_calls(_index(path)))
    kinds = [(r.cause.kind, r.first_difference, r.shared_prefix_tokens) for r in reports]
    assert kinds == [
        ("first call", None, 0),
        ("tool list", "tools", 0),
        ("none", None, kinds[2][2]),
        ("tool list", "tools", 0),
    ]
    assert kinds[2][2] == reports[1].call.tokens  # the call after the change shares all of it again
    # the system prompt's text did not change: the tool list is the cause, not the prompt
    second, fourth = reports[1], reports[3]
    assert (second.cause.entry_id, second.cause.detail) == (added, "added bash")
    assert (fourth.cause.entry_id, fourth.cause.detail) == (removed, "removed bash, read")

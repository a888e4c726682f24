"""Property tests of the call history over random sessions (trees, hides, replacements,
compactions, system messages, model changes, cache reads): for every call of the leaf's branch,

- the carried tokens and call count of each entry equal a brute-force sum over a fresh
  projection of each call (the projection of the reply's parent, from a new index of the file);
- the shared prefix of each call equals a brute-force comparison of its prepared request with
  the previous call's (piece by piece, canonical JSON; nothing shared across a model change).

The brute force reads none of call_history's code: it prepares each request itself."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_tui.projection.call_history import cache_reports, carry_costs, model_calls
from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from agent_tui.projection.tokens import estimate_message, estimate_text, estimate_tools, image_rule
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from tests.support.random_sessions import random_session

MODELS = ("claude-sonnet-4-5",) * 9 + ("claude-opus-4-5",)

# (kind, source entry, what is sent as canonical JSON, tokens)
Piece = tuple[str, str | None, str, int]


def _session(tmp_path: Path, seed: int, size: int) -> SessionIndex:
    b = random_session(seed, size)
    rng = random.Random(seed * 7 + 1)
    for line in b.lines:  # models change now and then; the server read some of each from its cache
        message = line.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant":
            message["model"] = rng.choice(MODELS)
            message["usage"] = {**message["usage"], "cacheRead": rng.choice([0, 0, 5, 40])}
    path = b.write(tmp_path / f"s{seed}.jsonl")
    return SessionIndex(read_file(path), str(path))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _brute_force(index: SessionIndex) -> Iterator[tuple[str, str | None, list[Piece]]]:
    """Each reply of the leaf's branch: (its id, its model, its request as pieces), each request
    prepared from a fresh projection of the reply's parent."""
    for entry in index.path_to(index.leaf_id):
        if entry.type != "message" or entry.role != "assistant" or entry.parent_id is None:
            continue
        message = entry.message or {}
        projection = project(index, entry.parent_id)
        prepared = prepare(projection.messages)
        images = image_rule({"provider": message.get("provider"), "modelId": message.get("model")})
        pieces: list[Piece] = []
        if prepared.tools:
            pieces.append(("tools", None, _canonical(prepared.tools), estimate_tools(prepared.tools)))
        if prepared.system:
            system_id = next((m.source_id for m in reversed(projection.messages) if m.role == "system"), None)
            pieces.append(("system", system_id, _canonical(prepared.system), estimate_text(prepared.system)))
        for m in prepared.messages:
            sent: dict[str, Any] = {"role": m.role, "content": m.content}
            if m.role == "toolResult":
                sent["toolCallId"] = m.message.get("toolCallId")
            pieces.append(("message", m.source_id, _canonical(sent), estimate_message(sent, images)))
        yield entry.id, message.get("model"), pieces


def _check(tmp_path: Path, seed: int, size: int) -> int:
    """Check one random session; the number of calls it had."""
    index = _session(tmp_path, seed, size)
    calls = model_calls(index)
    expected = list(_brute_force(index))
    assert [c.entry_id for c in calls] == [reply for reply, _, _ in expected], seed

    carried: dict[str, tuple[int, int]] = {}
    for _, _, pieces in expected:
        for kind, source, _, tokens in pieces:
            key = source if source is not None else f"({kind})"
            n, total = carried.get(key, (0, 0))
            carried[key] = (n + 1, total + tokens)
    assert {c.entry_id: (c.calls, c.carried_tokens) for c in carry_costs(calls)} == carried, seed

    reports = cache_reports(calls)
    previous: tuple[str | None, list[Piece]] | None = None
    for report, (reply, model, pieces) in zip(reports, expected, strict=True):
        if previous is None or previous[0] != model:
            shared = 0  # the first call, or another model: its cache holds nothing of this one
        else:
            shared = 0
            for old, new in zip(previous[1], pieces, strict=False):
                if old[2] != new[2]:
                    break
                shared += new[3]
        assert report.shared_prefix_tokens == shared, (seed, reply)
        if previous is not None and previous[0] == model:
            whole = len(previous[1]) <= len(pieces) and all(
                o[2] == n[2] for o, n in zip(previous[1], pieces, strict=False)
            )
            assert (report.first_difference is None) == whole, (seed, reply)
        previous = (model, pieces)
    return len(calls)


def test_call_history_equals_a_brute_force_recount_over_random_sessions(tmp_path: Path) -> None:
    calls = [_check(tmp_path, seed, 60) for seed in range(40)]
    assert sum(1 for n in calls if n >= 3) >= 20, calls  # most sessions have several calls


@pytest.mark.slow
@pytest.mark.parametrize("block", range(4))
def test_call_history_equals_a_brute_force_recount_over_more_random_sessions(
    tmp_path: Path, block: int
) -> None:
    for seed in range(1_000 + 100 * block, 1_100 + 100 * block):
        _check(tmp_path, seed, 90)

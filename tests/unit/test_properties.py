"""Property tests: random sessions always project to valid requests; appends never touch earlier bytes."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from agent_tui.projection.wire.openai_completions import openai_request
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import parse_session
from agent_tui.store.session import Session
from tests.support.random_sessions import random_session
from tests.support.request_validity import anthropic_problems, openai_problems
from tests.support.session_builder import Builder, assistant, user


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), size=st.integers(0, 60))
def test_random_sessions_always_give_valid_requests(seed: int, size: int) -> None:
    b = random_session(seed, size)
    index = SessionIndex(parse_session(b.text().encode()))
    for leaf in [index.leaf_id, *[e.id for e in index.entries[:: max(1, len(index.entries) // 5)]]]:
        prepared = prepare(project(index, leaf).messages)
        body = anthropic_request(prepared, "claude-sonnet-4-5")
        assert anthropic_problems(body) == [], (seed, size, leaf)
        assert openai_problems(openai_request(prepared, "gpt-4.1")) == [], (seed, size, leaf)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_session_actions_never_change_an_earlier_byte(seed: int, tmp_path_factory: Any) -> None:
    rng = random.Random(seed)
    path = random_session(seed, 25).write(tmp_path_factory.mktemp("s") / "s.jsonl")
    for _ in range(6):
        before = path.read_bytes()
        with Session.open(path) as s:
            on_path = [
                e.id
                for e in s.index.active_path()
                if e.type == "message" and e.role in ("user", "assistant", "toolResult")
            ]
            every = [e.id for e in s.index.entries]
            action = rng.choice(["hide", "replace", "restore", "label", "rename", "branch", "pin", "message"])
            if action in ("hide", "replace", "restore") and on_path:
                target = rng.choice(on_path)
                if action == "hide":
                    s.hide(target)
                elif action == "replace":
                    s.replace(target, "r")
                else:
                    s.restore(target)
            elif action == "label" and every:
                s.label(rng.choice(every), rng.choice(["x", None]))
            elif action == "rename":
                s.rename("name")
            elif action == "branch" and every:
                s.branch(rng.choice(every))
            elif action == "pin" and every:
                s.pin(rng.choice(every))
            else:
                s.append_message(user("more"))
        after = path.read_bytes()
        assert (after.startswith(before) and len(after) > len(before)) or after == before


def test_cut_at_every_byte_of_the_last_line_loads_and_accepts_an_append(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("first"))
    b.message(assistant("second é ü 漢字"))  # multibyte characters: cuts land inside them too
    full = b.text().encode()
    last_start = full.rstrip(b"\n").rfind(b"\n") + 1
    for cut in range(last_start, len(full) + 1):
        path = tmp_path / f"cut{cut}.jsonl"
        path.write_bytes(full[:cut])
        index = SessionIndex(parse_session(path.read_bytes()))
        complete = cut >= len(full) - 1  # the whole line, with or without its newline
        assert [e.id for e in index.entries] == (["e0001", "e0002"] if complete else ["e0001"]), cut
        with Session.open(path) as s:
            new = s.append_message(user("next"))
        reloaded = SessionIndex(parse_session(path.read_bytes()))
        assert path.read_bytes().startswith(full[:cut])
        assert reloaded.leaf_id == new.id, cut
        assert reloaded.by_id[new.id].parent_id == ("e0002" if complete else "e0001")
        lines = path.read_bytes().split(b"\n")
        assert json.loads(lines[-2])["id"] == new.id  # the new entry sits on a line of its own


def _snapshot(p: Any) -> list[Any]:
    return [
        [(ce.entry.id, ce.status, ce.edit_id, ce.pinned) for ce in p.entries],
        [(m.source_id, m.status, m.role, m.message) for m in p.messages],
        p.model,
        p.thinking_level,
        p.compaction_id,
        p.summarized_ids,
        [e.id for e in p.path],
    ]


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.integers(1, 50))
def test_incremental_projection_equals_full_projection(seed: int, size: int) -> None:
    from agent_tui.projection.context import Projector
    from agent_tui.store.reader import LoadedFile

    b = random_session(seed, size)
    loaded = parse_session(b.text().encode())
    index = SessionIndex(LoadedFile(header=loaded.header, entries=[]))
    projector = Projector(index)
    rng = random.Random(seed)
    for entry in loaded.entries:
        index.add(entry)
        if rng.random() < 0.7:  # sometimes several appends between two projections
            assert _snapshot(projector.project()) == _snapshot(project(index))
    assert _snapshot(projector.project()) == _snapshot(project(index))

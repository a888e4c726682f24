"""Pruning old tool output on the 50 MB benchmark session (no model call).

Plans ``plan_prune`` with the defaults (keep the last 3 results, prune output over 1,000 tokens)
on the projection of the generated session and reports the tool results pruned, the tokens of
the next request before and after (the figures the preview prints), the time to plan, and the
time to append the edits to a copy of the file and to project it again.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from gen_session import DEFAULT_BYTES, DEFAULT_ENTRIES, DEFAULT_SEED, ensure_session  # noqa: E402

from agent_tui.projection.context import project  # noqa: E402
from agent_tui.projection.surgery import apply, plan_prune  # noqa: E402
from agent_tui.projection.tokens import context_tokens  # noqa: E402
from agent_tui.store.index import SessionIndex  # noqa: E402
from agent_tui.store.reader import read_file  # noqa: E402
from agent_tui.store.session import Session  # noqa: E402
from agent_tui.store.writer import FsyncPolicy  # noqa: E402

RUNS = 5


def run() -> list[tuple[str, str]]:
    path, _, _ = ensure_session(BENCH / "data", DEFAULT_SEED, DEFAULT_ENTRIES, DEFAULT_BYTES)
    index = SessionIndex(read_file(path), str(path))
    projection = project(index)
    times = []
    plan = None
    for _ in range(RUNS):
        t0 = time.perf_counter()
        plan = plan_prune(projection)
        times.append(time.perf_counter() - t0)
    assert plan is not None
    rows = [
        ("tool results pruned (keep last 3, over 1,000 tokens)", f"{len(plan.edits):,}"),
        ("tool output replaced by stubs", f"{int(plan.extra['outputTokens']):,} tokens"),
        (
            "whole request, estimated, before → after (the preview)",
            f"{plan.estimated_before:,} → {plan.tokens_after:,} tokens ({plan.saved:,} saved)",
        ),
        ("panel figure before (reported usage + estimate after it)", f"{plan.tokens_before:,} tokens"),
        (f"plan (project with drafts, count), median of {RUNS}", f"{statistics.median(times) * 1000:.0f} ms"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.name
        shutil.copyfile(path, copy)
        with Session.open(copy, fsync=FsyncPolicy.NEVER) as session:
            t0 = time.perf_counter()
            live = plan_prune(project(session.index))
            apply(session, live)
            applied = time.perf_counter() - t0
            after = context_tokens(project(session.index)).tokens
        rows.append(("plan + append the edits and the record", f"{applied * 1000:.0f} ms"))
        rows.append(
            (
                "next request after the append (same as the preview?)",
                f"{after:,} ({after == plan.tokens_after})",
            )
        )
    return rows


if __name__ == "__main__":
    for label, figure in run():
        print(f"    {label:<58} {figure}")

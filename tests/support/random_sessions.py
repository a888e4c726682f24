"""Random session trees for property tests and the corruption campaign."""

from __future__ import annotations

import random
from typing import Any

from tests.support.session_builder import Builder, assistant, tool_result, user


def random_session(seed: int, size: int) -> Builder:
    """A random tree: turns with tool calls (some unanswered, some duplicated), branches,
    hides and replacements of random entries, compactions at random points, aborted replies."""
    rng = random.Random(seed)
    b = Builder()
    ids: list[str] = []
    calls = 0
    for _ in range(size):
        r = rng.random()
        if ids and r < 0.12:
            b.leaf = rng.choice(ids)  # branch from anywhere
            continue
        if r < 0.35:
            text = rng.choice(["hello", "", "  ", "fix the bug", "run tests"])
            ids.append(b.message(user(text)))
        elif r < 0.6:
            n = rng.choice([0, 0, 1, 2, 3])
            made = [(f"call_{calls + i}" + rng.choice(["", "|x.y"]), "read", {"path": "f"}) for i in range(n)]
            calls += n
            stop = rng.choice([None, None, None, "aborted", "error"])
            ids.append(b.message(assistant(rng.choice(["", "ok", "done"]), made, stop=stop)))
            for cid, _, _ in made:
                if rng.random() < 0.8:
                    ids.append(b.message(tool_result(cid, rng.choice(["out", ""]))))
                if rng.random() < 0.1:
                    ids.append(b.message(tool_result(cid, "again")))
        elif r < 0.7 and ids:
            target = rng.choice(ids)
            replacement: Any = (
                None
                if rng.random() < 0.5
                else {"content": rng.choice(["new", "", [{"type": "text", "text": "blk"}]])}
            )
            ids.append(b.add("context_edit", targetId=target, replacement=replacement))
        elif r < 0.78 and ids:
            path_ids = ids[:]
            first = rng.choice(path_ids)
            cid = b.add("compaction", summary="summary", firstKeptEntryId=first, tokensBefore=100)
            if rng.random() < 0.3:
                b.lines[-1]["firstKeptEntryId"] = cid  # keeps nothing
            ids.append(cid)
        elif r < 0.84:
            ids.append(b.message({"role": "system", "content": rng.choice(["sys", ""]), "timestamp": 0}))
        elif r < 0.9:
            ids.append(
                b.add("custom_message", customType="x", content=rng.choice(["note", [], ""]), display=True)
            )
        elif r < 0.95 and ids:
            ids.append(b.add("label", targetId=rng.choice(ids), label="L"))
        else:
            ids.append(b.message(tool_result(f"stray_{rng.randint(0, 9)}", "stray")))
    if ids and rng.random() < 0.5:
        b.leaf = rng.choice(ids)
        b.add("custom", customType="agent-tui.branch", data={})
    return b

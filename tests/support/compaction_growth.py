"""Whether a session's compactions made its context smaller: each compaction's ``tokensBefore``
against the context right after it (the branch projected at the compaction entry, estimated as the
agent estimates it when it refuses a summary that grows the context). Compaction entries record no
figure after, so this is worked out from the file."""

from __future__ import annotations

from pathlib import Path

from agent_tui.projection.context import project
from agent_tui.projection.tokens import context_tokens
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file


def compaction_sizes(path: Path) -> list[tuple[str, int, int]]:
    """(compaction id, tokensBefore, the context after it) for every compaction in ``path``."""
    index = SessionIndex(read_file(path), str(path))
    return [
        (e.id, int(e.data.get("tokensBefore") or 0), context_tokens(project(index, e.id)).tokens)
        for e in index.entries
        if e.type == "compaction"
    ]


__all__ = ["compaction_sizes"]

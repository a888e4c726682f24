"""Which entries the chat shows: the tail of the path, and how many it shows before it, counted on
from the last sync while the path keeps its prefix."""

from __future__ import annotations

from typing import Any

from agent_tui.store.record import Entry
from agent_tui.tui.widgets.chat_view import ChatView, shown_in_chat


def chain(n: int, prefix: str = "e", parent: str | None = None, usage_every: int = 5) -> list[Entry]:
    """``n`` entries in a chain, every ``usage_every``-th a kind the chat does not show."""
    out: list[Entry] = []
    for i in range(n):
        eid = f"{prefix}{i}"
        data: dict[str, Any]
        if i % usage_every == usage_every - 1:
            data = {"type": "usage", "id": eid, "parentId": parent, "timestamp": "2025-01-01T00:00:00Z"}
        else:
            data = {
                "type": "message",
                "id": eid,
                "parentId": parent,
                "timestamp": "2025-01-01T00:00:00Z",
                "message": {"role": "user", "content": f"m{i}", "timestamp": i},
            }
        out.append(Entry.from_data(data))
        parent = eid
    return out


def expected(path: list[Entry], window: int) -> tuple[list[str], int]:
    shown = [e for e in path if shown_in_chat(e)]
    tail = shown[-window:]
    return [e.id for e in tail], len(shown) - len(tail)


def test_the_tail_and_the_count_before_it_match_a_full_walk_as_the_path_grows_and_branches() -> None:
    chat = ChatView()
    path = chain(200)
    assert not shown_in_chat(path[4])
    for grown in (3, 17, 60, 200):  # appends: counted on from the last count
        tail, before = chat._tail(path[:grown])
        assert ([e.id for e in tail], before) == expected(path[:grown], chat.window)
    # a branch from entry 120, longer than what was counted: the same length, another prefix
    branch = path[:121] + chain(100, prefix="b", parent=path[120].id)
    tail, before = chat._tail(branch)
    assert ([e.id for e in tail], before) == expected(branch, chat.window)
    # another file altogether, shorter
    other = chain(40, prefix="o")
    tail, before = chat._tail(other)
    assert ([e.id for e in tail], before) == expected(other, chat.window)
    chat.window = 500  # more than the path: nothing before the tail
    tail, before = chat._tail(other)
    assert ([e.id for e in tail], before) == expected(other, 500)

"""The shortcuts opening a 150,000-entry session takes (``SessionIndex.detached``'s one pass in
file order, the cached ``path_to``, ``other_roots`` by a set difference) say what the walks they
replace say, on random files with duplicate ids, dangling parents and parent cycles."""

from __future__ import annotations

import random

import pytest

from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import LoadedFile
from agent_tui.store.record import Entry
from agent_tui.tui.tree_state import other_roots


def _index(links: list[tuple[str, str | None]]) -> SessionIndex:
    entries = [Entry("custom", eid, parent, i + 2) for i, (eid, parent) in enumerate(links)]
    return SessionIndex(LoadedFile(header={"type": "session", "version": 3}, entries=entries))


def _detached_by_walking(index: SessionIndex) -> set[str]:
    out: set[str] = set()
    for eid, entry in index.by_id.items():
        seen: set[str] = set()
        current: Entry | None = entry
        while current is not None and current.id not in seen:
            seen.add(current.id)
            current = index.by_id.get(current.parent_id) if current.parent_id is not None else None
        if current is not None:  # came back to an entry on the way: a cycle above (or at) it
            out.add(eid)
    return out


def _other_roots_by_scanning(index: SessionIndex, main_root: str | None) -> list[str]:
    roots = [e.id for e in index.children.get(None, ()) if e.id != main_root]
    roots += [
        e.id
        for e in index.entries
        if e.parent_id is not None
        and e.parent_id not in index.by_id
        and e.id != main_root
        and index.by_id.get(e.id) is e
    ]
    return roots


def _random_links(rng: random.Random, n: int) -> list[tuple[str, str | None]]:
    links: list[tuple[str, str | None]] = []
    for i in range(n):
        r = rng.random()
        if i == 0 or r < 0.05:
            parent = None
        elif r < 0.1:
            parent = f"missing{rng.randrange(3)}"  # dangling
        elif r < 0.15:
            parent = f"e{rng.randrange(n)}"  # anywhere, later ones too: cycles are possible
        else:
            parent = links[rng.randrange(max(0, i - 3), i)][0]
        eid = f"e{rng.randrange(i)}" if i and rng.random() < 0.05 else f"e{i}"  # some duplicates
        links.append((eid, parent))
    return links


@pytest.mark.parametrize("seed", range(60))
def test_fast_paths_agree_with_the_walks(seed: int) -> None:
    rng = random.Random(seed)
    index = _index(_random_links(rng, rng.randrange(1, 60)))
    assert index.detached() == _detached_by_walking(index)
    main_root = index.active_path()[0].id if index.active_path() else None
    assert [e.id for e in other_roots(index, main_root)] == _other_roots_by_scanning(index, main_root)


def test_a_plain_file_has_nothing_detached_and_a_cycle_is_found() -> None:
    plain = _index([("a", None), ("b", "a"), ("c", "b"), ("d", "zz")])
    assert plain.detached() == set()
    # c's parent comes later in the file: no shortcut, the walk decides (no cycle here)
    late = _index([("a", None), ("c", "b"), ("b", "a")])
    assert late.detached() == set()
    cycle = _index([("a", None), ("b", "c"), ("c", "b"), ("d", "c")])
    assert cycle.detached() == {"b", "c", "d"}
    # a later duplicate of a makes a cycle with b although the first a was a root
    shadowed = _index([("a", None), ("b", "a"), ("a", "b")])
    assert shadowed.detached() == {"a", "b"}


def test_the_cached_path_follows_appends() -> None:
    index = _index([("a", None), ("b", "a"), ("c", "a")])
    first = index.path_to("c")
    assert [e.id for e in first] == ["a", "c"]
    first.append(first[0])  # a caller's change to its copy does not reach the cache
    assert [e.id for e in index.active_path()] == ["a", "c"]
    index.add(Entry("custom", "d", "b", 5))
    assert [e.id for e in index.active_path()] == ["a", "b", "d"]
    index.add(Entry("custom", "b", "c", 6))  # a duplicate id moves b under c
    assert [e.id for e in index.path_to("d")] == ["a", "c", "b", "d"]

"""The in-memory index of one session: entries by id, children, labels, name, leaf.

Pure bookkeeping over :class:`Entry` objects; the file I/O lives in
``reader`` and ``writer``. Follows pi's rules: the leaf is the last entry in
file order, a later duplicate id shadows an earlier one, the latest
``label`` entry for a target wins (an empty label clears it), and the latest
``session_info`` names the session.
"""

from __future__ import annotations

from collections.abc import Iterator

from agent_tui.store.errors import EntryNotFoundError
from agent_tui.store.reader import LoadedFile, LoadWarning
from agent_tui.store.record import Entry, JSONObject

#: The entry types that say something about other entries or the session (read when indexed).
_NAMING = frozenset(("label", "session_info", "pin"))


class SessionIndex:
    def __init__(self, loaded: LoadedFile, name: str = "<session>") -> None:
        self.file_name = name
        self.header: JSONObject = loaded.header
        self.version = loaded.version
        self.warnings: list[LoadWarning] = list(loaded.warnings)
        self.entries: list[Entry] = []
        self.by_id: dict[str, Entry] = {}
        self.labels: dict[str, str] = {}
        self.pins: dict[str, bool] = {}
        self.name: str | None = None
        self.leaf_id: str | None = None
        self._children: dict[str | None, list[Entry]] | None = None
        self._roots_cache: list[Entry] | None = None
        self._detached: set[str] | None = None  # see ``detached`` (built on first use)
        self._cycle_roots: list[Entry] | None = None
        self._path_cache: tuple[str, int, list[Entry]] | None = None  # (leaf id, entries, its path)
        for entry in loaded.entries:
            self.add(entry)

    # -- building -----------------------------------------------------------------

    def add(self, entry: Entry) -> None:
        """Index one entry (loaded or just appended): it becomes the leaf."""
        previous = self.by_id.get(entry.id)
        if previous is not None:
            self.warnings.append(
                LoadWarning(
                    entry.line, f"duplicate id {entry.id} (also on line {previous.line}); the later one wins"
                )
            )
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        self.leaf_id = entry.id
        if entry.type in _NAMING:
            self._apply(entry)
        if self._children is not None:
            self._children.setdefault(entry.parent_id, []).append(entry)
            self._roots_cache = None
        if self._detached is not None:
            if previous is not None:  # a duplicate id can make or break a cycle: work it out again
                self._detached = self._cycle_roots = None
            elif entry.parent_id is not None and entry.parent_id in self._detached:
                self._detached.add(entry.id)  # below a cycle: the walk from its cut point reaches it

    def _apply(self, entry: Entry) -> None:
        """A label, a session name or a pin: what it says about other entries or the session."""
        if entry.type == "label":
            self._apply_label(entry.data)
        elif entry.type == "session_info":
            name = entry.data.get("name")
            self.name = name.strip() or None if isinstance(name, str) else None
        elif entry.type == "pin":
            target = entry.data.get("targetId")
            if isinstance(target, str):
                self.pins[target] = bool(entry.data.get("pinned", True))

    def _apply_label(self, data: JSONObject) -> None:
        target, label = data.get("targetId"), data.get("label")
        if not isinstance(target, str):
            return
        if isinstance(label, str) and label.strip():
            self.labels[target] = label
        else:
            self.labels.pop(target, None)

    def redacted(self) -> SessionIndex:
        """A copy with secrets replaced in every entry (for exports of files we did not write)."""
        from agent_tui.store.reader import LoadedFile
        from agent_tui.store.redact import redact_value

        copy = SessionIndex(
            LoadedFile(
                header=redact_value(self.header),
                entries=[Entry.from_data(redact_value(e.data), e.line) for e in self.entries],
            ),
            self.file_name,
        )
        copy.version = self.version
        copy.warnings = list(self.warnings)
        return copy

    # -- lookups ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.by_id

    def get(self, entry_id: str) -> Entry:
        entry = self.by_id.get(entry_id)
        if entry is None:
            raise EntryNotFoundError(f"{self.file_name}: no entry with id {entry_id!r}")
        return entry

    def is_pinned(self, entry_id: str) -> bool:
        return self.pins.get(entry_id, False)

    def path_to(self, leaf_id: str | None) -> list[Entry]:
        """Entries from the root to ``leaf_id`` (inclusive). Stops at a dangling parent or a cycle."""
        if leaf_id is None:
            return []
        cached = self._path_cache
        if cached is not None and cached[0] == leaf_id and cached[1] == len(self.entries):
            return list(cached[2])  # opening asks for the same 150,000-entry path three times
        path = self._walk_up(leaf_id)
        self._path_cache = (leaf_id, len(self.entries), path)
        return list(path)

    def _walk_up(self, leaf_id: str) -> list[Entry]:
        by_id = self.by_id
        path: list[Entry] = []
        append = path.append
        current = by_id.get(leaf_id)
        while current is not None:
            append(current)
            parent = current.parent_id
            current = by_id.get(parent) if parent is not None else None
            if len(path) > len(by_id):  # longer than the whole file: a cycle; walk again, watching for it
                return self._path_through_cycle(leaf_id)
        path.reverse()
        return path

    def _path_through_cycle(self, leaf_id: str) -> list[Entry]:
        path: list[Entry] = []
        seen: set[str] = set()
        current = self.by_id.get(leaf_id)
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            current = self.by_id.get(current.parent_id) if current.parent_id is not None else None
        path.reverse()
        return path

    def active_path(self) -> list[Entry]:
        return self.path_to(self.leaf_id)

    # -- tree -----------------------------------------------------------------

    @property
    def children(self) -> dict[str | None, list[Entry]]:
        """Children by parent id, in file order (built on first use)."""
        if self._children is None:
            children: dict[str | None, list[Entry]] = {}
            for entry in self.entries:
                if self.by_id.get(entry.id) is entry:  # shadowed duplicates are not tree nodes
                    children.setdefault(entry.parent_id, []).append(entry)
            self._children = children
        return self._children

    def roots(self) -> list[Entry]:
        """Entries with no parent, with a dangling parent, or that break a parent cycle."""
        if self._roots_cache is not None:
            return self._roots_cache
        children = self.children
        roots = [
            e
            for e in self.entries
            if self.by_id.get(e.id) is e and (e.parent_id is None or e.parent_id not in self.by_id)
        ]
        reached: set[str] = set()
        for root in roots:
            reached.update(e.id for e in self.walk(root))
        for entry in self.entries:  # what a cycle hides from every root
            if entry.id not in reached and self.by_id.get(entry.id) is entry:
                roots.append(entry)
                reached.update(e.id for e in self.walk(entry))
        del children
        self._roots_cache = roots
        return roots

    def detached(self) -> set[str]:
        """Ids of the entries no root reaches: those in a parentId cycle and those below one.

        One pass up the parent links (each entry visited once), then kept up to date by
        ``add`` in constant time, so the tree can ask after every append."""
        if self._detached is None and self._all_reach_a_root():
            self._detached = set()
        if self._detached is None:
            by_id = self.by_id
            reaches_root: dict[str, bool] = {}
            for entry in self.entries:
                if entry.id in reaches_root or by_id.get(entry.id) is not entry:
                    continue
                chain: list[str] = []
                on_chain: set[str] = set()
                current: Entry | None = entry
                result = True
                while current is not None:
                    known = reaches_root.get(current.id)
                    if known is not None:
                        result = known
                        break
                    if current.id in on_chain:
                        result = False  # back on this chain: a cycle
                        break
                    chain.append(current.id)
                    on_chain.add(current.id)
                    current = by_id.get(current.parent_id) if current.parent_id is not None else None
                for eid in chain:
                    reaches_root[eid] = result
            self._detached = {eid for eid, ok in reaches_root.items() if not ok}
        return self._detached

    def _all_reach_a_root(self) -> bool:
        """The usual file, told in one pass in file order: every entry's parent is none, missing, or
        an entry before it that reaches a root (so no cycle). False: walk the chains to know."""
        by_id = self.by_id
        reached: set[str | None] = {None}
        for entry in self.entries:
            if by_id.get(entry.id) is not entry:
                continue  # shadowed by a later duplicate: no tree node
            parent = entry.parent_id
            if parent in reached or parent not in by_id:
                reached.add(entry.id)
            else:
                return False
        return True

    def cycle_roots(self) -> list[Entry]:
        """Where the tree cuts each parentId cycle: the first unreached entry in file order, as
        ``roots`` does; walking from these reaches every entry of :meth:`detached`."""
        if self._cycle_roots is None:
            detached = self.detached()
            cuts: list[Entry] = []
            reached: set[str] = set()
            if detached:
                for entry in self.entries:
                    if entry.id in detached and entry.id not in reached and self.by_id.get(entry.id) is entry:
                        cuts.append(entry)
                        reached.update(e.id for e in self.walk(entry))
            self._cycle_roots = cuts
        return self._cycle_roots

    def walk(self, start: Entry) -> Iterator[Entry]:
        """Depth-first pre-order walk below ``start`` without recursion (trees can be 20,000 deep)."""
        children = self.children
        stack = [start]
        seen: set[str] = set()
        while stack:
            entry = stack.pop()
            if entry.id in seen:
                continue
            seen.add(entry.id)
            yield entry
            stack.extend(reversed(children.get(entry.id, ())))

    def tree_warnings(self) -> list[str]:
        """Dangling parents and cycles: found by walking, reported without changing anything."""
        notes: list[str] = []
        for entry in self.roots():
            if entry.parent_id is not None and entry.parent_id not in self.by_id:
                notes.append(
                    f"line {entry.line}: entry {entry.id} has missing parent {entry.parent_id}; shown as a root"
                )
            elif entry.parent_id is not None:
                notes.append(f"line {entry.line}: entry {entry.id} is in a parentId cycle; cut there")
        return notes

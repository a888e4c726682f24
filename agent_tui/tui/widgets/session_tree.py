"""The session tree in the sidebar: every branch, built lazily.

Textual's ``Tree`` rebuilds every expanded node on a change and fails on
chains nested ~1,000 deep, so entries are never nested under their parent.
A *run* (an entry, its continuing child, that one's continuing child...) is
shown flat at one level; only at a fork do the other children appear, as
collapsed branch nodes under the fork entry. The active path is the top-level
run; long runs keep their last :data:`FLAT_TAIL` entries flat and fold the
older ones into range nodes of :data:`RANGE_SIZE`, filled when expanded.
Labels are rendered from the index only when a line is painted.

(About 530 lines, on purpose: the lazy build, the in-place extension at the leaf, the mark mode
and the keys are one widget's; what a row says and its badges are in ``tree_state``.)
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from agent_tui.projection.context import Status
from agent_tui.projection.describe import first_line, kind
from agent_tui.store.record import Entry
from agent_tui.terminal_text import visible_line
from agent_tui.tui import tree_filter
from agent_tui.tui.keymap import key_name
from agent_tui.tui.symbols import SYMBOLS
from agent_tui.tui.tree_state import (
    STATUS_BADGES,
    TreeItem,
    TreeState,
    describe,
    files_badge,
    is_branch_marker,
    other_roots,
)
from agent_tui.tui.widgets import steady_scrollbars

_entry_id = attrgetter("id")
FLAT_TAIL = 200
RANGE_SIZE = 500


class SessionTree(Tree[TreeItem]):
    """The whole session tree: a click or the arrows select an entry; Enter or a double click
    continues from it. The letter keys act only here; other text typed here goes to the composer."""

    #: The label colours, one per theme colour the labels use (``_colour("accent")``).
    COLOURS: ClassVar[tuple[str, ...]] = ("primary", "secondary", "accent", "warning", "error", "success")
    COMPONENT_CLASSES: ClassVar[set[str]] = Tree.COMPONENT_CLASSES | {f"session-tree--{c}" for c in COLOURS}

    _size_updated = steady_scrollbars.size_updated  # no scrollbar redraw at every layout

    DEFAULT_CSS = """
    SessionTree { scrollbar-size-vertical: 1; overflow-x: hidden; }
    SessionTree > .session-tree--primary { color: $primary; }
    SessionTree > .session-tree--secondary { color: $secondary; }
    SessionTree > .session-tree--accent { color: $accent; }
    SessionTree > .session-tree--warning { color: $warning; }
    SessionTree > .session-tree--error { color: $error; }
    SessionTree > .session-tree--success { color: $success; }
    """

    BINDINGS = [  # noqa: RUF012 - Textual's convention
        Binding("enter", "select_cursor", "Continue here", show=True, id="tree.branch"),
        Binding("h", "app.hide", "Hide", id="tree.hide"),
        Binding("e", "app.replace", "Replace", id="tree.replace"),
        Binding("u", "app.restore", "Restore", id="tree.restore"),
        Binding("p", "app.pin", "Pin", id="tree.pin"),
        Binding("l", "app.label", "Label", id="tree.label"),
        Binding(
            "f", "app.fork", "Fork", show=False, id="tree.fork"
        ),  # the footer has ^f Fork (the same action)
        Binding("space", "toggle_node", "Expand", show=False, id="tree.expand"),
        Binding("v", "toggle_mark", "Mark a span", show=False, id="tree.mark"),
        # pi's /tree: filters, search, label times, a branch summary (the tree bar shows these keys)
        Binding("t", "cycle_filter", "Filter", show=False, id="tree.filter"),
        Binding("slash", "search", "Search", show=False, id="tree.search"),
        Binding("T", "toggle_label_times", "Label times", show=False, id="tree.label_times"),
        Binding("s", "summarize_here", "Continue here, summarizing", show=False, id="tree.summarize"),
        Binding(
            "S", "summarize_here_with", "Summarize with instructions", show=False, id="tree.summarize_with"
        ),
        Binding("o", "app.open_subagent", "Open subagent / parent", show=False, id="tree.subagent"),
    ]

    #: Actions run in ``_on_key``, in order with the other keys, rather than when the key bubbles back
    #: to the app (by then the focus may have moved, and the binding would be looked up elsewhere).
    _KEY_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {
            "select_cursor",
            "app.hide",
            "app.replace",
            "app.restore",
            "app.pin",
            "app.label",
            "app.fork",
            "toggle_mark",
            "cycle_filter",
            "search",
            "toggle_label_times",
            "summarize_here",
            "summarize_here_with",
            "app.open_subagent",
        }
    )

    async def _on_key(self, event: events.Key) -> None:
        keymap: dict[str, str] = getattr(self.app, "keymap", None) or {}  # the config's [keys]
        for binding in self.BINDINGS:
            if not isinstance(binding, Binding) or binding.action not in self._KEY_ACTIONS:
                continue
            keys = keymap.get(binding.id or "", binding.key)
            if event.key in (k.strip() for k in keys.split(",")):
                event.stop()
                event.prevent_default()
                await self.run_action(binding.action)
                return
        # Other printable keys bubble up to the screen, which hands them to the composer.

    async def _on_click(self, event: events.Click) -> None:
        """A click selects the row (the app shows it); a double click continues from it, as Enter does."""
        event.prevent_default()  # not Tree's: a single click there selects, i.e. would branch
        meta = event.style.meta
        if "line" not in meta:
            return
        node = self.get_node_at_line(meta["line"])
        if node is None:
            return
        if meta.get("toggle", False) or (node.data is not None and node.data.kind != "entry"):
            self._fill(node)
            node.toggle()
            self.cursor_line = meta["line"]
            return
        self.cursor_line = meta["line"]
        if event.chain >= 2:
            await self.run_action("select_cursor")

    class BranchRequested(Message):
        """The user chose an entry to continue from (``summarize``: leaving a branch summary)."""

        def __init__(self, entry_id: str, summarize: bool = False, ask_focus: bool = False) -> None:
            super().__init__()
            self.entry_id = entry_id
            self.summarize = summarize
            self.ask_focus = ask_focus  # ask what the summary should keep first

    class MarkChanged(Message):
        """Mark mode began or ended (the panel's preview follows)."""

    class ViewChanged(Message):
        """The filter, the search or the label times changed (the tree bar follows)."""

    class SearchRequested(Message):
        """``/``: the user wants to type a search (the tree bar opens its search box)."""

    class EntryHighlighted(Message):
        """The cursor moved to an entry (None: to a range or nothing)."""

        def __init__(self, entry_id: str | None) -> None:
            super().__init__()
            self.entry_id = entry_id

    _appending = False  # adding rows below the last: the rows above keep their strips

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("session", id=id, classes=classes)
        self.show_root = False
        self.auto_expand = False
        self.guide_depth = 2
        self._state: TreeState | None = None
        self._expanded_keys: set[str] = set()
        self._entry_nodes: dict[str, TreeNode[TreeItem]] = {}
        self._range_of: dict[str, TreeNode[TreeItem]] = {}
        self._branch_sizes: dict[str, int] = {}
        self._indexed = 0  # the entries in the index when the tree was built or last extended
        self._flat = 0  # the entries shown flat at the top level (the active path's tail)
        self._mark: str | None = None  # mark mode: the span runs from here to the cursor
        self.filter_mode = "all"  # tree_filter.FILTERS
        self.search = ""  # the search box's text: only the rows holding every word
        self.label_times = False  # T: each label shows when it was set

    # -- pi's filters, search and label times ------------------------------------------

    @property
    def filtering(self) -> bool:
        """A filter or a search is on: the matching entries, one flat list."""
        return self.filter_mode != "all" or bool(tree_filter.search_words(self.search))

    def _view_changed(self) -> None:
        if self._state is not None:
            cursor = self.cursor_entry_id
            self._rebuild(self._state)
            if cursor is not None:
                self.reveal(cursor)
        self.refresh()
        self.post_message(self.ViewChanged())

    def set_filter(self, mode: str) -> None:
        self.filter_mode = mode if mode in tree_filter.FILTER_NAMES else "all"
        self._view_changed()

    def set_search(self, text: str) -> None:
        if text != self.search:
            self.search = text
            self._view_changed()

    def action_cycle_filter(self) -> None:
        """``t``: all, no tools, user only, labeled only, all again."""
        self.set_filter(tree_filter.next_filter(self.filter_mode))

    def action_search(self) -> None:
        self.post_message(self.SearchRequested())

    def action_toggle_label_times(self) -> None:
        self.label_times = not self.label_times
        self._tree_lines_cached = None
        self._updates += 1  # every row's label is drawn again
        self.refresh()
        self.post_message(self.ViewChanged())

    async def action_summarize_here(self) -> None:
        """``s``: continue from the entry under the cursor, leaving a summary of the branch left."""
        entry_id = self.cursor_entry_id
        if entry_id is not None:
            self.post_message(self.BranchRequested(entry_id, summarize=True))

    async def action_summarize_here_with(self) -> None:
        """``S``: as ``s``, asking first what the summary should keep (pi's custom prompt)."""
        entry_id = self.cursor_entry_id
        if entry_id is not None:
            self.post_message(self.BranchRequested(entry_id, summarize=True, ask_focus=True))

    def shown_count(self) -> int:
        """The entries the tree lists (a filtered view's matches)."""
        return len(self._entry_nodes)

    # -- building -----------------------------------------------------------------

    @property
    def state(self) -> TreeState | None:
        return self._state

    def show_session(self, state: TreeState, cursor_id: str | None = None) -> None:
        """Show ``state``, keeping what was expanded and putting the cursor on ``cursor_id``."""
        if not self._extend(state):
            self._rebuild(state)
        target = cursor_id if cursor_id is not None else state.leaf_id
        if target is not None:
            self.reveal(target)

    def _extend(self, state: TreeState) -> bool:
        """Add the entries that continue the active path from its leaf (a turn's appends) rather
        than rebuild (30 ms for 20,000 entries at every append). False, changing nothing, otherwise."""
        old = self._state
        if old is None or old.index is not state.index or not old.path or self.filtering:
            return False
        leaf = old.path[-1]
        added = state.path[len(old.path) :]
        if not added or state.path[len(old.path) - 1].id != leaf.id:
            return False
        # nothing else was appended (every new entry is on the path), and the old leaf did not fork
        if len(state.index) != self._indexed + len(added) or [
            c.id for c in state.index.children.get(leaf.id, ())
        ] != [added[0].id]:
            return False
        node = self._entry_nodes.get(leaf.id)
        if node is None or node.data is None or node.parent is not self.root:
            return False
        if self._flat + len(added) > FLAT_TAIL + RANGE_SIZE:
            return False  # time to fold the older ones: a rebuild does
        # The rows above keep their cached strips when only messages were added: a message changes
        # no other row (statuses come from context edits and compactions, labels and pins from
        # their own entries), but the old leaf's, which is no longer the leaf. Textual's add redrew
        # every visible row: 8-15 ms at 160x50, twice a turn.
        self._appending = self._mark is None and all(e.type == "message" for e in added)
        self._state = state
        self._indexed = len(state.index)
        node.data.next_id = added[0].id
        node._updates += 1
        # in every row's cache key, and each add counts one in both
        updates = (self._updates, self.root._updates)
        try:
            for i, entry in enumerate(added):
                next_id = added[i + 1].id if i + 1 < len(added) else None
                self._add_item(self.root, TreeItem("entry", entry.id, next_id), allow_expand=False)
        finally:
            if self._appending:
                self._updates, self.root._updates = updates
            self._appending = False
        self._flat += len(added)
        return True

    def _invalidate(self) -> None:
        if not self._appending:
            super()._invalidate()
            return
        self._tree_lines_cached = None  # the lines are built again; their strips stay cached
        self.refresh(layout=True)

    def _rebuild(self, state: TreeState) -> None:
        self._state = state
        self._indexed = len(state.index)
        self._flat = 0
        self._entry_nodes.clear()
        self._range_of.clear()
        self._branch_sizes.clear()
        self.clear()
        index = state.index
        line = state.path
        if self.filtering:
            self._add_matches(state)
            return
        main_root = line[0].id if line else None
        cuts = [e.id for e in index.cycle_roots() if e.id not in state.active]
        if cuts:  # entries no root reaches: shown under one group, so nothing in the file is invisible
            self._add_item(self.root, TreeItem("cycle", ids=tuple(cuts)))
        for root in other_roots(index, main_root):
            self._add_item(self.root, TreeItem("branch", root.id))
        self._add_run(self.root, line)
        self._flat = sum(
            1 for node in self.root.children if node.data is not None and node.data.kind == "entry"
        )

    def _add_matches(self, state: TreeState) -> None:
        """A filter's or a search's view: every matching entry of the file, flat, in file order."""
        index = state.index
        words = tree_filter.search_words(self.search)
        for entry in index.entries:
            if index.by_id.get(entry.id) is not entry:
                continue
            if not tree_filter.passes(entry, self.filter_mode, index):
                continue
            if not tree_filter.matches(entry, words, index):
                continue
            kids = index.children.get(entry.id, ())
            on_path = [c.id for c in kids if c.id in state.active]
            next_id = on_path[0] if on_path else (kids[-1].id if kids else None)
            self._add_item(self.root, TreeItem("entry", entry.id, next_id), allow_expand=False)
        self._flat = len(self._entry_nodes)

    def _add_run(self, parent: TreeNode[TreeItem], run: list[Entry]) -> None:
        children = self._state.index.children if self._state else {}
        folded = len(run) - FLAT_TAIL if len(run) > FLAT_TAIL + RANGE_SIZE // 5 else 0
        for start in range(0, folded, RANGE_SIZE):
            ids = tuple(map(_entry_id, run[start : min(start + RANGE_SIZE, folded)]))
            node = self._add_item(parent, TreeItem("range", ids=ids))
            self._range_of.update(dict.fromkeys(ids, node))  # in C: a 150,000-entry path folds here
        for i in range(folded, len(run)):
            entry = run[i]
            next_id = run[i + 1].id if i + 1 < len(run) else None
            item = TreeItem("entry", entry.id, next_id)
            has_others = any(c.id != next_id for c in children.get(entry.id, ()))
            self._add_item(parent, item, allow_expand=has_others)

    def _add_item(
        self, parent: TreeNode[TreeItem], item: TreeItem, *, allow_expand: bool = True
    ) -> TreeNode[TreeItem]:
        node = parent.add("", item, allow_expand=allow_expand)
        if item.kind == "entry" and item.entry_id is not None:
            self._entry_nodes[item.entry_id] = node
        if allow_expand and item.key in self._expanded_keys:
            self._fill(node)
            node.expand()
        return node

    def _fill(self, node: TreeNode[TreeItem]) -> None:
        item = node.data
        if item is None or item.loaded or self._state is None:
            return
        item.loaded = True
        index = self._state.index
        if item.kind == "range":
            entries = [index.by_id[i] for i in item.ids if i in index.by_id]
            for i, entry in enumerate(entries):
                next_id = entries[i + 1].id if i + 1 < len(entries) else None
                if next_id is None:  # the range's last entry continues into whatever follows it
                    kids = index.children.get(entry.id, [])
                    on_line = [c for c in kids if c.id in self._state.active]
                    next_id = on_line[0].id if on_line else None
                has_others = any(c.id != next_id for c in index.children.get(entry.id, ()))
                self._add_item(node, TreeItem("entry", entry.id, next_id), allow_expand=has_others)
        elif item.kind == "entry" and item.entry_id is not None:
            for child in index.children.get(item.entry_id, ()):
                if child.id != item.next_id:
                    self._add_item(node, TreeItem("branch", child.id))
        elif item.kind == "branch" and item.entry_id in index.by_id:
            self._add_run(node, list(self._run_from(index.by_id[item.entry_id])))
        elif item.kind == "cycle":
            for cut in item.ids:
                self._add_item(node, TreeItem("branch", cut))

    def _run_from(self, start: Entry) -> Iterable[Entry]:
        """``start`` and its continuing children: the latest child at each fork."""
        assert self._state is not None
        children = self._state.index.children
        seen: set[str] = set()
        entry: Entry | None = start
        while entry is not None and entry.id not in seen:
            seen.add(entry.id)
            yield entry
            kids = children.get(entry.id)
            entry = kids[-1] if kids else None

    def reveal(self, entry_id: str) -> bool:
        """Put the cursor on ``entry_id``, expanding the range that holds it. False if it is not shown."""
        node = self._entry_nodes.get(entry_id)
        if node is None and entry_id in self._range_of:
            holder = self._range_of[entry_id]
            self._fill(holder)
            holder.expand()
            node = self._entry_nodes.get(entry_id)
        if node is None:
            return False
        parent = node.parent
        while parent is not None and parent is not self.root:
            if not parent.is_expanded:
                parent.expand()
            parent = parent.parent
        self._tree_lines  # noqa: B018 - builds the lines now, so the node has its line number
        self.move_cursor(node)
        self.call_after_refresh(self._settle_cursor, node)
        return True

    def _settle_cursor(self, node: TreeNode[TreeItem]) -> None:
        """Scroll to the cursor once the tree has its size (the first paint)."""
        if self.cursor_node is node:
            self.scroll_to_node(node, animate=False)

    def node_for(self, entry_id: str) -> TreeNode[TreeItem] | None:
        return self._entry_nodes.get(entry_id)

    @property
    def cursor_entry_id(self) -> str | None:
        node = self.cursor_node
        if node is None or node.data is None or node.data.kind != "entry":
            return None
        return node.data.entry_id

    # -- mark mode: a span of the active path, from the mark to the cursor -------------

    def action_toggle_mark(self) -> None:
        """``v``: mark the entry under the cursor as one end of a span (again: unmark). While a mark
        is set, the arrows extend the span and h / u hide or restore all of it."""
        cursor = self.cursor_entry_id
        if (
            self._mark is not None
            or cursor is None
            or self._state is None
            or cursor not in self._state.active
        ):
            self._mark = None
        else:
            self._mark = cursor
            keymap: dict[str, str] = getattr(self.app, "keymap", {})
            keys = {
                name: key_name(keymap, binding_id, default)
                for name, binding_id, default in (
                    ("hide", "tree.hide", "h"),
                    ("restore", "tree.restore", "u"),
                    ("compact", "compact", "ctrl+g"),
                    ("mark", "tree.mark", "v"),
                )
            }
            self.app.notify(
                f"Marked {cursor}: the arrows extend the span; {keys['hide']} hides it, {keys['restore']} "
                f"restores it, {keys['compact']} compacts it (the model summarizes it); {keys['mark']} unmarks.",
                timeout=8,
            )
        self.refresh()
        self.post_message(self.MarkChanged())

    def clear_mark(self) -> None:
        if self._mark is not None:
            self._mark = None
            self.refresh()
            self.post_message(self.MarkChanged())

    def marked_span(self) -> tuple[str, str] | None:
        """(first, last) of the marked span in path order, when a mark is set and the cursor is on the
        active path; None otherwise."""
        cursor = self.cursor_entry_id
        if self._mark is None or cursor is None or self._state is None or cursor not in self._state.active:
            return None
        order = {e.id: i for i, e in enumerate(self._state.path)}
        if self._mark not in order:
            return None
        a, b = sorted((self._mark, cursor), key=order.__getitem__)
        return a, b

    def _in_marked_span(self, entry_id: str) -> bool:
        span = self.marked_span()
        if span is None or self._state is None:
            return False
        order = {e.id: i for i, e in enumerate(self._state.path)}
        position = order.get(entry_id)
        return position is not None and order[span[0]] <= position <= order[span[1]]

    def visible_labels(self) -> list[str]:
        """The text of every line as shown (for tests and the end-to-end check)."""
        return [self.render_label(line.node, Style(), Style()).plain for line in self._tree_lines]

    # -- events -------------------------------------------------------------------

    @on(Tree.NodeExpanded)
    def _on_expanded(self, event: Tree.NodeExpanded[TreeItem]) -> None:
        event.stop()
        if event.node.data is not None:
            self._expanded_keys.add(event.node.data.key)
            self._fill(event.node)

    @on(Tree.NodeCollapsed)
    def _on_collapsed(self, event: Tree.NodeCollapsed[TreeItem]) -> None:
        event.stop()
        if event.node.data is not None:
            self._expanded_keys.discard(event.node.data.key)

    @on(Tree.NodeSelected)
    def _on_selected(self, event: Tree.NodeSelected[TreeItem]) -> None:
        event.stop()
        item = event.node.data
        if item is None:
            return
        if item.kind == "entry" and item.entry_id is not None:
            self.post_message(self.BranchRequested(item.entry_id))
        else:
            self._fill(event.node)
            event.node.toggle()

    @on(Tree.NodeHighlighted)
    def _on_highlighted(self, event: Tree.NodeHighlighted[TreeItem]) -> None:
        event.stop()
        item = event.node.data
        if self._mark is not None:
            self.refresh()  # the marked span follows the cursor
        self.post_message(self.EntryHighlighted(item.entry_id if item and item.kind == "entry" else None))

    # -- labels -------------------------------------------------------------------

    def get_label_width(self, node: TreeNode[TreeItem]) -> int:
        """Not measured: the tree never scrolls sideways (a long label is cut), and Textual's default
        renders every label whenever the lines change (10 ms per append for 200 flat entries)."""
        return 0

    def render_label(self, node: TreeNode[TreeItem], base_style: Style, style: Style) -> Text:
        item = node.data
        text = self._label(item) if item is not None else Text("")
        text.stylize(style)
        if node.allow_expand:
            icon = self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE
            return Text.assemble((icon, base_style + Style(dim=True)), text)
        return Text.assemble(("  ", base_style), text)

    def _colour(self, name: str) -> Style:
        """The colour of the ``session-tree--NAME`` component class (the theme's, through the CSS)."""
        if not self.is_mounted:
            return Style()
        return self.get_component_rich_style(f"session-tree--{name}", partial=True)

    def _label(self, item: TreeItem) -> Text:
        state = self._state
        if state is None:
            return Text("")
        index = state.index
        if item.kind == "cycle":
            n = sum(1 for eid in index.detached() if eid not in state.active)
            text = Text(f"{SYMBOLS['cycle']} cycle", style=self._colour("warning") + Style(bold=True))
            text.append(
                f"  {n} {'entry' if n == 1 else 'entries'} in or below a parentId cycle (no root reaches them)",
                style=Style(dim=True),
            )
            return text
        if item.kind == "range":
            first = index.by_id.get(item.ids[0]) if item.ids else None
            n = len(item.ids)
            text = Text(f"{SYMBOLS['earlier']} {n} earlier entries", style=Style(dim=True))
            if first is not None:
                text.append(
                    f"  from {visible_line(first_line(first, 30))}", style=Style(dim=True, italic=True)
                )
            return text
        entry = index.by_id.get(item.entry_id or "")
        if entry is None:
            return Text("?")
        if item.kind == "branch":
            size = self._branch_size(entry)
            text = Text(f"{SYMBOLS['fork']} ", style=self._colour("secondary"))
            text.append(visible_line(describe(entry)), style=Style(italic=True))
            text.append(f"  ({size} {'entry' if size == 1 else 'entries'})", style=Style(dim=True))
            return text
        return self._entry_label(entry, item)

    def _entry_label(self, entry: Entry, item: TreeItem) -> Text:
        assert self._state is not None
        state = self._state
        on_path = entry.id in state.active
        k = kind(entry)
        glyph = SYMBOLS.get(k) or SYMBOLS["marker" if is_branch_marker(entry) else "other"]
        glyph_style = self._colour("primary") if on_path else Style(dim=True)
        text = Text(glyph + " ", style=glyph_style)
        if entry.id == state.leaf_id:
            text.append(f"{SYMBOLS['leaf']} ", style=self._colour("primary") + Style(bold=True))
        label = state.index.labels.get(entry.id)
        if label:
            text.append(f"#{visible_line(label)} ", style=self._colour("secondary") + Style(bold=True))
            when = tree_filter.label_time(state.index, entry.id) if self.label_times else None
            if when:
                text.append(f"{when} ", style=Style(dim=True))
        status = state.status.get(entry.id)
        if status in STATUS_BADGES and not (status is Status.SUMMARY and entry.type == "compaction"):
            badge, colour = STATUS_BADGES[status]
            text.append(f"[{badge}] ", style=self._colour(colour))
        if entry.type == "compaction":
            text.append("[compaction] ", style=self._colour("accent") + Style(bold=True))
        elif entry.id in state.summarized:
            text.append("[summarized] ", style=Style(dim=True, italic=True))
        if state.index.is_pinned(entry.id):
            text.append("[pinned] ", style=self._colour("accent"))
        files = files_badge(entry)
        if files is not None:
            text.append(f"{files} ", style=self._colour("success"))
        author = state.authors.get(entry.id)
        if author is not None:
            text.append(f"[by {author}] ", style=self._colour("secondary"))
        if self._mark is not None and self._in_marked_span(entry.id):
            text.append("[marked] ", style=self._colour("warning") + Style(bold=True))
        others = sum(1 for c in state.index.children.get(entry.id, ()) if c.id != item.next_id)
        if others:
            text.append(f"{SYMBOLS['fork']}{others} ", style=self._colour("secondary"))
        body_style = Style(bold=True) if entry.id == state.leaf_id else Style()
        if not on_path or entry.id in state.summarized:
            body_style += Style(dim=True)
        if entry.type == "compaction":
            body_style += self._colour("accent")
        text.append(visible_line(describe(entry)), style=body_style)
        return text

    def _branch_size(self, entry: Entry) -> int:
        size = self._branch_sizes.get(entry.id)
        if size is None and self._state is not None:
            size = sum(1 for _ in self._state.index.walk(entry))
            self._branch_sizes[entry.id] = size
        return size or 0

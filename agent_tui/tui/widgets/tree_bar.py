"""The tree's own footer and search box (pi 1.6's ``/tree``): one line under the tree naming its
keys and what is on (the filter, a search, label times), and a search box above it that ``/``
opens. ``TreePane`` is the sidebar holding them with the tree; the tree's messages bubble to it."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.geometry import Size
from textual.widgets import Input, Static

from agent_tui.terminal_text import visible_line
from agent_tui.tui import tree_filter
from agent_tui.tui.keymap import key_name
from agent_tui.tui.widgets.session_tree import SessionTree


class TreeSearch(Input):
    """The search box: each keystroke filters the tree; Enter or Down go back to the tree with the
    search kept, Escape clears it."""

    DEFAULT_CSS = """
    TreeSearch { display: none; height: 1; border: none; padding: 0 1; background: $boost; }
    TreeSearch:focus { border: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "clear_search", "Clear the search", show=False),
        Binding("enter,down", "back_to_tree", "Back to the tree", show=False),
    ]

    def _tree(self) -> SessionTree | None:
        parent = self.parent
        return parent.query_one(SessionTree) if parent is not None else None

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        tree = self._tree()
        if tree is not None:
            tree.set_search(event.value)

    def action_back_to_tree(self) -> None:
        tree = self._tree()
        if not self.value.strip():
            self.display = False
        if tree is not None:
            tree.focus()

    def action_clear_search(self) -> None:
        self.value = ""
        tree = self._tree()
        if tree is not None:
            tree.set_search("")
        self.display = False
        if tree is not None:
            tree.focus()


class TreeBar(Static):
    """One line: the tree's keys (pi's filter, search, label times, branch summary) and its state;
    shown while the tree pane has the focus, or a filter, a search or the label times are on."""

    DEFAULT_CSS = """
    TreeBar { display: none; height: auto; max-height: 3; padding: 0 1; background: $panel; }
    TreeBar.-on, TreeBar.-focused { display: block; }
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._parts: list[Text] = []

    def show_state(self, tree: SessionTree) -> None:
        keymap: dict[str, str] = getattr(self.app, "keymap", None) or {}

        def key(binding_id: str, default: str) -> str:
            name = key_name(keymap, binding_id, default)
            return "/" if name == "Slash" else name

        dim, bold = Style(dim=True), Style(bold=True)
        words = tree.search.strip()
        parts: list[Text] = []
        for name, what, lit in (
            (
                key("tree.filter", "t"),
                tree_filter.FILTER_NAMES.get(tree.filter_mode, "all"),
                tree.filter_mode != "all",
            ),
            (key("tree.search", "/"), f'"{visible_line(words)}"' if words else "search", bool(words)),
            (key("tree.label_times", "T"), "times on" if tree.label_times else "times", tree.label_times),
            (f"{key('tree.summarize', 's')}/{key('tree.summarize_with', 'S')}", "summarize", False),
        ):
            part = Text(f"{name} ", style=dim)
            part.append(what, style=bold if lit else Style())
            parts.append(part)
        if tree.filtering:
            parts.append(Text(f"{tree.shown_count()} shown", style=dim))
        self.set_class(tree.filtering or tree.label_times, "-on")  # shown while a view is on
        self._parts = parts
        self.refresh(layout=True)

    def _laid_out(self, width: int) -> Text:
        """The parts on as few lines as ``width`` allows, a part never split across two."""
        text, used = Text(), 0
        for part in self._parts:
            if used and used + 2 + part.cell_len > width:
                text.append("\n")
                used = 0
            elif used:
                text.append("  ")
                used += 2
            text.append_text(part)
            used += part.cell_len
        return text

    def render(self) -> Text:
        return self._laid_out(max(1, self.content_size.width or 80))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._laid_out(max(1, width)).plain.count("\n") + 1


class TreePane(Vertical):
    """The sidebar: its title, the search box, the tree and the tree's bar."""

    def on_mount(self) -> None:
        self._refresh_bar()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        for bar in self.query(TreeBar):
            bar.add_class("-focused")  # the tree's keys, while the tree (or its search) has the focus

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if self.app.focused is None or self.app.focused not in self.walk_children():
            for bar in self.query(TreeBar):
                bar.remove_class("-focused")

    def _refresh_bar(self) -> None:
        trees = self.query(SessionTree)
        bars = self.query(TreeBar)
        if trees and bars:
            bars.first().show_state(trees.first())

    @on(SessionTree.ViewChanged)
    def _view_changed(self, event: SessionTree.ViewChanged) -> None:
        event.stop()
        self._refresh_bar()

    @on(SessionTree.SearchRequested)
    def _search(self, event: SessionTree.SearchRequested) -> None:
        event.stop()
        search = self.query_one(TreeSearch)
        search.display = True
        search.focus()


__all__ = ["TreeBar", "TreePane", "TreeSearch"]

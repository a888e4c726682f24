"""The chat: the active branch, newest at the bottom, pruned to the last entries.

Only the last :data:`WINDOW` entries of the branch are mounted; a button at
the top mounts :data:`PAGE` more. :meth:`ChatView.sync` mounts only what
changed: new entries at the end, or an entry whose status in the model's
view changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import get_args

from textual import on
from textual.containers import VerticalScroll
from textual.scrollbar import ScrollBar
from textual.widgets import Button, Collapsible

from agent_tui.projection.context import Projection
from agent_tui.projection.image_tokens import ImageRule, anthropic_tokens
from agent_tui.projection.tokens import image_rule
from agent_tui.store.content import content_text
from agent_tui.store.kinds import EntryType, kind_info
from agent_tui.store.record import Entry
from agent_tui.tui.symbols import lead
from agent_tui.tui.widgets import one_layout_pass
from agent_tui.tui.widgets.chat_entry import ChatEntry, is_failed_attempt
from agent_tui.tui.widgets.streaming_reply import StreamingReply

WINDOW = 16
PAGE = 40


#: The kinds the chat does not show (a set: the chat asks for each entry of a long path).
_NOT_IN_CHAT = frozenset(kind for kind in get_args(EntryType) if not kind_info(kind).in_chat)


_type = attrgetter("type")


def shown_in_chat(entry: Entry) -> bool:
    """Whether the chat shows ``entry`` (some kinds say nothing there; the tree still shows them;
    a kind we do not know is shown raw)."""
    return entry.type not in _NOT_IN_CHAT


class ChatView(VerticalScroll):
    DEFAULT_CSS = """
    ChatView { height: 1fr; padding: 0 1; }
    ChatView > #chat-more { width: 100%; margin: 0 0 1 0; }
    """

    _size_updated = one_layout_pass.size_updated  # growing costs one layout, not two

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        return one_layout_pass.vertical_scrollbar(self)  # nor does getting shorter

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.window = WINDOW
        self._shown: list[str] = []
        self._status: dict[str, str | None] = {}
        self.streaming: StreamingReply | None = None
        self._counted: tuple[int, str, int] | None = None  # (end, the id at end - 1, shown before end)
        self._summarized: tuple[list[str] | None, frozenset[str]] = (None, frozenset())
        self._open_run: ChatEntry | None = None  # the ``!cmd`` whose output was opened (see sync)
        #: how an attached image's tokens are counted: the branch model's API (an entry shown
        #: before a model of another API was chosen keeps its figure until the chat is rebuilt)
        self.images: ImageRule = anthropic_tokens

    @property
    def shown_ids(self) -> list[str]:
        return list(self._shown)

    async def sync(self, projection: Projection) -> None:
        """Show the tail of ``projection.path``, mounting only what changed."""
        self.images = image_rule(projection.model)
        tail, before = self._tail(projection.path)
        ids = [e.id for e in tail]
        status = self._statuses(projection, ids)
        originals = _originals(tail, projection.path)
        dropped = self._shown.index(ids[0]) if ids and ids[0] in self._shown else 0
        kept = self._shown[dropped:]
        if not self._shown or not ids or ids[: len(kept)] != kept:
            await self._rebuild(tail, status, originals, before)
        else:
            new_entries = tail[len(kept) :]
            if self.streaming is not None:
                reply, self.streaming = self.streaming, None
                if new_entries and reply.can_adopt(new_entries[0]):
                    # The streamed reply already shows this message: keep its widgets rather than
                    # render the whole message again (a long code block costs a visible stall).
                    await reply.adopt(new_entries[0])
                    kept = [*kept, new_entries[0].id]
                    self._status[new_entries[0].id] = status.get(new_entries[0].id)
                else:
                    await reply.remove()
            for entry_id in self._shown[:dropped]:
                old = self._entry_widget(entry_id)
                if old is not None:
                    await old.remove()
            for entry_id in kept:
                if status.get(entry_id) != self._status.get(entry_id):
                    widget = self._entry_widget(entry_id)
                    if isinstance(widget, ChatEntry):
                        await widget.set_status(status.get(entry_id), originals.get(entry_id))
                    elif widget is not None and widget.entry is not None:
                        await self.mount(
                            ChatEntry(
                                widget.entry, status.get(entry_id), originals.get(entry_id), self.images
                            ),
                            after=widget,
                        )
                        await widget.remove()
            new_entries = tail[len(kept) :]
            if new_entries:
                await self.mount_all(
                    [ChatEntry(e, status.get(e.id), originals.get(e.id), self.images) for e in new_entries]
                )
            await self._set_more(before)
        self._shown = ids
        self._status = {i: status.get(i) for i in ids}
        await self._fold_failed_attempts()
        self._open_last_run()

    def _open_last_run(self) -> None:
        """The output of the last ``!cmd`` shown stays open (it was just run, most often); older
        runs fold as any tool output. Opened once per widget: a fold by the user sticks."""
        run = next(
            (
                child
                for child in reversed(self.children)
                if isinstance(child, ChatEntry)
                and child.entry.type == "message"
                and child.entry.role == "bashExecution"
            ),
            None,
        )
        if run is None or run is self._open_run:
            return
        self._open_run = run
        for box in run.query(Collapsible).filter(".tool-output"):
            box.collapsed = False

    async def _fold_failed_attempts(self) -> None:
        """A run of failed attempts (a call retried three times) is one folded line, the first
        entry's, that holds them all; the others are not displayed (they stay mounted, one widget
        per entry, for the next sync)."""
        runs: list[list[ChatEntry]] = []
        previous_failed = False
        for child in self.children:
            if not isinstance(child, ChatEntry):
                continue
            failed = is_failed_attempt(child.entry)
            if failed and previous_failed:
                runs[-1].append(child)
            elif failed:
                runs.append([child])
            previous_failed = failed
        for run in runs:
            first = run[0]
            attempts = [w.entry for w in run]
            if [a.id for a in first.attempts] != [a.id for a in attempts]:
                first.attempts = attempts
                await first.recompose()
            first.display = True
            for later in run[1:]:
                later.display = False

    def _tail(self, path: Sequence[Entry]) -> tuple[list[Entry], int]:
        """The last :attr:`window` entries of ``path`` the chat shows, and how many it shows before
        them. Only the tail is walked: a sync runs after every append, on paths of 20,000 entries."""
        tail: list[Entry] = []
        i = len(path)
        while i > 0 and len(tail) < self.window:
            i -= 1
            if shown_in_chat(path[i]):
                tail.append(path[i])
        if len(tail) < self.window:
            i = 0
        tail.reverse()
        return tail, self._count_shown(path, i)

    def _count_shown(self, path: Sequence[Entry], end: int) -> int:
        """How many of ``path[:end]`` the chat shows, counting on from the last count when the path
        kept its prefix (a path is root first, so its entry at a position names all before it)."""
        start, count = 0, 0
        if self._counted is not None:
            counted_end, last_id, counted = self._counted
            if 0 < counted_end <= end and path[counted_end - 1].id == last_id:
                start, count = counted_end, counted
        part = path[start:end]
        count += len(part) - sum(map(_NOT_IN_CHAT.__contains__, map(_type, part)))  # in C: 150,000 entries
        self._counted = (end, path[end - 1].id, count) if end else None
        return count

    def _statuses(self, projection: Projection, ids: list[str]) -> dict[str, str | None]:
        """Each of ``ids``' status in the model's view ("summarized" when a compaction folded it),
        found from the end of the projection, where the chat's tail is."""
        wanted = set(ids)
        status: dict[str, str | None] = {}
        for ce in reversed(projection.entries):
            entry_id = ce.entry.id
            if entry_id in wanted and entry_id not in status:
                status[entry_id] = ce.status.value
                if len(status) == len(wanted):
                    break
        if projection.summarized_ids and len(status) < len(wanted):  # (a set of 140,000 ids otherwise)
            if self._summarized[0] is not projection.summarized_ids:  # the same list while it grows
                self._summarized = (projection.summarized_ids, frozenset(projection.summarized_ids))
            for entry_id in wanted & self._summarized[1]:
                status[entry_id] = "summarized"
        return status

    async def _set_more(self, before: int) -> None:
        buttons = list(self.query_children(Button))
        if before and buttons:
            buttons[0].label = _more_label(before)
        elif before:
            await self.mount(Button(_more_label(before), id="chat-more"), before=0)
        else:
            for button in buttons:
                await button.remove()

    async def _rebuild(
        self, tail: Sequence[Entry], status: dict[str, str | None], originals: dict[str, str], before: int
    ) -> None:
        self.streaming = None
        await self.remove_children()
        widgets: list[ChatEntry | Button] = []
        if before:
            widgets.append(Button(_more_label(before), id="chat-more"))
        widgets.extend(ChatEntry(e, status.get(e.id), originals.get(e.id), self.images) for e in tail)
        await self.mount_all(widgets)
        self.anchor()

    def _entry_widget(self, entry_id: str) -> ChatEntry | StreamingReply | None:
        for child in self.children:
            if (
                isinstance(child, ChatEntry | StreamingReply)
                and child.entry is not None
                and child.entry.id == entry_id
            ):
                return child
        return None

    async def reveal(self, entry_id: str, projection: Projection) -> bool:
        """Scroll to ``entry_id`` (mounting earlier entries if it is before the window); False if it
        is not on the active branch."""
        widget = self._entry_widget(entry_id)
        if widget is None:
            path = [e.id for e in projection.path if shown_in_chat(e)]
            if entry_id not in path:
                return False
            self.window = max(self.window, len(path) - path.index(entry_id))
            self._shown = []  # a rebuild with the larger window
            await self.sync(projection)
            widget = self._entry_widget(entry_id)
            if widget is None:
                return False
        self.release_anchor()
        # once laid out (a rebuild just mounted it: its place is not known yet)
        self.call_after_refresh(self.scroll_to_widget, widget, animate=False, top=True)
        return True

    def toggle_tools(self) -> None:
        """Expand every tool call and result shown, or collapse them all if all are open."""
        tools = list(self.query(Collapsible).filter(".tool-output"))
        expand = any(c.collapsed for c in tools)
        for c in tools:
            c.collapsed = not expand

    async def start_reply(self, typed_at: Callable[[], float] | None = None) -> StreamingReply:
        """The reply being streamed (``typed_at``: see :class:`StreamingReply`)."""
        if self.streaming is None:
            self.streaming = StreamingReply(typed_at)
            await self.mount(self.streaming)
            self.anchor()
        return self.streaming

    async def end_reply(self) -> None:
        if self.streaming is not None:
            await self.streaming.finish()

    @on(Button.Pressed, "#chat-more")
    async def _more(self, event: Button.Pressed) -> None:
        event.stop()
        self.window += PAGE
        self._shown = []  # force a rebuild with the larger window
        self.release_anchor()
        projection = getattr(self.app, "projection", None)
        if isinstance(projection, Projection):
            await self.sync(projection)
            self.scroll_home(animate=False)


def _more_label(before: int) -> str:
    return lead(f"⋯ {before} earlier entries: show {min(PAGE, before)} more")


def _originals(shown: Sequence[Entry], path: Sequence[Entry]) -> dict[str, str]:
    """For each replacing context_edit the chat shows, the text of its target's original content
    (the path is searched only when one is shown: a sync runs on every append of a long path)."""
    edits = [e for e in shown if e.type == "context_edit" and e.data.get("replacement") is not None]
    if not edits:
        return {}
    by_id = {e.id: e for e in path}
    out: dict[str, str] = {}
    for entry in edits:
        target = by_id.get(str(entry.data.get("targetId")))
        if target is None:
            continue
        if target.type == "message":
            out[entry.id] = content_text((target.message or {}).get("content"), "\n", image="[image]")
        else:
            out[entry.id] = content_text(target.data.get("content"), "\n", image="[image]")
    return out

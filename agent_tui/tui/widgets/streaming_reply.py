"""The reply being streamed: thinking (collapsed), markdown text, tool calls as they start and finish.

Deltas only go into buffers; a timer flushes them every :data:`FLUSH_SECONDS`.
Markdown gets whole blocks only (up to the last blank line outside a code
fence, or a closing fence); the unfinished block is shown as plain text, so
an open code fence is never re-highlighted on every token.

A fence longer than :data:`BIG_FENCE_LINES` lines is not given to the Markdown
widget: highlighting 300 lines costs about 30 ms of Pygments and wrapping,
done twice (height, then lines), a visible stall in the typing. When such a
fence closes, a worker (``run_worker``, an async worker awaiting
``asyncio.to_thread``) renders it in a thread: :class:`HighlightedFence` is the
fence as the chat renders it after a rebuild (``chat_entry.markdown_renderable``:
Rich Markdown, the same code theme), and its lines for the widget's width are
made there, pausing every :data:`RENDER_SLICE` segments so the thread leaves the
GIL to the event loop; while someone types, the render waits for a pause in the typing
(Pygments' lexing does not pause, and frames would take twice as long meanwhile). Meanwhile the fence and everything after it stay in the
plain tail; when the lines are ready, the highlighted fence is mounted before
the tail and the blocks after it are shown, so blocks never change order and
the loop only replays ready lines. The worker belongs to this widget: if the
chat is rebuilt (the widget removed) or the app quits mid-render it is
cancelled and the thread's result dropped; a reply that ends or is aborted
keeps its worker, and the fence and what follows appear when it is done (a
render that fails shows the code plain). At another width (a resize) the fence
is rendered again on the loop, as the rebuilt chat is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static
from textual.worker import Worker

from agent_tui.projection.describe import plural
from agent_tui.store.content import args_summary
from agent_tui.store.record import Entry
from agent_tui.terminal_text import visible, visible_line
from agent_tui.tui import frame_timer
from agent_tui.tui.symbols import lead
from agent_tui.tui.widgets import one_layout_pass
from agent_tui.tui.widgets.chat_entry import CodeHeader, is_failed_attempt, markdown_parts, tool_call_widget
from agent_tui.tui.widgets.composer import TYPING_PAUSE
from agent_tui.tui.widgets.reply_blocks import (
    RENDER_PAUSE,
    HighlightedFence,
    fence_body,
    split_blocks,
    stable_length,
)
from agent_tui.tui.widgets.tail_lines import TailLines
from agent_tui.tui.worker_errors import forward_failure

#: Each flush grows the reply and scrolls the chat: a frame of 10-40 ms with a big session. At
#: 0.08 s, a key typed meanwhile reached the screen in 19 ms (median) / 57 ms (p95); at 0.15 s in
#: 10 / 45 ms (bench/tui_bench.py), and the text still arrives several times a second.
FLUSH_SECONDS = 0.15
#: While keys come in (none for ``TYPING_PAUSE`` is a pause), at most this often: each flush is a
#: frame that repaints the whole chat, and a key typed as it begins waits for it.
TYPING_FLUSH_SECONDS = 0.3
#: The longest such a flush waits for the frame that draws the keys typed before it.
KEYS_FIRST_WAIT = 0.05


class StreamingReply(Vertical):
    _size_updated = one_layout_pass.size_updated  # growing costs one layout, not two

    DEFAULT_CSS = """
    StreamingReply { height: auto; padding: 0 1; margin: 0 0 1 0; }
    StreamingReply Markdown { margin: 0; padding: 0; }
    StreamingReply .code { margin: 0 0 1 0; }
    StreamingReply .code.plain { background: $boost; padding: 0 1; }
    StreamingReply Collapsible { margin: 0; padding: 0; border: none; background: transparent; }
    StreamingReply .tool-line { color: $text-muted; }
    StreamingReply .tool-line.error { color: $error; }
    StreamingReply .error { color: $error; }
    StreamingReply Collapsible > Contents { padding: 0 0 0 2; }
    """

    def __init__(
        self, typed_at: Callable[[], float] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """``typed_at``: when a key was last typed (``clock``'s time), to flush less often meanwhile;
        ``clock``: the time now (a test's hand-moved clock; the timers keep Textual's)."""
        super().__init__()
        self._typed_at = typed_at
        self._clock = clock
        self._flushed_at = 0.0
        self._later: Timer | None = None  # a flush once the typing pauses (a long fence waits)
        self.text = ""
        self.thinking = ""
        self._sent = 0  # characters of ``text`` given to the Markdown widget
        self._shown_tail: str | None = None  # the plain tail last shown
        self._tail = TailLines(id="reply-tail")
        self._finished = False  # the reply is complete: its last block is finished too
        self._shown_thinking = 0
        self._timer: Timer | None = None
        self._tools: dict[str, Static] = {}
        self._calls: dict[str, str] = {}  # call id -> its line, as shown
        self._markdown: Markdown | None = None  # where finished prose goes next
        self._rendering: Worker[None] | None = None  # the long fence being rendered, if any
        self._lock = asyncio.Lock()
        self.entry: Entry | None = None  # set when the reply becomes the chat's view of its message

    def compose(self) -> ComposeResult:
        with Collapsible(title="thinking…", collapsed=True, id="reply-thinking") as thinking:
            thinking.display = False
            yield Static(id="reply-thinking-text")
        self._markdown = Markdown()
        yield self._markdown
        yield self._tail

    def on_mount(self) -> None:
        self._timer = self.set_interval(FLUSH_SECONDS, self._flush_due)

    def _typing(self) -> bool:
        return self._typed_at is not None and self._clock() - self._typed_at() < TYPING_PAUSE

    async def _flush_due(self) -> None:
        if not self._typing():
            await self.flush()
        elif self._clock() - self._flushed_at >= TYPING_FLUSH_SECONDS:
            # The keys typed so far are drawn first, in a frame of their own (a few ms): a key
            # drawn in the flush's frame (15-20 ms at 160x50) waited for it, on top of the frame
            # it came in during.
            await frame_timer.next_frame(self.screen, KEYS_FIRST_WAIT)
            await self.flush()

    async def _flush_later(self) -> None:
        self._later = None
        await self.flush()

    def add_text(self, delta: str) -> None:
        self.text += delta

    def add_thinking(self, delta: str) -> None:
        self.thinking += delta

    def tool_streaming(self, call_id: str, name: str) -> None:
        """The model is writing a tool call: show it before its arguments are complete."""
        if call_id not in self._tools:
            line = Static(Text(f"→ {visible_line(name)}(…)"), classes="tool-line")
            self._tools[call_id] = line
            self.mount(line)

    def tool_started(self, call_id: str, name: str, arguments: Any) -> None:
        self._calls[call_id] = f"→ {visible_line(name, strict=True)}({args_summary(arguments)})"
        text = Text(f"{self._calls[call_id]} running…")
        line = self._tools.get(call_id)
        if line is None:
            line = Static(text, classes="tool-line")
            self._tools[call_id] = line
            self.mount(line)
        else:
            line.update(text)

    def tool_waiting(self, call_id: str) -> None:
        """The call waits for the user's answer (the permission dialog is open)."""
        line = self._tools.get(call_id)
        if line is not None and call_id in self._calls:
            line.update(Text(f"{self._calls[call_id]} waiting for approval"))

    def tool_answered(self, call_id: str, decision: str) -> None:
        line = self._tools.get(call_id)
        if line is not None and call_id in self._calls:
            after = "denied" if decision == "deny" else "running…"
            line.update(Text(f"{self._calls[call_id]} {after}"))

    def tool_finished(self, call_id: str, name: str, is_error: bool) -> None:
        line = self._tools.get(call_id)
        if line is None:
            return
        line.update(Text(lead(f"{'✗' if is_error else '✓'} {visible_line(name)}")))
        line.set_class(is_error, "error")

    async def flush(self) -> None:
        self._flushed_at = self._clock()
        async with self._lock:  # the timer's flush and a finished fence's do not interleave
            if len(self.thinking) != self._shown_thinking:
                self._shown_thinking = len(self.thinking)
                box = self.query_one("#reply-thinking", Collapsible)
                box.display = True
                box.title = f"thinking… ({plural(len(self.thinking), 'character')})"
                self.query_one("#reply-thinking-text", Static).update(
                    Text(visible(self.thinking), style="italic")
                )
            if self._rendering is None:
                await self._show_blocks()
            await self._show_tail()

    async def _show_tail(self) -> None:
        """Show the unfinished end as plain text in a :class:`TailLines`, which renders only the
        lines that came since the last flush, not all of a long open fence again."""
        live = self.text[self._sent :]
        if live != self._shown_tail:
            self._shown_tail = live
            self._tail.show(self.text, self._sent)

    def _plain_start(self) -> Widget:
        """The plain tail: finished blocks are mounted before it."""
        return self._tail

    @property
    def tail_text(self) -> str:
        """The text shown plain, below the finished blocks."""
        return self.text[self._sent :]

    async def _show_blocks(self) -> None:
        """Give finished blocks to Markdown, up to the first long fence (rendered in a thread)."""
        stable = len(self.text) if self._finished else stable_length(self.text)
        if stable <= self._sent:
            return
        for kind, part in split_blocks(self.text[self._sent : stable], final=self._finished):
            if kind == "code":
                # It stays in the plain tail, with what follows, until its lines are ready; and
                # while someone types, until they pause: the thread's Pygments holds the
                # interpreter in 5 ms turns, so every frame of the typing would take twice as long.
                if self._typing():
                    if self._later is None:  # (while streaming, the next flush tries again too)
                        self._later = self.set_timer(TYPING_PAUSE, self._flush_later)
                    return
                self._rendering = self.run_worker(
                    self._highlight(part),
                    group="highlight",
                    exit_on_error=False,
                    description="highlight a long fence",
                )
                return
            self._sent += len(part)
            await self._show_markdown(part)

    async def _show_markdown(self, part: str) -> None:
        """Finished markdown (its short fences closed): each top-level fence gets its copy line
        right above it, so it starts a Markdown widget of its own (the prose after it goes there
        too), as the rebuilt chat shows it (``chat_entry.markdown_widgets``)."""
        pieces = markdown_parts(part)
        for i, (kind, info, source) in enumerate(pieces):
            if kind == "content":
                continue
            if kind == "code":
                code = pieces[i + 1][2] if i + 1 < len(pieces) else ""
                self._markdown = Markdown()
                await self.mount(
                    CodeHeader(info.split(" ")[0], code), self._markdown, before=self._plain_start()
                )
            elif self._markdown is None:
                self._markdown = Markdown()
                await self.mount(self._markdown, before=self._plain_start())
            await self._markdown.append(visible(source))

    async def _highlight(self, fence: str) -> None:
        """Render ``fence`` in a thread, mount it before the tail, then show what follows it."""
        try:
            highlighted = HighlightedFence(visible(fence))
            width = self.content_size.width
            if width > 0:
                options = self.app.console_options.update(highlight=False, width=width)
                await asyncio.to_thread(highlighted.render_lines, self.app.console, options, RENDER_PAUSE)
            code = Static(highlighted, classes="code highlighted")
        except Exception:  # a renderer's failure must not lose the reply: show the code plain
            code = Static(Text(visible(fence_body(fence))), classes="code plain")
        body = fence_body(fence)
        header = CodeHeader(fence.split("\n", 1)[0].strip("`~ ").split(" ")[0], body + "\n" if body else "")
        async with self._lock:
            await self.mount(header, code, before=self._plain_start())
            self._markdown = None
            self._sent += len(fence)
            self._rendering = None
            await self._show_tail()  # the plain copy of the fence goes at once
        await self.flush()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_failure(self, event)  # Textual's StateChanged stops here: the app shows the failure

    @property
    def rendering(self) -> bool:
        """Whether a long fence is being rendered (it and what follows are shown as plain text)."""
        return self._rendering is not None

    def can_adopt(self, entry: Entry) -> bool:
        """Whether this reply shows ``entry`` (the assistant message it streamed) as it is."""
        if entry.type != "message" or entry.role != "assistant" or self.entry is not None:
            return False
        if is_failed_attempt(entry):
            return False  # the chat folds it (with the others of its run)
        content = (entry.message or {}).get("content")
        text = (
            "".join(
                str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
            )
            if isinstance(content, list)
            else str(content or "")
        )
        return text == self.text

    async def adopt(self, entry: Entry) -> None:
        """Become the chat's widget for ``entry``: tool calls as in a stored message, errors shown."""
        await self.finish()
        self.entry = entry
        message = entry.message or {}
        for line in self._tools.values():
            await line.remove()
        self._tools.clear()
        blocks = message.get("content")
        widgets: list[Widget] = [
            tool_call_widget(b) for b in blocks or [] if isinstance(b, dict) and b.get("type") == "toolCall"
        ]
        if message.get("stopReason") in ("error", "aborted"):
            reason = message.get("errorMessage") or message.get("stopReason")
            widgets.append(Static(Text(lead(f"✗ {visible(str(reason))}")), classes="error"))
        if widgets:
            await self.mount_all(widgets)

    async def finish(self) -> None:
        """The reply is complete: its last block goes to Markdown too (or, when a long fence is
        being rendered, once it is)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._finished = True
        await self.flush()
        if self.thinking:  # done: the title no longer says it is still going
            box = self.query_one("#reply-thinking", Collapsible)
            box.title = f"thinking ({plural(len(self.thinking), 'character')})"

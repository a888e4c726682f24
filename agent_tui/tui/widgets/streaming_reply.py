"""The reply being streamed: thinking (collapsed), markdown text, tool calls as they start and finish.

Deltas only go into buffers; a timer flushes them every :data:`FLUSH_SECONDS`.
Markdown gets whole blocks only (up to the last blank line outside a code
fence, or a closing fence); the unfinished block is shown as plain text, so
an open code fence is never re-highlighted on every token.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Collapsible, Markdown, Static

from agent_tui.tui.widgets.chat_entry import args_preview

FLUSH_SECONDS = 0.08


def stable_length(text: str) -> int:
    """How much of ``text`` is made of finished markdown blocks."""
    stable = 0
    in_fence = False
    fence = ""
    pos = 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        if not line.endswith("\n"):
            break  # the last, unfinished line
        stripped = line.strip()
        if in_fence:
            if stripped.startswith(fence) and stripped.strip("`~") == "":
                in_fence = False
                stable = pos
        elif stripped.startswith("```") or stripped.startswith("~~~"):
            in_fence = True
            fence = stripped[:3]
        elif not stripped:
            stable = pos
    return stable


class StreamingReply(Vertical):
    DEFAULT_CSS = """
    StreamingReply { height: auto; padding: 0 1; margin: 0 0 1 0; }
    StreamingReply Markdown { margin: 0; padding: 0; }
    StreamingReply #reply-tail { height: auto; }
    StreamingReply Collapsible { margin: 0; padding: 0; border: none; background: transparent; }
    StreamingReply .tool-line { color: $text-muted; }
    StreamingReply .tool-line.error { color: $error; }
    """

    def __init__(self) -> None:
        super().__init__(id="streaming-reply")
        self.text = ""
        self.thinking = ""
        self._sent = 0  # characters of ``text`` given to the Markdown widget
        self._shown_tail: str | None = None
        self._shown_thinking = 0
        self._timer: Timer | None = None
        self._tools: dict[str, Static] = {}

    def compose(self) -> ComposeResult:
        with Collapsible(title="thinking…", collapsed=True, id="reply-thinking") as thinking:
            thinking.display = False
            yield Static(id="reply-thinking-text")
        yield Markdown(id="reply-markdown")
        yield Static(id="reply-tail", markup=False)

    def on_mount(self) -> None:
        self._timer = self.set_interval(FLUSH_SECONDS, self.flush)

    def add_text(self, delta: str) -> None:
        self.text += delta

    def add_thinking(self, delta: str) -> None:
        self.thinking += delta

    def tool_streaming(self, call_id: str, name: str) -> None:
        """The model is writing a tool call: show it before its arguments are complete."""
        if call_id not in self._tools:
            line = Static(Text(f"→ {name}(…)"), classes="tool-line")
            self._tools[call_id] = line
            self.mount(line)

    def tool_started(self, call_id: str, name: str, arguments: Any) -> None:
        text = Text(f"→ {name}({args_preview(arguments)}) running…")
        line = self._tools.get(call_id)
        if line is None:
            line = Static(text, classes="tool-line")
            self._tools[call_id] = line
            self.mount(line)
        else:
            line.update(text)

    def tool_finished(self, call_id: str, name: str, is_error: bool) -> None:
        line = self._tools.get(call_id)
        if line is None:
            return
        line.update(Text(f"{'✗' if is_error else '✓'} {name}"))
        line.set_class(is_error, "error")

    async def flush(self) -> None:
        if len(self.thinking) != self._shown_thinking:
            self._shown_thinking = len(self.thinking)
            box = self.query_one("#reply-thinking", Collapsible)
            box.display = True
            box.title = f"thinking… ({len(self.thinking):,} characters)"
            self.query_one("#reply-thinking-text", Static).update(Text(self.thinking, style="italic"))
        stable = stable_length(self.text)
        if stable > self._sent:
            chunk = self.text[self._sent : stable]
            self._sent = stable
            await self.query_one("#reply-markdown", Markdown).append(chunk)
        tail = self.text[self._sent :]
        if tail != self._shown_tail:
            self._shown_tail = tail
            self.query_one("#reply-tail", Static).update(Text(tail))

    async def finish(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        await self.flush()

"""The reply being streamed: thinking (collapsed), markdown text, tool calls as they start and finish.

Deltas only go into buffers; a timer flushes them every :data:`FLUSH_SECONDS`.
Markdown gets whole blocks only (up to the last blank line outside a code
fence, or a closing fence); the unfinished block is shown as plain text, so
an open code fence is never re-highlighted on every token, and a long fence
stays plain text when it closes (highlighting 300 lines at once would stall
the typing; the stored message is highlighted when the chat is next built).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static

from agent_tui.store.record import Entry
from agent_tui.tui.widgets.chat_entry import args_preview, tool_call_widget

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


BIG_FENCE_LINES = 40


def split_blocks(chunk: str) -> list[tuple[str, str]]:
    """Finished markdown as ("md", text) and ("code", fenced block) parts, in order.

    Only fences longer than :data:`BIG_FENCE_LINES` are split out: they are shown as
    plain text, since highlighting a long block would stall the stream.
    """
    parts: list[tuple[str, str]] = []
    current: list[str] = []
    fence: list[str] | None = None
    marker = ""
    for line in chunk.splitlines(keepends=True):
        stripped = line.strip()
        if fence is None:
            if stripped.startswith("```") or stripped.startswith("~~~"):
                fence, marker = [line], stripped[:3]
            else:
                current.append(line)
            continue
        fence.append(line)
        if stripped.startswith(marker) and stripped.strip("`~") == "":
            if len(fence) - 2 > BIG_FENCE_LINES:
                if current:
                    parts.append(("md", "".join(current)))
                    current = []
                parts.append(("code", "".join(fence)))
            else:
                current.extend(fence)
            fence = None
    if fence is not None:
        current.extend(fence)
    if current:
        parts.append(("md", "".join(current)))
    return parts


class StreamingReply(Vertical):
    DEFAULT_CSS = """
    StreamingReply { height: auto; padding: 0 1; margin: 0 0 1 0; }
    StreamingReply Markdown { margin: 0; padding: 0; }
    StreamingReply #reply-tail { height: auto; }
    StreamingReply .code { background: $boost; padding: 0 1; margin: 0 0 1 0; }
    StreamingReply Collapsible { margin: 0; padding: 0; border: none; background: transparent; }
    StreamingReply .tool-line { color: $text-muted; }
    StreamingReply .tool-line.error { color: $error; }
    StreamingReply .error { color: $error; }
    StreamingReply Collapsible > Contents { padding: 0 0 0 2; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.thinking = ""
        self._sent = 0  # characters of ``text`` given to the Markdown widget
        self._shown_tail: str | None = None
        self._shown_thinking = 0
        self._timer: Timer | None = None
        self._tools: dict[str, Static] = {}
        self._markdown: Markdown | None = None  # where finished prose goes next
        self.entry: Entry | None = None  # set when the reply becomes the chat's view of its message

    def compose(self) -> ComposeResult:
        with Collapsible(title="thinking…", collapsed=True, id="reply-thinking") as thinking:
            thinking.display = False
            yield Static(id="reply-thinking-text")
        self._markdown = Markdown()
        yield self._markdown
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
            tail_widget = self.query_one("#reply-tail", Static)
            for kind, part in split_blocks(chunk):
                if kind == "code":
                    body = "".join(part.splitlines(keepends=True)[1:-1])
                    await self.mount(Static(Text(body.rstrip("\n")), classes="code"), before=tail_widget)
                    self._markdown = None
                    continue
                if self._markdown is None:
                    self._markdown = Markdown()
                    await self.mount(self._markdown, before=tail_widget)
                await self._markdown.append(part)
        tail = self.text[self._sent :]
        if tail != self._shown_tail:
            self._shown_tail = tail
            self.query_one("#reply-tail", Static).update(Text(tail))

    def can_adopt(self, entry: Entry) -> bool:
        """Whether this reply shows ``entry`` (the assistant message it streamed) as it is."""
        if entry.type != "message" or entry.role != "assistant" or self.entry is not None:
            return False
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
            widgets.append(Static(Text(f"✗ {reason}"), classes="error"))
        if widgets:
            await self.mount_all(widgets)

    async def finish(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        await self.flush()

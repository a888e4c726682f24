"""A text too big to lay out at once, shown capped: its first and last lines around a "show
more" button that lays out one page more at a time, so opening it costs what the shown part costs
(a 20 MB pasted log, a huge tool output)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Button, Static

from agent_tui.projection.describe import plural
from agent_tui.terminal_text import visible


def plain(text: str, style: str = "") -> Text:
    """Untrusted text as a renderable: never markup, its terminal controls made visible."""
    return Text(visible(text), style=style)


#: A text over this many characters, or lines, is shown capped (see :class:`CappedText`).
CAP_CHARS = 20_000
CAP_LINES = 400
#: What a capped text shows: its first and last lines, each part cut to so many characters.
HEAD_LINES, HEAD_CHARS = 150, 12_000
TAIL_LINES, TAIL_CHARS = 50, 4_000
#: Each press of "show more" lays out this much more of the hidden middle (a page: laying out
#: text costs about 6 s a megabyte, so a page stays well under a second).
PAGE_LINES, PAGE_CHARS = 1_000, 64_000


def is_big(text: str) -> bool:
    return len(text) > CAP_CHARS or text.count("\n", 0, CAP_CHARS * 2) >= CAP_LINES


def head_and_tail(text: str) -> tuple[str, str, int, int]:
    """The first and last lines of ``text`` (each part cut to its character cap), and how many
    lines and characters lie between them. Costs a few scans of the text, never a split of it."""
    end = 0
    for _ in range(HEAD_LINES):
        found = text.find("\n", end, HEAD_CHARS)
        if found < 0:
            end = min(len(text), HEAD_CHARS)
            break
        end = found + 1
    low = max(end, len(text) - TAIL_CHARS)
    pos = len(text) - 1 if text.endswith("\n") else len(text)  # a final newline ends no line
    start = low
    for _ in range(TAIL_LINES):
        found = text.rfind("\n", low, pos)
        if found < 0:
            break
        pos = found
        start = found + 1
    hidden = text.count("\n", end, start)
    return text[:end], text[start:], hidden, start - end


def page_end(text: str, start: int, stop: int) -> int:
    """Where a page of ``text`` that starts at ``start`` ends: after :data:`PAGE_LINES` lines, or
    the last whole line within :data:`PAGE_CHARS` characters (a longer line is cut there), never
    past ``stop``."""
    limit = min(stop, start + PAGE_CHARS)
    if limit == stop and text.count("\n", start, stop) < PAGE_LINES:
        return stop
    end = start
    for _ in range(PAGE_LINES):
        found = text.find("\n", end, limit)
        if found < 0:
            return end if end > start else limit
        end = found + 1
    return end


class CappedText(Vertical):
    """A big text, shown as its first and last lines around a "show more" button; each press lays
    out one more page of the middle (:data:`PAGE_LINES` lines or :data:`PAGE_CHARS` characters),
    so no press costs more than a page. Never markup: plain ``Text`` throughout."""

    DEFAULT_CSS = """
    CappedText { height: auto; }
    CappedText > Button.show-more { width: auto; margin: 0; color: $text-muted; }
    """

    def __init__(self, text: str, style: str = "", *, classes: str = "") -> None:
        super().__init__(classes=classes)
        self.text = text
        self.style = style
        head, tail, _, _ = head_and_tail(text)
        self._head, self._tail = head, tail
        self.shown = len(head)  # the hidden middle is text[shown:tail_start]
        self.tail_start = len(text) - len(tail)

    def compose(self) -> ComposeResult:
        yield Static(plain(self._head.rstrip("\n"), style=self.style), classes="capped-head")
        yield Button(self._label(), classes="show-more", compact=True)
        if self._tail:
            yield Static(plain(self._tail, style=self.style), classes="capped-tail")

    def _label(self) -> str:
        chars = self.tail_start - self.shown
        lines = self.text.count("\n", self.shown, self.tail_start)
        hidden = (
            f"{plural(lines, 'more line')} ({plural(chars, 'character')})"
            if lines
            else plural(chars, "more character")
        )
        return f"… {hidden}: show more"

    @on(Button.Pressed, ".show-more")
    async def show_more(self, event: Button.Pressed) -> None:
        event.stop()
        button = event.button
        end = page_end(self.text, self.shown, self.tail_start)
        page = self.text[self.shown : end]
        self.shown = end
        await self.mount(
            Static(plain(page.rstrip("\n"), style=self.style), classes="capped-page"), before=button
        )
        if self.shown >= self.tail_start:
            await button.remove()
        else:
            button.label = self._label()

"""The streamed text of a reply cut into what can be shown how: the finished markdown blocks,
the long code fences (highlighted off the event loop, see :class:`HighlightedFence`), and the
plain tail after them (drawn by :class:`~agent_tui.tui.widgets.tail_lines.TailLines`)."""

from __future__ import annotations

import time

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment

from agent_tui.tui.widgets.chat_entry import markdown_renderable


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
RENDER_SLICE = 200  # segments rendered between two pauses of a fence's thread
RENDER_PAUSE = 0.003


def split_blocks(chunk: str, final: bool = False) -> list[tuple[str, str]]:
    """Finished markdown as ("md", text) and ("code", fenced block) parts, in order.

    Only fences longer than :data:`BIG_FENCE_LINES` are split out: they are shown as
    plain text, since highlighting a long block would stall the stream. With ``final``
    (the reply is complete), a long fence left open at the end is split out too.
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
    if fence is not None and final and len(fence) - 1 > BIG_FENCE_LINES:
        if current:
            parts.append(("md", "".join(current)))
            current = []
        parts.append(("code", "".join(fence)))
    elif fence is not None:
        current.extend(fence)
    if current:
        parts.append(("md", "".join(current)))
    return parts


class HighlightedFence:
    """A closed fence rendered as the chat renders it after a rebuild, its lines kept per width.

    :meth:`render_lines` is the costly part (Pygments, wrapping) and touches no widget,
    so it runs in a thread; rendering afterwards at the same width only replays the lines.
    """

    def __init__(self, fence: str) -> None:
        self.fence = fence
        self.renderable = markdown_renderable(fence)
        self._lines: dict[int, list[list[Segment]]] = {}

    def render_lines(
        self, console: Console, options: ConsoleOptions, pause: float = 0.0
    ) -> list[list[Segment]]:
        """The lines at ``options.max_width``; with ``pause``, sleep that long every
        :data:`RENDER_SLICE` segments, so a thread leaves the GIL to the event loop."""
        width = options.max_width
        lines = self._lines.get(width)
        if lines is None:
            segments: list[Segment] = []
            for segment in console.render(self.renderable, options):
                segments.append(segment)
                if pause and len(segments) % RENDER_SLICE == 0:
                    time.sleep(pause)
            lines = list(Segment.split_and_crop_lines(segments, width, pad=False, include_new_lines=True))
            self._lines[width] = lines
        return lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.render_lines(console, options):
            yield from line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)


def fence_body(fence: str) -> str:
    """The code of a fenced block, without its fence lines (a reply may end before the closing one)."""
    lines = fence.splitlines(keepends=True)[1:]
    marker = fence.lstrip()[:3]
    if lines and lines[-1].strip().startswith(marker) and lines[-1].strip().strip("`~") == "":
        lines = lines[:-1]
    return "".join(lines).rstrip("\n")

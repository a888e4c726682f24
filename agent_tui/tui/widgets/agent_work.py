"""Above the composer: the subagents running now and the model's plan (``todo_write``).

One row per running subagent (spinner, its type and description, tokens so far), then the latest
todo list of the branch (``[x]`` done, ``[>]`` in progress, ``[ ]`` pending; at most 6 rows, the
rest counted). Hidden when there is neither. Every string is the model's: drawn as ``Text``,
sanitized, never markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from agent_tui.projection.todos import Todo, todo_lines
from agent_tui.store.redact import redact_text
from agent_tui.terminal_text import visible_line
from agent_tui.tui.widgets.status_line import ASCII_SPINNER, SPINNER, TICK

MAX_TODO_ROWS = 6


@dataclass(slots=True)
class Running:
    agent_type: str
    description: str
    tokens: int = 0


class AgentWork(Static):
    DEFAULT_CSS = """
    AgentWork { height: auto; max-height: 10; margin: 0 1; padding: 0 1; display: none; }
    AgentWork.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.running: dict[str, Running] = {}
        self.todos: list[Todo] = []
        self.ascii = False
        self._frame = 0
        self._timer: Timer | None = None

    def subagent(self, call_id: str, agent_type: str, description: str, tokens: int, *, done: bool) -> None:
        """A subagent's progress (``done``: it ended, its row goes)."""
        if done:
            self.running.pop(call_id, None)
        else:
            row = self.running.setdefault(call_id, Running(agent_type, description))
            row.tokens = tokens
        self._redraw()

    def clear_subagents(self) -> None:
        self.running.clear()
        self._redraw()

    def show_todos(self, todos: Sequence[Todo] | None) -> None:
        self.todos = list(todos or [])
        self._redraw()

    def lines(self) -> list[str]:
        frames = ASCII_SPINNER if self.ascii else SPINNER
        spin = frames[self._frame % len(frames)]
        out = [f"{spin} {r.agent_type}: {r.description} · {r.tokens:,} tokens" for r in self.running.values()]
        todo = todo_lines(self.todos)
        if todo and not all(t["status"] == "completed" for t in self.todos):
            shown = todo[:MAX_TODO_ROWS]
            if len(todo) > len(shown):
                shown.append(f"… {len(todo) - len(shown)} more")
            out += shown
        return [visible_line(redact_text(line)[0]) for line in out]

    def _tick(self) -> None:
        self._frame += 1
        self._redraw()

    def _redraw(self) -> None:
        lines = self.lines()
        self.update(Text("\n".join(lines), no_wrap=True, overflow="ellipsis"))
        self.set_class(bool(lines), "-shown")
        if self.running and self._timer is None and self.is_mounted:
            self._timer = self.set_interval(TICK * 2, self._tick)
        elif not self.running and self._timer is not None:
            self._timer.stop()
            self._timer = None


__all__ = ["AgentWork", "Running"]

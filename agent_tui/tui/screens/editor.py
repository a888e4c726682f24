"""A multi-line editor, pre-filled: Ctrl+S saves, Escape cancels (dismisses with None), Ctrl+A
selects all (Alt+A with ``keymap = "pi"``, where Ctrl+A stays pi's line start).

With a ``counter``, a line under the text says what saving it would do (the app
counts the replacement's tokens against the context), updated as the user types. With an
``addition``, Ctrl+L replaces the text with what it returns for the text (a compaction review adds
what the summary left out), and with a ``second`` action Ctrl+N runs it on the text, then counts
the text again (the review pins the entries that hold what the summary left out).

Shown unasked (the compaction review, when the model's summary arrives), it is ``guarded``: a
:class:`~agent_tui.tui.screens.dialog.Question` whose keys typed for the composer as it appears
(or while the user is still typing) edit nothing and save nothing: the text area takes the focus
only once the question has been on screen ``ANSWER_GRACE`` and the typing has paused
``TYPING_GAP``; until then letters go on into the composer, Ctrl+S, Ctrl+L and Ctrl+N do nothing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, TextArea

from agent_tui.terminal_text import visible
from agent_tui.tui.keymap import key_name
from agent_tui.tui.screens.dialog import Question
from agent_tui.tui.widgets.inert_lines import InertTextArea


class EditorScreen(Question[str | None]):
    BINDINGS = [  # noqa: RUF012
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+l", "add", "Add", show=False, priority=True),
        Binding("ctrl+n", "second", "Second", show=False, priority=True),
        # pi's keys keep Ctrl+A at the line start (pi's editor): there it is Alt+A (keymap.PI)
        Binding("ctrl+a", "select_all", "Select all", id="editor.select_all", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(
        self,
        title: str,
        text: str,
        counter: Callable[[str], str] | None = None,
        addition: tuple[str, Callable[[str], str]] | None = None,
        *,
        second: tuple[str, Callable[[str], Awaitable[object]]] | None = None,
        guarded: bool = False,
        clock: Callable[[], float] = time.monotonic,
        typed_at: float | None = None,
        on_text: Callable[[str], object] | None = None,
    ) -> None:
        super().__init__(guarded=guarded, clock=clock, typed_at=typed_at, on_text=on_text)
        self._armed = not guarded  # the text area has the focus: keys edit, Ctrl+S saves
        self.title_text = title
        self.text = text
        self.counter = counter
        self.addition = addition  # (what Ctrl+L does, in a few words; the new text for a text)
        self.second = second  # (what Ctrl+N does, in a few words; run on the text, then recount)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog editor-dialog"):
            yield Label(Text(visible(self.title_text)), classes="dialog-title", markup=False)
            area = InertTextArea(self.text, id="editor-text", soft_wrap=True)
            area.cursor_blink = False
            area.can_focus = self._armed  # guarded: the screen takes the keys until it is armed
            yield area
            count = Label(self._count(self.text), id="editor-count", classes="dialog-hint", markup=False)
            count.display = self.counter is not None
            yield count
            yield Label(self._keys(), classes="dialog-hint", markup=False)

    def _keys(self) -> str:
        """The keys line; one line at 80 columns (70 inside the dialog), Ctrl+L's too."""
        select = key_name(getattr(self.app, "keymap", {}), "editor.select_all", "ctrl+a")
        if self.addition is None:
            return f"{select} selects all · Ctrl+S to save · Escape to cancel"
        if self.second is None:
            return f"Ctrl+L {self.addition[0]} · {select} all · Ctrl+S save · Esc cancel"
        return f"Ctrl+L {self.addition[0]} · Ctrl+N {self.second[0]} · {select} all · Ctrl+S save · Esc"

    def _count(self, text: str) -> str:
        return visible(self.counter(text)) if self.counter is not None else ""

    @property
    def count_text(self) -> str:
        """The count line as shown (for tests)."""
        return str(self.query_one("#editor-count", Label).content)

    @on(TextArea.Changed, "#editor-text")
    def _changed(self, event: TextArea.Changed) -> None:
        if self.counter is not None:
            self.query_one("#editor-count", Label).update(self._count(event.text_area.text))

    def on_mount(self) -> None:
        if self._armed:
            self.query_one(TextArea).focus()
        else:
            self._arming = self.set_interval(0.05, self._arm)

    def _arm(self) -> None:
        """Give the text area the focus once the question's guard has passed (see the module doc)."""
        if self._armed or not self.answerable or self.typing(self.clock()):
            return
        self._armed = True
        self._arming.stop()
        area = self.query_one(TextArea)
        area.can_focus = True
        area.focus()

    @property
    def armed(self) -> bool:
        return self._armed

    def _early(self) -> bool:
        if not self._armed:
            self.app.bell()
        return not self._armed

    def action_add(self) -> None:
        if self.addition is None or self._early():
            return
        area = self.query_one(TextArea)
        new = self.addition[1](area.text)
        if new != area.text:
            area.text = new  # Changed updates the count
            area.move_cursor(area.document.end)

    async def action_second(self) -> None:
        if self.second is None or self._early():
            return
        await self.second[1](self.query_one(TextArea).text)
        if self.is_attached and self.counter is not None:  # what it did may change the count
            self.query_one("#editor-count", Label).update(self._count(self.query_one(TextArea).text))

    def action_select_all(self) -> None:
        if not self._early():
            self.query_one(TextArea).select_all()

    def action_save(self) -> None:
        if not self._early():
            self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)

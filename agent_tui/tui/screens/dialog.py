"""The base of every dialog: a modal screen that knows how small the terminal is.

Textual's breakpoints give the screen ``-short`` below :data:`TALL` rows and ``-narrow`` below
:data:`WIDE` columns (updated live on resize), and ``app.tcss`` makes the dialogs compact there:
no padding, no blank lines between title, body and hint, the whole height for lists and editors,
so at 80x24 every dialog shows its title, its body and its hint (what to press) at once.

:class:`Question` is the base of every question that appears unasked (the permission question, the
trust question, and the ones to come): one guard decides which keys answer it. A key that arrives
before the question has been on screen :data:`ANSWER_GRACE`, or while the user is typing (less than
:data:`TYPING_GAP` after the key before, in the composer or here), answers nothing: a letter or
space goes on into the composer as text, any other key is dropped ("hello⏎" then the Up⏎ of a
recall reflex 250 ms later answered "Yes" to the trust question, and the folder's hostile MCP
server started). A choice that starts programs (trusting a folder, allowing a command for the
session) is taken only deliberately: Enter once the highlight has rested on it
:data:`SETTLE` after an arrow key put it there, or a click; never one letter (the "a" of "also run
the tests afterwards", typed after a pause, allowed ``git clean -fdx`` for the session). Escape
always answers: it is the safe answer (deny, not now).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVar

from textual import events
from textual.screen import ModalScreen, Screen, ScreenResultType
from textual.widgets import OptionList
from textual.worker import Worker

from agent_tui.tui.worker_errors import forward_failure

if TYPE_CHECKING:
    from textual.screen import ScreenResultCallbackType

ResultType = TypeVar("ResultType")
R = TypeVar("R")


class ScreenHost(Protocol):
    """What :func:`ask` uses of the app: Textual's ``App`` and ``tui.host.Host`` both have it."""

    def push_screen(
        self, screen: Screen[R], callback: ScreenResultCallbackType[R] | None = None
    ) -> object: ...


#: From this many rows on, dialogs have room for padding and blank lines.
TALL = 32
#: From this many columns on, dialogs keep their own width (below it they take the screen's).
WIDE = 100
#: Seconds a question is on screen before a key answers it (keys typed for something else).
ANSWER_GRACE = 0.5
#: A key this soon after the one before (in the composer or the question) is typing, not an answer.
TYPING_GAP = 1.0
#: Seconds the highlight rests on a choice that starts programs before Enter takes it.
SETTLE = 0.5
#: The keys that move a question's highlight.
MOVES = frozenset({"up", "down", "home", "end", "pageup", "pagedown"})


class Dialog(ModalScreen[ScreenResultType]):
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TALL, "-tall")]  # noqa: RUF012
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]  # noqa: RUF012

    def __init__(self) -> None:
        super().__init__(classes="modal")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_failure(self, event)  # Textual's StateChanged stops here: the app shows the failure


class Question(Dialog[ScreenResultType]):
    """A dialog that asks something unasked, guarded (see the module's doc) when ``guarded``.

    ``typed_at``: when a key last reached the composer (``clock``'s time); ``on_text`` takes the text
    typed here that is no answer (the composer's insert); ``deliberate``: the ids of the options
    that start programs. Subclasses name their one-letter answers in :attr:`ANSWER_KEYS`."""

    #: Letters a subclass binds to answers: taken only after the grace and not while typing.
    ANSWER_KEYS: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self,
        *,
        guarded: bool = True,
        clock: Callable[[], float] = time.monotonic,
        typed_at: float | None = None,
        on_text: Callable[[str], object] | None = None,
        deliberate: Iterable[str] = (),
    ) -> None:
        super().__init__()
        self.guarded = guarded
        self.clock = clock
        self._typed_at = typed_at
        self._on_text = on_text
        self.deliberate = frozenset(deliberate)
        self._shown_at: float | None = None
        self._moved_at: float | None = None  # when an arrow key that was taken moved the highlight

    def on_mount(self) -> None:
        self._shown_at = self.clock()

    @property
    def answerable(self) -> bool:
        """Whether the question has been on screen :data:`ANSWER_GRACE` (always, unguarded)."""
        if not self.guarded:
            return True
        return self._shown_at is not None and self.clock() - self._shown_at >= ANSWER_GRACE

    def typing(self, now: float) -> bool:
        """Whether a key at ``now`` is part of the user's typing (the key before was that recent)."""
        return self._typed_at is not None and now - self._typed_at < TYPING_GAP

    def settled(self, now: float) -> bool:
        """Whether the highlight was put where it is by an arrow key :data:`SETTLE` ago or more."""
        return self._moved_at is not None and now - self._moved_at >= SETTLE

    def highlighted_id(self) -> str | None:
        """The id of the highlighted option of the question's list (None: no list, or none)."""
        lists = self.query(OptionList)
        if not lists:
            return None
        options = lists.first()
        index = options.highlighted
        return options.get_option_at_index(index).id if index is not None else None

    def on_key(self, event: events.Key) -> None:
        if not self.guarded or event.key == "escape":
            return
        now = self.clock()
        early = not self.answerable or self.typing(now)
        printable = bool(event.is_printable and event.character)
        if printable and (early or event.key not in self.ANSWER_KEYS):
            self._typed_at = now  # typing goes on: the next letter is text too
            event.stop()
            event.prevent_default()
            if self._on_text is not None and event.character:
                self._on_text(event.character)
            return
        if early:
            self._typed_at = now
            event.stop()
            event.prevent_default()
            if event.key == "enter":
                self.app.bell()
            return
        if event.key in MOVES:
            self._moved_at = now
        elif event.key == "enter" and self.highlighted_id() in self.deliberate and not self.settled(now):
            event.stop()  # Enter on a choice that starts programs the highlight only just reached
            event.prevent_default()
            self.app.bell()


async def ask(app: ScreenHost, screen: Screen[ResultType]) -> ResultType | None:
    """Push ``screen`` and wait for its answer (None when dismissed without one). Cancelled meanwhile
    (an abort), it closes the screen and lets the cancellation through."""
    answer: asyncio.Future[ResultType | None] = asyncio.get_running_loop().create_future()

    def done(value: ResultType | None) -> None:
        if not answer.done():
            answer.set_result(value)

    app.push_screen(screen, done)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_attached:
            screen.dismiss(None)
        raise


__all__ = ["ANSWER_GRACE", "SETTLE", "TALL", "TYPING_GAP", "WIDE", "Dialog", "Question", "ask"]

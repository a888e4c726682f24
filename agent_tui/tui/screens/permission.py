"""The tool-permission question: the whole call, then numbered choices as Claude Code's: 1 Yes
(once), 2 Yes and don't ask again for the rule it shows (only when the policy has one: a
permanent allow), 3 Yes for this session, 4 No. A digit or the arrows and Enter choose; no letter
answers (a letter begins a word: the "a" of "also run the tests afterwards", typed after a pause,
allowed ``git clean -fdx`` for the session).

What the model asks to run is shown whole: every line of the command, wrapped,
in a box that scrolls when it is long, with control characters, bidi
overrides and every character whose width Rich and a terminal may not agree on made
visible (``terminal_text.visible_strict``, exact: a carriage return is shown too). Nothing of it is
ever markup. No is highlighted, so an Enter on a reflex runs nothing; Escape says no. The question
is a :class:`~dialog.Question`: it can appear while the user is typing (a message queued while the
agent works: "yes, and..."), so for :data:`~dialog.ANSWER_GRACE` after it is shown no key answers,
and while the user is typing (a key less than :data:`~dialog.TYPING_GAP` after the one before) a
key is text, not an answer. The question holds the focus visibly (the choices' border in the
accent colour, the hint saying where letters go), and every letter typed while it shows goes on into the composer, said in the dialog
("typed into your message: ..."); while the composer holds words, the digits are text too (a
message is being written: "also 2 more things"), and the arrows and Enter answer (a digit pressed
too soon is kept in the composer, and does not stop the next one from answering). The session-wide and
permanent allows, chosen by Enter, take a highlight that has settled on them. No always answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from agent_tui.agent.permissions import Decision
from agent_tui.projection.describe import plural
from agent_tui.terminal_text import clip, visible_line, visible_strict
from agent_tui.tui.screens.dialog import ANSWER_GRACE, TYPING_GAP, Question

# the answers are the core's decisions (agent.permissions.Decision), by their short names here
ALLOW_ONCE = Decision.ALLOW_ONCE
ALLOW_ALWAYS = Decision.ALLOW_ALWAYS
ALLOW_SESSION = Decision.ALLOW_SESSION
DENY = Decision.DENY
#: The digits are the answers (numbered in the order shown); no letter is one.
DIGITS = frozenset("123456789")
TYPED_SHOWN = 60  # characters of the text typed into the message shown in the dialog
SCOPE_SHOWN = 160
CALL_MIN = 3  # rows of the command's box (its border and one line) however small the terminal
SIZE_ROWS = 1  # the "N lines, M characters" line
CHOICES_BORDER = 2  # the choices' border, top and bottom


def answer_line(decision: str, tool: str, summary: str) -> str:
    """How a decision reads in a notice: ``allowed once: bash ls -la``."""
    said: dict[str, str] = {
        ALLOW_ONCE: "allowed once",
        ALLOW_SESSION: "allowed for this session",
        ALLOW_ALWAYS: "allowed, and kept as a rule",
        DENY: "denied",
    }
    words = said.get(decision, decision)
    return visible_line(f"{words}: {tool} {summary}".rstrip(), strict=True)


class PermissionScreen(Question[Decision | None]):
    """Dismisses with ``allow-once``, ``allow-always``, ``allow-session`` or ``deny`` (None: closed
    without answer)."""

    ANSWER_KEYS = DIGITS

    DEFAULT_CSS = """
    PermissionScreen #permission-call {
        height: auto; border: round $warning; padding: 0 1; margin: 0; scrollbar-size-vertical: 1;
    }
    PermissionScreen #permission-call-text { width: 100%; }
    PermissionScreen #permission-size { color: $text-muted; }
    PermissionScreen #permission-choices.-flat { border: none; }
    PermissionScreen #permission-choices:focus { border: round $accent; }
    PermissionScreen #permission-choices.-flat:focus { border: none; }
    PermissionScreen #permission-typed { color: $text-muted; }
    """

    BINDINGS = [  # noqa: RUF012
        Binding("escape", "answer('deny')", "No", show=False),
        Binding("pageup", "scroll_call(-1)", show=False, priority=True),  # before the OptionList's
        Binding("pagedown", "scroll_call(1)", show=False, priority=True),
    ]

    def __init__(
        self,
        tool: str,
        reason: str,
        details: str,
        scope: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        typed_at: float | None = None,
        on_text: Callable[[str], object] | None = None,
        rule: str | None = None,
        holds_text: Callable[[], bool] | None = None,
    ) -> None:
        """``typed_at``: when a key last reached the composer (``clock``'s time); ``on_text``
        takes the text typed here that is no answer (the composer's insert); ``rule``: what
        "don't ask again" keeps (None: no such choice); ``holds_text``: whether the composer holds
        words (then the digits are text too)."""
        super().__init__(
            clock=clock,
            typed_at=typed_at,
            on_text=self._typed if on_text is not None else None,
            deliberate={ALLOW_SESSION, ALLOW_ALWAYS},
        )
        self._insert = on_text
        self._holds_text = holds_text
        self.typed = ""  # what was typed into the message while the question showed
        self.tool = tool
        self.reason = reason
        self.details = details
        self.scope = scope
        self.rule = rule
        self.choices = self._choices()

    @property
    def title_text(self) -> str:
        """The question: ``Allow bash? It runs a shell command:`` (the reason is a verb phrase)."""
        return f"Allow {visible_line(self.tool, strict=True)}? It {visible_line(self.reason)}:"

    def _choices(self) -> list[tuple[Decision, str]]:
        """(id, label) of each choice, in the order shown and numbered."""
        scope = self.scope
        if scope == f"bash:{self.details.strip()}":
            session = "Yes, for this session: this exact command"
        else:
            session = f"Yes, for this session: {clip(scope, SCOPE_SHOWN, one_line=True, strict=True)}"
        choices: list[tuple[Decision, str]] = [(ALLOW_ONCE, "Yes")]
        if self.rule:
            rule = clip(self.rule, SCOPE_SHOWN, one_line=True, strict=True)
            choices.append((ALLOW_ALWAYS, f"Yes, and don't ask again for {rule}"))
        choices += [(ALLOW_SESSION, session), (DENY, "No (the model is told)")]
        return choices

    def _typed(self, text: str) -> None:
        """Text typed while the question shows: into the composer, and said here."""
        if self._insert is not None:
            self._insert(text)
        self.typed += text
        if self.is_attached:
            label = self.query_one("#permission-typed", Label)
            shown = clip(self.typed, TYPED_SHOWN, one_line=True, strict=True)
            label.update(Text(f"typed into your message: {shown}"))
            label.display = True

    @property
    def shown_call(self) -> str:
        """The call as the dialog shows it: every character at the width the terminal draws it,
        or an escape (``⟨U+3164⟩``: 45 Hangul fillers Rich measures as 0 cells and terminals
        draw as 2 pushed ``; rm -f victim`` past the edge)."""
        return visible_strict(self.details, exact=True)

    def compose(self) -> ComposeResult:
        call = self.shown_call
        lines = call.count("\n") + 1
        with Vertical(classes="dialog permission-dialog"):
            yield Label(
                Text(self.title_text),
                classes="dialog-title",
                markup=False,
            )
            with VerticalScroll(id="permission-call"):
                yield Static(Text(call, overflow="fold"), id="permission-call-text", markup=False)
            size = f"{plural(lines, 'line')}, {len(self.details):,} characters"
            yield Label(Text(size), id="permission-size", markup=False)  # one row
            yield OptionList(
                *(Option(Text(f"{n}  {label}"), id=id_) for n, (id_, label) in enumerate(self.choices, 1)),
                id="permission-choices",
            )
            typed = Label(Text(""), id="permission-typed", markup=False)
            typed.display = False
            yield typed
            last = len(self.choices)
            yield Label(
                Text(f"1-{last} or ↑↓ Enter · Esc no · PgUp/PgDn scroll · letters go to your message"),
                classes="dialog-hint",
                markup=False,
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = len(self.choices) - 1  # No: an Enter on a reflex must not run a command
        options.focus()
        self.call_after_refresh(self._fit_call)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_call)

    def _fit_call(self) -> None:
        """The command's box gets the rows the rest of the dialog leaves (at least
        :data:`CALL_MIN`): the choices and the hint are always on screen, and the command
        scrolls in its box when it is longer. Where even that does not fit (60x15, with a long
        tool name or folder wrapping), the size line goes, then the choices' border."""
        box = self.query_one("#permission-call", VerticalScroll)
        dialog = box.parent
        if not isinstance(dialog, Widget) or not self.is_attached:
            return
        size = self.query_one("#permission-size", Label)
        choices = self.query_one(OptionList)
        others = sum(
            # a squeezed list is as tall as its content wants (its virtual size), not as it is now
            max(w.outer_size.height, w.virtual_size.height + w.styles.gutter.height) + w.styles.margin.height
            for w in dialog.children
            if w is not box and w.display
        )
        # what the others take with the size line and the choices' border shown
        others += (0 if size.display else SIZE_ROWS) + (CHOICES_BORDER if choices.has_class("-flat") else 0)
        room = self.size.height - dialog.styles.gutter.height - others
        hide_size = room < CALL_MIN
        flat = room + SIZE_ROWS < CALL_MIN
        size.display = not hide_size
        choices.set_class(flat, "-flat")
        room += (SIZE_ROWS if hide_size else 0) + (CHOICES_BORDER if flat else 0)
        box.styles.max_height = max(CALL_MIN, room)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._answer(Decision(event.option.id or DENY))

    def action_answer(self, decision: str) -> None:
        self._answer(Decision(decision))  # (a binding's action names it as a string)

    def on_key(self, event: events.Key) -> None:
        """A digit answers (its choice's number) once the guard lets it (else the guard, the base
        class's ``on_key`` that runs next, takes it as text), unless the composer holds text: a
        message is being written, and the digit is part of it."""
        key = event.character if event.is_printable else None
        if key is None or key not in DIGITS:
            return
        now = self.clock()
        writing = self._holds_text is not None and self._holds_text()
        if writing or (self.guarded and (not self.answerable or self.typing(now))):
            if writing:
                event.stop()
                event.prevent_default()  # (the guard would take it for an answer)
                self._typed_at = now
                self._typed(key)
            return
        event.stop()
        event.prevent_default()
        number = int(key)
        if number <= len(self.choices):
            self._answer(self.choices[number - 1][0])
        else:
            self.app.bell()

    def _answer(self, decision: Decision) -> None:
        """Dismiss with ``decision``, unless it allows and the question has only just appeared
        (keys typed for something else): then nothing, and the bell."""
        if decision != DENY and not self.answerable:
            self.app.bell()
            return
        self.dismiss(decision)

    def action_scroll_call(self, pages: int) -> None:
        box = self.query_one("#permission-call", VerticalScroll)
        box.scroll_to(y=box.scroll_y + pages * max(1, box.size.height - 1), animate=False)


__all__ = [
    "ALLOW_ALWAYS",
    "ALLOW_ONCE",
    "ALLOW_SESSION",
    "ANSWER_GRACE",
    "DENY",
    "DIGITS",
    "TYPING_GAP",
    "PermissionScreen",
    "answer_line",
]

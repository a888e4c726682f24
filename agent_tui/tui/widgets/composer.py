"""The composer: a multi-line TextArea where Enter sends and Shift+Enter / Ctrl+J add a line.

pi's editor, key for key where Textual allows:

- Enter sends (while the agent works, the app queues it as a steering message); Alt+Enter sends
  as a follow-up. Alt+Up asks the app to take the queued messages back.
- Up on the first line and Down on the last walk the prompt history (whole prompts, multi-line
  included); Ctrl+R searches it.
- ``/`` at the start lists the slash commands, ``@`` the project's files (fuzzy, in a thread);
  Up/Down move in the list, Tab or Enter insert, Esc closes it. Tab elsewhere completes the word
  before the cursor as a path; it never moves the focus (F1-F3 and Shift+Tab do).
- A paste of more than 10 lines or 1,000 characters shows as ``[paste #N +L lines]`` and is
  expanded on send (pi's paste markers: a 5 MB paste appears at once). A pasted or dropped path
  of an image file, or Ctrl+V with an image on the clipboard, shows as ``[image #N name]`` and
  is attached on send.
- Alt+E edits the text in ``$VISUAL``/``$EDITOR`` (binding id ``composer.external_editor``).
"""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import events, work
from textual.actions import SkipAction
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import TextArea
from textual.worker import Worker

from agent_tui.tui.completion import (
    common_prefix,
    context_at,
    file_insert,
    path_candidates,
    slash_candidates,
    word_at,
)
from agent_tui.tui.widgets.completion_menu import Candidate, CompletionMenu
from agent_tui.tui.widgets.inert_lines import InertTextArea
from agent_tui.tui.worker_errors import forward_failure

#: pi's large-paste rule: more lines or characters than this become a marker.
PASTE_MAX_LINES = 10
PASTE_MAX_CHARS = 1000
_PASTE_MARKER = re.compile(r"\[paste #(\d+)(?: (?:\+\d+ lines|\d+ chars))?\]")
_IMAGE_MARKER = re.compile(r"\[image #(\d+)[^\]\n]*\]")
#: Seconds of scanning a keystroke's first answer may take (the rest comes when typing pauses).
SEARCH_BUDGET = 0.03
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")


#: Seconds without a key that count as a pause in the typing: the work that would slow the typing
#: down (a big panel's recount, a long fence's highlighting) waits for one.
TYPING_PAUSE = 0.3


@dataclass(eq=False)
class Held:
    """The text of one Enter, held at the start of the composer until the app takes it (or not:
    then ``kept``, it stays as typed text)."""

    raw: str
    kept: bool = False


class Composer(InertTextArea):
    DEFAULT_CSS = """
    Composer { height: auto; min-height: 3; max-height: 12; }
    """

    # Enter and Shift+Enter / Ctrl+J are handled in ``_on_key``, in order with the typed keys (a
    # priority binding would run before the keys queued ahead of it: "abc⏎" typed fast sent "").
    # The bindings are here for the footer and the keymap.
    BINDINGS = [  # noqa: RUF012 - Textual's convention
        Binding("enter", "submit", "Send"),
        Binding("alt+enter", "follow_up", "Follow-up", show=False, id="composer.follow_up"),
        Binding("shift+enter,ctrl+j", "newline", "New line", show=False),
        Binding("alt+up", "dequeue", "Edit queued", show=False, id="composer.dequeue"),
        Binding("ctrl+r", "history_search", "History", show=False, id="composer.history_search"),
        Binding("alt+e", "external_editor", "Editor", show=False, id="composer.external_editor"),
        Binding("ctrl+v", "paste_clipboard", "Paste", show=False, id="composer.paste_image"),
        # TextArea binds F6 (select the line: the next key replaced the draft) and F7 (select all):
        # in the composer they go on to the app's bindings (F6 the next model; F7 pi's label).
        Binding("f6,f7", "pass_on", show=False),
    ]

    class Submitted(Message):
        """Send ``text`` (paste markers expanded) with ``images``; ``follow_up`` for Alt+Enter."""

        def __init__(
            self,
            composer: Composer,
            text: str,
            *,
            follow_up: bool = False,
            images: list[Path] | None = None,
            held: Held | None = None,
        ) -> None:
            super().__init__()
            self.composer = composer
            self.text = text
            self.follow_up = follow_up
            self.images = list(images or [])
            #: what this Enter holds at the start of the composer's text until the app takes it
            self.held = held

        @property
        def control(self) -> Composer:
            return self.composer

    class DequeueRequested(Message):
        """Alt+Up: the user wants the queued messages back in the composer."""

    def __init__(self, *, id: str | None = None, history: list[str] | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True)
        self.cursor_blink = False
        self.input_history: list[str] = list(history or [])
        self._history_pos: int | None = None
        self._draft = ""
        self._offered: str | None = None  # a text put in the history for Up (see offer_in_history)
        self._pastes: dict[int, str] = {}
        self._images: dict[int, Path] = {}
        self._paste_count = 0
        #: When a key last reached the composer (``time.monotonic``): heavy background work waits
        #: for a pause in the typing (:data:`TYPING_PAUSE`).
        self.typed_at = 0.0
        #: what the empty composer says, longest first: the longest that fits is shown
        self.placeholders: tuple[str, ...] = ()
        #: The folder ``@`` and Tab complete in (the app points it at the session's cwd).
        self.root: Callable[[], Path] = Path.cwd
        #: The ``@`` picker's file list (the app sets one; None: no picker).
        self.file_index: object | None = None
        self.menu: CompletionMenu | None = None
        #: Gives the recall list afresh (the app: session prompts, then the history file); asked
        #: when a walk through the history or a search starts.
        self.history_source: Callable[[], list[str]] | None = None
        #: Every ``/`` command as (name, usage, help), for the completion: the app's, then the user's
        #: templates and skills (the app sets it; the widget knows no command table of its own).
        self.commands_source: Callable[[], list[tuple[str, str, str]]] | None = None
        self._completing: tuple[str, int] | None = None  # (kind, start column) of the open menu
        self._loaded: str | None = None  # the text set_text put there, until the user types
        #: The text of each Enter the app has not taken yet, in order: the composer's text begins
        #: with them (keys typed on after an Enter come after), and the next Enter sends only what
        #: follows them.
        self._held: list[Held] = []

    def on_resize(self, event: events.Resize) -> None:
        width = self.content_size.width
        fitting = [p for p in self.placeholders if len(p) <= width]
        if self.placeholders:
            self.placeholder = fitting[0] if fitting else self.placeholders[-1]

    def _refresh_size(self) -> None:
        # No vertical scrollbar while the composer grows to fit its text. Textual showed one as soon
        # as the text outgrew the old height and hid it again in the layout that made the composer
        # taller: each time, a second layout (7 ms at 160x50), the whole draft wrapped twice more,
        # and a frame wrapped a column narrower.
        lines = self.wrapped_document.height if self.soft_wrap else self.document.line_count
        overflow = "hidden" if self._grows_to_fit(lines) else "auto"
        if self.styles.overflow_y != overflow:
            self.styles.overflow_y = overflow
        super()._refresh_size()

    def _grows_to_fit(self, lines: int) -> bool:
        """Whether ``lines`` of text fit in the composer at its tallest (its ``max-height``)."""
        tallest = self.styles.max_height
        if tallest is None:
            return True
        parent = self.parent
        container = parent.size if isinstance(parent, Widget) else self.app.size
        return lines <= int(tallest.resolve(container, self.app.size)) - self.gutter.height

    # -- keys ------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        self.typed_at = time.monotonic()
        menu = self.menu if self.menu is not None and self.menu.shown else None
        key = event.key
        if menu is not None and key in ("tab", "enter"):
            menu = self._menu_for_the_text()
        if menu is not None and key in ("up", "down", "tab", "enter", "escape"):
            event.stop()
            event.prevent_default()
            if key in ("up", "down"):
                menu.move(-1 if key == "up" else 1)
            elif key == "escape":
                self.close_menu()
            elif key == "enter" and self._completing is not None and self._completing[0] == "slash":
                chosen = menu.chosen()  # Enter runs the highlighted command (Tab inserts it for arguments)
                if chosen is not None:
                    self.set_text(chosen.insert.rstrip())
                self.action_submit()
            else:
                self._accept(menu.chosen())
            return
        if key == "question_mark" and not self.text:
            # ``?`` in an empty composer opens the help; decided here, in order with the typed
            # keys (a binding would see the text as it was before the keys queued ahead of it)
            event.stop()
            event.prevent_default()
            await self.run_action("app.help")
            return
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()
            return
        if key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.action_newline()
            return
        if key == "tab":
            event.stop()
            event.prevent_default()
            self.complete_path()
            return
        await super()._on_key(event)

    def action_submit(self, follow_up: bool = False) -> None:
        """Send what was typed since the last Enter the app has not taken yet: keys typed in a
        burst (``first⏎second⏎``) are two messages, not ``first`` and ``firstsecond``."""
        full = self.text
        before = "".join(h.raw for h in self._held)
        if self._held and not full.startswith(before):
            self._held.clear()  # edited meanwhile: the whole text is the message
            before = ""
        raw = full[len(before) :]
        if not raw.strip():
            return
        text, images = self.expanded(raw)
        self._offered = None
        if not self.input_history or self.input_history[-1] != text:
            self.input_history.append(text)
        self._history_pos = None
        self.close_menu()
        held = Held(raw)
        self._held.append(held)
        self.post_message(self.Submitted(self, text, follow_up=follow_up, images=images, held=held))

    def clear_submitted(self) -> None:
        """Take out the text of the oldest Enter not taken yet, once it is sent (or queued, or
        run): what was typed after the Enter, before the app took the message, stays (it was
        cleared too), and so does the text of the Enters after it, each for its own message."""
        waiting = [h for h in self._held if not h.kept]
        if not waiting:
            return  # the text was replaced meanwhile (the history, the queue taken back)
        held = waiting[0]
        index = self._held.index(held)
        start = sum(len(h.raw) for h in self._held[:index])
        text = self.text
        if text[start : start + len(held.raw)] != held.raw:
            self.set_text("")  # edited meanwhile: as before, the composer starts afresh
            return
        del self._held[index]
        rest = list(self._held)
        self.set_text(text[:start] + text[start + len(held.raw) :])
        self._held = rest if any(not h.kept for h in rest) else []

    def settle(self, event: Submitted) -> None:
        """The app is done with ``event``: its text, if not taken out (the message could not be
        sent), stays in the composer as text typed there."""
        held = event.held
        if held is None or held not in self._held:
            return
        held.kept = True
        if all(h.kept for h in self._held):
            self._held.clear()

    def action_pass_on(self) -> None:
        raise SkipAction  # the key goes on to the screen's and the app's bindings

    def action_follow_up(self) -> None:
        self.action_submit(follow_up=True)

    def action_dequeue(self) -> None:
        self.post_message(self.DequeueRequested())

    def action_newline(self) -> None:
        self.insert("\n")

    def set_text(self, text: str) -> None:
        """Replace the content and put the cursor at its end (an empty text forgets the pastes)."""
        self._loaded = text
        self._held.clear()  # a new text: no Enter's text is at its start any more
        self.load_text(text)
        self.move_cursor(self.document.end)
        if not text:
            self._pastes.clear()
            self._images.clear()
        self.close_menu()

    # -- history ---------------------------------------------------------------------------

    def offer_in_history(self, text: str) -> None:
        """Make ``text`` the newest item of the history, the first that Up brings (a past message's
        text when a draft is kept), until the next message is sent."""
        self._offered = text
        self._history_pos = None
        self._refresh_history()

    def _refresh_history(self) -> None:
        if self.history_source is not None:
            self.input_history = self.history_source()
        if self._offered is not None:
            self.input_history = [t for t in self.input_history if t != self._offered] + [self._offered]

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0 and self._history_pos is None:
            self._refresh_history()
        if not select and self.cursor_location[0] == 0 and self.input_history:
            self._history_step(-1)
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        last = self.document.line_count - 1
        if not select and self.cursor_location[0] == last and self._history_pos is not None:
            self._history_step(1)
            return
        super().action_cursor_down(select)

    def _history_step(self, step: int) -> None:
        if self._history_pos is None:
            if step > 0:
                return
            self._draft = self.text
            self._history_pos = len(self.input_history)
        pos = self._history_pos + step
        if pos < 0:
            return
        if pos >= len(self.input_history):
            self._history_pos = None
            self.set_text(self._draft)
            return
        self._history_pos = pos
        self.set_text(self.input_history[pos])

    def action_history_search(self) -> None:
        from agent_tui.tui.screens.history_search import HistorySearch

        self._refresh_history()

        def chosen(value: str | None) -> None:
            if value is not None:
                self.set_text(value)
            self.focus()

        self.app.push_screen(
            HistorySearch(self.input_history, self.text if "\n" not in self.text else ""), chosen
        )

    # -- pastes and images -----------------------------------------------------------------

    async def _on_paste(self, event: events.Paste) -> None:
        if self.read_only:
            return
        event.stop()
        event.prevent_default()
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        image = _image_path(text)
        if image is not None:
            self.insert(self.add_image(image))
            return
        lines = text.count("\n") + 1
        if lines > PASTE_MAX_LINES or len(text) > PASTE_MAX_CHARS:
            self._paste_count += 1
            self._pastes[self._paste_count] = text
            size = f"+{lines} lines" if lines > PASTE_MAX_LINES else f"{len(text)} chars"
            self.insert(f"[paste #{self._paste_count} {size}]")
            return
        self.insert(text)

    def add_image(self, path: Path) -> str:
        """Remember an image to attach on send; the marker that stands for it in the text."""
        self._paste_count += 1
        self._images[self._paste_count] = path
        return f"[image #{self._paste_count} {path.name}]"

    def expanded(self, text: str | None = None) -> tuple[str, list[Path]]:
        """The text (``text``, or the composer's) with paste markers replaced by what was pasted,
        and the images its markers name."""
        text = self.text if text is None else text
        if self._pastes and "[paste #" in text:
            text = _PASTE_MARKER.sub(lambda m: self._pastes.get(int(m.group(1)), m.group(0)), text)
        images = [
            self._images[int(m.group(1))]
            for m in _IMAGE_MARKER.finditer(text)
            if int(m.group(1)) in self._images
        ]
        return text, images

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_failure(self, event)  # Textual's StateChanged stops here: the app shows the failure

    def action_paste_clipboard(self) -> None:
        """Ctrl+V: an image on the system clipboard is attached; otherwise Textual's own paste."""
        self._clipboard_image()

    @work(thread=True, exclusive=True, group="clipboard", exit_on_error=False)
    def _clipboard_image(self) -> None:
        from agent_tui.tui.clipboard import ClipboardError, clipboard_image

        try:
            path = clipboard_image()
        except ClipboardError as e:
            self.app.call_from_thread(self._clipboard_text, str(e))
            return
        self.app.call_from_thread(lambda: self.insert(self.add_image(path)))

    def _clipboard_text(self, why: str) -> None:
        if self.app.clipboard:
            super().action_paste()
        else:
            self.app.notify(why, title="Ctrl+V", severity="warning")

    # -- external editor -------------------------------------------------------------------

    def action_external_editor(self) -> None:
        from textual.app import SuspendNotSupported

        from agent_tui.tui.external_editor import EditorError, edit_text, editor_command

        text, _ = self.expanded()
        try:
            command = editor_command()
            with self.app.suspend():
                edited = edit_text(text, command)
        except SuspendNotSupported:
            self.app.notify(
                "This terminal cannot hand itself to an editor (no suspend here).", severity="warning"
            )
            return
        except EditorError as e:
            self.app.notify(str(e), title="editor", severity="error")
            return
        self.set_text(edited)
        self.focus()

    # -- completion ------------------------------------------------------------------------

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self._loaded is not None and self.text == self._loaded:
            return  # set by the app or the history, not typed: no menu
        self._loaded = None
        self.update_completion()

    def update_completion(self) -> None:
        if self.menu is None:
            return
        row, column = self.cursor_location
        line = self.document.get_line(row)
        context = context_at(line, column, first_line=row == 0 and self.document.line_count == 1)
        if context is None:
            self.close_menu()
            return
        self._completing = (context.kind, context.start)
        if context.kind == "slash":
            rows = self.commands_source() if self.commands_source is not None else []
            self.menu.show(slash_candidates(context.query, rows))
        elif self.file_index is not None:
            self._search_files(context.query)

    @work(exclusive=True, group="file-search", exit_on_error=False)
    async def _search_files(self, query: str) -> None:
        import asyncio

        from agent_tui.tui.file_index import FileIndex

        index = self.file_index
        if not isinstance(index, FileIndex):
            return
        if index.stale:
            await asyncio.to_thread(index.ensure)
        # What 30 ms of scanning finds, at once; the complete answer once typing pauses.
        matches, complete = await asyncio.to_thread(index.search_within, query, budget=SEARCH_BUDGET)
        self._show_files(matches)
        if not complete:
            await asyncio.sleep(0.15)  # a keystroke meanwhile cancels this worker: no scan is wasted
            self._show_files(await asyncio.to_thread(index.search, query))

    def _show_files(self, matches: list[Any]) -> None:
        if self._completing is None or self._completing[0] != "file" or self.menu is None:
            return
        self.menu.show([Candidate(file_insert(m.path), m.path) for m in matches])

    def _menu_for_the_text(self) -> CompletionMenu | None:
        """The menu as the text is now. It follows the text through ``TextArea.Changed``, which
        queues behind the keys of a burst: ``/clear⏎`` read at once reached the Enter while the
        menu still showed ``/c``'s commands, and Enter ran ``/compact``; ``/branch a1⏎`` ran
        ``/branch`` without its argument."""
        row, column = self.cursor_location
        line = self.document.get_line(row)
        context = context_at(line, column, first_line=row == 0 and self.document.line_count == 1)
        if context is None:
            self.close_menu()
        elif context.kind == "slash" or self._completing != (context.kind, context.start):
            self.update_completion()  # slash candidates are computed at once; a file search is not
        return self.menu if self.menu is not None and self.menu.shown else None

    def close_menu(self) -> None:
        self._completing = None
        if self.menu is not None and self.menu.shown:
            self.menu.hide()

    def _accept(self, candidate: Candidate | None) -> None:
        completing = self._completing
        if candidate is None or completing is None:
            self.close_menu()
            return
        row, column = self.cursor_location
        start = completing[1]
        self.close_menu()
        self.replace(candidate.insert, (row, start), (row, column))
        if candidate.insert.endswith("/"):
            self.update_completion()  # a folder: its contents next

    def complete_path(self) -> None:
        """Tab outside a menu: complete the word before the cursor as a path (pi's behaviour)."""
        row, column = self.cursor_location
        found = word_at(self.document.get_line(row), column)
        if found is None:
            return
        start, word = found
        prefix = "@" if word.startswith("@") else ""
        candidates = path_candidates(word[len(prefix) :], self.root())
        if not candidates:
            return
        if len(candidates) == 1:
            self.replace(prefix + candidates[0].insert, (row, start), (row, column))
            return
        common = common_prefix(candidates)
        if len(common) > len(word) - len(prefix):
            self.replace(prefix + common, (row, start), (row, column))
        elif self.menu is not None:
            self._completing = ("path", start)
            self.menu.show([Candidate(prefix + c.insert, c.label) for c in candidates])


def _image_path(text: str) -> Path | None:
    """A pasted or dropped image file: one path (quoted, ``file://``, or with backslash-escaped spaces)."""
    candidate = text.strip()
    if not candidate or "\n" in candidate or len(candidate) > 4096:
        return None
    if candidate.startswith("file://"):
        from urllib.parse import unquote, urlparse

        candidate = unquote(urlparse(candidate).path)
    elif candidate[0] in "'\"" and candidate[-1] == candidate[0]:
        candidate = candidate[1:-1]
    elif "\\ " in candidate or " " not in candidate:
        try:
            parts = shlex.split(candidate)
        except ValueError:
            return None
        if len(parts) != 1:
            return None
        candidate = parts[0]
    if not candidate.lower().endswith(_IMAGE_SUFFIXES):
        return None
    path = Path(os.path.expanduser(candidate))
    return path if path.is_absolute() and path.is_file() else None

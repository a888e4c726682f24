"""The queued messages above the composer (pi's pending-messages area): steering, then follow-ups.

One row per message (``Steering: ...`` / ``Follow-up: ...``, the first line, cut to the width),
then pi's hint ``↳ Alt+Up to edit all queued messages``. Delete or Backspace on a row removes
that message (it is not sent); Enter takes it back into the composer. Hidden when nothing is queued.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from agent_tui.agent.queue import QueuedMessage
from agent_tui.terminal_text import visible_line

HINT_ID = "queue-hint"


class QueueView(OptionList):
    DEFAULT_CSS = """
    QueueView { height: auto; max-height: 6; margin: 0 1; border: none; padding: 0 1; display: none; }
    QueueView.-shown { display: block; }
    """
    BINDINGS = [  # noqa: RUF012 - Textual's convention
        Binding("delete,backspace", "remove", "Remove", id="queue.remove"),
    ]

    class Removed(Message):
        """The user took one queued message out (``take_back``: into the composer)."""

        def __init__(self, message_id: int, take_back: bool) -> None:
            super().__init__()
            self.message_id = message_id
            self.take_back = take_back

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.messages: list[QueuedMessage] = []

    def show(self, messages: list[QueuedMessage], dequeue_key: str = "Alt+Up") -> None:
        self.messages = list(messages)
        self.clear_options()
        for m in messages:
            label = "Steering: " if m.kind == "steer" else "Follow-up: "
            first = m.text.strip().splitlines()[0] if m.text.strip() else ""
            more = " …" if "\n" in m.text.strip() else ""
            row = Text(label + visible_line(first) + more, style="dim", no_wrap=True)
            self.add_option(Option(row, id=str(m.id)))
        if messages:
            hint = f"↳ {dequeue_key} to edit all queued messages · Del removes one"
            self.add_option(Option(Text(hint, style="dim italic"), id=HINT_ID, disabled=True))
        self.set_class(bool(messages), "-shown")

    def _highlighted_id(self) -> int | None:
        index = self.highlighted
        if index is None:
            return None
        option_id = self.get_option_at_index(index).id
        return int(option_id) if option_id and option_id != HINT_ID else None

    def action_remove(self) -> None:
        message_id = self._highlighted_id()
        if message_id is not None:
            self.post_message(self.Removed(message_id, take_back=False))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id and event.option.id != HINT_ID:
            self.post_message(self.Removed(int(event.option.id), take_back=True))


__all__ = ["QueueView"]

"""Messages typed while the agent works: pi 1.6's steering and follow-up queues.

A *steering* message is delivered as a user message as soon as the running
model call's tool calls have all been answered (never between a call and its
result), so the next model call sees it. A *follow-up* waits until the agent
would stop and then starts the next turn. Each queue drains one message at a
time (``one-at-a-time``, pi's default) or everything queued (``all``), per the
config's ``steering_mode`` / ``follow_up_mode``.

The loop drains; the face enqueues, shows, removes, and takes everything back
(Alt+Up, or an abort). Every method runs on the event loop's thread, so a
message is taken exactly once: delivered, removed or taken back, never two of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from agent_tui.store.record import JSONObject

Kind = Literal["steer", "follow_up"]
Mode = Literal["one-at-a-time", "all"]
MODES: tuple[Mode, ...] = ("one-at-a-time", "all")

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    """One queued user message: ``text`` as typed (what goes back to the composer) and the
    message ``content`` to send (text blocks, attached files and images)."""

    kind: Kind
    text: str
    content: tuple[JSONObject, ...] = ()
    id: int = field(default_factory=lambda: next(_ids))

    def message_content(self) -> list[JSONObject]:
        return list(self.content) if self.content else [{"type": "text", "text": self.text}]


class MessageQueue:
    """The two queues of one agent loop. ``on_change`` is called after every change (the face redraws)."""

    def __init__(self, steering_mode: str = "one-at-a-time", follow_up_mode: str = "one-at-a-time") -> None:
        self.steering_mode = _mode(steering_mode)
        self.follow_up_mode = _mode(follow_up_mode)
        self._items: list[QueuedMessage] = []
        self.on_change: Callable[[], None] | None = None
        #: True while ``on_change`` reports a delivery (:meth:`drain`: the loop takes messages in),
        #: not a change the user made (a face that writes events in order waits for the message).
        self.delivering = False

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[QueuedMessage]:
        """Steering messages first, then follow-ups, each in the order typed (pi's display order)."""
        return [m for m in self._items if m.kind == "steer"] + [
            m for m in self._items if m.kind == "follow_up"
        ]

    def steer(self, text: str, content: list[JSONObject] | None = None) -> QueuedMessage:
        return self._add(QueuedMessage("steer", text, tuple(content or ())))

    def follow_up(self, text: str, content: list[JSONObject] | None = None) -> QueuedMessage:
        return self._add(QueuedMessage("follow_up", text, tuple(content or ())))

    def _add(self, message: QueuedMessage) -> QueuedMessage:
        self._items.append(message)
        self._changed()
        return message

    def remove(self, message_id: int) -> QueuedMessage | None:
        """Take one message out (the face's delete); None when it was already delivered."""
        for i, m in enumerate(self._items):
            if m.id == message_id:
                del self._items[i]
                self._changed()
                return m
        return None

    def drain(self, kind: Kind) -> list[QueuedMessage]:
        """What the loop delivers now: the first message of ``kind``, or all of them in ``all`` mode."""
        mode = self.steering_mode if kind == "steer" else self.follow_up_mode
        of_kind = [m for m in self._items if m.kind == kind]
        taken = of_kind if mode == "all" else of_kind[:1]
        if taken:
            ids = {m.id for m in taken}
            self._items = [m for m in self._items if m.id not in ids]
            self.delivering = True
            try:
                self._changed()
            finally:
                self.delivering = False
        return taken

    def take_all(self) -> list[QueuedMessage]:
        """Everything still queued, steering first (Alt+Up, abort): the queue is left empty."""
        taken = self.items()
        if taken:
            self._items = []
            self._changed()
        return taken

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


def restored_text(messages: list[QueuedMessage], current: str = "") -> str:
    """pi's restoreQueuedMessagesToEditor: the queued texts, then what the composer held, blank-line separated."""
    return "\n\n".join(t for t in [*(m.text for m in messages), current] if t.strip())


def _mode(value: str) -> Mode:
    if value == "all":
        return "all"
    if value == "one-at-a-time":
        return "one-at-a-time"
    raise ValueError(f"queue mode must be one of {', '.join(MODES)}, not {value!r}")


__all__ = ["MODES", "Kind", "MessageQueue", "QueuedMessage", "restored_text"]

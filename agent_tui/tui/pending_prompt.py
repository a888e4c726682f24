"""The user's message in the chat from the Enter on, until the agent has written it.

The chat shows what the session file holds, and the agent appends the user's message only once
the turn has started: after the agent is built (the first turn of a session: the loop's modules
and the provider's SDK imported, its client made), the MCP servers started, the server asked for
its context window, the ``UserPromptSubmit`` hooks run. Meanwhile the message is shown as it will
be (:class:`PendingPrompt`: a chat entry of a message not yet in the file), kept last in the chat
as other entries (the model's settings) are written before it, and taken away the moment the
real one is appended.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from agent_tui.store.record import Entry
from agent_tui.tui import give_way
from agent_tui.tui.widgets.chat_entry import ChatEntry

if TYPE_CHECKING:
    from agent_tui.tui.host import Host

PENDING_ID = "pending-prompt"


class PendingPrompt:
    """One message typed and sent, shown in ``app``'s chat until :meth:`clear`."""

    def __init__(self, app: Host, prompt: str | list[dict[str, Any]]) -> None:
        self.app = app
        now = int(time.time() * 1000)
        content = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
        self.entry = Entry.from_data(
            {
                "type": "message",
                "id": PENDING_ID,
                "parentId": None,
                "timestamp": "",
                "message": {"role": "user", "content": content, "timestamp": now},
            }
        )
        self.widget: ChatEntry | None = None

    async def show(self) -> None:
        """Mounted last in the chat (again, when a rebuild of the chat took it away)."""
        try:
            chat = self.app.chat
        except AssertionError:  # the app is closing
            return
        widget = self.widget
        if widget is not None and widget.is_attached and widget.parent is chat:
            if chat.children and chat.children[-1] is not widget:
                chat.move_child(widget, after=chat.children[-1])
            return
        self.widget = ChatEntry(self.entry, images=chat.images)
        await chat.mount(self.widget)
        chat.anchor()

    async def painted(self, timeout: float = 0.25) -> None:
        """Once the screen has drawn the prompt (at most ``timeout`` seconds from now); the
        background imports held at the Enter (``give_way``) go on then."""
        drawn = asyncio.Event()
        try:
            self.app.screen.call_after_refresh(drawn.set)
        except Exception:  # no screen (closing)
            give_way.release()
            return
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(drawn.wait(), timeout)
        finally:
            give_way.release()

    async def clear(self) -> None:
        widget, self.widget = self.widget, None
        if widget is not None and widget.is_attached:
            await widget.remove()

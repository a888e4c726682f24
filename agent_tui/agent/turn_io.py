"""What every step of a run shares: where its events go, how it appends, and its abort.

pi passes each step of its loop the same ``emit`` and ``signal``; here that is one :class:`TurnIO`,
made by :class:`~agent_tui.agent.loop.AgentLoop` for each run. Every entry a run writes goes
through :meth:`TurnIO.append`: on disk before it is announced (``EntryAppended``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from agent_tui.agent.events import Emit, EntryAppended
from agent_tui.store.record import Entry, JSONObject
from agent_tui.store.session import Session

T = TypeVar("T")


class Aborted(Exception):
    """abort() came first (:meth:`TurnIO.abortable`)."""


@dataclass(frozen=True, slots=True)
class TurnIO:
    session: Session
    emit: Emit
    abort: asyncio.Event  # set by AgentLoop.abort (from any thread, through the run's event loop)

    @property
    def aborted(self) -> bool:
        return self.abort.is_set()

    async def append(self, fields: JSONObject) -> Entry:
        entry = self.session.append(fields, sync=False)
        # The fsync runs in a thread: a slow disk must not freeze the app, whose keys this event
        # loop answers. The entry is acknowledged (the event, the next step) once it is on disk.
        await asyncio.to_thread(self.session.sync)
        role = (fields.get("message") or {}).get("role") if fields.get("type") == "message" else None
        self.emit(EntryAppended(entry.id, entry.type, role))
        return entry

    async def append_message(self, message: JSONObject) -> Entry:
        return await self.append({"type": "message", "message": message})

    async def abortable(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable`` unless abort() comes first: then cancel it and raise :class:`Aborted`."""
        if self.abort.is_set():
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise Aborted
        task = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self.abort.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            stop.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise Aborted


__all__ = ["Aborted", "TurnIO"]

"""One mutation at a time per file (pi's file mutation queue): parallel edits of one file must not interleave."""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(slots=True)
class _Slot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0  # tasks holding or waiting for the lock


_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Slot]] = weakref.WeakKeyDictionary()


@asynccontextmanager
async def file_lock(path: Path) -> AsyncIterator[None]:
    slots = _slots.setdefault(asyncio.get_running_loop(), {})
    key = os.path.realpath(path)
    slot = slots.setdefault(key, _Slot())
    slot.users += 1
    try:
        async with slot.lock:
            yield
    finally:
        slot.users -= 1
        if slot.users == 0:
            slots.pop(key, None)

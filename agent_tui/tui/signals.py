"""SIGHUP (the terminal was closed) and SIGTERM in the app: stop the reply as Esc does, then quit.

Without this either signal kills the process mid-reply and the partial reply is lost; with it the
turn is aborted, the partial reply written (marked aborted) and the app exits. After SIGHUP the
terminal is gone, so the app's output goes to /dev/null first: a write to the closed terminal
fails and would end the app before the reply is saved.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from types import FrameType
from typing import Protocol

#: How long a hung-up app waits for the aborted turn to write its entries.
ABORT_WAIT_SECONDS = 10.0


class _App(Protocol):
    busy: bool

    def abort_turn(self) -> None: ...

    def exit(self, result: None = None, return_code: int = 0) -> None: ...


def install(app: _App) -> None:
    """Handle SIGHUP and SIGTERM for ``app`` (call before ``app.run()``, in the main thread)."""
    pending: list[asyncio.Task[None]] = []

    def handler(number: int, _frame: FrameType | None) -> None:
        if number == signal.SIGHUP:
            detach_output()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not running yet, or already stopped: nothing to save
            raise SystemExit(128 + number) from None
        loop.call_soon_threadsafe(lambda: pending.append(loop.create_task(_stop(app, 128 + number))))

    for number in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(number, handler)


async def _stop(app: _App, code: int) -> None:
    if app.busy:
        app.abort_turn()
        deadline = time.monotonic() + ABORT_WAIT_SECONDS
        while app.busy and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    app.exit(return_code=code)


def detach_output() -> None:
    """Point stdin, stdout and stderr at /dev/null (the terminal is gone)."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)

"""The app's event loop's default executor, on daemon threads that nothing waits for at exit.

Textual's thread workers and every ``asyncio.to_thread`` run on the loop's default executor. The
standard one's threads are non-daemon, and both ``asyncio.run`` (``shutdown_default_executor``)
and the interpreter (``concurrent.futures``' exit hook, in ``threading._shutdown``) wait for each
to finish its task: quitting, or a hangup, while the provider's SDK was being imported after the
first frame waited for the import (1-2 s here); a search or a file index being built, as long as
it took. What runs there is either a figure for the screen or work whose result is already safe
when it is asked for (the session's entries are written on the event loop), so nothing is lost
when the process ends under it.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class DaemonThreads(ThreadPoolExecutor):
    """Up to ``workers`` daemon threads, started as the work needs them; ``shutdown`` waits for
    nothing. (A ThreadPoolExecutor by type only: asyncio takes no other as its default.)"""

    def __init__(self, workers: int | None = None, name: str = "agent-tui-worker") -> None:
        super().__init__(max_workers=1)  # (its own machinery stays unused: no thread is started)
        self._limit = workers or min(32, (os.cpu_count() or 1) + 4)
        self._name = name
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = queue.SimpleQueue()
        self._started = 0
        self._idle = 0
        self._closed = False
        self._guard = threading.Lock()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._guard:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._work.put((future, lambda: fn(*args, **kwargs)))
            if self._idle:
                self._idle -= 1  # a waiting thread takes it
            elif self._started < self._limit:
                self._started += 1
                threading.Thread(target=self._run, name=f"{self._name}-{self._started}", daemon=True).start()
        return future

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            future, call = item
            if future.set_running_or_notify_cancel():
                try:
                    result = call()
                except BaseException as e:
                    future.set_exception(e)
                else:
                    future.set_result(result)
            del item, future, call
            with self._guard:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No more work; the threads end once the queue is empty (nobody waits for them)."""
        with self._guard:
            if self._closed:
                return
            self._closed = True
            for _ in range(self._started):
                self._work.put(None)

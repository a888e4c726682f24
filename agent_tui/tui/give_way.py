"""Background imports that give way to the event loop while it answers the user.

After the first frame the app imports, in a thread, what the first send will need (the entry
models, the provider's SDK: about a second of CPU for ``openai``). Python runs one thread at a
time: while that import runs, each piece of work on the event loop shares the interpreter with it,
and each system call there (a file written, the terminal written, the loop's ``select``) gives the
interpreter away for up to the switch interval. The Enter pressed right then waited twice as long
for the message to be on screen (176 ms against 82 ms once the import was done;
``bench/app_lifecycle_bench.py``).

A thread that imports in :func:`giving_way` checks, before each module it imports, whether the
event loop has asked for the interpreter (:func:`hold`), and if so waits until it lets go
(:func:`release`) or the hold runs out (:data:`MAX_HOLD`: a module lock this thread holds might be
wanted by the thread that asked, so a hold is always short). Only the marked thread waits: other
threads' imports (the event loop's own, a ``to_thread`` it waits for) are never held. Work of
such a thread that is not importing calls :func:`pause_point` between its steps.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType

#: The longest a hold keeps the background imports waiting.
MAX_HOLD = 0.25

_marked = threading.local()
_free = threading.Event()
_free.set()
_until = 0.0


def pause_point() -> None:
    """In a thread :func:`giving_way`: wait here while held (other threads go straight on)."""
    if getattr(_marked, "gives_way", False) and not _free.is_set():
        left = _until - time.monotonic()
        if left > 0:
            _free.wait(left)


class _GiveWay(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: finds nothing, but a marked thread waits here while held."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        pause_point()
        return None


_finder = _GiveWay()


@contextmanager
def giving_way() -> Iterator[None]:
    """The imports the current thread makes inside give way to :func:`hold`."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    _marked.gives_way = True
    try:
        yield
    finally:
        _marked.gives_way = False


def hold(seconds: float = MAX_HOLD) -> None:
    """The event loop wants the interpreter for the next ``seconds`` (at most :data:`MAX_HOLD`)."""
    global _until
    _until = time.monotonic() + min(seconds, MAX_HOLD)
    _free.clear()


def release() -> None:
    """The event loop is done: the background imports go on."""
    _free.set()


def held() -> bool:
    """Whether the background imports are waiting now."""
    return not _free.is_set() and time.monotonic() < _until

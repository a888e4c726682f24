"""The cyclic garbage collector paced to the UI: small young collections, the old generation only when idle.

Measured with ``bench/tui_bench.py``'s keystroke runs (the CPU time of each collection, a 20,000-entry
session, a reply streaming at 200 tokens/s): with the thresholds left at (10000, 20, 1000) after
the session opened (:data:`LOADING`: right while it opens), the middle generation held some 200,000
objects and each of its collections took 28-39 ms in the middle of the stream, and a key typed
meanwhile waited for it. At (1000, 10) a young collection takes at most
2 ms and a middle one 4.4 ms, for the same total. The old generation is never collected on its own
(a full collection with a big session open scans hundreds of thousands of objects: 0.1-0.3 s): the
app asks for it when a turn has ended and nothing else is going on (:func:`collect_old`); what a
session's file holds is frozen when it is opened (``gc.freeze``), so that collection scans only what
the app made since.
"""

from __future__ import annotations

import gc
import time

YOUNG = 1_000  # allocations between young collections
MIDDLE = 10  # young collections between middle ones
NEVER = 1_000_000_000  # middle collections between full ones: the app runs those itself


#: While a session opens: few collections (reading a big file makes millions of objects that
#: live on, and they are frozen once it is open); the old generation rarely.
LOADING = (10_000, 20, 1000)


def loading() -> tuple[int, int, int]:
    """Collect seldom while the session opens. Returns the thresholds before, for :func:`restore`
    when the app ends (the process may go on: tests)."""
    before = gc.get_threshold()
    gc.set_threshold(*LOADING)
    return before


def pace() -> None:
    """Once the app is on screen: collect often and little; never the old generation on its own."""
    gc.set_threshold(YOUNG, MIDDLE, NEVER)


def restore(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(*thresholds)


def collect_old() -> float:
    """Collect every generation now (the app is idle); returns the seconds it took."""
    started = time.perf_counter()
    gc.collect()
    return time.perf_counter() - started

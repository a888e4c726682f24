"""Background imports give way to the event loop: a marked thread waits before its next module
while a hold lasts (tui/give_way.py)."""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_tui.tui import give_way


def _importer(name: str, marked: bool) -> tuple[threading.Thread, threading.Event, threading.Event]:
    started, done = threading.Event(), threading.Event()

    def work() -> None:
        started.set()
        if marked:
            with give_way.giving_way():
                importlib.import_module(name)
        else:
            importlib.import_module(name)
        done.set()

    return threading.Thread(target=work, daemon=True), started, done


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], str]]:
    def make(name: str) -> str:
        (tmp_path / f"{name}.py").write_text("import time\nAT = time.monotonic()\n")
        return name

    monkeypatch.syspath_prepend(str(tmp_path))
    yield make
    give_way.release()


def test_a_marked_thread_imports_nothing_until_the_hold_is_released(
    module: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(give_way, "MAX_HOLD", 30.0)
    name = module("give_way_held_a")
    thread, started, done = _importer(name, marked=True)
    give_way.hold(30.0)
    assert give_way.held()
    thread.start()
    assert started.wait(5)
    assert not done.wait(0.3), "the import went on while held"
    released = time.monotonic()
    give_way.release()
    assert done.wait(5)
    assert released <= importlib.import_module(name).AT


def test_an_unmarked_thread_is_never_held(
    module: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(give_way, "MAX_HOLD", 30.0)
    thread, _, done = _importer(module("give_way_free_b"), marked=False)
    give_way.hold(30.0)
    thread.start()
    assert done.wait(5), "an unmarked thread's import waited for the hold"
    assert give_way.held()


def test_a_hold_runs_out_by_itself(module: Callable[[str], str]) -> None:
    thread, _, done = _importer(module("give_way_expiry_c"), marked=True)
    give_way.hold(10.0)  # capped at MAX_HOLD
    start = time.monotonic()
    thread.start()
    assert done.wait(5)
    assert time.monotonic() - start < give_way.MAX_HOLD + 4
    assert not give_way.held()

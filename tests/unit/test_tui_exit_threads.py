"""What could keep a closed app's process alive: the executor's threads, a second input thread."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from agent_tui.tui.daemon_threads import DaemonThreads
from agent_tui.tui.signals import TerminalDriver


def test_daemon_threads_run_work_and_pass_back_results_and_errors() -> None:
    pool = DaemonThreads(workers=2)
    assert pool.submit(lambda a, b: a + b, 2, b=3).result(5) == 5
    failing = pool.submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result(5)
    names = {pool.submit(lambda: threading.current_thread().name).result(5) for _ in range(20)}
    assert len(names) <= 2  # reused, never more than asked
    assert all(pool.submit(lambda: threading.current_thread().daemon).result(5) for _ in range(3))
    pool.shutdown()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


def test_daemon_threads_run_blocked_work_side_by_side() -> None:
    pool = DaemonThreads(workers=3)
    release = threading.Event()
    blocked = [pool.submit(release.wait, 30) for _ in range(2)]
    assert pool.submit(lambda: "free").result(5) == "free"  # a third thread took it
    release.set()
    assert all(f.result(5) for f in blocked)


def test_a_process_whose_loop_runs_on_daemon_threads_does_not_wait_for_them_at_exit() -> None:
    # the standard executor: asyncio.run, then the interpreter, wait the whole 30 s
    program = (
        "import asyncio, time\n"
        "from agent_tui.tui.daemon_threads import DaemonThreads\n"
        "async def main():\n"
        "    asyncio.get_running_loop().set_default_executor(DaemonThreads())\n"
        "    asyncio.get_running_loop().run_in_executor(None, time.sleep, 30)\n"
        "    await asyncio.sleep(0.1)\n"
        "asyncio.run(main())\n"
        "print('done')\n"
    )
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=25)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n"
    assert time.monotonic() - started < 20


class _Driver(TerminalDriver):
    def __init__(self) -> None:  # no terminal: only the SIGCONT decision is under test
        self.resumed = 0

    def resume_application_mode(self) -> None:
        self.resumed += 1

    @property
    def _auto_restart(self) -> bool:
        return True

    @_auto_restart.setter
    def _auto_restart(self, _value: Any) -> None:
        pass


def test_a_sigcont_resumes_only_an_app_the_driver_suspended() -> None:
    driver = _Driver()
    driver._sigcont_application()  # a hangup's SIGCONT, or kill -CONT: a second input thread else
    assert driver.resumed == 0
    driver._suspended = True  # (what SIGTSTP, Ctrl+Z, sets before the process stops)
    driver._sigcont_application()
    assert driver.resumed == 1
    driver._sigcont_application()
    assert driver.resumed == 1

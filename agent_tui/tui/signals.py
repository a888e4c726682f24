"""How the app ends when its terminal goes away (SIGHUP, the pty closed, stdin at EOF) or on SIGTERM.

Without this either signal kills the process mid-reply and the partial reply is lost; with it the
turn is aborted, the partial reply written (marked aborted) and the app exits.

A hangup ends the process within :data:`HANGUP_EXIT_SECONDS` whatever it is doing. What kept an
app alive for 15 minutes at 50-87% of a core once its terminal was closed:

- the hangup comes with a SIGCONT (the kernel sends both to the terminal's foreground group), and
  Textual's SIGCONT handler "resumes" the app: a second input thread (non-daemon) and writer
  thread. The driver's stop joins only the newer input thread and clears the exit flag it set, so
  the older one could miss it and read on forever (``select`` on a file that is always readable:
  the CPU), and ``threading._shutdown`` waited for it. :class:`TerminalDriver` resumes only an app
  it suspended itself (Ctrl+Z), never after a hangup;
- the threads the loop's default executor ran (Textual's thread workers, ``asyncio.to_thread``:
  the provider SDK being imported, an index being recorded) are non-daemon and joined at exit
  (``agent_tui.tui.daemon_threads`` makes them daemon);
- the interpreter's own finalization (0.6-1.3 s with the SDKs loaded, on a busy machine).

So on a hangup the output goes to /dev/null (a write to the closed terminal fails and would end
the app before the reply is saved), the turn is aborted and given :data:`HANGUP_ABORT_SECONDS` to
write its entries, the app exits, and the launcher ends the process with ``os._exit`` (nothing is
left to write; the session file is closed and its lock released by then). A watchdog ends it at
:data:`HANGUP_EXIT_SECONDS` in any case. The terminal's end is seen three ways: SIGHUP, the input
thread's read failing (EIO: :class:`TerminalDriver` says hangup rather than crash) and a thread
watching stdin (:func:`watch_stdin`).

That thread is what a hangup rests on: a hung-up terminal's read gives b'' (EIO only in a race
with the hangup), which Textual's input thread takes for "nothing yet" and selects again at once,
on a file that is always readable (a core's worth of CPU), and SIGHUP may never come: the kernel
sends it to the session's leader only (the shell, a wrapper), and to the foreground group when
that leader exits; a blocked SIGHUP (a mask is inherited across exec) is never delivered at all.
So the thread ends the app itself (:func:`hang_up`, on the event loop through
``call_soon_threadsafe``, no signal involved) when poll says POLLHUP or POLLERR, and looks at the
terminal again every :data:`RECHECK_SECONDS` (``tcgetpgrp`` fails with EIO on a hung-up terminal)
in case no event ever says so. It never stops before the hangup (an error is retried a period
later), and costs one wakeup per period while idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol

from textual.drivers.linux_driver import LinuxDriver

#: How long an app told to stop by SIGTERM waits for the aborted turn to write its entries.
ABORT_WAIT_SECONDS = 10.0
#: How long a hung-up app waits for the aborted turn (a partial reply, a killed tool's result).
HANGUP_ABORT_SECONDS = 1.0
#: A hung-up process ends by then, whatever it is doing (the watchdog's ``os._exit``).
HANGUP_EXIT_SECONDS = 1.8
HANGUP_STATUS = 128 + signal.SIGHUP
#: How often :func:`watch_stdin` looks at the terminal again, whatever poll said.
RECHECK_SECONDS = 2.0


class _App(Protocol):
    busy: bool

    def abort_turn(self) -> None: ...

    def exit(self, result: None = None, return_code: int = 0) -> None: ...


class _State:
    """Whether the terminal has gone (set once, from the first sign of it), and how to end the
    installed app from any thread (``stop(code, wait)``: False when no loop runs it)."""

    def __init__(self) -> None:
        self.hung_up = False
        self.lock = threading.RLock()  # (a signal handler may run while the main thread holds it)
        self.stop: Callable[[int, float], bool] | None = None


_state = _State()


def hung_up() -> bool:
    """Whether this process's terminal went away (the launcher then ends it with ``os._exit``)."""
    return _state.hung_up


def install(app: _App) -> None:
    """Handle SIGHUP and SIGTERM for ``app`` and watch stdin for a hangup (call before the app
    runs, in the main thread)."""
    pending: list[asyncio.Task[None]] = []

    def stop(code: int, wait: float) -> bool:
        loop: asyncio.AbstractEventLoop | None = getattr(app, "_loop", None)  # set while it runs
        if loop is None:
            return False

        def start() -> None:
            pending.append(loop.create_task(_stop(app, code, wait)))

        try:
            loop.call_soon_threadsafe(start)
        except RuntimeError:  # closed
            return False
        return True

    def handler(number: int, _frame: FrameType | None) -> None:
        if number == signal.SIGHUP:
            hang_up()
        elif not stop(128 + number, ABORT_WAIT_SECONDS):  # not running yet, or already stopped
            raise SystemExit(128 + number)

    _state.stop = stop
    for number in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(number, handler)
    watch_stdin()


def _mark_hung_up() -> bool:
    """The terminal is gone: output to /dev/null, no more SIGCONT "resumes", a watchdog. False when
    this was already known."""
    with _state.lock:
        if _state.hung_up:
            return False
        _state.hung_up = True
    detach_output()
    with contextlib.suppress(ValueError, OSError):  # (not the main thread: the driver ignores it)
        signal.signal(signal.SIGCONT, signal.SIG_DFL)
    threading.Thread(target=_watchdog, name="agent-tui-hangup", daemon=True).start()
    return True


def _watchdog() -> None:
    time.sleep(HANGUP_EXIT_SECONDS)
    os._exit(HANGUP_STATUS)


async def _stop(app: _App, code: int, wait: float) -> None:
    if app.busy:
        app.abort_turn()
        deadline = time.monotonic() + wait
        while app.busy and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    app.exit(return_code=code)


def hang_up() -> None:
    """The terminal is gone (seen by SIGHUP's handler, or from a thread): output to /dev/null,
    the app ended (its turn aborted and saved) and, whatever happens, the process within
    :data:`HANGUP_EXIT_SECONDS`. No signal is involved, so a SIGHUP blocked or ignored, or a
    handler someone replaced, changes nothing. A second sign of the same hangup does nothing."""
    if not _mark_hung_up():
        return
    stop = _state.stop
    if stop is None or not stop(HANGUP_STATUS, HANGUP_ABORT_SECONDS):
        os._exit(HANGUP_STATUS)  # no app running: nothing to save


def terminal_gone(fd: int) -> bool:
    """Whether ``fd`` (stdin) says its terminal hung up (or its pipe's writer went): POLLHUP or
    POLLERR at once, or ``tcgetpgrp`` failing with EIO (ENOTTY, a pipe or a file, is no sign)."""
    poller = select.poll()
    poller.register(fd, select.POLLHUP)
    if any(mask & (select.POLLHUP | select.POLLERR) for _fd, mask in poller.poll(0)):
        return True
    try:
        os.tcgetpgrp(fd)
    except OSError as e:
        return e.errno == errno.EIO
    return False


def watch_stdin(fd: int = 0, period: float = RECHECK_SECONDS) -> threading.Thread | None:
    """A daemon thread that hangs up (:func:`hang_up`) once ``fd``'s terminal is gone: at once
    when poll reports POLLHUP or POLLERR (a pty whose terminal closed, a pipe whose writer went),
    else when :func:`terminal_gone` says so at one of its looks every ``period`` seconds. It reads
    nothing, so it takes no key from the app; it ends only with the hangup (an error, or ``fd``
    closed, is looked at again a period later)."""
    try:
        os.fstat(fd)
    except OSError:
        return None

    def wait() -> None:
        poller = select.poll()
        poller.register(fd, select.POLLHUP)  # POLLHUP, POLLERR and POLLNVAL are always reported
        while not _state.hung_up:
            try:
                events = poller.poll(period * 1000)
                if any(mask & select.POLLNVAL for _fd, mask in events):
                    time.sleep(period)  # closed (poll would report it at once, every time)
                    continue
                if any(mask & (select.POLLHUP | select.POLLERR) for _fd, mask in events) or terminal_gone(fd):
                    hang_up()
            except Exception:  # (nothing here is expected to fail; the watch must go on)
                time.sleep(period)

    thread = threading.Thread(target=wait, name="agent-tui-stdin-watch", daemon=True)
    thread.start()
    return thread


def detach_output() -> None:
    """Point stdout and stderr at /dev/null (the terminal is gone). stdin is left: reading the
    hung-up terminal fails at once (EIO, which :class:`TerminalDriver` takes as the hangup), where
    /dev/null would be read as an endless run of empty reads by Textual's input thread."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (1, 2):
            os.dup2(null, fd)
        os.close(null)


class TerminalDriver(LinuxDriver):
    """Textual's Linux driver, ending the app rather than crashing it when the terminal goes, and
    resuming after SIGCONT only an app it suspended (Ctrl+Z)."""

    _suspended = False

    def _sigtstp_application(self, *args: Any) -> None:
        self._suspended = True
        super()._sigtstp_application(*args)

    def _sigcont_application(self, *args: Any) -> None:
        if not self._suspended or _state.hung_up:
            return  # a SIGCONT of a hangup, or of kill -CONT: nothing was suspended
        self._suspended = False
        super()._sigcont_application(*args)

    def _run_input_thread(self) -> None:
        try:
            self.run_input_thread()
        except OSError:  # EIO: the terminal is gone
            hang_up()
        except BaseException:
            import rich.traceback

            self._app.call_later(self._app.panic, rich.traceback.Traceback())

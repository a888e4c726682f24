"""When the app crashes anyway: exit status 1, one line on stderr, the traceback in a file.

Textual's own crash report is a full-screen traceback with the local variables
of every frame (which can hold message text, or a key) and the app's return
code was dropped, so a crash looked like a clean exit (status 0). With
:class:`OneLineCrash` mixed into the app, an unhandled exception still stops
the app as Textual does, but what is printed is one line naming the error and
the file (``crash.log`` in the data dir, private, the latest crash only) that
holds the traceback, without locals.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from agent_tui.store.paths import data_home, make_private_dirs
from agent_tui.terminal_text import visible_line

CRASH_FILE = "crash.log"


def crash_line(error: BaseException, log: Path | None) -> str:
    """The one line a crash prints: what failed, and where the details are."""
    what = visible_line(f"{type(error).__name__}: {error}")
    if len(what) > 300:
        what = what[:299] + "…"
    where = f" (traceback in {log})" if log is not None else ""
    return f"agent-tui: crashed: {what}{where}"


def write_crash_log(error: BaseException, folder: Path | None = None) -> Path | None:
    """The traceback of ``error`` in ``folder``/crash.log (0600); None if it cannot be written."""
    try:
        folder = folder or data_home()
        make_private_dirs(folder)
        path = folder / CRASH_FILE
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as out:
            out.write("".join(traceback.format_exception(error)))
        return path
    except OSError:
        return None


class OneLineCrash:
    """A mixin for the ``App``: an unhandled exception ends the app with ``crash_message`` set
    (printed by the launcher) instead of Textual's traceback; ``return_code`` is 1."""

    crash_message: str | None = None

    def _handle_exception(self, error: Exception) -> None:
        super()._handle_exception(error)  # type: ignore[misc]  # return code 1, the app closes
        if self.crash_message is None:
            self.crash_message = crash_line(error, write_crash_log(error))
        self._exit_renderables.clear()  # type: ignore[attr-defined]  # Textual's traceback, with locals

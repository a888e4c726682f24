"""bash{command, timeout?}: run a shell command in the session's cwd, as pi's bash tool.

stdout and stderr are merged. The model sees the tail (2,000 lines / 50 KB);
when output is longer, all of it is saved to a temporary file whose path the
result names. The command runs in its own process group (``start_new_session``)
so a timeout or an abort kills it and everything it started.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from agent_tui.agent.child_env import child_environment
from agent_tui.agent.sandbox import Sandbox
from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
)
from agent_tui.agent.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    Truncation,
    byte_len,
    format_size,
    truncate_tail,
)
from agent_tui.store.redact import StreamRedactor

EXIT_STDIO_GRACE = 0.1  # after the shell exits, keep reading while output still arrives
UPDATE_THROTTLE = 0.1  # seconds between two partial results (pi's BASH_UPDATE_THROTTLE_MS)
MAX_TIMEOUT = 2_147_483.647


#: Full-output files kept in the output folder (the newest; this process's are never removed).
KEEP_OUTPUT_FILES = 100
KEEP_OUTPUT_BYTES = 256 * 1024 * 1024
_created_here: set[str] = set()


def output_folder() -> Path | None:
    """A private folder for full-output files under the temp dir (``agent-tui-bash-UID``), or None
    when it cannot be used safely (it exists and is not a folder of ours)."""
    folder = Path(tempfile.gettempdir()) / f"agent-tui-bash-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    try:
        st = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return folder


def new_output_file() -> tuple[int, str]:
    """A new full-output file (fd, path), 0600. Older ones beyond the newest
    :data:`KEEP_OUTPUT_FILES` (or :data:`KEEP_OUTPUT_BYTES` in all) are removed first, except
    those this process made: the paths the model was given stay valid while the session runs."""
    folder = output_folder()
    if folder is None:
        fd, path = tempfile.mkstemp(prefix="agent-tui-bash-", suffix=".log")
    else:
        prune_outputs(folder)
        fd, path = tempfile.mkstemp(prefix="agent-tui-bash-", suffix=".log", dir=folder)
    _created_here.add(path)
    return fd, path


def prune_outputs(folder: Path, keep: int = KEEP_OUTPUT_FILES, keep_bytes: int = KEEP_OUTPUT_BYTES) -> int:
    """Remove the oldest full-output files in ``folder`` beyond ``keep`` files or ``keep_bytes``;
    return how many were removed."""
    files: list[tuple[float, int, str]] = []
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        for item in it:
            if item.name.startswith("agent-tui-bash-") and item.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    st = item.stat(follow_symlinks=False)
                    files.append((st.st_mtime, st.st_size, item.path))
    files.sort(reverse=True)
    removed = total = 0
    for number, (_, size, path) in enumerate(files):
        total += size
        if (number >= keep or total > keep_bytes) and path not in _created_here:
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed += 1
    return removed


class OutputAccumulator:
    """The tail of a stream of output in bounded memory, and the whole of it in a temp file once it is long."""

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._raw: list[bytes] = []
        self._tail = ""
        self._tail_at_line_start = True
        self.total_raw = 0
        self.total_bytes = 0
        self.completed_lines = 0
        self.open_line = False
        self._open_bytes = 0  # of the line still being written
        self._closed_bytes = 0  # of the last complete line
        self.temp_path: str | None = None
        self._temp: IO[bytes] | None = None
        # The full-output file is ours: secrets in it are redacted as in the session (AGENT_TUI_REDACT).
        redactor = StreamRedactor()
        self._redactor = redactor if redactor.enabled else None
        self._temp_decoder = codecs.getincrementaldecoder("utf-8")("replace")

    @property
    def total_lines(self) -> int:
        return self.completed_lines + (1 if self.open_line else 0)

    def append(self, data: bytes) -> None:
        self.total_raw += len(data)
        self._add_text(self._decoder.decode(data))
        if self._temp is not None or self._long():
            self._ensure_temp()
            self._write_temp(data)
        elif data:
            self._raw.append(data)

    def finish(self) -> None:
        self._add_text(self._decoder.decode(b"", final=True))
        if self._long():
            self._ensure_temp()
        if self._temp is not None:
            if self._redactor is not None:
                rest = self._temp_decoder.decode(b"", final=True)
                self._temp.write((self._redactor.feed(rest) + self._redactor.flush()).encode())
            self._temp.close()

    def _write_temp(self, data: bytes) -> None:
        assert self._temp is not None
        if self._redactor is None:
            self._temp.write(data)
        else:
            self._temp.write(self._redactor.feed(self._temp_decoder.decode(data)).encode())

    def _long(self) -> bool:
        return (
            self.total_raw > self.max_bytes
            or self.total_bytes > self.max_bytes
            or self.total_lines > self.max_lines
        )

    def _add_text(self, text: str) -> None:
        if not text:
            return
        size = byte_len(text)
        self.total_bytes += size
        self._tail += text
        if len(self._tail) > self.max_bytes * 4:
            cut = len(self._tail) - self.max_bytes * 2
            self._tail_at_line_start = self._tail[cut - 1] == "\n"
            self._tail = self._tail[cut:]
        newlines = text.count("\n")
        if newlines == 0:
            self._open_bytes += size
            self.open_line = True
        else:
            self.completed_lines += newlines
            last = text.rfind("\n")
            previous = text.rfind("\n", 0, last)
            if previous == -1:
                self._closed_bytes = self._open_bytes + byte_len(text[:last])
            else:
                self._closed_bytes = byte_len(text[previous + 1 : last])
            rest = text[last + 1 :]
            self._open_bytes = byte_len(rest)
            self.open_line = bool(rest)

    @property
    def last_line_bytes(self) -> int:
        """The size of the last line, whether or not it ended with a newline."""
        return self._open_bytes if self.open_line else self._closed_bytes

    def _ensure_temp(self) -> None:
        if self.temp_path is not None:
            return
        fd, self.temp_path = new_output_file()
        self._temp = os.fdopen(fd, "wb")
        for chunk in self._raw:
            self._write_temp(chunk)
        self._raw.clear()

    def snapshot(self) -> Truncation:
        text = self._tail
        if not self._tail_at_line_start and "\n" in text:
            text = text[text.index("\n") + 1 :]  # drop the partial first line of a clipped tail
        tail = truncate_tail(text, max_lines=self.max_lines, max_bytes=self.max_bytes)
        truncated = self.total_lines > self.max_lines or self.total_bytes > self.max_bytes
        by = (
            (tail.truncated_by or ("bytes" if self.total_bytes > self.max_bytes else "lines"))
            if truncated
            else None
        )
        tail.truncated = truncated
        tail.truncated_by = by
        tail.total_lines = self.total_lines
        tail.total_bytes = self.total_bytes
        return tail


def shell() -> list[str]:
    found = shutil.which("bash")
    return [found, "-c"] if found else ["/bin/sh", "-c"]


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@dataclass(slots=True)
class CommandRun:
    """How a command ended: ``outcome`` is exit, timeout or aborted; ``output`` is finished."""

    output: OutputAccumulator
    outcome: str
    returncode: int | None
    shell_exit_after: float | None  # seconds, when the shell exited before a timeout


async def run_command(
    command: str,
    cwd: str,
    abort: asyncio.Event,
    *,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    on_chunk: Callable[[bytes], None] | None = None,
    output: OutputAccumulator | None = None,
    sandbox: Sandbox | None = None,
) -> CommandRun:
    """Run ``command`` in its own process group, as the bash tool does (the user's ``!cmd`` too):
    output merged and kept in an :class:`OutputAccumulator` (``output``, or a new one), the group
    killed on timeout or when ``abort`` is set. ``on_chunk`` sees the raw output as it arrives,
    once it is in ``output``. ``sandbox``: run inside it (``agent.sandbox``; None: as it is)."""
    output = output if output is not None else OutputAccumulator()
    started = time.monotonic()
    env = env if env is not None else child_environment()  # without any model service's key
    argv = [*shell(), command]
    if sandbox is not None:
        argv = sandbox.wrap(argv, cwd, env)
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        env=env,
    )
    assert proc.stdout is not None
    deadline = started + float(timeout) if timeout is not None else None
    exit_task = asyncio.ensure_future(proc.wait())
    abort_task = asyncio.ensure_future(abort.wait())
    read_task: asyncio.Future[bytes] | None = None
    eof = False
    outcome = "exit"
    shell_exit_after: float | None = None
    try:
        while True:
            if read_task is None and not eof:
                read_task = asyncio.ensure_future(proc.stdout.read(65536))
            waiting: set[asyncio.Future[Any]] = {abort_task}
            if read_task is not None:
                waiting.add(read_task)
            if not exit_task.done():
                waiting.add(exit_task)
            wait_for: float | None = None
            if exit_task.done():
                if eof:
                    break
                wait_for = EXIT_STDIO_GRACE  # descendants may hold the pipe: stop once it is idle
            if deadline is not None:
                remaining = max(0.0, deadline - time.monotonic())
                wait_for = remaining if wait_for is None else min(wait_for, remaining)
            done, _ = await asyncio.wait(waiting, timeout=wait_for, return_when=asyncio.FIRST_COMPLETED)
            if abort_task in done:
                outcome = "aborted"
                break
            if read_task is not None and read_task in done:
                data = read_task.result()
                read_task = None
                if data:
                    output.append(data)
                    if on_chunk is not None:
                        on_chunk(data)
                else:
                    eof = True
                continue
            if exit_task in done:
                shell_exit_after = time.monotonic() - started
                continue
            if deadline is not None and time.monotonic() >= deadline:
                outcome = "timeout"
                break
            if exit_task.done():
                break  # idle after exit
    finally:
        if outcome != "exit" or not exit_task.done():
            kill_group(proc.pid)  # timeout, abort or cancellation: the whole group goes
        for task in (read_task, abort_task):
            if task is not None and not task.done():
                task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ProcessLookupError):
            await asyncio.shield(exit_task)
    output.finish()
    return CommandRun(output, outcome, proc.returncode, shell_exit_after)


class PartialOutput:
    """pi's bash updates: an empty partial result as the command starts, then ``{content: [the
    tail so far, as the model would see it], details: {truncation?, fullOutputPath?}}`` at most
    every ``throttle`` seconds while output arrives, and once more at the end if output came since
    the last one. ``report`` is called on the event loop."""

    def __init__(
        self,
        output: OutputAccumulator,
        report: Callable[[JSONObject], None],
        throttle: float = UPDATE_THROTTLE,
    ) -> None:
        self.output = output
        self.report = report
        self.throttle = throttle
        self.dirty = False
        self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None
        report({"content": []})

    def chunk(self, data: bytes) -> None:
        self.dirty = True
        wait = self.throttle - (time.monotonic() - self.last)
        if wait <= 0:
            self._cancel()
            self._emit()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(wait, self._fire)

    def close(self) -> None:
        self._cancel()
        self._emit()

    def _fire(self) -> None:
        self.timer = None
        self._emit()

    def _cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _emit(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        self.last = time.monotonic()
        snap = self.output.snapshot()
        details: JSONObject = {}
        if snap.truncated:
            details["truncation"] = snap.to_json()
        if self.output.temp_path:
            details["fullOutputPath"] = self.output.temp_path
        self.report({"content": [{"type": "text", "text": snap.content or ""}], "details": details})


class BashTool(Tool):
    name = "bash"
    snippet = "Execute bash commands (ls, grep, find, etc.)"
    description = (
        "Execute a bash command in the current working directory. Returns stdout and stderr. Output is "
        f"truncated to last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit "
        "first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds."
    )
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Shell command to execute"},
            "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
        },
        "required": ["command"],
    }

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        command = str(args["command"])
        timeout = args.get("timeout")
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
                raise ToolError("Invalid timeout: must be a finite number of seconds")
            if timeout > MAX_TIMEOUT:
                raise ToolError(f"Invalid timeout: maximum is {MAX_TIMEOUT} seconds")
        if not os.path.isdir(ctx.cwd):
            raise ToolError(f"Working directory does not exist: {ctx.cwd}\nCannot execute bash commands.")
        ctx.check()
        output = OutputAccumulator()
        partial = PartialOutput(output, ctx.on_update) if ctx.on_update is not None else None
        try:
            run = await run_command(
                command,
                ctx.cwd,
                ctx.signal,
                timeout=timeout,
                env=self.env,
                on_chunk=partial.chunk if partial is not None else None,
                output=output,
                sandbox=ctx.sandbox,
            )
        finally:
            if partial is not None:
                partial.close()
        output, outcome, shell_exit_after = run.output, run.outcome, run.shell_exit_after
        text, details = self._format(output, "" if outcome != "exit" else "(no output)")
        if outcome == "aborted":
            raise ToolError(_status(text, "Command aborted"))
        if outcome == "timeout":
            status = f"Command timed out after {_seconds(timeout)} seconds"
            if shell_exit_after is not None:
                status += (
                    f". The shell exited with code {_exit_code(run.returncode)} after {shell_exit_after:.1f} "
                    "seconds, but background processes it started kept writing output until the timeout."
                )
            raise ToolError(_status(text, status))
        code = _exit_code(run.returncode)
        if code != 0:
            status = f"Command exited with code {code}"
            stopped = (
                ctx.sandbox.explain(output.snapshot().content, code) if ctx.sandbox is not None else None
            )
            if stopped is not None:  # what the sandbox stopped, and how the user can allow it
                status += f"\n{stopped}"
            return ToolResult.text(_status(text, status), details, is_error=True)
        return ToolResult.text(text, details)

    def _format(self, output: OutputAccumulator, empty: str) -> tuple[str, JSONObject | None]:
        snap = output.snapshot()
        text = snap.content or empty
        if not snap.truncated:
            return text, None
        path = output.temp_path
        details: JSONObject = {"truncation": snap.to_json(), "fullOutputPath": path}
        first = snap.total_lines - snap.output_lines + 1
        last = snap.total_lines
        if snap.last_line_partial:
            text += (
                f"\n\n[Showing last {format_size(snap.output_bytes)} of line {last} "
                f"(line is {format_size(output.last_line_bytes)}). Full output: {path}]"
            )
        elif snap.truncated_by == "lines":
            text += f"\n\n[Showing lines {first}-{last} of {snap.total_lines}. Full output: {path}]"
        else:
            text += (
                f"\n\n[Showing lines {first}-{last} of {snap.total_lines} ({format_size(DEFAULT_MAX_BYTES)} limit). "
                f"Full output: {path}]"
            )
        return text, details


def _status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


def _exit_code(code: int | None) -> int:
    if code is None:
        return 1
    return 128 - code if code < 0 else code


def _seconds(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)

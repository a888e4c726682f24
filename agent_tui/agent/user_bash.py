"""The user's ``!cmd`` / ``!!cmd``: run a command the user typed and record pi's ``bashExecution`` message.

The command goes through the bash tool's machinery (:func:`agent_tui.agent.tools.bash.run_command`:
its own process group, killed on abort; the tail kept, the whole output spilled to a 0600 temp file
whose secrets are redacted). No permission is asked (the user typed it) and no model is called. The
message is pi's ``BashExecutionMessage`` (pi's ``executeBashWithOperations`` + ``recordBashResult``):
``command``, ``output`` (the tail, ANSI sequences and stray control characters removed), ``exitCode``
(absent when cancelled), ``cancelled``, ``truncated``, ``fullOutputPath`` (when truncated),
``timestamp`` and, for ``!!``, ``excludeFromContext: true`` (shown, never sent).
"""

from __future__ import annotations

import asyncio
import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_tui.agent.tools.bash import run_command
from agent_tui.store.clock import now_ms
from agent_tui.store.record import JSONObject

if TYPE_CHECKING:
    from agent_tui.agent.sandbox import Sandbox

# CSI / OSC / other escape sequences, then every C0 control but tab and newline (and DEL).
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_output(text: str) -> str:
    """pi's stripAnsi + sanitizeBinaryOutput, and no carriage returns."""
    return _CONTROL.sub("", _ANSI.sub("", text.replace("\r\n", "\n")))


@dataclass(frozen=True, slots=True)
class UserCommand:
    """A composer line that is a shell command: ``!cmd`` (sent to the model) or ``!!cmd`` (not)."""

    command: str
    exclude_from_context: bool


def parse_user_command(text: str) -> UserCommand | None:
    """``!cmd`` / ``!!cmd`` -> the command; None for anything else (a lone ``!`` is a message)."""
    stripped = text.strip()
    if not stripped.startswith("!"):
        return None
    excluded = stripped.startswith("!!")
    command = stripped[2:].strip() if excluded else stripped[1:].strip()
    return UserCommand(command, excluded) if command else None


async def run_user_command(
    command: UserCommand,
    cwd: str,
    abort: asyncio.Event,
    on_output: Callable[[str], None] | None = None,
    sandbox: Sandbox | None = None,
) -> JSONObject:
    """Run it in ``cwd`` until it ends or ``abort`` is set (inside ``sandbox``, as the model's
    commands run); return the ``bashExecution`` message. When the sandbox stopped it, a line
    saying so ends the output."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def chunk(data: bytes) -> None:
        if on_output is not None:
            text = clean_output(decoder.decode(data))
            if text:
                on_output(text)

    run = await run_command(
        command.command, cwd, abort, on_chunk=chunk if on_output else None, sandbox=sandbox
    )
    snap = run.output.snapshot()
    cancelled = run.outcome != "exit"
    output = clean_output(snap.content)
    if sandbox is not None and not cancelled and run.returncode is not None:
        stopped = sandbox.explain(output, run.returncode)
        if stopped is not None:
            output = f"{output.rstrip(chr(10))}\n{stopped}\n" if output else f"{stopped}\n"
            if on_output is not None:
                on_output(f"{stopped}\n")
    message: JSONObject = {
        "role": "bashExecution",
        "command": command.command,
        "output": output,
    }
    if not cancelled and run.returncode is not None:
        code = run.returncode
        message["exitCode"] = 128 - code if code < 0 else code
    message["cancelled"] = cancelled
    message["truncated"] = bool(snap.truncated)
    if snap.truncated and run.output.temp_path:
        message["fullOutputPath"] = run.output.temp_path
    message["timestamp"] = now_ms()
    if command.exclude_from_context:
        message["excludeFromContext"] = True
    return message


__all__ = ["UserCommand", "clean_output", "parse_user_command", "run_user_command"]

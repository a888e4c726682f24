"""``agent-tui -p PROMPT --mode json``: print mode's run, written as pi 1.6's JSON event stream.

stdout carries only protocol records, one JSON object per line (LF-terminated; U+2028 and U+2029
may appear inside strings): the session header first, then every record of the run
(:mod:`agent_tui.sdk.pi_events`, docs/JSON.md). Everything else (notes, the session path, an
error's one line) goes to stderr, as in print mode, whose flags, permissions, redaction, signals
and exit codes (0 done, 1 error, 130 aborted) this mode shares.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable
from typing import BinaryIO

from agent_tui.agent.events import EntryAppended, Notice, TurnDone, TurnError
from agent_tui.cli.print_mode import (
    TurnInput,
    exit_code,
    report_cut_off,
    report_end,
    report_notice,
    run_print,
    turn_events,
)
from agent_tui.sdk import Agent, PiEventStream
from agent_tui.store.record import JSONObject
from agent_tui.terminal_text import for_terminal


def encode_record(record: JSONObject) -> bytes:
    """One protocol line: compact JSON, UTF-8, LF-terminated. A string holding a lone surrogate (a
    reply cut inside an emoji) is written with ``\\u`` escapes, which any JSON reader takes."""
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(record, separators=(",", ":")).encode("ascii")
    return data + b"\n"


class JsonLines:
    """Writes records to a binary stream, one per line, flushed at once (a reader sees each as it
    happens). After the reader went away (a broken pipe) it writes nothing more and says so in
    ``closed``."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.closed = False

    def write(self, record: JSONObject) -> None:
        self.write_encoded(encode_record(record))

    def write_encoded(self, line: bytes) -> None:
        """One line already encoded (LF-terminated)."""
        if self.closed:
            return
        try:
            self.out.write(line)
            self.out.flush()
        except (BrokenPipeError, ValueError):  # the reader closed the pipe, or stdout is closed
            self.closed = True


async def json_turn(
    agent: Agent,
    prompt: TurnInput,
    lines: JsonLines,
    *,
    ack: Callable[[str], None] | None = None,
) -> int:
    """One run written as pi's records to ``lines``; returns print mode's exit code."""
    agent.loop.tool_updates = True  # pi's tool_execution_update: a running bash's output so far
    stream = PiEventStream(agent.session.store.index, agent.model_info)
    code = 0
    error: str | None = None
    for record in stream.start():
        lines.write(record)
    events = turn_events(agent, prompt)
    async for event in events:
        if isinstance(event, EntryAppended) and ack is not None:
            ack(event.entry_id)
        elif isinstance(event, Notice):  # stdout is the protocol: notices go where print mode's go
            report_notice(event, for_terminal(sys.stderr))
        elif isinstance(event, TurnError):
            error = event.message
        elif isinstance(event, TurnDone):
            code = exit_code(event.stop_reason)
            if event.stop_reason == "length":
                report_cut_off(agent, for_terminal(sys.stderr))
        for record in stream.feed(event):
            lines.write(record)
        if lines.closed and agent.running:
            agent.abort()  # nobody reads any more: stop, keeping what was written to the session
    return report_end(code, error, for_terminal(sys.stderr))


def run_json(args: argparse.Namespace) -> int:
    lines = JsonLines(sys.stdout.buffer)
    header_written = False

    def run_turn(agent: Agent, prompt: TurnInput, ack: Callable[[str], None] | None) -> Awaitable[int]:
        nonlocal header_written
        if not header_written:
            header_written = True
            lines.write(agent.session.header)
        return json_turn(agent, prompt, lines, ack=ack)

    return run_print(args, run_turn)


__all__ = ["JsonLines", "encode_record", "json_turn", "run_json"]

"""A client for ``agent-tui --mode rpc`` run as a subprocess: send commands, read records as they come."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Record = dict[str, Any]


class RpcClient:
    """Starts ``python -m agent_tui --mode rpc ARGS`` in ``cwd``; a thread reads stdout (split on LF
    only, as the protocol says) into ``records``, every line parsed as JSON (a line that is not
    fails the test when read)."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_tui", "--mode", "rpc", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.records: list[Record] = []
        self.raw: list[bytes] = []
        self._lines: queue.Queue[Record | None] = queue.Queue()
        self._seen = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw.append(line)
            self._lines.put(json.loads(line))
        self._lines.put(None)

    def send(self, command: Record | str) -> None:
        assert self.proc.stdin is not None
        data = command if isinstance(command, str) else json.dumps(command)
        self.proc.stdin.write(data.encode() + b"\n")
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait_for(self, match: Callable[[Record], bool], timeout: float = 30.0) -> Record:
        """The first record from now on (or already read and not yet passed) that ``match``es."""
        deadline = time.monotonic() + timeout
        while True:
            while self._seen < len(self.records):
                record = self.records[self._seen]
                self._seen += 1
                if match(record):
                    return record
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no matching record in {timeout}s; last: {self.records[-5:]}")
            try:
                item = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if item is None:
                raise AssertionError(f"stdout closed; last records: {self.records[-5:]}")
            self.records.append(item)

    def response(self, id_: str, timeout: float = 30.0) -> Record:
        return self.wait_for(lambda r: r.get("type") == "response" and r.get("id") == id_, timeout)

    def call(self, command: Record, timeout: float = 30.0) -> Record:
        """Send ``command`` with a fresh id and return its response."""
        id_ = f"c{len(self.records)}-{time.monotonic_ns()}"
        self.send({**command, "id": id_})
        return self.response(id_, timeout)

    def finish(self, timeout: float = 30.0) -> tuple[int, str]:
        """Close stdin, wait for the exit; the exit status and stderr. Every record is read."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.close_stdin()
        code = self.proc.wait(timeout)
        while True:
            item = self._lines.get(timeout=timeout)
            if item is None:
                break
            self.records.append(item)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read().decode()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

"""Shared helpers for the provider, agent and print-mode tests (and usable by TUI tests).

``Harness`` wires a session, the fake model server and an AgentLoop together,
and snapshots the session file each time a request reaches the server, so a
test can check that every request equals ``agent-tui context --format ...`` of
the session as it was at that moment.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import sys
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_tui.agent.build import make_provider
from agent_tui.agent.events import AgentEvent
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.tools.base import Tool
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.cli import session_commands
from agent_tui.config import Config, RetryPolicy
from agent_tui.store.session import Session
from tests.support.fake_model_server import FakeModelServer, RecordedRequest

FAST_RETRY = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=2.0)


def make_config(
    server: FakeModelServer,
    provider: str = "anthropic",
    model: str | None = None,
    *,
    retry: RetryPolicy = FAST_RETRY,
    api_key: str = "sk-test-key",
    request_log: str | None = None,
    thinking: str | None = None,
) -> Config:
    base_url = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
    return Config(
        provider=provider,
        model=model or ("claude-sonnet-5-5" if provider == "anthropic" else "gpt-4.1"),
        api_key=api_key,
        base_url=base_url,
        retry=retry,
        request_log=request_log,
        thinking=thinking,
        key_source="ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY",
    )


def context_body(path: Path, fmt: str, model: str | None = None, api: str | None = None) -> Any:
    """What ``agent-tui context PATH --format FMT`` prints, parsed (run in-process)."""
    args = argparse.Namespace(file=str(path), leaf=None, format=fmt, model=model, api=api, base_url=None)
    real = sys.stdout
    buffer = io.BytesIO()
    sys.stdout = types.SimpleNamespace(buffer=buffer)
    try:
        assert session_commands.cmd_context(args) == 0
    finally:
        sys.stdout = real
    return json.loads(buffer.getvalue())


async def until(condition: Callable[[], object], what: str, seconds: float = 60) -> None:
    """Poll ``condition`` every 50 ms until it holds, or fail saying ``what`` did not happen within
    ``seconds`` (a loaded machine is slow, not wrong)."""
    for _ in range(int(seconds * 20)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@dataclass
class Harness:
    """A session in ``tmp``, a provider pointed at the fake server, and snapshots of the file per request."""

    server: FakeModelServer
    tmp: Path
    provider: str = "anthropic"
    model: str | None = None
    retry: RetryPolicy = FAST_RETRY
    tools: Sequence[Tool] | None = None
    session: Session = field(init=False)
    loop: AgentLoop = field(init=False)
    snapshots: list[bytes] = field(default_factory=list)
    config: Config = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.workdir = self.tmp / "work"
        self.workdir.mkdir(exist_ok=True)
        self.session = Session.create(self.tmp / "sessions", self.workdir)
        self.config = make_config(self.server, self.provider, self.model, retry=self.retry)
        self.server.on_request = self._snapshot
        self.loop = self.new_loop()

    def new_loop(self, config: Config | None = None) -> AgentLoop:
        config = config or self.config
        loop = AgentLoop(
            self.session,
            make_provider(config),
            list(self.tools) if self.tools is not None else default_tools(),
            config=config,
            global_context_dir=self.tmp / "no-global-context",
            cwd=str(self.workdir),
        )
        loop.tool_grace = 1.0
        return loop

    def _snapshot(self, request: RecordedRequest) -> None:
        with self._lock:
            self.snapshots.append(self.session.path.read_bytes())

    async def run(self, prompt: str | None) -> list[AgentEvent]:
        return [event async for event in self.loop.run(prompt)]

    def entries(self) -> list[dict[str, Any]]:
        lines = self.session.path.read_text().splitlines()
        return [json.loads(line) for line in lines[1:]]

    def messages(self, role: str | None = None) -> list[dict[str, Any]]:
        out = [e["message"] for e in self.entries() if e["type"] == "message"]
        return [m for m in out if role is None or m["role"] == role]

    def assert_requests_match_context(self) -> None:
        """Every request the server got equals ``agent-tui context --format`` of the session at that moment."""
        fmt = "anthropic" if self.provider == "anthropic" else "openai"
        assert len(self.snapshots) == len(self.server.requests)
        for number, (snapshot, request) in enumerate(zip(self.snapshots, self.server.requests, strict=True)):
            copy = self.tmp / f"snapshot-{number}.jsonl"
            copy.write_bytes(snapshot)
            expected = context_body(copy, fmt)
            assert request.body == expected, f"request {number} differs from the projection"

    async def close(self) -> None:
        await self.loop.provider.aclose()
        self.session.close()

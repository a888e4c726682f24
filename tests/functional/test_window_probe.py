"""An unknown model's context window is asked of its server in a thread: building the agent never
waits on the server (the app builds it on its event loop), and the first turn waits for the answer,
so its figures, compaction and request use the real window."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from agent_tui.agent.build import build_agent
from agent_tui.agent.events import TurnDone
from agent_tui.agent.loop import probe_context_window
from agent_tui.projection.models import lookup
from agent_tui.store.session import Session
from tests.support.agent_support import make_config
from tests.support.fake_model_server import FakeModelServer, openai_stream

MODEL = "probe-window-unknown-model"


async def test_the_window_is_asked_off_the_event_loop_and_the_first_turn_uses_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    gate = threading.Event()
    server.models_gate = gate  # the server holds its answer until the test lets it go
    server.props = {"default_generation_settings": {"n_ctx": 3_000}}  # llama.cpp's /props
    config = make_config(server, "openai", MODEL)
    session = Session.create(tmp_path / "sessions", tmp_path)
    try:
        loop = build_agent(session, config, [], cwd=str(tmp_path))
        # back while the server has not answered: nothing waited on it
        assert not gate.is_set() and lookup(MODEL).context_window == 128_000
        for _ in range(500):  # the thread's question has reached the server
            if server.model_requests:
                break
            await asyncio.sleep(0.01)
        assert [r.path for r in server.model_requests] == ["/props"]
        gate.set()
        server.push(openai_stream("hello", model=MODEL))
        events = [e async for e in loop.run("hi")]
        assert events[-1] == TurnDone("stop")
        assert loop.context_window() == 3_000 and lookup(MODEL).context_window == 3_000
        body = server.requests[0].body
        assert body.get("max_completion_tokens", body.get("max_tokens")) == 750  # a quarter of 3,000
        # asked once per process: another agent for the same server and model gets the same answer
        assert probe_context_window(config, MODEL) is None  # now the table knows it
        assert [r.path for r in server.model_requests] == ["/props"]
        await loop.provider.aclose()
    finally:
        session.close()

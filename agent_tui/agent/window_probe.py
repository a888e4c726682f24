"""Asking a server of one's own for the context window of a model the table does not know.

llama.cpp, Ollama and vLLM report the window they were started with; the answer is registered in
the model table, so every figure and compaction uses it instead of the 128,000 guess. Each server
and model is asked once per process, in a thread of its own (the face's event loop never waits on
the server); the agent loop awaits the answer before its first request.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

from agent_tui.config import Config
from agent_tui.projection import registry

_ASKED: set[tuple[str, str]] = set()
#: The context-window questions under way or answered, one per server and model (see probe_context_window).
_PROBES: dict[tuple[str, str], Future[int | None]] = {}


def learn_context_window(config: Config, model: str) -> int | None:
    """A model the table does not know, at a base URL of one's own: its context window as the
    server reports it (llama.cpp, Ollama, vLLM), registered so every figure and compaction uses
    it instead of the 128,000 guess. None (and nothing registered) when the server does not say."""
    from agent_tui.projection.models import DEFAULT, ModelInfo, is_known, register
    from agent_tui.providers.model_list import context_window

    if not config.base_url or is_known(model) or (config.base_url, model) in _ASKED:
        return None
    _ASKED.add((config.base_url, model))  # once per process: a silent server is not asked again
    # A local server answers at once; the short timeout bounds a remote one that does not.
    window = context_window(
        registry.spec(config.provider), config.base_url, model, config.api_key, timeout=1.0
    )
    if window is None:
        return None
    output = min(DEFAULT.max_output, max(256, window // 4))  # room for the prompt in a small window
    register(ModelInfo(config.provider, model, window, output, images=False))
    return window


def probe_context_window(config: Config, model: str) -> Future[int | None] | None:
    """:func:`learn_context_window` in a thread of its own, so the face's event loop never waits on
    the server (a remote one may take the whole timeout). Asked once per process for each server and
    model (a later loop gets the same future); the loop awaits it before its first request. None
    when there is nothing to ask (no base URL of one's own, or a model the table knows)."""
    from agent_tui.projection.models import is_known

    if not config.base_url or is_known(model):
        return None
    key = (config.base_url, model)
    future = _PROBES.get(key)
    if future is None:
        future = _PROBES[key] = Future()
        probe = future

        def ask() -> None:
            if not probe.set_running_or_notify_cancel():
                return
            try:
                probe.set_result(learn_context_window(config, model))
            except Exception:  # a figure, never a reason to fail: the guess stays
                probe.set_result(None)

        threading.Thread(target=ask, name="context-window", daemon=True).start()
    return future


__all__ = ["learn_context_window", "probe_context_window"]

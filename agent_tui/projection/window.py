"""The context window a server really has, learned from its overflow errors and kept in the session.

When a server refuses a prompt as too long and says its window (llama.cpp ``n_ctx``, vLLM's
``maximum context length is N tokens``, ...), the agent appends a ``custom`` entry (never in
context, read by pi 1.6 as extension state)::

    {"type":"custom","customType":"agent-tui.window",
     "data":{"provider":"openai","modelId":"qwen","contextWindow":4096,"promptTokens":5210,"nominalWindow":128000}}

:func:`learned_window` finds the latest one on a path for a provider and model; compaction's
threshold and keep budget then follow it (``projection.compaction.fit_to_window``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_tui.store.record import Entry

WINDOW_TYPE = "agent-tui.window"

JSONObject = dict[str, Any]


def window_entry(
    provider: str, model: str, window: int, *, prompt_tokens: int | None = None, nominal: int | None = None
) -> JSONObject:
    """The ``custom`` entry that records ``window`` for ``provider`` / ``model``."""
    data: JSONObject = {"provider": provider, "modelId": model, "contextWindow": int(window)}
    if prompt_tokens is not None:
        data["promptTokens"] = int(prompt_tokens)
    if nominal is not None:
        data["nominalWindow"] = int(nominal)
    return {"type": "custom", "customType": WINDOW_TYPE, "data": data}


def is_window_entry(entry: Entry) -> bool:
    return entry.type == "custom" and entry.data.get("customType") == WINDOW_TYPE


def learned_window(path: Iterable[Entry], provider: str, model: str) -> int | None:
    """The window the latest ``agent-tui.window`` entry on ``path`` records for this provider and model."""
    found: int | None = None
    for entry in path:
        if not is_window_entry(entry):
            continue
        data = entry.data.get("data")
        if not isinstance(data, dict) or data.get("provider") != provider or data.get("modelId") != model:
            continue
        value = data.get("contextWindow")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            found = value
    return found


#: The output-limit fields of the APIs whose servers count the completion into the window
#: (OpenAI Chat Completions, vLLM and other compatible servers; the Responses API).
_OUTPUT_KEYS = ("max_completion_tokens", "max_output_tokens")
MIN_OUTPUT_TOKENS = 256


def fit_output(body: JSONObject, window: int, prompt_tokens: int) -> JSONObject:
    """``body`` with its output limit lowered so prompt + completion fit ``window`` (vLLM and OpenAI
    refuse "you requested 8492 tokens (300 in the messages, 8192 in the completion)" otherwise),
    leaving a tenth of the window for the estimate's error; at least 256 tokens. Unchanged
    when it already fits, and for APIs whose servers count only the prompt."""
    room = max(MIN_OUTPUT_TOKENS, window - prompt_tokens - window // 10)
    for key in _OUTPUT_KEYS:
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > room:
            return {**body, key: room}
    return body


__all__ = ["WINDOW_TYPE", "fit_output", "is_window_entry", "learned_window", "window_entry"]

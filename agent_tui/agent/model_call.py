"""One model call of a turn: what is sent, what streams, and what each attempt leaves in the session.

:class:`~agent_tui.agent.model_stream.ModelStream` makes the attempts (retrying with backoff);
here its deltas become events as they stream (text, thinking, each tool call once its name is
known, then its argument fragments), each failed attempt an assistant message with stopReason
``error`` (which the projection leaves out of later requests), an abort the partial message with
stopReason ``aborted``, and the final message an entry. Rate limits, overload, server errors and
dropped streams are retried with backoff (honouring retry-after); a rejected key is not retried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_tui.agent.events import (
    Emit,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStreaming,
)
from agent_tui.agent.model_stream import Failure, ModelStream
from agent_tui.agent.turn_io import Aborted, TurnIO
from agent_tui.config import Config
from agent_tui.projection.compaction import context_tokens
from agent_tui.projection.context import Projection
from agent_tui.projection.request import prepare
from agent_tui.projection.window import fit_output, learned_window
from agent_tui.providers import events as pe
from agent_tui.providers.base import Provider
from agent_tui.providers.events import StopReason
from agent_tui.providers.overflow import Overflow
from agent_tui.store.record import JSONObject


@dataclass(slots=True)
class CallOutcome:
    message: JSONObject
    stop_reason: (
        StopReason  # the turn's: the message's, or "aborted" when the wait before a retry was aborted
    )
    error: str | None = None
    kind: str | None = None  # the provider error's kind, e.g. "context_overflow"
    entry_id: str | None = None  # the appended assistant message
    overflow: Overflow | None = None  # what a context overflow said about the server's window


def request_body(provider: Provider, model: str, projection: Projection) -> JSONObject:
    """The body a model call sends for ``projection``: its messages, prepared, for this provider."""
    prepared = prepare(projection.messages)
    body = provider.request_body(prepared, model, thinking_level=projection.thinking_level)
    window = learned_window(projection.path, provider.name, model)
    if window is not None:  # the completion must fit the server's window too (what `context` prints)
        body = fit_output(body, window, context_tokens(projection).tokens)
    return body


async def call_model(
    call: ModelStream, config: Config, body: Callable[[], JSONObject], io: TurnIO
) -> CallOutcome:
    """Run ``call`` (each attempt sending ``body()``), every attempt recorded; the turn's outcome."""
    failed: list[tuple[JSONObject, str | None]] = []  # the last failed attempt: (message, entry id)

    async def on_failure(failure: Failure) -> None:
        text = describe(call.provider, call.model, config, failure.error, failure.attempt, failure.will_retry)
        message = failure.builder.message("error", text)
        entry = await io.append_message(message)
        failed[:] = [(message, entry.id)]
        if failure.will_retry:
            io.emit(Retrying(failure.attempt + 1, failure.delay, text, config.retry.max_retries))

    try:
        on_event = announcer(io.emit, lambda: call.builder.timestamp if call.builder is not None else 0)
        result = await call.run(body, on_event=on_event, on_failure=on_failure, guard=io.abortable)
    except Aborted:
        if call.waiting and failed:  # aborted in the pause before a retry
            return CallOutcome(failed[0][0], "aborted")
        assert call.builder is not None
        message = call.builder.message("aborted", "Request was aborted")
        await io.append_message(message)
        return CallOutcome(message, "aborted")
    if result.error is None:
        message = result.builder.message()
        await io.append_message(message)
        return CallOutcome(message, message["stopReason"], message.get("errorMessage"))
    message, entry_id = failed[0]
    return CallOutcome(
        message, "error", message.get("errorMessage"), result.error.kind, entry_id, result.error.overflow
    )


def describe(
    provider: Provider, model: str, config: Config, error: pe.ProviderError, attempts: int, will_retry: bool
) -> str:
    """The one line a failed attempt's message carries (a rejected key: where keys come from)."""
    text = f"{provider.name} ({model}): {error.message}"
    if error.kind == "auth":
        return f"{text}; {config.auth_hint()}"
    base_url = getattr(provider, "base_url", None)
    if error.kind == "connection" and base_url:
        text = f"{text} [{base_url}]"
    if error.retryable and not will_retry and attempts:
        text += f" (gave up after {attempts} {'retry' if attempts == 1 else 'retries'})"
    return text


def announcer(emit: Emit, timestamp: Callable[[], int] = lambda: 0) -> Callable[[pe.ProviderEvent], None]:
    """Text and thinking deltas as they stream, each tool call once its name is known, then its
    argument fragments; ``timestamp`` gives the streamed message's (the attempt in flight's)."""
    announced: dict[int, str] = {}  # block index -> call id

    def on_event(event: pe.ProviderEvent) -> None:
        if isinstance(event, pe.TextDelta):
            if event.text:
                emit(TextDelta(event.text, event.index, timestamp()))
        elif isinstance(event, pe.ThinkingDelta):
            if event.text:
                emit(ThinkingDelta(event.text, event.index, timestamp()))
        elif isinstance(event, pe.ToolCallDelta):
            if event.index not in announced and event.name:
                announced[event.index] = event.id
                emit(ToolCallStreaming(event.id, event.name, event.index, timestamp()))
            if event.index in announced and event.arguments_delta:
                emit(ToolCallDelta(announced[event.index], event.index, event.arguments_delta))

    return on_event


__all__ = ["CallOutcome", "announcer", "call_model", "describe", "request_body"]

"""One model call with retries: the loop's turns and the summarizer's calls both stream through it.

:class:`ModelStream` sends a body (built afresh for each attempt), folds the provider's events into
a :class:`~agent_tui.providers.events.MessageBuilder`, and retries what the provider marks
retryable (rate limits, overload, server errors, dropped or incomplete streams) with the retry
policy's backoff, honouring retry-after. Each failed attempt is handed to ``on_failure`` first
(the loop records it as an ``error`` assistant message and announces the retry). ``guard`` wraps
every wait (the stream and the pause before a retry): the loop's abort raises through it, and
:attr:`ModelStream.builder` and :attr:`ModelStream.waiting` then say where the call was.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from agent_tui.config import RetryPolicy
from agent_tui.providers import events as pe
from agent_tui.providers.base import Provider
from agent_tui.store.clock import now_ms
from agent_tui.store.record import JSONObject

INCOMPLETE = "the stream ended without a stop reason"


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed attempt: what it received, why it failed, and what happens next."""

    builder: pe.MessageBuilder
    error: pe.ProviderError
    attempt: int  # retries made before this attempt (0: the first attempt)
    will_retry: bool
    delay: float  # seconds before the retry (0 when there is none)


@dataclass(frozen=True, slots=True)
class Attempt:
    """The call's last attempt: a complete message (``error`` None) or the error that ended it."""

    builder: pe.MessageBuilder
    error: pe.ProviderError | None
    retries: int


async def _plain(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


class ModelStream:
    """One model call to ``provider`` / ``model`` with ``policy``'s retries."""

    def __init__(self, provider: Provider, model: str, policy: RetryPolicy) -> None:
        self.provider = provider
        self.model = model
        self.policy = policy
        self.builder: pe.MessageBuilder | None = None  # the attempt in flight (or the last one)
        self.waiting = False  # between a failed attempt and its retry
        self.requests = 0  # requests sent
        self._skip = asyncio.Event()  # set by skip_retry: the pause ends and no retry is made

    async def run(
        self,
        body: Callable[[], JSONObject],
        *,
        on_event: Callable[[pe.ProviderEvent], None] | None = None,
        on_failure: Callable[[Failure], Awaitable[None]] | None = None,
        guard: Callable[[Awaitable[Any]], Awaitable[Any]] = _plain,
    ) -> Attempt:
        attempt = 0
        while True:
            builder = pe.MessageBuilder(self.provider.name, self.provider.api, self.model, now_ms())
            self.builder = builder
            self.requests += 1
            await guard(self._consume(body(), builder, on_event))
            if builder.error is None and builder.stop is not None:
                return Attempt(builder, None, attempt)
            error = builder.error or pe.ProviderError("incomplete", INCOMPLETE, True)
            retry = error.retryable and attempt < self.policy.max_retries
            delay = self.policy.delay(attempt + 1, error.retry_after) if retry else 0.0
            if on_failure is not None:
                await on_failure(Failure(builder, error, attempt, retry, delay))
            if not retry:
                return Attempt(builder, error, attempt)
            self.waiting = True
            try:
                await guard(self._pause(delay))
            finally:
                self.waiting = False
            if self._skip.is_set():  # the retry was called off: this attempt's error is the result
                return Attempt(builder, error, attempt)
            attempt += 1

    async def _pause(self, delay: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._skip.wait(), delay)

    def skip_retry(self) -> bool:
        """Call off the retry being waited for (pi's ``abort_retry``): the call ends with the failed
        attempt's error. False when no retry is being waited for."""
        if not self.waiting:
            return False
        self._skip.set()
        return True

    async def _consume(
        self,
        body: JSONObject,
        builder: pe.MessageBuilder,
        on_event: Callable[[pe.ProviderEvent], None] | None,
    ) -> None:
        async for event in self.provider.stream(body):
            builder.add(event)
            if on_event is not None:
                on_event(event)


__all__ = ["Attempt", "Failure", "ModelStream"]

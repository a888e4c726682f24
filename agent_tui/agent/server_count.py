"""The server's count of the next request, asked where the fits check needs it.

Whether a request fits is decided on :func:`~agent_tui.projection.tokens.context_tokens` (the last
reply's reported usage plus an estimate of what came after). When that figure is near the
threshold (within :data:`NEAR` of it) or over it, the answer turns on the estimate's error, and a
server that counts tokens (Anthropic's ``count_tokens``, Gemini's ``countTokens``, a llama.cpp
server's ``/tokenize``: :class:`~agent_tui.providers.base.TokenCounting`) is asked instead: its
count decides. Never on every send: far from the threshold the estimate is answer enough.

A count is remembered by the request it counted (its body without the fields that shape only the
answer), so a decision made twice on the same request asks once. A count that fails or takes more
than ``COUNT_TIMEOUT`` leaves the estimate to decide, with one debug line; after
:data:`MAX_FAILURES` failures the provider is not asked again in this process's loop.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import OrderedDict
from typing import Any

from agent_tui.providers.base import COUNT_TIMEOUT, JSONObject

log = logging.getLogger(__name__)

#: How near the threshold the estimate must come (a share of it) before the server is asked.
NEAR = 0.9
#: Counts remembered (one per request counted).
CACHE_SIZE = 32
#: Failed counts (an error, a timeout) after which the server is not asked again.
MAX_FAILURES = 2
#: Body fields that shape the answer, not the input counted: left out of the cache key.
_ANSWER_FIELDS = frozenset(
    {"stream", "stream_options", "max_tokens", "max_completion_tokens", "max_output_tokens"}
)


def near_threshold(tokens: int, threshold: int) -> bool:
    """Whether ``tokens`` is close enough to ``threshold`` (or past it) that a count should decide."""
    return tokens >= threshold * NEAR


def request_key(body: JSONObject) -> bytes:
    """The cache key of ``body``: a hash of what the server counts in it."""
    counted = {k: v for k, v in body.items() if k not in _ANSWER_FIELDS}
    return hashlib.sha256(json.dumps(counted, sort_keys=True, default=str).encode()).digest()


class ServerCounts:
    """The counts one loop's provider made, by request; :meth:`count` asks or remembers."""

    def __init__(self) -> None:
        self._cache: OrderedDict[bytes, int] = OrderedDict()
        self._failures = 0
        self.asked = 0  # counts requested from the server (a figure for tests and the panel)

    async def count(self, provider: object, body: JSONObject) -> int | None:
        """The server's count of ``body``'s input tokens, or None: no count endpoint, it failed,
        it timed out, or it failed too often before."""
        method: Any = getattr(provider, "count_tokens", None)
        if method is None or self._failures >= MAX_FAILURES:
            return None
        key = request_key({"provider": getattr(provider, "name", ""), **body})
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        import asyncio

        self.asked += 1
        try:
            # the providers bound their own call; this bounds a provider that does not
            counted = await asyncio.wait_for(method(body), COUNT_TIMEOUT + 1)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # any failure: the estimate decides
            self._failures += 1
            log.debug("token count failed, the estimate decides: %s: %s", type(e).__name__, e)
            return None
        if not isinstance(counted, int) or isinstance(counted, bool) or counted <= 0:
            return None  # no count endpoint on this server (a None is not a failure)
        self._cache[key] = counted
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return counted


__all__ = ["MAX_FAILURES", "NEAR", "ServerCounts", "near_threshold", "request_key"]

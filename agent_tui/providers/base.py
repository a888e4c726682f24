"""What every provider shares: the interface, error classification, the request log."""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import re
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

from agent_tui.projection import registry
from agent_tui.projection.request import Prepared
from agent_tui.providers.events import ErrorKind, ProviderError, ProviderEvent
from agent_tui.providers.overflow import error_code, parse_overflow
from agent_tui.store.paths import make_private_dirs
from agent_tui.store.redact import redact_value, redaction_enabled

if TYPE_CHECKING:
    import ssl

JSONObject = dict[str, Any]


class Provider(Protocol):
    """A model API. ``request_body`` writes the exact body (from ``projection.request``); ``stream`` sends it."""

    name: str  # the provider recorded in the session (its registry name)
    api: str  # pi's api name, e.g. "anthropic-messages"

    def request_body(self, prepared: Prepared, model: str, *, thinking_level: str = "off") -> JSONObject: ...

    def stream(self, body: JSONObject) -> AsyncIterator[ProviderEvent]: ...

    async def aclose(self) -> None: ...


class TokenCounting(Protocol):
    """A provider whose server counts a request's input tokens without running it (Anthropic's
    ``count_tokens``, Gemini's ``countTokens``, llama.cpp's ``/tokenize``). ``count_tokens`` takes
    the body ``request_body`` wrote; None when this server has no such endpoint."""

    async def count_tokens(self, body: JSONObject) -> int | None: ...


#: Seconds a token count may take: past it the estimate decides (a count is never worth a wait).
COUNT_TIMEOUT = 3.0


# -- errors ------------------------------------------------------------------------------------

# Quota and billing limits arrive as 429 too, but waiting does not lift them (pi's list, shortened).
_NOT_TRANSIENT = re.compile(
    r"insufficient_quota|quota exceeded|out of budget|billing|monthly usage limit|available balance", re.I
)
_TYPE_KINDS: dict[str, ErrorKind] = {
    "overloaded_error": "overloaded",
    "api_error": "server",
    "timeout_error": "server",
    "rate_limit_error": "rate_limit",
    "authentication_error": "auth",
    "permission_error": "auth",
    "invalid_request_error": "request",
    "request_too_large": "request",
    "not_found_error": "request",
}


def error_details(body: object) -> tuple[str | None, str | None]:
    """(type, message) from an error body of either API (``{"error": {...}}`` or the inner object)."""
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            body = inner
    if not isinstance(body, Mapping):
        return None, str(body) if body else None
    etype = body.get("type") or body.get("code")
    message = body.get("message")
    return (str(etype) if etype else None), (str(message) if message else None)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), as seconds."""
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # an HTTP date is rare: the app's first frame does not wait for email's modules

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def classify(
    status: int | None, body: object, headers: Mapping[str, str] | None = None, fallback: str = ""
) -> ProviderError:
    """An HTTP error (or an error event inside a stream, ``status`` 200) as a ProviderError."""
    etype, message = error_details(body)
    message = message or fallback or "no details"
    label = " ".join(str(p) for p in (status if status and status != 200 else None, etype) if p)
    text = f"{label}: {message}" if label else message
    retry_after = retry_after_seconds(headers)
    kind: ErrorKind
    if status in (401, 403):
        kind = "auth"
    elif status == 429:
        kind = "rate_limit"
    elif status == 529 or etype == "overloaded_error":
        kind = "overloaded"
    elif status is not None and (status >= 500 or status == 408):
        kind = "server"
    elif status is not None and status != 200:
        kind = "request"
    else:
        kind = _TYPE_KINDS.get(etype or "", "server")
    # An overflow whatever the status it came with (Ollama answers 500, others 400 or 413, or an
    # error event in a 200 stream), but never a rate limit counted in tokens or a rejected key.
    overflow = None
    if kind not in ("auth", "rate_limit"):
        overflow = parse_overflow(etype, error_code(body), message, body)
        if overflow is not None:
            kind = "context_overflow"
    retryable = kind in ("rate_limit", "overloaded", "server")
    if retryable and _NOT_TRANSIENT.search(f"{etype} {message}"):
        retryable = False
    if kind == "auth":
        text = f"the API key was rejected ({text})"
    return ProviderError(kind, text, retryable, retry_after, status, overflow)


def preload_sdk(provider: str) -> None:
    """Import ``provider``'s SDK (its registry entry's ``sdk_module``) now. Importing one takes
    0.4 s (openai) to 0.9 s (anthropic): the app calls this in a thread after its first frame, so
    the first model call does not freeze the event loop that answers the keyboard."""
    entry = registry.find(provider)
    if entry is not None:
        importlib.import_module(entry.sdk_module)


#: SDK imports started by :func:`preload_sdk_in_background`, by module.
_preloads: dict[str, threading.Thread] = {}
_preloads_lock = threading.Lock()


def preload_sdk_in_background(provider: str) -> None:
    """Start importing ``provider``'s SDK in a daemon thread, once, as soon as the provider is
    known (print, JSON and RPC mode: before the session and the user's files are loaded), so the
    import overlaps that work and the I/O before the first request.

    Safe with Python's per-module import locks: the thread only imports the SDK's own graph,
    entered at its top module, and :func:`adapter_class` waits for it before the main thread
    imports any of it, so no two threads ever enter that graph from different ends (the one way
    concurrent imports can deadlock). A failure in the thread is left for the main thread's own
    import to raise."""
    entry = registry.find(provider)
    if entry is None or entry.sdk_module in sys.modules:
        return
    with _preloads_lock:
        if entry.sdk_module in _preloads:
            return
        thread = threading.Thread(
            target=_preload_quietly, args=(entry.sdk_module,), name=f"import {entry.sdk_module}", daemon=True
        )
        _preloads[entry.sdk_module] = thread
    thread.start()


def _preload_quietly(module: str) -> None:
    with contextlib.suppress(Exception):
        importlib.import_module(module)


def wait_for_preloads() -> None:
    """Wait for the SDK imports :func:`preload_sdk_in_background` started."""
    with _preloads_lock:
        threads = list(_preloads.values())
    for thread in threads:
        if thread is not threading.current_thread():
            thread.join()


def adapter_class(provider: str, route: registry.ApiRoute | None = None) -> Callable[..., Provider]:
    """The SDK adapter class a registry entry names (``module:Class``) for one of its APIs (its
    first by default), imported now. Adapters take ``api_key`` (None: none needed), ``base_url``,
    ``timeout``, ``request_log``, ``name`` and ``headers``."""
    adapter = (route or registry.spec(provider).default_route).adapter
    module_name, _, class_name = adapter.partition(":")
    wait_for_preloads()  # the adapter imports its SDK: never while a thread is inside that import
    cls = getattr(importlib.import_module(module_name), class_name)
    assert isinstance(cls, type) and issubclass(cls, SdkProvider), adapter
    return cast("Callable[..., Provider]", cls)


#: Seconds without a byte from the server before a request is given up (``timeout`` in the config).
#: Generous: reasoning models and local servers processing a long prompt can be silent for minutes;
#: a hang is still reported (and retried) rather than waited on forever, and Esc / Ctrl+C abort sooner.
DEFAULT_TIMEOUT = 600.0
CONNECT_TIMEOUT = 10.0


def sdk_timeout(timeout_class: Any, seconds: float | None) -> Any:
    """The SDK's timeout (its own ``Timeout`` class, e.g. ``anthropic.Timeout``): ``seconds`` to read
    (or write) each chunk, at most 10 s to connect."""
    read = DEFAULT_TIMEOUT if seconds is None else float(seconds)
    return timeout_class(read, connect=min(CONNECT_TIMEOUT, read))


NO_KEY = "not-needed"  # local servers take any key; the SDKs insist on one


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context of every model client in the process. The SDKs' HTTP client builds one for
    each client it makes, reading the system's CA bundle (or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``)
    again: 25-70 ms of CPU a client (a subagent's, a compaction model's, each test's). This is that
    context, built the same way once; a context is safe to share between clients and threads."""
    import httpx2  # the SDKs' HTTP client

    return httpx2.create_ssl_context()


class _Closable(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Closable)


class SdkProvider(Generic[ClientT]):
    """What the two SDK adapters share: the key (never shown), base URL, timeout and request log,
    and one client made on first use, without the SDK's own retries (the loop retries)."""

    name: str
    api: str

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        timeout: float | None = None,
        request_log: str | None = None,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._api_key = api_key or NO_KEY
        if name is not None:  # another registry entry served by this adapter (a compatible gateway)
            self.name = name
        self.headers = dict(headers or {})  # sent with every request (a gateway's own headers)
        self.base_url = base_url
        self._timeout = timeout
        self.request_log = request_log
        self._client: ClientT | None = None

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    def _client_options(self, timeout_class: Any, http_client_class: Any = None) -> dict[str, Any]:
        """Keyword arguments for the SDK's client class; with ``http_client_class`` (the SDK's
        ``DefaultAsyncHttpxClient``), the HTTP client the SDK would make, on the shared
        :func:`tls_context`."""
        options: dict[str, Any] = {"api_key": self._api_key, "max_retries": 0}
        if self.base_url:
            options["base_url"] = self.base_url
        if self.headers:
            options["default_headers"] = self.headers
        options["timeout"] = sdk_timeout(timeout_class, self._timeout)
        if http_client_class is not None:
            options["http_client"] = http_client_class(timeout=options["timeout"], verify=tls_context())
        return options

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def count_tokens(self, body: JSONObject) -> int | None:
        """The server's count of ``body``'s input tokens (:class:`TokenCounting`); None: no endpoint."""
        return None


def _is_timeout(error: BaseException) -> bool:
    chain: BaseException | None = error
    while chain is not None:
        if "Timeout" in type(chain).__name__ or isinstance(chain, TimeoutError):
            return True
        chain = chain.__cause__ or chain.__context__
    return False


def connection_error(error: BaseException, *, started: bool, timeout: float | None = None) -> ProviderError:
    detail = str(error) or type(error).__name__
    if _is_timeout(error):
        seconds = f"{DEFAULT_TIMEOUT if timeout is None else timeout:g} s"
        if started:
            return ProviderError(
                "connection", f"timed out: the server sent nothing for {seconds} during the response", True
            )
        return ProviderError("connection", f"timed out: no answer from the server within {seconds}", True)
    if started:
        return ProviderError("connection", f"the server closed the connection mid-reply: {detail}", True)
    return ProviderError("connection", f"could not reach the server: {detail}", True)


def malformed_error(error: BaseException) -> ProviderError:
    """A stream the SDK could not read (invalid JSON in an event, a shape it did not expect): retried."""
    detail = " ".join(str(error).split())[:200] or type(error).__name__
    return ProviderError("malformed", f"the server sent a response that could not be read ({detail})", True)


def is_transport_error(error: BaseException) -> bool:
    """Network failures raised by the HTTP stack under the SDKs (httpx, httpx2, aiohttp), or the OS."""
    if isinstance(error, OSError):
        return True
    return any(
        cls.__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "aiohttp")
        for cls in type(error).__mro__
    )


# -- request log ------------------------------------------------------------------------------


def log_request(path: str | os.PathLike[str] | None, body: JSONObject) -> None:
    """Append ``body`` as one JSON line to ``path`` (AGENT_TUI_LOG_REQUESTS).

    Bodies carry no keys or headers; they are built from session entries, which
    are already redacted, and known secret patterns are redacted again here.
    """
    if not path:
        return
    if redaction_enabled():
        body = redact_value(body)
    target = Path(path).expanduser()
    make_private_dirs(target.parent)
    line = json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n"
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


__all__ = [
    "COUNT_TIMEOUT",
    "NO_KEY",
    "Provider",
    "SdkProvider",
    "TokenCounting",
    "adapter_class",
    "classify",
    "connection_error",
    "error_details",
    "is_transport_error",
    "log_request",
    "retry_after_seconds",
]

"""``agent-tui serve``: textual-serve's server behind a guard any web page cannot pass.

A browser lets every page open a websocket to ``localhost``, so the served app would otherwise
take keys from whatever site the user visits. Every request must therefore carry:

- a ``Host`` that names this server (a DNS-rebinding page reaches us under its own name);
- for the websocket (and any request that has one), an ``Origin`` equal to this server's own
  ``http://HOST:PORT``;
- the per-run secret token printed with the URL (``?token=...``, as Jupyter does); the page then
  keeps it in an HttpOnly, SameSite=Strict cookie, so its websocket and static files carry it.

Anything else is answered 403 before it reaches textual-serve. The server binds to localhost
unless told otherwise.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import re
import secrets
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server, to_int

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

LOCAL_NAMES = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


#: A ``token`` query parameter (ours or a wrong one: a near miss tells how long it is, nothing more).
_TOKEN_PARAM = re.compile(r"([?&]token=)(?!\[REDACTED)[^&#\s\"']+")
TOKEN_SHOWN = "[REDACTED serve-token]"


class TokenFilter(logging.Filter):
    """Rewrites a log record so it never holds the token: aiohttp's access log writes each request
    line (``GET /?token=...``) and its ``Referer`` (the page's own URL, token included)."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def clean(self, text: str) -> str:
        return _TOKEN_PARAM.sub(lambda m: m.group(1) + TOKEN_SHOWN, text).replace(self.token, TOKEN_SHOWN)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = self.clean(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        for name, value in list(vars(record).items()):  # the extras a formatter may show
            if name in ("msg", "args"):
                continue
            if isinstance(value, str) and ("token=" in value or self.token in value):
                setattr(record, name, self.clean(value))
            elif isinstance(value, Mapping) and any(
                isinstance(v, str) and self.token in v for v in value.values()
            ):
                setattr(
                    record, name, {k: self.clean(v) if isinstance(v, str) else v for k, v in value.items()}
                )
        return True


class GuardedServer(Server):
    """textual-serve's ``Server``, with a middleware that checks Host, Origin and the token."""

    def __init__(self, command: str, *, host: str, port: int, title: str, token: str | None = None) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.token = token or secrets.token_urlsafe(32)
        self.cookie = f"agent-tui-token-{port}"  # cookies are not kept apart by port; the name is
        names = {host, *LOCAL_NAMES} if is_loopback(host) else {host}
        if ":" in host and not host.startswith("["):
            names.add(f"[{host}]")
        self.hosts = {f"{name}:{port}" for name in names}
        self.origins = {f"http://{name}" for name in self.hosts}

    @property
    def url(self) -> str:
        """The address to open: the page, with the token."""
        name = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"http://{name}:{self.port}/?token={self.token}"

    def initialize_logging(self) -> None:
        """textual-serve's logging, with the token taken out of every record it writes."""
        super().initialize_logging()
        token_filter = TokenFilter(self.token)
        for handler in logging.getLogger().handlers:
            handler.addFilter(token_filter)
        logging.getLogger("aiohttp.access").addFilter(token_filter)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard_middleware())
        return app

    def refusal(self, request: web.Request) -> str | None:
        """Why ``request`` is refused, or None when it may pass."""
        if request.host not in self.hosts:
            return "unknown host"
        origin = request.headers.get("Origin")
        is_websocket = request.headers.get("Upgrade", "").lower() == "websocket"
        if origin is not None and origin not in self.origins:
            return "foreign origin"
        if is_websocket and origin is None:
            return "no origin"
        given = request.query.get("token") or request.cookies.get(self.cookie) or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return "no valid token"
        return None

    def _guard_middleware(self) -> Any:
        @web.middleware
        async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
            reason = self.refusal(request)
            if reason is not None:
                raise web.HTTPForbidden(
                    text=f"agent-tui serve: refused ({reason}); open the URL it printed\n"
                )
            response = await handler(request)
            if request.query.get("token") and not response.prepared:
                response.set_cookie(self.cookie, self.token, httponly=True, samesite="Strict", path="/")
            return response

        return guard

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """textual-serve's page, with its addresses on the host the browser used (so the token's
        cookie goes with them) rather than the one the server was started with."""
        font_size = to_int(request.query.get("fontsize", "16"), 16)
        return {
            "font_size": font_size,
            "app_websocket_url": f"ws://{request.host}{request.app.router['websocket'].url_for()}",
            "config": {"static": {"url": f"http://{request.host}/static/"}},
            "application": {"name": self.title},
        }

    async def on_startup(self, app: web.Application) -> None:
        print(f"agent-tui serve: open {self.url}", flush=True)
        if not is_loopback(self.host):
            print(
                f"agent-tui serve: listening on {self.host}, not only this machine: anyone who has the URL"
                " can use the app",
                flush=True,
            )
        print("agent-tui serve: Ctrl+C to stop", flush=True)


def serve(command: str, host: str, port: int) -> int:
    try:
        GuardedServer(command, host=host, port=port, title="agent-tui").serve()
    except OSError as e:
        print(f"agent-tui serve: cannot listen on {host}:{port}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0

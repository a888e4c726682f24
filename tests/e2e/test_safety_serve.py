"""``agent-tui serve`` refuses what a foreign web page can send: a foreign Origin or Host, no token."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from agent_tui.tui.serve import GuardedServer
from tests.support.serve_support import held_image, served

pytestmark = pytest.mark.timeout(90)


async def _http_status(url: str, **headers: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as client, client.get(url, headers=headers) as response:
        return response.status, response.headers.get("Set-Cookie", "")


async def _ws_status(url: str, origin: str | None, cookies: dict[str, str] | None = None) -> int:
    async with aiohttp.ClientSession(cookies=cookies) as client:
        try:
            async with client.ws_connect(url, origin=origin) as ws:
                await ws.close()
                return 101
        except aiohttp.WSServerHandshakeError as e:
            return e.status


def test_serve_refuses_a_foreign_origin_a_foreign_host_and_a_missing_token(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        port, url, token = server.port, server.url, server.token
        base = f"http://127.0.0.1:{port}"
        ws = f"ws://127.0.0.1:{port}/ws?width=80&height=24"

        async def checks() -> None:
            # the page: the token is needed, and the Host must be this server (DNS rebinding)
            assert (await _http_status(f"{base}/"))[0] == 403
            assert (await _http_status(f"{base}/?token=wrong"))[0] == 403
            assert (await _http_status(url, Host=f"evil.example:{port}"))[0] == 403
            assert (await _http_status(url, Origin="https://evil.example"))[0] == 403
            status, cookie = await _http_status(url)
            assert status == 200
            assert token in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert (await _http_status(f"{base}/static/js/textual.js"))[0] == 403
            # the websocket: a foreign Origin, no Origin, no token or a wrong one are refused
            assert await _ws_status(f"{ws}&token={token}", origin="https://evil.example") == 403
            assert await _ws_status(f"{ws}&token={token}", origin=f"http://127.0.0.1:{port + 1}") == 403
            assert await _ws_status(f"{ws}&token={token}", origin=None) == 403
            assert await _ws_status(ws, origin=base) == 403
            assert await _ws_status(f"{ws}&token=x{token}", origin=base) == 403
            assert (
                await _ws_status(
                    ws, origin="https://evil.example", cookies={f"agent-tui-token-{port}": token}
                )
                == 403
            )
            # with both it connects: the token in the URL, or in the cookie the page set
            assert await _ws_status(f"{ws}&token={token}", origin=base) == 101
            assert await _ws_status(ws, origin=base, cookies={f"agent-tui-token-{port}": token}) == 101

        asyncio.run(checks())


def test_each_run_has_its_own_long_token_and_listens_on_localhost_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import agent_tui.tui.serve as serve_module
    from agent_tui.tui import launch

    first = GuardedServer("x", host="localhost", port=8000, title="t")
    second = GuardedServer("x", host="localhost", port=8000, title="t")
    assert first.token != second.token and len(first.token) >= 40
    assert first.url == f"http://localhost:8000/?token={first.token}"
    assert "http://127.0.0.1:8000" in first.origins and "http://localhost:8000" in first.origins
    wide = GuardedServer("x", host="192.168.1.5", port=8000, title="t")
    assert wide.origins == {"http://192.168.1.5:8000"}
    seen: list[tuple[str, int]] = []

    def fake_serve(command: str, host: str, port: int) -> int:
        seen.append((host, port))
        return 0

    monkeypatch.setattr(serve_module, "serve", fake_serve)
    assert launch.serve([]) == 0
    assert seen == [("localhost", 8000)]


def test_in_a_browser_the_printed_url_connects_and_another_page_cannot(tmp_path: Path) -> None:
    """Headless Chromium: the page at the printed URL opens its websocket (the token travels in the
    cookie the page set); a page of another origin that even knows the token is refused."""
    import subprocess

    from tests.support.chromium import FLAGS, chromium

    with served(tmp_path) as server:
        subprocess.run(
            [chromium(), *FLAGS, "--virtual-time-budget=8000", "--dump-dom", server.url],
            capture_output=True,
            timeout=60,
        )
        assert server.wait_for(rb'GET /ws\?width=\d+&height=\d+ HTTP/1.1" 101') is not None, server.output
        refused = rb'GET /ws\?width=80&height=24&token=\[REDACTED serve-token\] HTTP/1.1" 403'
        page = tmp_path / "elsewhere.html"
        with held_image(lambda: server.wait_for(refused, timeout=20)) as image:
            # the image's answer waits for the handshake's: a websocket keeps no page from loading,
            # and Chromium dumped the DOM and quit before it had even connected, on a busy machine
            page.write_text(
                "<html><body><pre id=out>pending</pre><script>"
                f"var ws = new WebSocket('ws://127.0.0.1:{server.port}/ws?width=80&height=24&token={server.token}');"
                "ws.onopen = function () { document.getElementById('out').textContent = 'OPEN'; };"
                "ws.onerror = function () { document.getElementById('out').textContent = 'REFUSED'; };"
                f"</script><img src='{image}'></body></html>"
            )
            dom = subprocess.run(
                [chromium(), *FLAGS, "--virtual-time-budget=8000", "--dump-dom", page.as_uri()],
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout
        # the server refused the handshake (the page may dump its DOM before the error event fires)
        assert server.wait_for(refused) is not None
        assert '<pre id="out">OPEN</pre>' not in dom


def test_the_access_log_never_repeats_the_token(tmp_path: Path) -> None:
    """The URL with its token is printed once; the requests logged after it show it redacted."""
    with served(tmp_path) as server:
        url, token = server.url, server.token

        async def requests() -> None:
            assert (await _http_status(url))[0] == 200
            assert (await _http_status(f"{url}&fontsize=12", Referer=url))[0] == 200
            assert (await _http_status(url.replace(token, "wrong" + token[:10])))[0] == 403

        asyncio.run(requests())
        assert server.wait_for(rb'" 403[^\n]*\n', timeout=15) is not None, server.output
        assert server.wait_for(rb"fontsize=12[^\n]*\n", timeout=15) is not None, server.output
        assert server.output.count(token.encode()) == 1, server.output  # the line that says "open"
        assert server.output.count(token[:10].encode()) == 1, server.output  # a wrong one too
        assert b"token=[REDACTED serve-token] HTTP" in server.output, server.output  # once, not twice

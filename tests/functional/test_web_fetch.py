"""web_fetch against a web server of the test's own on 127.0.0.1: HTML as Markdown, redirects on
the same host followed and to another host reported, a huge page capped, a key redacted, only
text and JSON; and the permission question it makes (one host, ``WebFetch(domain:...)``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agent_tui.agent.permissions import Decision, PermissionMode, PermissionRequest, Permissions
from agent_tui.agent.tools.base import ToolContext, ToolError, ToolResult
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.agent.tools.web_fetch import MAX_BYTES, WebFetchTool
from tests.support.agent_support import Harness
from tests.support.fake_model_server import anthropic_stream, text, tool_use

KEY = "sk-ant-api03-" + "A1b2C3d4" * 11 + "AA"
PAGE = """<!doctype html><html><head><title>The Guide</title><style>body{color:red}</style>
<script>document.write("tracking")</script></head><body>
<h2>Install</h2><p>Run <code>make setup</code>, then <a href="/docs">read the docs</a>.</p>
<ul><li>one</li><li>two</li></ul><noscript>enable scripts</noscript></body></html>"""


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, kind: str, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the fetch stopped reading
            self.wfile.write(body)

    def do_GET(self) -> None:
        port = self.headers.get("Host", "127.0.0.1:0").rsplit(":", 1)[1]
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE.encode()),
            "/json": (200, "application/json", json.dumps({"ok": True, "n": 3}).encode()),
            "/secret": (200, "text/plain", f"token = {KEY}\n".encode()),
            "/image": (200, "image/png", b"\x89PNG\r\n\x1a\n"),
            "/missing": (404, "text/html", b"<h1>Not here</h1>"),
        }
        if self.path == "/huge":
            line = b"x" * 99 + b"\n"
            self._send(200, "text/plain", line * (MAX_BYTES // 100 * 3))  # 6 MB
        elif self.path == "/minified":
            self._send(200, "application/json", json.dumps(["item"] * 40_000).encode())  # 312.5 KB, one line
        elif self.path == "/same":
            self._send(302, "text/plain", b"", Location="/page")
        elif self.path == "/loop":
            self._send(302, "text/plain", b"", Location="/loop")
        elif self.path == "/elsewhere":
            self._send(302, "text/plain", b"", Location=f"http://localhost:{port}/page")
        elif self.path in routes:
            self._send(*routes[self.path])
        else:
            self._send(404, "text/plain", b"no such page")


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def fetch(url: str) -> ToolResult:
    return asyncio.run(WebFetchTool().execute({"url": url, "prompt": "how to install"}, ToolContext(".")))


def said(result: ToolResult) -> str:
    return "".join(str(b.get("text", "")) for b in result.content)


def test_an_html_page_comes_back_as_markdown(site: str) -> None:
    text = said(fetch(f"{site}/page"))
    assert text.startswith(f"URL: {site}/page\nContent-Type: text/html\n\n# The Guide\n")
    assert "## Install" in text and "Run `make setup`, then [read the docs](/docs)." in text
    assert "- one\n- two" in text
    assert "tracking" not in text and "color:red" not in text and "enable scripts" not in text


def test_json_is_given_as_it_is_and_a_same_host_redirect_is_followed(site: str) -> None:
    assert json.loads(said(fetch(f"{site}/json")).split("\n\n", 1)[1]) == {"ok": True, "n": 3}
    followed = said(fetch(f"{site}/same"))
    assert followed.startswith(f"URL: {site}/page\n") and "## Install" in followed
    with pytest.raises(ToolError, match="more than 5 redirects"):
        fetch(f"{site}/loop")


def test_a_redirect_to_another_host_is_reported_not_followed(site: str) -> None:
    result = fetch(f"{site}/elsewhere")
    text = said(result)
    port = site.rsplit(":", 1)[1]
    assert f"redirects (HTTP 302) to another host: http://localhost:{port}/page" in text
    assert "## Install" not in text and not result.is_error


def test_a_huge_page_is_capped(site: str) -> None:
    result = fetch(f"{site}/huge")
    text = said(result)
    assert "only the first 2.0MB of the page were read" in text
    assert "showing the first 512 of 20972 lines (50.0KB limit)" in text  # 2 MB of 100-byte lines
    assert len(text.encode()) < 60 * 1024 and result.details is not None and "truncation" in result.details


def test_one_long_line_shows_its_beginning(site: str) -> None:
    text = said(fetch(f"{site}/minified"))
    assert text.split("\n\n", 1)[1].startswith('["item", "item", ')
    assert "[the first line is 312.5KB: showing its first 50.0KB]" in text
    assert 50 * 1024 < len(text.encode()) < 52 * 1024


def test_a_key_in_the_page_is_redacted(site: str) -> None:
    text = said(fetch(f"{site}/secret"))
    assert KEY not in text and "[REDACTED anthropic-key]" in text


def test_only_text_and_json_and_http_errors_say_so(site: str) -> None:
    with pytest.raises(ToolError, match=r"image/png .*text and JSON only"):
        fetch(f"{site}/image")
    missing = fetch(f"{site}/missing")
    assert missing.is_error and "HTTP 404" in said(missing) and "# Not here" in said(missing)
    with pytest.raises(ToolError, match="http:// or https://"):
        fetch("file:///etc/passwd")
    with pytest.raises(ToolError, match="failed"):
        fetch("http://127.0.0.1:1/nothing-listens")


def test_it_is_a_default_tool_with_claude_codes_name() -> None:
    tools = {t.name: t for t in default_tools()}
    tool = tools["web_fetch"]
    assert list(tools)[-1] == "web_fetch" and tool.claude_name == "WebFetch" and tool.acp_kind == "fetch"
    assert tool.file_effect == "none" and not tool.reads_only
    assert tool.declaration()["parameters"]["required"] == ["url"]
    from agent_tui.acp.updates import tool_kind, tool_title  # an editor shows it as a fetch

    assert tool_kind("web_fetch") == "fetch"
    assert tool_title("web_fetch", {"url": "https://example.com/a"}) == "web_fetch https://example.com/a"


def test_the_permission_question_names_one_host_and_its_rule(site: str) -> None:
    asked: list[PermissionRequest] = []

    async def approver(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision.ALLOW_SESSION

    tool = WebFetchTool()
    for mode in (PermissionMode.ASK, PermissionMode.PLAN):
        asked.clear()
        permissions = Permissions(mode, approver)

        def check(url: str, permissions: Permissions = permissions) -> bool:
            verdict = asyncio.run(permissions.check("web_fetch", {"url": url}, ".", info=tool))
            return verdict.allowed

        assert check(f"{site}/page") and len(asked) == 1  # plan mode asks too: it changes nothing
        request = asked[0]
        assert (
            request.rule == "WebFetch(domain:127.0.0.1)"
            and "fetches a web page from 127.0.0.1" in request.reason
        )
        assert check(f"{site}/json") and len(asked) == 1  # the session's allow covers that host
        assert check("http://localhost:1/x") and len(asked) == 2  # and no other
        assert asked[1].rule == "WebFetch(domain:localhost)"


async def test_the_model_calls_it_and_the_session_keeps_the_text_redacted(
    site: str, anthropic_harness: Harness
) -> None:
    anthropic_harness.server.push(
        anthropic_stream(tool_use("toolu_1", "web_fetch", {"url": f"{site}/secret"})),
        anthropic_stream(text("Read it.")),
    )
    await anthropic_harness.run("what is on the page?")
    (result,) = anthropic_harness.messages("toolResult")
    assert result["toolName"] == "web_fetch" and not result["isError"]
    assert "[REDACTED anthropic-key]" in result["content"][0]["text"]
    assert KEY not in anthropic_harness.session.path.read_text() and KEY not in json.dumps(
        anthropic_harness.server.requests[-1].body
    )

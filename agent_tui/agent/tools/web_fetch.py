"""web_fetch{url, prompt?}: a web page as readable text, as Claude Code's WebFetch (without its
summary by a small model: the text itself comes back, and ``prompt`` only says what was sought).

- ``http``/``https`` only; a redirect is followed up to :data:`MAX_REDIRECTS` times on the same
  host, and one to another host is reported (the model may fetch it, with its own permission);
- :data:`TIMEOUT` seconds to connect and between reads, at most :data:`MAX_BYTES` read;
- ``text/*`` and JSON only: HTML (and XHTML) becomes Markdown (``markdownify``, scripts and styles
  dropped), the rest is given as it is;
- secrets redacted (``store.redact``) and the text cut as ``read`` cuts a file (2,000 lines / 50 KB).

The permission policy asks for each host unless a ``WebFetch(domain:HOST)`` rule allows it (the
request's ``rule``, :func:`request_fields`). No search engine: search is an MCP server's job.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
)
from agent_tui.agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head
from agent_tui.store.redact import redact_text

MAX_REDIRECTS = 5
TIMEOUT = 10.0
MAX_BYTES = 2 * 1024 * 1024
REDIRECTS = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
DROPPED_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "head")


def host_of(url: str) -> str:
    """The host a URL names, lower case (empty when it names none)."""
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


def request_fields(arguments: Mapping[str, Any]) -> dict[str, str]:
    """What the permission question about a fetch shows and keeps: ``summary`` (the URL),
    ``reason``, ``scope`` (one host: "allow for this session" covers that host only) and
    ``rule`` (Claude Code's ``WebFetch(domain:HOST)``, what "always allow" writes)."""
    url = str(arguments.get("url", ""))
    host = host_of(url) or "?"
    return {
        "summary": url,
        "reason": f"fetches a web page from {host}",
        "scope": f"web_fetch:{host}",
        "rule": f"WebFetch(domain:{host})",
    }


class WebFetchTool(Tool):
    name = "web_fetch"
    snippet = "Fetch a web page (http/https) as readable text"
    description = (
        "Fetch a URL (http or https) and return its content as text: HTML converted to Markdown, JSON "
        "and other text as they are. Only text and JSON are returned. Redirects on the same host are "
        f"followed (up to {MAX_REDIRECTS}); a redirect to another host is reported, not followed: "
        "fetch the URL it names if you want it. Output is truncated to the first "
        f"{DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB. `prompt` says what you are "
        "looking for; the page's whole text comes back, not a summary."
    )
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The URL to fetch (http or https)"},
            "prompt": {"type": "string", "description": "What you are looking for in the page (optional)"},
        },
        "required": ["url"],
    }

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        url = str(args["url"]).strip()
        parts = urlsplit(url) if url else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ToolError(f"Invalid URL {url!r}: web_fetch takes an http:// or https:// URL with a host")
        ctx.check()
        fetch = asyncio.ensure_future(_fetch(url))
        abort = asyncio.ensure_future(ctx.signal.wait())
        try:
            await asyncio.wait({fetch, abort}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            abort.cancel()
            if not fetch.done():
                fetch.cancel()
        if not fetch.done() or fetch.cancelled():
            raise ToolError("Operation aborted")
        return fetch.result()


async def _fetch(url: str) -> ToolResult:
    import httpx2  # the SDKs' HTTP client (imported on the first fetch)

    from agent_tui.providers.base import tls_context  # the CA bundle read once, not once a fetch

    timeout = httpx2.Timeout(TIMEOUT)
    headers = {"User-Agent": _user_agent(), "Accept": "text/html, text/*;q=0.9, application/json;q=0.9"}
    async with httpx2.AsyncClient(
        timeout=timeout, headers=headers, follow_redirects=False, verify=tls_context()
    ) as client:
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            try:
                async with client.stream("GET", current) as response:
                    if response.status_code in REDIRECTS and response.headers.get("location"):
                        target = urljoin(current, response.headers["location"])
                        if host_of(target) != host_of(current) or urlsplit(target).scheme not in (
                            "http",
                            "https",
                        ):
                            return _redirected(url, current, target, response.status_code)
                        current = target
                        continue
                    return await _read(current, response)
            except httpx2.TimeoutException as e:
                raise ToolError(f"Fetching {redact_text(current)[0]} timed out after {TIMEOUT:g} s") from e
            except httpx2.HTTPError as e:
                why = " ".join(str(e).split()) or type(e).__name__
                raise ToolError(f"Fetching {redact_text(current)[0]} failed: {redact_text(why)[0]}") from e
        raise ToolError(f"Fetching {redact_text(url)[0]}: more than {MAX_REDIRECTS} redirects")


def _user_agent() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("agent-tui")  # (agent_tui/__init__ would import the SDK face)
    except PackageNotFoundError:
        number = "0"
    return f"agent-tui/{number} (web_fetch)"


def _redirected(url: str, at: str, target: str, status: int) -> ToolResult:
    text = (
        f"{at} redirects (HTTP {status}) to another host: {target}\n"
        "It was not followed. To read it, call web_fetch with that URL (its host may need the user's permission)."
    )
    return ToolResult.text(redact_text(text)[0], {"url": url, "redirect": redact_text(target)[0]})


async def _read(url: str, response: Any) -> ToolResult:
    kind = str(response.headers.get("content-type", "")).split(";")[0].strip().lower()
    if not _is_text(kind):
        raise ToolError(
            f"{redact_text(url)[0]} is {kind or 'of no stated type'} (HTTP {response.status_code}): web_fetch "
            "returns text and JSON only"
        )
    body = bytearray()
    cut = False
    async for chunk in response.aiter_bytes():  # decoded (gzip...): the cap is on what is kept
        body += chunk
        if len(body) > MAX_BYTES:
            del body[MAX_BYTES:]
            cut = True
            break
    charset = response.charset_encoding
    if kind in HTML_TYPES:
        text = html_to_markdown(bytes(body), charset)
    else:
        text = bytes(body).decode(charset or "utf-8", "replace")
    text = redact_text(text)[0]
    cap = truncate_head(text)
    lines = [f"URL: {redact_text(url)[0]}", f"Content-Type: {kind}"]
    if response.status_code >= 400:
        lines.append(f"HTTP {response.status_code} {response.reason_phrase}")
    content = cap.content
    notes = []
    if cut:
        notes.append(f"only the first {format_size(MAX_BYTES)} of the page were read")
    if cap.first_line_exceeds_limit:  # one long line (minified JSON or HTML): its beginning
        content = text.encode("utf-8", "surrogatepass")[:DEFAULT_MAX_BYTES].decode("utf-8", "ignore")
        notes.append(
            f"the first line is {format_size(len(text.split(chr(10), 1)[0].encode('utf-8', 'surrogatepass')))}: "
            f"showing its first {format_size(DEFAULT_MAX_BYTES)}"
        )
    elif cap.truncated:
        notes.append(
            f"showing the first {cap.output_lines} of {cap.total_lines} lines "
            f"({format_size(DEFAULT_MAX_BYTES)} limit)"
        )
    out = "\n".join(lines) + "\n\n" + (content or "(empty)")
    if notes:
        out += f"\n\n[{'; '.join(notes)}]"
    details: JSONObject = {"url": redact_text(url)[0], "contentType": kind, "status": response.status_code}
    if cap.truncated:
        details["truncation"] = cap.to_json()
    return ToolResult.text(out, details, is_error=response.status_code >= 400)


def _is_text(kind: str) -> bool:
    return (
        kind.startswith("text/") or kind in HTML_TYPES or kind == "application/json" or kind.endswith("+json")
    )


_BLANK_RUNS = re.compile(r"\n{3,}")


def html_to_markdown(data: bytes, charset: str | None = None) -> str:
    """An HTML page as Markdown: its title as a heading, scripts, styles and the like dropped."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(data, "html.parser", from_encoding=charset)
    title = soup.title.get_text(" ", strip=True) if soup.title is not None else ""
    for tag in soup(list(DROPPED_TAGS)):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    text = _BLANK_RUNS.sub("\n\n", "\n".join(line.rstrip() for line in text.splitlines())).strip()
    return f"# {title}\n\n{text}" if title and not text.startswith(f"# {title}") else text


__all__ = [
    "MAX_BYTES",
    "MAX_REDIRECTS",
    "TIMEOUT",
    "WebFetchTool",
    "host_of",
    "html_to_markdown",
    "request_fields",
]

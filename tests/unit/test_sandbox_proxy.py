"""The sandbox's network allow-list (agent.sandbox_proxy): what the proxy reads of a request and
which hosts the permission rules let through. The real proxy, bwrap and curl: test_sandbox_network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent import sandbox_forward
from agent_tui.agent.permission_rules import PermissionRules
from agent_tui.agent.permissions import Decision
from agent_tui.agent.sandbox_proxy import (
    BadRequest,
    NetworkGate,
    Verdict,
    normal_host,
    parse_domain,
    parse_request,
    refusal,
)


def rules(
    tmp_path: Path,
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    ask: list[str] | None = None,
    *,
    project: dict[str, Any] | None = None,
    user_settings: dict[str, Any] | None = None,
    trusted: bool = False,
) -> PermissionRules:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (work / ".claude").mkdir(parents=True, exist_ok=True)
    if project is not None:
        (work / ".claude" / "settings.json").write_text(json.dumps(project))
    if user_settings is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(user_settings))
    data = {"permissions": {"allow": allow or [], "deny": deny or [], "ask": ask or []}}
    return PermissionRules.load(str(work), config_data=data, home=home, trusted=lambda: trusted)


def gate(found: PermissionRules | None) -> NetworkGate:
    return NetworkGate(lambda: found)


# -- the request ----------------------------------------------------------------------------------


def test_connect_names_host_and_port() -> None:
    request = parse_request(b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n")
    assert (request.method, request.host, request.port, request.tunnel) == ("CONNECT", "pypi.org", 443, True)
    assert parse_request(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").host == "::1"
    for bad in (b"CONNECT pypi.org HTTP/1.1", b"CONNECT pypi.org:0 HTTP/1.1", b"CONNECT a:99999 HTTP/1.1"):
        with pytest.raises(BadRequest, match="not host:port"):
            parse_request(bad + b"\r\n\r\n")


def test_an_absolute_uri_is_sent_in_origin_form_without_proxy_headers() -> None:
    head = (
        b"GET http://Example.COM:8080/a/b?q=1 HTTP/1.1\r\nHost: example.com:8080\r\n"
        b"Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\nAccept: */*\r\n\r\n"
    )
    request = parse_request(head)
    assert (request.host, request.port, request.tunnel) == ("example.com", 8080, False)
    lines = request.head.split(b"\r\n")
    assert lines[0] == b"GET /a/b?q=1 HTTP/1.1"
    assert b"Accept: */*" in lines and b"Connection: close" in lines
    assert not any(line.lower().startswith(b"proxy-") for line in lines)
    bare = parse_request(b"GET http://user@example.org HTTP/1.0\r\n\r\n")
    assert bare.port == 80 and bare.head.startswith(b"GET / HTTP/1.0\r\nHost: example.org\r\n")


def test_requests_the_proxy_does_not_serve() -> None:
    for head, why in (
        (b"GET /index.html HTTP/1.1\r\n\r\n", "http://HOST"),  # origin-form: not a proxy request
        (b"GET https://example.com/ HTTP/1.1\r\n\r\n", "http://HOST"),  # TLS is CONNECT's
        (b"GET http://example.com/ HTTP/2\r\n\r\n", "HTTP/1.x"),
        (b"hello\r\n\r\n", "HTTP/1.x"),
    ):
        with pytest.raises(BadRequest, match=why.replace(".", r"\.")):
            parse_request(head)


def test_host_names_and_allowed_domains_entries() -> None:
    assert normal_host("Example.COM.") == "example.com"
    assert normal_host("[::1]") == "::1" and normal_host("127.0.0.1") == "127.0.0.1"
    for bad in ("", "a b", "evil.com/x", "exa%6dple.com", "-x.com", "a..b"):
        assert normal_host(bad) is None, bad
    assert parse_domain("*.npmjs.org") == ("*.npmjs.org", None)
    assert parse_domain("api.github.com:443") == ("api.github.com", 443)
    for bad in ("*", "http://x.com", "x.com:70000", "*.", "a b"):
        with pytest.raises(ValueError):
            parse_domain(bad)


# -- the decision ---------------------------------------------------------------------------------


def test_nothing_passes_without_a_rule(tmp_path: Path) -> None:
    none = gate(None)
    assert not none.opens() and not none.decide("example.com", 443).allowed
    empty = gate(rules(tmp_path))
    verdict = empty.decide("example.com", 443)
    assert not empty.opens() and not verdict.allowed
    assert verdict.rule == "WebFetch(domain:example.com)" and "no permission rule" in verdict.reason


@pytest.mark.parametrize(
    "target", ["*.com:443", "*:443", "example.com)\x07:443", "a\tb.com:443", "exa%6dple.com:443", "..:443"]
)
def test_a_host_that_is_no_host_name_is_refused_never_asked(tmp_path: Path, target: str) -> None:
    # a hostile command's CONNECT must not reach the question, whose "always" would write
    # WebFetch(domain:*.com) (or a rule with a control character) into the local settings
    request = parse_request(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode("latin-1"))
    verdict = gate(rules(tmp_path)).decide(request.host, request.port)
    assert not verdict.allowed and not verdict.askable and "is not a host name" in verdict.reason
    assert verdict.rule == ""


def test_a_domain_rule_allows_that_host_and_a_wildcard_its_subdomains(tmp_path: Path) -> None:
    found = gate(rules(tmp_path, allow=["WebFetch(domain:pypi.org)", "WebFetch(domain:*.github.com)"]))
    assert found.opens()
    assert found.decide("PyPI.org.", 443).allowed
    assert found.decide("api.github.com", 443).allowed and found.decide("a.b.github.com", 80).allowed
    assert not found.decide("github.com", 443).allowed  # *.x is the subdomains only (Claude Code's)
    assert (
        not found.decide("evilgithub.com", 443).allowed and not found.decide("pypi.org.evil.com", 443).allowed
    )
    assert not found.decide("files.pythonhosted.org", 443).allowed


def test_deny_beats_allow_and_ask_refuses(tmp_path: Path) -> None:
    found = gate(
        rules(
            tmp_path,
            allow=["WebFetch(domain:*.example.com)", "WebFetch(domain:docs.example.org)"],
            deny=["WebFetch(domain:upload.example.com)"],
            ask=["WebFetch(domain:docs.example.org)"],
        )
    )
    denied = found.decide("upload.example.com", 443)
    assert not denied.allowed and denied.reason.startswith("denied by WebFetch(domain:upload.example.com)")
    assert found.decide("www.example.com", 443).allowed
    asked = found.decide("docs.example.org", 443)
    assert not asked.allowed and asked.reason.endswith("asks first") and asked.ask_rule
    everything = gate(rules(tmp_path, allow=["WebFetch(domain:pypi.org)"], deny=["WebFetch"]))
    assert not everything.decide("pypi.org", 443).allowed  # a bare deny: every host


def test_a_bare_webfetch_allow_does_not_open_the_sandbox(tmp_path: Path) -> None:
    found = gate(rules(tmp_path, allow=["WebFetch"]))
    assert not found.opens() and not found.decide("example.com", 443).allowed


def test_claude_codes_allowed_domains_with_a_port(tmp_path: Path) -> None:
    settings = {"sandbox": {"network": {"allowedDomains": ["registry.npmjs.org:443", "*.crates.io", 7]}}}
    loaded = rules(tmp_path, user_settings=settings)
    found = gate(loaded)
    assert found.opens()
    assert (
        found.decide("registry.npmjs.org", 443).allowed and not found.decide("registry.npmjs.org", 80).allowed
    )
    assert found.decide("static.crates.io", 80).allowed
    assert any("allowedDomains" in w and "7" in w for w in loaded.warnings)  # the bad one, named
    assert "sandbox.network.allowedDomains registry.npmjs.org:443" in loaded.describe()


def test_a_projects_allow_rules_count_only_once_trusted(tmp_path: Path) -> None:
    project = {
        "permissions": {
            "allow": ["WebFetch(domain:evil.example)"],
            "deny": ["WebFetch(domain:blocked.example)"],
        },
        "sandbox": {"network": {"allowedDomains": ["exfil.example"]}},
    }
    untrusted = gate(rules(tmp_path, allow=["WebFetch(domain:blocked.example)"], project=project))
    for host in ("evil.example", "exfil.example"):
        verdict = untrusted.decide(host, 443)
        assert not verdict.allowed and "not trusted" in verdict.reason, host
    assert not untrusted.decide("blocked.example", 443).allowed  # the project's deny applies anyway
    trusted = gate(rules(tmp_path, project=project, trusted=True))
    assert trusted.decide("evil.example", 443).allowed and trusted.decide("exfil.example", 443).allowed


def test_a_rule_added_to_a_file_applies_to_the_next_connection(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()

    def read() -> PermissionRules:
        found = PermissionRules.load(str(work), home=home)
        found.reader = read
        return found

    live = gate(read())
    assert not live.decide("a.example", 443).allowed
    settings = {"permissions": {"allow": ["WebFetch(domain:a.example)"]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))  # read again: it changed
    assert live.decide("a.example", 443).allowed


# -- the refusal ----------------------------------------------------------------------------------


def test_a_refusal_names_the_rule_and_the_forwarder_says_it_once() -> None:
    verdict = Verdict(
        False, "example.com", 443, "WebFetch(domain:example.com)", "no permission rule allows it"
    )
    answer = refusal(verdict, "tok123")
    head, body = answer.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 403 Forbidden\r\n") and b"Content-Length: %d" % len(body) in head
    assert b"refused example.com:443" in body and b"WebFetch(domain:example.com)" in body
    line = sandbox_forward.notice(answer, "tok123")
    assert line is not None and "example.com:443" in line and "WebFetch(domain:example.com)" in line
    assert sandbox_forward.notice(answer, "other") is None  # a server's look-alike header says nothing
    assert sandbox_forward.notice(b"HTTP/1.1 200 Connection Established\r\n\r\n", "tok123") is None


# -- a host no rule allows: held while the user is asked ------------------------------------------


async def _upstream() -> tuple[Any, int]:
    """A server on 127.0.0.1 that answers each connection with ``hello``."""
    import asyncio

    async def serve(_r: Any, w: Any) -> None:
        w.write(b"hello")
        await w.drain()
        w.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _connect(path: str, token: str, port: int) -> bytes:
    """A forwarder's connection: its command's line, ``CONNECT``, then all the proxy answers."""
    import asyncio

    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(f"AGENT-TUI {token}\r\nCONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return data


def _asking(
    tmp_path: Path,
    answers: list[str],
    mode: str = "ask",
    *,
    ask: list[str] | None = None,
    deny: list[str] | None = None,
) -> tuple[NetworkGate, list[Any]]:
    from agent_tui.agent.permissions import PermissionMode, Permissions

    asked: list[Any] = []

    async def approver(request: Any) -> Decision:
        import asyncio

        asked.append(request)
        await asyncio.sleep(0.2)  # the user reads the question: other connections come meanwhile
        return Decision(answers.pop(0))

    found = rules(tmp_path, deny=deny, ask=ask)
    policy = Permissions(PermissionMode(mode), approver, rules=found)
    held = NetworkGate(lambda: found, lambda: policy)
    held.policy = policy  # type: ignore[attr-defined]  # (kept alive with the gate)
    return held, asked


def _run(held: NetworkGate, connections: int, port_holder: list[int] | None = None) -> list[bytes]:
    import asyncio

    from agent_tui.agent.sandbox_proxy import SERVER

    async def main() -> list[bytes]:
        server, port = await _upstream()
        path = SERVER.socket_for(held)
        token = held.register(["bash", "-c", f"curl https://127.0.0.1:{port}/"])
        try:
            return list(await asyncio.gather(*(_connect(path, token, port) for _ in range(connections))))
        finally:
            server.close()

    return asyncio.run(main())


def test_a_host_no_rule_allows_is_asked_and_allowed_once(tmp_path: Path) -> None:
    held, asked = _asking(tmp_path, ["allow-once"])
    [answer] = _run(held, 1)
    assert answer.startswith(b"HTTP/1.1 200 Connection Established\r\n\r\n") and answer.endswith(b"hello")
    [request] = asked
    assert request.tool == "bash" and request.rule == "WebFetch(domain:127.0.0.1)"
    assert "connects to 127.0.0.1:" in request.reason and "curl https://127.0.0.1:" in request.details()
    assert held.session_hosts == set()  # once: this command only


def test_two_connections_to_one_host_share_one_question(tmp_path: Path) -> None:
    held, asked = _asking(tmp_path, ["allow-session"])
    answers = _run(held, 2)
    assert len(asked) == 1
    assert all(a.endswith(b"hello") for a in answers)
    assert held.session_hosts == {"127.0.0.1"}
    assert held.decide("127.0.0.1", 1).allowed  # the next command is not asked


def test_a_denied_host_gets_the_403_naming_the_rule(tmp_path: Path) -> None:
    held, asked = _asking(tmp_path, ["deny"])
    [answer] = _run(held, 1)
    assert len(asked) == 1
    assert answer.startswith(b"HTTP/1.1 403 Forbidden") and b"WebFetch(domain:127.0.0.1)" in answer
    assert b"the user did not allow it" in answer


def test_always_keeps_the_rule_in_the_local_settings(tmp_path: Path) -> None:
    held, _ = _asking(tmp_path, ["allow-always"])
    [answer] = _run(held, 1)
    assert answer.endswith(b"hello")
    kept = json.loads((tmp_path / "work" / ".claude" / "settings.local.json").read_text())
    assert kept["permissions"]["allow"] == ["WebFetch(domain:127.0.0.1)"]


@pytest.mark.parametrize("mode", ["read-only", "plan", "auto"])
def test_read_only_plan_and_auto_refuse_without_asking(tmp_path: Path, mode: str) -> None:
    held, asked = _asking(tmp_path, ["allow-once"], mode)
    [answer] = _run(held, 1)
    assert asked == [] and answer.startswith(b"HTTP/1.1 403 Forbidden")
    assert b"not asked" in answer


def test_an_ask_rule_asks_even_in_auto_mode_and_a_deny_rule_never_asks(tmp_path: Path) -> None:
    held, asked = _asking(tmp_path, ["allow-once"], "auto", ask=["WebFetch(domain:127.0.0.1)"])
    [answer] = _run(held, 1)
    assert len(asked) == 1 and answer.endswith(b"hello")
    held, asked = _asking(tmp_path / "deny", ["allow-once"], deny=["WebFetch(domain:127.0.0.1)"])
    [answer] = _run(held, 1)
    assert asked == [] and b"denied by WebFetch(domain:127.0.0.1)" in answer


def test_the_client_gone_closes_the_question(tmp_path: Path) -> None:
    import asyncio

    from agent_tui.agent.permissions import PermissionMode, Permissions
    from agent_tui.agent.sandbox_proxy import SERVER

    cancelled: list[bool] = []

    async def approver(_request: Any) -> Decision:
        try:
            await asyncio.sleep(30)  # nobody answers
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return Decision.ALLOW_ONCE

    found = rules(tmp_path)
    policy = Permissions(PermissionMode.ASK, approver, rules=found)
    held = NetworkGate(lambda: found, lambda: policy)

    async def main() -> None:
        path = SERVER.socket_for(held)
        token = held.register(["bash", "-c", "curl https://example.com/"])
        _reader, writer = await asyncio.open_unix_connection(path)
        writer.write(f"AGENT-TUI {token}\r\nCONNECT example.com:443 HTTP/1.1\r\n\r\n".encode())
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.close()  # the command's timeout killed it
        for _ in range(50):
            if cancelled:
                return
            await asyncio.sleep(0.05)

    asyncio.run(main())
    assert cancelled == [True]

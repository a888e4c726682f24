"""The sandbox's network allow-list: a filtering HTTP proxy for sandboxed commands.

Claude Code's design (``@anthropic-ai/sandbox-runtime`` on Linux): the command's network namespace
has nothing but a loopback (bubblewrap's ``--unshare-net``); a proxy runs outside the sandbox, in
agent-tui's process, on a Unix socket bound into the sandbox; a forwarder inside
(:mod:`agent_tui.agent.sandbox_forward`) listens on ``127.0.0.1`` there and copies each connection
to the socket; the command gets ``http_proxy``, ``https_proxy`` and ``all_proxy`` naming it (and
``no_proxy`` naming the sandbox's own loopback, reached directly). The proxy speaks HTTP/1.1
proxying: ``CONNECT host:port`` (HTTPS, any TLS or TCP a client tunnels) and absolute-URI requests
(``GET http://host/path``, plain HTTP).

Which hosts (:class:`NetworkGate`), from the rules :mod:`agent_tui.agent.permission_rules` loads:
a ``WebFetch`` deny rule for the host (or a bare ``WebFetch`` deny) refuses it, always; a
``WebFetch`` ask rule for it asks; an allow rule ``WebFetch(domain:HOST)`` or a ``sandbox.network.allowedDomains`` entry of Claude Code's
settings (``*.example.com``: its subdomains; ``host:443``: that port only) lets it through, a
project's own only when the folder is trusted. Any other host is asked about (Claude Code's "new
domain requests trigger permission prompts"): the proxy holds the connection and asks through the
policy's approver, on the agent's loop, once per host per command (each forwarder connection
starts with ``AGENT-TUI TOKEN``, its command; the connections meanwhile wait for that answer);
``read-only``, ``plan`` and ``auto`` refuse without asking, and so does a policy with no approver. A bare ``WebFetch`` allow rule
(the ``web_fetch`` tool for every host) does not open the sandbox's network. A refusal is a 403
whose body names the host and the rule to add; the forwarder also says it on the command's stderr.

The proxy is used only when some allow rule could let a host through (:meth:`NetworkGate.opens`)
or a host could be asked about: otherwise a command runs with no network at all, as before. ``--sandbox-network`` opens everything
without the proxy. It filters by *name*: what the name resolves to (outside the sandbox, with the
user's resolver) is not checked, and a client that ignores the proxy variables reaches nothing.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import secrets
import shlex
import shutil
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agent_tui.agent.permission_rules import host_hit as domain_hit
from agent_tui.agent.permission_rules import normal_host, parse_domain

if TYPE_CHECKING:
    from agent_tui.agent.permission_rules import PermissionRules, Rule
    from agent_tui.agent.permissions import Permissions
    from agent_tui.agent.sandbox import Sandbox

#: The forwarder, run by path inside the sandbox (``python -I -S``: no site, no environment).
FORWARDER = str(Path(__file__).with_name("sandbox_forward.py"))
HEAD_LIMIT = 65536
HEAD_TIMEOUT = 30.0
CONNECT_TIMEOUT = 15.0
#: The line a forwarder sends first on each connection: ``AGENT-TUI TOKEN`` (its command).
PREAMBLE = b"AGENT-TUI "
COMMANDS_KEPT = 256
_HOP_HEADERS = frozenset({b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive"})


# -- the decision -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a command may reach ``host:port``, and the rule that says so (or the one to add)."""

    allowed: bool
    host: str
    port: int
    rule: str
    reason: str
    #: The user may be asked (no rule allows the host, or an ask rule names it); see ``asks``.
    askable: bool = False
    #: An ask rule names the host: asked even in ``auto`` mode (as a tool call's ask rule).
    ask_rule: bool = False


@dataclass(slots=True)
class Command:
    """One sandboxed command behind the proxy: what it runs (shown in the question), the loop
    its agent asks on, and the hosts the user allowed once for it."""

    text: str
    loop: asyncio.AbstractEventLoop | None
    once: set[str] = field(default_factory=set)


class NetworkGate:
    """Which hosts the commands of one agent may reach: the rules ``rules()`` returns when asked
    (the agent's :class:`PermissionRules`, read again when a file changed; None: no rules)."""

    def __init__(
        self,
        rules: Callable[[], PermissionRules | None],
        permissions: Callable[[], Permissions | None] = lambda: None,
    ) -> None:
        self.rules = rules
        #: The agent's policy: its mode and approver decide whether a host no rule allows is asked.
        self.permissions = permissions
        self.token = secrets.token_hex(8)  # names this gate's refusals to its forwarders
        self.session_hosts: set[str] = set()  # "allow for this session" (this process's memory)
        #: The commands started behind the proxy (by their token), the last COMMANDS_KEPT.
        self.commands: dict[str, Command] = {}

    def cannot_ask(self, ask_rule: bool = False) -> str | None:
        """Why a host no rule allows is refused without a question (None: the user is asked):
        ``read-only`` and ``plan`` never ask, ``auto`` asks nothing (unless an ask rule names the
        host), and with no approver there is no one to ask."""
        from agent_tui.agent.permissions import PermissionMode

        found = self.permissions()
        if found is None:
            return "no one is there to answer"
        if found.mode in (PermissionMode.READ_ONLY, PermissionMode.PLAN):
            return f"agent-tui is in {found.mode.value} mode"
        if found.mode is PermissionMode.AUTO and not ask_rule:
            return "auto mode asks nothing, and only the hosts your rules allow are reached"
        if found.approver is None:
            return found.no_approver_reason
        return None

    def _rules(self) -> PermissionRules | None:
        found = self.rules()
        if found is not None:
            found.refresh()
        return found

    def opens(self) -> bool:
        """Whether some rule in force could let a host through (else no proxy is needed)."""
        found = self._rules()
        if found is None:
            return False
        return any(_opens(r) for r in found.in_force()) or any(found.applies(d) for d in found.domains)

    def hosts(self) -> list[str]:
        """The hosts the rules in force open (patterns as written: ``pypi.org``, ``*.npmjs.org``,
        ``host:443``), for ``/sandbox``."""
        found = self._rules()
        if found is None:
            return []
        rules = [r.content.removeprefix("domain:") for r in found.in_force() if _opens(r) and r.content]
        return list(dict.fromkeys([*rules, *(d.text for d in found.domains if found.applies(d))]))

    def route(self, argv: list[str]) -> tuple[list[str], str] | None:
        """``argv`` behind the forwarder and the proxy's socket to bind into the sandbox, or None
        when no rule could open anything (or the proxy cannot start: then no network, as without
        rules). What :meth:`agent_tui.agent.sandbox.Sandbox.wrap` asks."""
        if not self.opens() and self.cannot_ask() is not None:
            return None
        try:
            path = SERVER.socket_for(self)
        except (OSError, RuntimeError, TimeoutError):
            return None
        python = sys.executable or "python3"
        token = self.register(argv)
        return [python, "-I", "-S", FORWARDER, path, token, "--", *argv], path

    def register(self, argv: list[str]) -> str:
        """A new command's token (``GATE.COMMAND``): its forwarder names it on each connection,
        so the proxy asks once per host per command and an "allow once" lasts for that command."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None  # started outside the agent's loop: nobody can be asked from here
        text = argv[-1] if len(argv) >= 3 and argv[-2] == "-c" else shlex.join(argv)
        token = f"{self.token}.{secrets.token_hex(8)}"
        self.commands[token] = Command(text, loop)
        while len(self.commands) > COMMANDS_KEPT:
            del self.commands[next(iter(self.commands))]
        return token

    async def ask(self, verdict: Verdict, command: Command) -> bool:
        """Put the question about ``verdict``'s host to the user, on the agent's loop, through the
        policy's approver (the face's "how to ask"): allow once (this command), for the session
        (this process), always (``WebFetch(domain:HOST)`` kept in .claude/settings.local.json, as
        the policy's "always allow"), or deny. An approver's failure is a refusal."""
        from agent_tui.agent.permissions import Decision, PermissionRequest

        found = self.permissions()
        if found is None or found.approver is None:
            return False
        host = verdict.host
        cwd = getattr(self.rules(), "cwd", None) or os.getcwd()
        request = PermissionRequest(
            "bash",
            f"sandbox-network-{secrets.token_hex(4)}",  # no tool call of its own: a face's id for it
            {"command": command.text},
            f"{host}:{verdict.port}",
            f"connects to {host}:{verdict.port} from the sandbox ({verdict.reason})",
            f"network:{host}",
            cwd,
            rule=f"WebFetch(domain:{host})",
        )
        try:
            decision = Decision(await found.approver(request))
        except asyncio.CancelledError:
            raise
        except Exception:
            return False
        if decision is Decision.DENY:
            return False
        if decision is Decision.ALLOW_SESSION:
            self.session_hosts.add(host)
        elif decision is Decision.ALLOW_ALWAYS:
            found._keep(request, None)  # as the policy's "always allow" (allowed once if it cannot)
        command.once.add(host)
        return True

    def decide(self, raw_host: str, port: int) -> Verdict:
        host = normal_host(raw_host)
        if host is None:
            shown = raw_host[:80]
            return Verdict(False, shown, port, "", f"{shown!r} is not a host name")
        add = f"WebFetch(domain:{host})"
        found = self._rules()
        if found is None:
            return Verdict(False, host, port, add, "no permission rule allows it", askable=True)
        for rule in found.rules:
            if rule.tool == "WebFetch" and rule.kind == "deny" and _host_matches(rule, host):
                return Verdict(False, host, port, rule.text, f"denied by {rule.text} ({rule.source})")
        for rule in found.in_force():
            if rule.tool == "WebFetch" and rule.kind == "ask" and _host_matches(rule, host):
                return Verdict(
                    False,
                    host,
                    port,
                    rule.text,
                    f"{rule.text} ({rule.source}) asks first",
                    askable=True,
                    ask_rule=True,
                )
        if host in self.session_hosts:
            return Verdict(True, host, port, add, "allowed for this session")
        for rule in found.in_force():
            if rule.kind == "allow" and _opens(rule) and _host_matches(rule, host):
                return Verdict(True, host, port, rule.text, f"allowed by {rule.text} ({rule.source})")
        for entry in found.domains:
            if found.applies(entry):
                pattern, only = parse_domain(entry.text)
                if domain_hit(pattern, host) and only in (None, port):
                    where = f"sandbox.network.allowedDomains {entry.text} ({entry.source})"
                    return Verdict(True, host, port, entry.text, f"allowed by {where}")
        untrusted = [
            r
            for r in [*found.rules, *found.domains]
            if r.kind == "allow" and not found.applies(r) and _domain_rule_hits(r, host, port)
        ]
        if untrusted:
            first = untrusted[0]
            why = f"{first.text} is the project's, and this folder is not trusted"
            if not first.project or found.trusted():  # held: agent.rule_trust
                why = f"{first.text} ({first.source}) is new since you accepted the rules"
            return Verdict(False, host, port, add, why, askable=True)
        return Verdict(False, host, port, add, "no permission rule allows it", askable=True)


def _opens(rule: Rule) -> bool:
    return rule.tool == "WebFetch" and rule.kind == "allow" and rule.content is not None


def _host_matches(rule: Rule, host: str) -> bool:
    if rule.content is None:
        return True  # a bare WebFetch rule: every host (deny and ask only; allow needs a domain)
    return domain_hit(rule.content.removeprefix("domain:"), host)


def _domain_rule_hits(rule: Rule, host: str, port: int) -> bool:
    if rule.tool == "WebFetch":
        return rule.content is not None and _host_matches(rule, host)
    pattern, only = parse_domain(rule.text)
    return domain_hit(pattern, host) and only in (None, port)


# -- the request ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Request:
    """What a client asked the proxy for: ``CONNECT`` (a tunnel) or a plain HTTP request, with
    the head to send the server (origin-form, ``Connection: close``; empty for a tunnel)."""

    method: str
    host: str
    port: int
    head: bytes = b""

    @property
    def tunnel(self) -> bool:
        return self.method == "CONNECT"


class BadRequest(ValueError):
    """A request the proxy cannot serve (400, the message says why)."""


def parse_request(head: bytes) -> Request:
    """The request of ``head`` (up to and with the blank line); raises BadRequest."""
    lines = head.split(b"\r\n")
    words = lines[0].decode("latin-1").split(" ")
    if len(words) != 3 or not words[2].startswith("HTTP/1."):
        raise BadRequest("not an HTTP/1.x request line")
    method, target, version = words
    if method == "CONNECT":
        host, sep, port = target.rpartition(":")
        if not sep or not port.isdigit() or not 0 < int(port) < 65536:
            raise BadRequest(f"CONNECT {target[:80]!r}: not host:port")
        return Request(method, host.strip("[]"), int(port))
    split = urlsplit(target)
    if split.scheme.lower() != "http" or not split.hostname:
        raise BadRequest(
            f"{method} {target[:80]!r}: the proxy takes http://HOST/... or CONNECT HOST:PORT (https)"
        )
    try:
        port_number = split.port or 80
    except ValueError as e:
        raise BadRequest(f"{target[:80]!r}: {e}") from None
    path = split.path or "/"
    if split.query:
        path += "?" + split.query
    out = [f"{method} {path} {version}".encode("latin-1")]
    has_host = False
    for line in lines[1:]:
        if not line:
            continue
        name = line.split(b":", 1)[0].strip().lower()
        if name in _HOP_HEADERS:
            continue
        has_host = has_host or name == b"host"
        out.append(line)
    if not has_host:
        out.append(b"Host: " + split.netloc.rpartition("@")[2].encode("latin-1"))
    out.append(b"Connection: close")
    return Request(method, split.hostname, port_number, b"\r\n".join(out) + b"\r\n\r\n")


def refusal(verdict: Verdict, token: str) -> bytes:
    """The 403 a refused host gets: the body names it and the rule that allows it."""
    target = f"{verdict.host}:{verdict.port}"
    body = (
        f"agent-tui's sandbox refused {target}: {verdict.reason}.\n"
        f"To let sandboxed commands reach it, add the permission rule {verdict.rule or 'WebFetch(domain:HOST)'} "
        "to permissions.allow (.claude/settings.json, .claude/settings.local.json or agent-tui's "
        "[permissions]), or the domain to sandbox.network.allowedDomains.\n"
    ).encode()
    rule = verdict.rule.replace("\r", " ").replace("\n", " ") or "WebFetch(domain:HOST)"
    return _answer(403, "Forbidden", body, [f"X-Agent-Tui-Refused: {token} {target} {rule}"])


def _answer(status: int, reason: str, body: bytes, extra: list[str] | None = None) -> bytes:
    head = [f"HTTP/1.1 {status} {reason}", "Content-Type: text/plain; charset=utf-8"]
    head += [f"Content-Length: {len(body)}", "Connection: close", *(extra or [])]
    return "\r\n".join(head).encode("latin-1", "replace") + b"\r\n\r\n" + body


# -- the server -----------------------------------------------------------------------------------


class ProxyServer:
    """The proxies of this process: one asyncio loop in a daemon thread, one Unix socket per gate,
    all in one private folder of the temp dir (removed at exit)."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.RLock()  # (a gate's finalizer may run inside socket_for)
        self._sockets: dict[int, str] = {}  # id(gate) -> path
        self._servers: list[asyncio.AbstractServer] = []
        self._made = 0
        self.folder = ""
        self.refused: list[Verdict] = []  # the last 100 refusals, for /sandbox
        #: The open questions, by (command token, host): the connections waiting share one.
        self._questions: dict[tuple[str, str], _Question] = {}

    def _start(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            temp = tempfile.gettempdir()
            # a socket's path has at most 107 bytes: a long $TMPDIR gives way to /tmp
            self.folder = tempfile.mkdtemp(prefix="agent-tui-net-", dir=temp if len(temp) <= 60 else "/tmp")
            os.chmod(self.folder, 0o700)
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="agent-tui-sandbox-proxy", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
            atexit.register(self.close)
        return self._loop

    def socket_for(self, gate: NetworkGate) -> str:
        """The Unix socket where ``gate``'s proxy listens (started on first use; closed and
        removed when the gate is gone, as a subagent's policy copy is once it ends)."""
        with self._lock:
            path = self._sockets.get(id(gate))
            if path is not None:
                return path
            loop = self._start()
            self._made += 1
            path = os.path.join(self.folder, f"{self._made}.sock")
            ref = weakref.ref(gate)

            async def serve() -> asyncio.AbstractServer:
                return await asyncio.start_unix_server(
                    lambda r, w: self._handle(r, w, ref), path, limit=HEAD_LIMIT
                )

            server = asyncio.run_coroutine_threadsafe(serve(), loop).result(timeout=10)
            self._servers.append(server)
            self._sockets[id(gate)] = path
            weakref.finalize(gate, self._forget, id(gate), path, server)
            return path

    def _forget(self, key: int, path: str, server: asyncio.AbstractServer) -> None:
        with self._lock:
            if self._sockets.get(key) == path:
                del self._sockets[key]
            if server in self._servers:
                self._servers.remove(server)
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(server.close)
        with contextlib.suppress(OSError):
            os.unlink(path)

    def open_sockets(self) -> int:
        """How many gates have a socket now (one per living agent policy that needed one)."""
        return len(self._sockets)

    def close(self) -> None:
        if self._loop is not None:
            loop = self._loop
            for server in self._servers:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(server.close)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)

    async def _handle(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        ref: weakref.ref[NetworkGate],
    ) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
                return
            token = ""
            if head.startswith(PREAMBLE):  # the forwarder names its command
                first, _, head = head.partition(b"\r\n")
                token = first[len(PREAMBLE) :].decode("ascii", "replace").strip()
            try:
                request = parse_request(head)
            except BadRequest as e:
                writer.write(_answer(400, "Bad Request", f"agent-tui's sandbox proxy: {e}\n".encode()))
                await writer.drain()
                return
            gate = ref()
            if gate is None:  # its agent is gone
                return
            verdict = gate.decide(request.host, request.port)  # a few stat calls: not worth a thread
            command = gate.commands.get(token)
            early = b""
            if not verdict.allowed and verdict.askable and command is not None:
                verdict, early = await self._permit(gate, token, command, verdict, reader)
            if not verdict.allowed:
                self.refused = [*self.refused[-99:], verdict]
                writer.write(refusal(verdict, token or gate.token))
                await writer.drain()
                return
            try:
                up_reader, up_writer = await asyncio.wait_for(
                    asyncio.open_connection(verdict.host, request.port), CONNECT_TIMEOUT
                )
            except (OSError, TimeoutError) as e:
                why = f"agent-tui's sandbox proxy could not reach {verdict.host}:{request.port}: {e}\n"
                writer.write(_answer(502, "Bad Gateway", why.encode()))
                await writer.drain()
                return
            upstream = up_writer
            if request.tunnel:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                up_writer.write(request.head)
            if early:
                up_writer.write(early)  # what the client sent while the question was open
            await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))
        except (ConnectionError, OSError):
            pass
        finally:
            for stream in (writer, upstream):
                if stream is not None:
                    stream.close()

    async def _permit(
        self,
        gate: NetworkGate,
        token: str,
        command: Command,
        verdict: Verdict,
        reader: asyncio.StreamReader,
    ) -> tuple[Verdict, bytes]:
        """Hold a connection to a host no rule allows while the user is asked (once per host per
        command: the connections that come meanwhile wait for the same answer). The verdict then,
        and what the client sent meanwhile. The client gone (the command ended, or its timeout
        killed it) leaves the question; when no connection waits for it any more, it closes."""
        host = verdict.host
        if host in command.once:
            return replace(verdict, allowed=True, reason="allowed once for this command"), b""
        why = gate.cannot_ask(verdict.ask_rule)
        loop = command.loop
        if why is not None or loop is None or loop.is_closed():
            return replace(
                verdict, reason=f"{verdict.reason}; not asked: {why or 'no one can be asked'}"
            ), b""
        key = (token, host)
        question = self._questions.get(key)
        if question is None:
            future = asyncio.run_coroutine_threadsafe(gate.ask(verdict, command), loop)
            question = _Question(asyncio.wrap_future(future), future)
            self._questions[key] = question
            question.answer.add_done_callback(lambda _f: self._questions.pop(key, None))
        question.waiting += 1
        early = bytearray()

        async def watch() -> None:  # the client's bytes meanwhile, and its end
            while data := await reader.read(65536):
                early.extend(data)
                if len(early) > HEAD_LIMIT:  # enough held: read no more until the answer
                    await asyncio.Event().wait()

        gone = asyncio.ensure_future(watch())
        try:
            waits: list[asyncio.Future[Any]] = [question.answer, gone]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            question.waiting -= 1
            gone.cancel()
        if not question.answer.done():  # this client left
            if question.waiting == 0:
                question.source.cancel()  # the question closes: nobody waits for its answer
            return replace(verdict, reason="the command ended before the question was answered"), b""
        allowed = not question.answer.cancelled() and question.answer.exception() is None
        allowed = allowed and bool(question.answer.result())
        if not allowed:
            return replace(verdict, reason="the user did not allow it"), b""
        return replace(verdict, allowed=True, reason="allowed by the user"), bytes(early)


@dataclass(slots=True)
class _Question:
    """One open question about a host for one command, and how many connections wait for it."""

    answer: asyncio.Future[bool]
    source: Any  # the concurrent future on the agent's loop (cancelled: the dialog closes)
    waiting: int = 0


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


SERVER = ProxyServer()
_gates: dict[int, tuple[weakref.ref[Permissions], NetworkGate]] = {}


def gate_of(permissions: Permissions) -> NetworkGate:
    """The gate of an agent's policy (one per :class:`Permissions`, reading its rules when asked)."""
    key = id(permissions)
    held = _gates.get(key)
    if held is not None and held[0]() is permissions:
        return held[1]
    ref = weakref.ref(permissions, lambda _r: _gates.pop(key, None))
    gate = NetworkGate(lambda: getattr(ref(), "rules", None), ref)
    _gates[key] = (ref, gate)
    return gate


def for_commands(permissions: Permissions | None, sandbox: Sandbox | None = None) -> Sandbox | None:
    """Where the commands of the agent ``permissions`` gates run: ``sandbox`` (its own when None)
    with the network allow-list of its rules. One place for ``bash``, ``!cmd`` and hooks."""
    sandbox = sandbox if sandbox is not None else (permissions.sandbox if permissions is not None else None)
    if sandbox is None or permissions is None:
        return sandbox
    return replace(sandbox, gate=gate_of(permissions))


__all__ = [
    "FORWARDER",
    "SERVER",
    "BadRequest",
    "Command",
    "NetworkGate",
    "ProxyServer",
    "Request",
    "Verdict",
    "domain_hit",
    "for_commands",
    "gate_of",
    "normal_host",
    "parse_domain",
    "parse_request",
    "refusal",
]

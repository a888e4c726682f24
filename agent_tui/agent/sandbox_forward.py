"""The sandbox's end of its network proxy: run *inside* bubblewrap, before the command.

``python -I -S sandbox_forward.py SOCKET TOKEN -- ARGV...`` listens on ``127.0.0.1`` (an ephemeral
port of the sandbox's own network namespace, where nothing else is reachable), starts ``ARGV``
with ``http_proxy``/``https_proxy``/``all_proxy`` (and their upper-case names) naming that port
and ``no_proxy`` naming the sandbox's own loopback (as Claude Code's: a command's test server on
127.0.0.1 is reached directly, and nothing else is there), and copies each connection to the Unix socket ``SOCKET``, where
agent-tui's filtering proxy (:mod:`agent_tui.agent.sandbox_proxy`) listens outside the sandbox.
It exits with the command's status (or the command's signal).

Each connection to the proxy starts with one line ``AGENT-TUI TOKEN``: the proxy knows the command
by it (one question per host per command; an "allow once" lasts for the command).

When the proxy refuses a host, its 403 answer carries ``X-Agent-Tui-Refused: TOKEN HOST:PORT``;
the forwarder then writes one line naming the host and the rule that allows it to the command's
stderr (an HTTPS client such as curl shows no body of a refused CONNECT), so the model reads why in
the command's output. Only the standard library: it runs with ``-I -S`` (no site, no environment).
"""

from __future__ import annotations

# the C modules, not socket, signal and threading: those import enum and functools, which
# doubled this program's start (it runs before every sandboxed command while a host is allowed)
import _signal  # type: ignore[import-not-found]
import _socket
import _thread
import os
import sys

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
NO_PROXY_VARIABLES = ("no_proxy", "NO_PROXY")
#: Direct, not through the proxy: the sandbox's own loopback (the host's is not in its namespace).
NO_PROXY = "localhost,127.0.0.1,::1"
REFUSED_HEADER = b"x-agent-tui-refused:"
CHUNK = 65536


def notice(first: bytes, token: str) -> str | None:
    """The line said on stderr when ``first`` (the proxy's first bytes on a connection) is its
    refusal (with this command's ``token``), else None."""
    if not first.startswith(b"HTTP/1.1 403 "):
        return None
    head = first.split(b"\r\n\r\n", 1)[0]
    for line in head.split(b"\r\n")[1:]:
        if line.lower().startswith(REFUSED_HEADER):
            words = line[len(REFUSED_HEADER) :].decode("ascii", "replace").split()
            if len(words) >= 3 and words[0] == token:
                target, rule = words[1], " ".join(words[2:])
                return (
                    f"[agent-tui's sandbox refused a connection to {target}: no permission rule allows "
                    f"this domain. The user can allow it with the rule {rule} (permissions.allow in "
                    ".claude/settings.json) or sandbox.network.allowedDomains.]"
                )
    return None


def _pipe(src: _socket.socket, dst: _socket.socket, token: str | None, done: _thread.LockType | None) -> None:
    first = token is not None
    try:
        while True:
            data = src.recv(CHUNK)
            if not data:
                break
            if first and token is not None:
                first = False
                line = notice(data, token)
                if line is not None:
                    try:  # noqa: SIM105 (contextlib would cost this program a third of its start)
                        os.write(2, (line + "\n").encode("utf-8", "replace"))
                    except OSError:
                        pass
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((dst, _socket.SHUT_WR), (src, _socket.SHUT_RD)):
            try:  # noqa: SIM105
                sock.shutdown(how)
            except OSError:
                pass
        if done is not None:
            done.release()


def _serve(client: _socket.socket, path: str, token: str) -> None:
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(path)
        upstream.sendall(b"AGENT-TUI " + token.encode("ascii", "replace") + b"\r\n")  # its command
    except OSError:
        client.close()
        upstream.close()
        return
    back = _thread.allocate_lock()
    back.acquire()
    _thread.start_new_thread(_pipe, (upstream, client, token, back))
    _pipe(client, upstream, None, None)
    back.acquire()  # the answer's side is done too
    client.close()
    upstream.close()


def _accept(listener: _socket.socket, path: str, token: str) -> None:
    while True:
        try:
            fd, _ = listener._accept()  # type: ignore[attr-defined]
        except OSError:
            return
        client = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM, 0, fd)
        _thread.start_new_thread(_serve, (client, path, token))


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        os.write(2, b"usage: sandbox_forward.py SOCKET TOKEN -- COMMAND...\n")
        return 2
    path, token, command = argv[0], argv[1], argv[3:]
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    env = dict(os.environ)
    env.update(dict.fromkeys(PROXY_VARIABLES, url))
    env.update(dict.fromkeys(NO_PROXY_VARIABLES, NO_PROXY))
    pid = os.fork()
    if pid == 0:  # the command
        listener.close()
        try:
            os.execvpe(command[0], command, env)
        except OSError as e:
            os.write(2, f"{command[0]}: {e.strerror}\n".encode("utf-8", "replace"))
            os._exit(127)
    _thread.start_new_thread(_accept, (listener, path, token))

    def forward(signum: int, _frame: object) -> None:
        try:  # noqa: SIM105
            os.kill(pid, signum)
        except OSError:
            pass

    for signum in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP, _signal.SIGQUIT):
        _signal.signal(signum, forward)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        died = os.WTERMSIG(status)
        _signal.signal(died, _signal.SIG_DFL)
        os.kill(os.getpid(), died)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

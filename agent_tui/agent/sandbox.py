"""An OS sandbox for the programs agent-tui runs: the ``bash`` tool, the user's ``!cmd``, hooks.

Each is started through :meth:`Sandbox.wrap`, which puts bubblewrap (Debian's ``bubblewrap``,
``bwrap``) in front of its argv. Modes (``--sandbox``, ``AGENT_TUI_SANDBOX``, ``[sandbox] mode``):

- ``workspace-write`` (the default where bwrap runs): the whole file system read-only but the
  working directory, the system temp dir (``tempfile.gettempdir()``: ``$TMPDIR`` or ``/tmp``) and
  the build caches of :data:`CACHE_DIRS` that exist; ``.git/config`` and ``.git/hooks`` of the
  working directory stay read-only (git runs what they name, outside the sandbox, the next time
  the user runs git).
- ``read-only``: nothing writable but a private, empty ``/tmp`` (and temp dir).
- ``off``: commands run as they are.

In both sandboxed modes: no network (``--unshare-net``: only a loopback of its own) unless
``--sandbox-network``, ``AGENT_TUI_SANDBOX_NETWORK=1`` or ``[sandbox] network = true``, but HTTP(S)
through a filtering proxy to the hosts the agent's rules allow (:attr:`Sandbox.gate`,
``agent.sandbox_proxy``); a pid
namespace (the command sees and signals only its own processes), no capabilities (as root too),
a minimal ``/dev``, and the user's secrets (:data:`HIDDEN_DIRS`, :data:`HIDDEN_FILES`, agent-tui's
config file, which may hold API keys, the ssh agent's socket, ``$XDG_RUNTIME_DIR``, Docker's
socket) replaced by empty ones. The environment is the one every command gets
(``agent.child_env``: no model service's key).

Whether bwrap can run is tried once per process (``bwrap --ro-bind / / ... true``; the program is
``$AGENT_TUI_BWRAP`` or ``bwrap`` on the PATH). Where it cannot (not installed, no user namespaces,
a container that forbids them) a sandboxed mode is *unavailable*: one line says so at start, and
every command asks the user (:attr:`Sandbox.unsandboxed`), except with an explicit ``off``.
docs/SANDBOX.md says what this protects and what it does not.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from agent_tui.config import ConfigError, config_path


class NetworkRoute(Protocol):
    """A way out for a command without network (``agent.sandbox_proxy.NetworkGate``)."""

    def route(self, argv: list[str]) -> tuple[list[str], str] | None:
        """``argv`` as started behind the route, and the Unix socket to bind into the sandbox;
        None when nothing is open (the command then has no network at all)."""
        ...


WORKSPACE_WRITE = "workspace-write"
READ_ONLY = "read-only"
OFF = "off"
MODES = (WORKSPACE_WRITE, READ_ONLY, OFF)
MODE_ENV = "AGENT_TUI_SANDBOX"
NETWORK_ENV = "AGENT_TUI_SANDBOX_NETWORK"
#: The bubblewrap program: a path or a name looked up on the PATH (default ``bwrap``).
BWRAP_ENV = "AGENT_TUI_BWRAP"
#: Build caches under the home folder a command may write in ``workspace-write`` (those that exist):
#: pip, uv, go build and most XDG caches, npm, cargo's downloads, Go modules, Maven, Gradle.
CACHE_DIRS = (
    ".cache",
    ".npm",
    ".cargo/registry",
    ".cargo/git",
    "go/pkg/mod",
    ".m2/repository",
    ".gradle/caches",
)
#: Folders under the home folder no sandboxed command can read (an empty one in their place).
HIDDEN_DIRS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker",
    ".config/gh",
    ".password-store",
)
#: Files under the home folder no sandboxed command can read (an empty file in their place).
HIDDEN_FILES = (
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pi/agent/auth.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
)
#: Inside a writable working directory, what stays read-only: git runs the programs they name.
PROTECTED = (".git/config", ".git/hooks")
SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")
PROBE_TIMEOUT = 10.0

_probes: dict[str, str | None] = {}  # bwrap path -> None (it runs) or why not
_flags: dict[str, Any] = {}  # --sandbox / --sandbox-network, as the command line gave them


class SandboxError(ConfigError):
    """A sandbox setting that does not exist (the message names the accepted ones)."""


def set_flags(mode: str | None = None, network: bool | None = None) -> None:
    """The command line's ``--sandbox`` and ``--sandbox-network`` (they win over the environment
    and the config file) for every session this process starts."""
    _flags.clear()
    if mode is not None:
        _flags["mode"] = mode
    if network:
        _flags["network"] = True


def parse_mode(value: Any, where: str = "--sandbox") -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str) or value.strip().lower() not in MODES:
        raise SandboxError(
            f"agent-tui: {where}: unknown sandbox mode {value!r}: use one of {', '.join(MODES)}"
        )
    return value.strip().lower()


def bwrap_program(env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    name = env.get(BWRAP_ENV) or "bwrap"
    return shutil.which(name) if os.sep not in name else (name if os.access(name, os.X_OK) else None)


def probe(program: str | None) -> str | None:
    """None when ``program`` (bwrap) can sandbox a command here, else one line saying why not
    (tried once per program and process)."""
    if program is None:
        return "bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)"
    if program in _probes:
        return _probes[program]
    argv = [program, *_base_arguments(network=False), "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
        problem = None
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()
            problem = f"{program} cannot run here ({why[-1] if why else f'exit {done.returncode}'})"
    except (OSError, subprocess.SubprocessError) as e:
        problem = f"{program} cannot run here ({e})"
    _probes[program] = problem
    return problem


def _base_arguments(*, network: bool) -> list[str]:
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL"]
    if not network:
        args.append("--unshare-net")
    return args


@dataclass(frozen=True, slots=True)
class Sandbox:
    """Where the commands of one agent run (see the module doc)."""

    mode: str = OFF
    network: bool = False
    #: The bubblewrap program when it runs here; None: it does not (see ``problem``).
    bwrap: str | None = None
    #: Why bwrap cannot run (None: it can, or the mode is off).
    problem: str | None = None
    #: The system temp dir (writable in ``workspace-write``; a private one in ``read-only``).
    temp_dir: str = ""
    #: Which hosts a command may reach without ``network`` (``agent.sandbox_proxy``: the agent's
    #: ``WebFetch(domain:...)`` rules through a filtering proxy; None: none).
    gate: NetworkRoute | None = field(default=None, compare=False, repr=False)

    @property
    def active(self) -> bool:
        """Commands run inside bwrap."""
        return self.mode != OFF and self.bwrap is not None

    @property
    def unsandboxed(self) -> str | None:
        """Why every command asks the user: a sandbox was wanted and bwrap cannot run (else None)."""
        if self.mode == OFF or self.bwrap is not None:
            return None
        return f"no sandbox: {self.problem}"

    def describe(self) -> str:
        """One line: the mode, the network, whether bwrap runs."""
        if self.mode == OFF:
            return "sandbox: off (commands run without one)"
        if not self.active:
            return (
                f"sandbox: {self.mode} unavailable: {self.problem}; every command asks first "
                "(--sandbox off runs them without asking)"
            )
        net = "network allowed" if self.network else "no network"
        if self.mode == READ_ONLY:
            return f"sandbox: read-only (nothing writable but a private /tmp; {net}; bubblewrap)"
        return f"sandbox: workspace-write (the cwd, {self.temp_dir} and build caches writable; {net}; bubblewrap)"

    def notice(self) -> str | None:
        """The line said at start when a sandbox was wanted and cannot be had (else None)."""
        if self.unsandboxed is None:
            return None
        return (
            f"the {self.mode} sandbox is unavailable ({self.problem}): every command will be asked "
            "(--sandbox off to run them unsandboxed)"
        )

    def with_mode(self, mode: str | None = None, network: bool | None = None) -> Sandbox:
        """The same policy with another mode or network switch (bwrap probed if not yet)."""
        chosen = parse_mode(mode) or self.mode
        program, problem = self.bwrap, self.problem
        if chosen != OFF and program is None and problem is None:
            program = bwrap_program()
            problem = probe(program)
            program = None if problem else program
        return replace(
            self,
            mode=chosen,
            network=self.network if network is None else network,
            bwrap=program,
            problem=problem,
        )

    def wrap(self, argv: Sequence[str], cwd: str, env: Mapping[str, str] | None = None) -> list[str]:
        """``argv`` as it is started in ``cwd``: inside bwrap when the sandbox is active, else as it is.
        ``env``: the environment the command gets (its ``HOME``, ``SSH_AUTH_SOCK``...)."""
        if not self.active or self.bwrap is None:
            return list(argv)
        env = os.environ if env is None else env
        home = Path(env.get("HOME") or Path.home())
        cwd = os.path.realpath(cwd)
        args = [self.bwrap, *_base_arguments(network=self.network)]
        temp = os.path.realpath(self.temp_dir or tempfile.gettempdir())
        if self.mode == WORKSPACE_WRITE:
            writable = [temp, cwd] + [str(home / c) for c in CACHE_DIRS]
            for path in _existing(writable, dirs=True):
                args += ["--bind", path, path]
            for path in _existing([os.path.join(cwd, p) for p in PROTECTED]):
                if _under(path, cwd):  # not a symlink out of it
                    args += ["--ro-bind", path, path]
        else:
            private = ["/tmp"] + ([temp] if temp != "/tmp" and os.path.isdir(temp) else [])
            for path in private:
                args += ["--tmpfs", path]
            for path in _existing([cwd, str(home)], dirs=True):  # a cwd (or home) under /tmp stays seen
                if any(_under(path, p) for p in private):
                    args += ["--ro-bind", path, path]
        hidden = [str(home / d) for d in HIDDEN_DIRS]
        runtime = env.get("XDG_RUNTIME_DIR")
        if runtime:
            hidden.append(runtime)
        for path in _existing(hidden, dirs=True):
            if not _under(cwd, path):  # the user works inside it: theirs to show
                args += ["--tmpfs", path]
        files = [str(home / f) for f in HIDDEN_FILES] + [_config_file(env)] + list(SOCKETS)
        agent = env.get("SSH_AUTH_SOCK")
        if agent:
            files.append(agent)
        empty = _empty_file()
        for path in _existing(files, dirs=False):
            args += ["--ro-bind", empty, path]
        argv = list(argv)
        proxied = self._proxied(argv)
        if proxied is not None:  # only the proxy's socket of its folder is seen
            argv, path = proxied
            args += ["--tmpfs", os.path.dirname(path), "--ro-bind", path, path]
        return [*args, "--chdir", cwd, "--", *argv]

    def _proxied(self, argv: list[str]) -> tuple[list[str], str] | None:
        """``argv`` behind the network allow-list's forwarder, and its proxy's socket; None when
        the network is open, or no rule opens any host (no network at all)."""
        if self.network or self.gate is None:
            return None
        return self.gate.route(argv)

    def explain(self, output: str, exit_code: int | None) -> str | None:
        """A line for the model when a command that failed looks stopped by the sandbox (a write to
        a read-only file system, a network that is not there); None otherwise."""
        if not self.active or exit_code == 0:
            return None
        protected = ".git/config" in output and "Device or resource busy" in output  # git renames over it
        if "Read-only file system" in output or protected:
            where = (
                "nothing is writable but a private /tmp"
                if self.mode == READ_ONLY
                else "only the working directory, the temp dir and the build caches are writable "
                "(.git/config and .git/hooks are not)"
            )
            return (
                f"[agent-tui's sandbox ({self.mode}) stopped a write: {where}. If the command must write "
                "there, ask the user to allow it: /sandbox off in the app, or start agent-tui with "
                "--sandbox off.]"
            )
        if not self.network and _NETWORK.search(output):
            return (
                "[agent-tui's sandbox runs commands without network access (but HTTP and HTTPS through "
                "its proxy to the hosts a WebFetch(domain:HOST) allow rule names). If this command needs "
                "the network, ask the user to allow it: a WebFetch(domain:HOST) rule in permissions.allow, "
                "/sandbox network on in the app, --sandbox-network, or network = true under [sandbox] "
                "in the config file.]"
            )
        return None


_NETWORK = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|"
    r"Name or service not known|No address associated with hostname|getaddrinfo|"
    r"nodename nor servname|Connection refused|Failed to establish a new connection|ENETUNREACH|"
    r"EAI_AGAIN|ECONNREFUSED|Failed to connect to|Couldn't connect to server"
)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _existing(paths: Sequence[str], *, dirs: bool | None = None) -> list[str]:
    """The real paths of those that exist (only folders when ``dirs``, only other files when it is
    False), each once, in order."""
    found: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        try:
            is_dir = stat.S_ISDIR(os.stat(real).st_mode)
        except OSError:
            continue
        if (dirs is None or is_dir == dirs) and real not in found:
            found.append(real)
    return found


def _config_file(env: Mapping[str, str]) -> str:
    return str(config_path(env))


def _empty_file() -> str:
    """An empty, read-only file of ours to put over a hidden file: in agent-tui's data dir, which
    no sandboxed command can write (``/dev/null``, which reads as "permission denied" there, when
    it cannot be made)."""
    from agent_tui.store.paths import data_home, make_private_dirs

    path = data_home() / "sandbox-empty"
    try:
        if not path.exists():
            make_private_dirs(path.parent)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            os.close(fd)
        st = os.lstat(path)
        if st.st_size or not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return os.devnull
    except OSError:
        return os.devnull
    return str(path)


def resolve(config_mode: str | None = None, config_network: bool | None = None) -> Sandbox:
    """The sandbox of a session: ``--sandbox`` (:func:`set_flags`) over the config's mode
    (``AGENT_TUI_SANDBOX`` over ``[sandbox] mode``, as :func:`agent_tui.config.load_config` read
    it) over ``workspace-write``; the network likewise. Probes bwrap (once per process)."""
    mode = parse_mode(_flags.get("mode")) or parse_mode(config_mode, "[sandbox] mode") or WORKSPACE_WRITE
    network = bool(_flags.get("network")) or bool(config_network)
    temp = tempfile.gettempdir()
    if mode == OFF:
        return Sandbox(OFF, network, temp_dir=temp)
    program = bwrap_program()
    problem = probe(program)
    return Sandbox(mode, network, None if problem else program, problem, temp)


__all__ = [
    "BWRAP_ENV",
    "CACHE_DIRS",
    "HIDDEN_DIRS",
    "HIDDEN_FILES",
    "MODES",
    "MODE_ENV",
    "NETWORK_ENV",
    "OFF",
    "PROTECTED",
    "READ_ONLY",
    "WORKSPACE_WRITE",
    "NetworkRoute",
    "Sandbox",
    "SandboxError",
    "bwrap_program",
    "parse_mode",
    "probe",
    "resolve",
    "set_flags",
]

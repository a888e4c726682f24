"""The app's sandbox (``agent.sandbox``): one per process, shared by every session's agent and the
user's ``!cmd``; ``/sandbox`` shows it, ``/sandbox MODE`` and ``/sandbox network on|off`` switch it
from the next command on (nothing the model sees changes, so nothing is recorded)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agent_tui.agent import sandbox as sandbox_module
from agent_tui.agent.sandbox import Sandbox

if TYPE_CHECKING:
    from agent_tui.agent.permissions import Permissions
    from agent_tui.config import Config

_current: list[Sandbox] = []  # the process's, once resolved
_said: list[bool] = []

USAGE = "/sandbox [workspace-write|read-only|off] | /sandbox network on|off"


def app_sandbox(config: Config | None = None) -> Sandbox:
    """The app's sandbox: resolved once (flags, environment, ``[sandbox]`` of ``config``)."""
    if not _current:
        mode = config.sandbox_mode if config is not None else None
        network = config.sandbox_network if config is not None else None
        _current.append(sandbox_module.resolve(mode, network))
    return _current[0]


def start_notice(config: Config | None) -> str | None:
    """The start's line when the wanted sandbox cannot run (once per process); ``config``: the
    app's agent's (``agent_bridge.choice_config``: its ``[sandbox]``)."""
    if _said:
        return None
    _said.append(True)
    return app_sandbox(config).notice()


def switch(permissions: Permissions | None, arg: str) -> Sandbox:
    """Apply ``/sandbox ARG`` to the app's sandbox and the current agent's; raises ValueError
    (a usage line) for an argument that is none."""
    words = arg.split()
    current = app_sandbox()
    if len(words) == 2 and words[0] == "network" and words[1] in ("on", "off"):
        new = current.with_mode(network=words[1] == "on")
    elif len(words) == 1 and words[0] in sandbox_module.MODES:
        new = current.with_mode(words[0])
    else:
        raise ValueError(f"usage: {USAGE}")
    _current[:] = [new]
    if permissions is not None:  # the built agent's (``agent_bridge.agent_permissions``)
        permissions.sandbox = new
    return new


def command_sandbox(permissions: Permissions | None, config: Config | None = None) -> Sandbox:
    """Where the user's ``!cmd`` runs: the app's sandbox, with the network the current agent's
    rules allow (``agent.sandbox_proxy``), as the model's commands."""
    from agent_tui.agent.sandbox_proxy import for_commands

    sandbox = app_sandbox(config)
    return for_commands(permissions, sandbox) or sandbox


def describe(sandbox: Sandbox, cwd: str) -> str:
    """What ``/sandbox`` shows: the state, what is writable, what is hidden, how to switch."""
    lines = [sandbox.describe(), ""]
    if sandbox.active:
        home = os.path.expanduser("~")
        if sandbox.mode == sandbox_module.WORKSPACE_WRITE:
            caches = ", ".join(f"~/{c}" for c in sandbox_module.CACHE_DIRS)
            lines += [
                f"writable: {cwd} (but .git/config, .git/hooks), {sandbox.temp_dir}, and those that exist of {caches}",
            ]
        else:
            lines += ["writable: nothing but a private, empty /tmp"]
        hidden = ", ".join(f"~/{d}" for d in (*sandbox_module.HIDDEN_DIRS, *sandbox_module.HIDDEN_FILES))
        lines += [
            f"hidden (empty): {hidden}, agent-tui's config file, $XDG_RUNTIME_DIR, the ssh agent's socket",
            "network: "
            + (
                "allowed"
                if sandbox.network
                else "none (a loopback of its own), but HTTP(S) through a proxy to the hosts "
                "WebFetch(domain:...) allow rules and sandbox.network.allowedDomains name"
            ),
            f"home: {home}",
        ]
        hosts = getattr(sandbox.gate, "hosts", None)
        if not sandbox.network and callable(hosts):
            opened = hosts()
            lines.append(
                f"hosts open through the proxy: {', '.join(opened) if opened else 'none (no rule allows one)'}"
            )
        from agent_tui.agent.sandbox_proxy import SERVER

        refused = list(dict.fromkeys(f"{v.host}:{v.port} ({v.rule})" for v in reversed(SERVER.refused)))
        if refused:
            lines.append(f"refused lately (the rule that allows it): {', '.join(refused[:5])}")
    lines += ["", f"switch: {USAGE} (from the next command on; --sandbox and [sandbox] at start)"]
    return "\n".join(lines)


__all__ = ["USAGE", "app_sandbox", "command_sandbox", "describe", "start_notice", "switch"]

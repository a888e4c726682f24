"""Which folders the user trusts to start programs, and which hooks and MCP servers they accepted.

A folder's own files (``.mcp.json``, ``.pi/mcp.json``, ``.claude/settings.json`` hooks) start
programs, so they are read only with ``--trust-project`` or after the user said yes once; the
answer (yes or no) is remembered per folder (its real path) in ``trust.json`` in the data dir.
A session file never grants trust: only this store and the flag do.

What was accepted is remembered too, hook by hook and server by server (a fingerprint of each:
its event, matcher, command, timeout, source; a server's command, arguments, environment, URL,
headers; secrets only hashed): the user's own (the config file, ``~/.claude/settings.json``,
``~/.claude.json``, ``~/.pi/agent/mcp.json``) and each trusted folder's. A hook or server that
was not accepted as it is now (written by the model, by a repository, by anyone since) is not
loaded (:func:`screen`) until the user accepts it: the app asks, showing each command that would
start; print, JSON, RPC and ACP modes say so in one line (``--trust-project`` accepts what is
there now). The first run with this store accepts the user's own as they are (there is nothing
to compare with), and a folder trusted before fingerprints existed has its hooks and servers
accepted once the same way. What each accepted one runs is kept too (``described``: its slot, an
event's n-th hook or a server's name, and its command, redacted), so a changed one is shown with
what it replaces (``— was: runs `npm run lint```).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_tui.store.redact import redact_text
from agent_tui.terminal_text import visible_line

if TYPE_CHECKING:
    from agent_tui.agent.hooks import HookCommand
    from agent_tui.agent.mcp.config import ServerSpec

#: The key under which the user's own hooks and servers are accepted (a folder's: its real path).
USER = "user"

#: Asks the user whether to trust a folder: (folder, what it would load) -> yes / no (remembered),
#: or None (not now: asked again at the next start).
TrustAsker = Callable[[str, list[str]], Awaitable[bool | None]]


def default_path() -> Path:
    from agent_tui.store.paths import data_home

    return data_home() / "trust.json"


class TrustStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_path()

    def _data(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _read(self) -> dict[str, bool]:
        folders = self._data().get("folders")
        if not isinstance(folders, dict):
            return {}
        return {str(k): v for k, v in folders.items() if isinstance(v, bool)}

    def decision(self, folder: str | Path) -> bool | None:
        """True or False as remembered for ``folder``; None when the user was never asked."""
        return self._read().get(os.path.realpath(folder))

    def remember(self, folder: str | Path, trusted: bool) -> None:
        data = self._data()
        folders = self._read()
        folders[os.path.realpath(folder)] = trusted
        self._write({**data, "folders": folders})

    def forget(self, folder: str | Path) -> None:
        """Drop the answer for ``folder`` and what was accepted there: the next start asks again."""
        data = self._data()
        key = os.path.realpath(folder)
        folders = {k: v for k, v in self._read().items() if k != key}
        table = data.get("accepted")
        gone = {key, f"prompts:{key}", f"rules:{key}"}  # hooks, servers, prompt files, rules
        table = {k: v for k, v in table.items() if k not in gone} if isinstance(table, dict) else {}
        self._write({**data, "folders": folders, "accepted": table})

    def accepted(self, key: str) -> set[str] | None:
        """The fingerprints accepted under ``key`` (:data:`USER` or a folder's real path); None when
        nothing was ever recorded there."""
        table = self._data().get("accepted")
        entry = table.get(key) if isinstance(table, dict) else None
        if not isinstance(entry, list):
            return None
        return {str(f) for f in entry}

    def accept(self, key: str, fingerprints: Sequence[str], *, replace: bool = False) -> None:
        """Remember ``fingerprints`` as accepted under ``key`` (added to those already accepted, or
        instead of them with ``replace``)."""
        data = self._data()
        table = data.get("accepted")
        table = dict(table) if isinstance(table, dict) else {}
        known = set() if replace else self.accepted(key) or set()
        table[key] = sorted(known | set(fingerprints))
        self._write({**data, "accepted": table})

    def described(self, key: str) -> dict[str, tuple[str, str]]:
        """What each hook or server accepted under ``key`` ran, as last read while accepted:
        fingerprint -> (its slot: kind, event or name, matcher, source; what it runs, one line)."""
        table = self._data().get("described")
        entry = table.get(key) if isinstance(table, dict) else None
        if not isinstance(entry, dict):
            return {}
        return {
            str(f): (str(v[0]), str(v[1]))
            for f, v in entry.items()
            if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
        }

    def describe(self, key: str, found: Mapping[str, tuple[str, str]], drop: Collection[str] = ()) -> None:
        """Remember what ``found``'s accepted fingerprints run, and forget ``drop``'s (and any no
        longer accepted), so a later change can be shown as "was: ..."; nothing is written when
        nothing changed."""
        known = self.described(key)
        accepted = self.accepted(key) or set()
        kept = {f: v for f, v in {**known, **found}.items() if f in accepted and f not in drop}
        if kept == known:
            return
        data = self._data()
        table = data.get("described")
        table = dict(table) if isinstance(table, dict) else {}
        table[key] = {f: list(v) for f, v in sorted(kept.items())}
        self._write({**data, "described": table})

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hook_fingerprint(hook: HookCommand) -> str:
    return _digest(["hook", hook.event, hook.matcher, hook.command, hook.timeout, hook.source])


def server_fingerprint(server: ServerSpec) -> str:
    return _digest(["server", server.source, *server.key(), server.startup, server.enabled])


def _shown(text: str) -> str:
    return visible_line(redact_text(text)[0])


def _hook_runs(hook: HookCommand) -> str:
    return f"runs `{hook.command}`"


def _server_runs(server: ServerSpec) -> str:
    if server.command:
        what = "starts `" + " ".join([server.command, *server.args]) + "`"
    else:
        what = f"connects to {server.url}"
    secrets = sorted([*server.env, *server.headers])
    return what + (f" with {', '.join(secrets)}" if secrets else "")


def describe_hook(hook: HookCommand) -> str:
    """One line saying what the hook runs, and on what (redacted, control characters visible)."""
    on = f" ({hook.matcher})" if hook.matcher not in ("", "*") else ""
    return _shown(f"hook {hook.event}{on} {_hook_runs(hook)} (from {hook.source})")


def describe_server(server: ServerSpec) -> str:
    """One line saying what the MCP server starts or connects to (its env and headers: names only)."""
    return _shown(f"MCP server {server.name} {_server_runs(server)} (from {server.source})")


def _slots(hooks: Sequence[HookCommand], servers: Sequence[ServerSpec]) -> list[tuple[str, str]]:
    """For each hook, then each server: (where it sits: a hook's event, matcher, source and place
    among those, a server's name and source; what it runs, shown). A changed item is the one in
    the same slot that runs something else."""
    count: dict[tuple[str, str, str], int] = {}
    out: list[tuple[str, str]] = []
    for hook in hooks:
        where = (hook.event, hook.matcher, hook.source)
        count[where] = count.get(where, 0) + 1
        out.append((_digest(["hook", *where, count[where]]), _shown(_hook_runs(hook))))
    out += [(_digest(["server", s.source, s.name]), _shown(_server_runs(s))) for s in servers]
    return out


@dataclass(slots=True)
class Screened:
    """What may load (accepted as it is) and what waits for the user's yes."""

    servers: list[ServerSpec] = field(default_factory=list)
    hooks: list[HookCommand] = field(default_factory=list)
    #: Not accepted as they are now: (store key, fingerprint, one line saying what it runs).
    waiting: list[tuple[str, str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [line for _, _, line in self.waiting]

    def notice(self) -> str | None:
        """The one line print, JSON, RPC and ACP modes say (None when nothing waits)."""
        if not self.waiting:
            return None
        return (
            f"not loaded (new or changed since you last accepted them): {'; '.join(self.lines())}; "
            "start with --trust-project to accept them as they are, or accept them in the app"
        )


def screen(
    store: TrustStore | None,
    cwd: str,
    servers: Sequence[ServerSpec],
    hooks: Sequence[HookCommand],
    *,
    accept_all: bool = False,
    accept_project: bool = False,
) -> Screened:
    """Split what was read into what may load and what waits (see the module doc). ``accept_all``
    (``--trust-project``): accept everything as it is now; ``accept_project``: the user has just
    said yes to the folder. A server from a front end (``source`` of its own) is not screened."""
    folder = os.path.realpath(cwd)
    found = Screened()
    items: list[tuple[str, str, str, Any]] = []
    for hook in hooks:
        items.append((folder if hook.project else USER, hook_fingerprint(hook), describe_hook(hook), hook))
    for server in servers:
        items.append(
            (folder if server.project else USER, server_fingerprint(server), describe_server(server), server)
        )
    slots = _slots(hooks, servers)
    if store is None:
        keep = [item for *_, item in items]
    else:
        keep = []
        accepted: dict[str, set[str] | None] = {k: store.accepted(k) for k in {USER, folder}}
        before = {k: store.described(k) for k in {USER, folder}}
        present = {print_ for _, print_, _, _ in items}
        fresh: dict[str, list[str]] = {}
        seen: dict[str, dict[str, tuple[str, str]]] = {}
        waiting_slots: dict[str, set[str]] = {}
        for (key, print_, line, item), (slot, runs) in zip(items, slots, strict=True):
            known = accepted[key]
            first = known is None  # nothing recorded yet: what is there is what the user has
            if accept_all or first or (accept_project and key == folder) or print_ in (known or set()):
                keep.append(item)
                seen.setdefault(key, {})[print_] = (slot, runs)
                if accept_all or first or (accept_project and key == folder):
                    fresh.setdefault(key, []).append(print_)
            else:
                waiting_slots.setdefault(key, set()).add(slot)
                was = [
                    old
                    for f, (where, old) in before[key].items()
                    if where == slot and f in (known or set()) and f not in present
                ]
                if was:  # the accepted one in its place, now gone: the change, shown as a diff
                    line += " — was: " + "; ".join(sorted(was))
                found.waiting.append((key, print_, line))
        for key in {USER, folder}:
            if key in fresh or (accepted[key] is None and (key == USER or accept_project or accept_all)):
                with contextlib.suppress(OSError):
                    store.accept(key, fresh.get(key, []))
            # an accepted item gone from a slot where nothing waits was removed or replaced by one
            # accepted since: what it ran is not a "was" any more
            held = waiting_slots.get(key, set())
            drop = {f for f, (s, _) in before[key].items() if f not in present and s not in held}
            if key in seen or drop:
                with contextlib.suppress(OSError):
                    store.describe(key, seen.get(key, {}), drop)
    from agent_tui.agent.hooks import HookCommand as _Hook

    found.hooks = [i for i in keep if isinstance(i, _Hook)]
    found.servers = [i for i in keep if not isinstance(i, _Hook)]
    return found


def accept(store: TrustStore | None, waiting: Sequence[tuple[str, str, str]]) -> None:
    """The user said yes to what waited: remember each as accepted."""
    if store is None:
        return
    keys: dict[str, list[str]] = {}
    for key, print_, _ in waiting:
        keys.setdefault(key, []).append(print_)
    for key, prints in keys.items():
        store.accept(key, prints)


__all__ = [
    "USER",
    "Screened",
    "TrustAsker",
    "TrustStore",
    "accept",
    "default_path",
    "describe_hook",
    "describe_server",
    "hook_fingerprint",
    "screen",
    "server_fingerprint",
]

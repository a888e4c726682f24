"""Which permission rules the user accepted as they are: an ``allow`` or ``ask`` rule new since.

A rule that allows tool calls decides what runs unasked, so it is guarded as hooks are
(:mod:`agent_tui.agent.trust`): the allow and ask rules of the user's files (the config file,
``~/.claude/settings.json``) and of a trusted folder's (``.claude/settings*.json``,
``.agent-tui/config.toml``) are remembered in ``trust.json`` once accepted (keys ``rules:user``
and ``rules:`` + the folder's real path; a rule is its kind and its text), and one written since
(by a ``git pull``, a script, anyone) does not apply until the user accepts it: every face says so
in one line, the app asks at the next turn in the question about changed hooks and servers
(``PermissionRules.waiting``; yes accepts them and the policy reads them again), and ``agent-tui
trust --yes`` (or ``--trust-project``) accepts what is there. Claude Code's
``sandbox.network.allowedDomains`` entries are allow rules here (what a sandboxed command may
reach). The first time a place is screened what is there is accepted as it is. Deny rules always
apply at once, and a rule the user keeps with "Yes, and don't ask again" is accepted as written.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from agent_tui.agent.trust import USER, TrustStore
from agent_tui.terminal_text import visible_line

#: ``agent.permission_rules``' types, not imported (it imports this module): duck-typed here.
Rule = Any
PermissionRules = Any

PREFIX = "rules:"
#: The ``tool`` of a ``sandbox.network.allowedDomains`` entry (``PermissionRules.domains``).
DOMAIN = "allowedDomains"


def key_of(rule: Rule, cwd: str) -> str:
    return PREFIX + (os.path.realpath(cwd) if rule.project else USER)


def fingerprint(rule: Rule) -> str:
    if rule.tool == DOMAIN:
        return f"{rule.kind} sandbox.network.allowedDomains {rule.text}"
    return f"{rule.kind} {rule.text}"


def held_key(rule: Rule) -> tuple[str, str]:
    """What ``PermissionRules.held`` holds for ``rule`` (a domain apart from a rule of that text)."""
    return ("domain" if rule.tool == DOMAIN else rule.kind, rule.text)


def describe(rule: Rule) -> str:
    """The question's line: what the rule allows (or asks), and its file."""
    what = (
        f"allow network to {rule.text} (sandbox.network.allowedDomains)"
        if rule.tool == DOMAIN
        else (f"{rule.kind} {rule.text}")
    )
    return visible_line(f"{what} — {rule.source}")


def screen(rules: PermissionRules, store: TrustStore | None, *, accept_all: bool = False) -> None:
    """Mark the allow and ask rules (and allowed domains) not accepted as they are (``rules.held``,
    and ``rules.waiting``: store key, fingerprint, line, for the question) and say so once each in
    ``rules.warnings``; accept what is there for a place screened the first time (a folder's only
    while it is trusted: an untrusted folder's rules do not apply anyway)."""
    if store is None:
        return
    trusted = rules.trusted()
    accepted: dict[str, set[str] | None] = {}
    fresh: dict[str, list[str]] = {}
    held: set[tuple[str, str]] = set()
    waiting: list[tuple[str, str, str]] = []
    for rule in [*rules.rules, *rules.domains]:
        if rule.kind == "deny" or rule.granted or (rule.project and not trusted):
            continue
        key = key_of(rule, rules.cwd)
        if key not in accepted:
            try:
                accepted[key] = store.accepted(key)
            except OSError:
                accepted[key] = set()
        known = accepted[key]
        if accept_all or known is None:
            fresh.setdefault(key, []).append(fingerprint(rule))
        elif fingerprint(rule) not in known:
            held.add(held_key(rule))
            waiting.append((key, fingerprint(rule), describe(rule)))
            what = f"sandbox.network.allowedDomains {rule.text}" if rule.tool == DOMAIN else rule.text
            line = visible_line(
                f"permission rule not applied (new since you accepted the rules): {rule.kind} "
                f"{what} (from {rule.source}); accept it with `agent-tui trust --yes` "
                "or start with --trust-project"
            )
            if line not in rules.warnings:
                rules.warnings.append(line)
    for key, prints in fresh.items():
        with contextlib.suppress(OSError):
            store.accept(key, prints)
    rules.held = held
    rules.waiting = list(dict.fromkeys(waiting))


def accept_kept(store: TrustStore | None, cwd: str, rule: Rule) -> None:
    """A rule the user kept (ALLOW_ALWAYS) is accepted as written."""
    if store is not None:
        with contextlib.suppress(OSError):
            store.accept(key_of(rule, cwd), [fingerprint(rule)])


def accept_all(store: TrustStore, rules: PermissionRules) -> None:
    """``agent-tui trust --yes``: every allow and ask rule there now is accepted."""
    keys: dict[str, list[str]] = {}
    for rule in [*rules.rules, *rules.domains]:
        if rule.kind != "deny":
            keys.setdefault(key_of(rule, rules.cwd), []).append(fingerprint(rule))
    for key, prints in keys.items():
        store.accept(key, prints)


__all__ = [
    "DOMAIN",
    "PREFIX",
    "accept_all",
    "accept_kept",
    "describe",
    "fingerprint",
    "held_key",
    "key_of",
    "screen",
]

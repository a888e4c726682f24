"""``agent-tui trust [FOLDER] [--yes | --no | --forget] [--json]``: what a folder would have
agent-tui run, and the user's answer for it, without starting anything.

Without an action it lists the folder's decision (trusted, not trusted, never asked), the files
of its own that start programs or allow tool calls, and every hook and MCP server that would
load there (the user's own and the folder's), and every prompt file (``SYSTEM.md``,
``APPEND_SYSTEM.md``, templates, skills: :mod:`agent_tui.agent.prompt_trust`), each ``accepted``
or ``waiting`` (new or changed since the user last accepted it). ``--yes`` trusts the folder and
accepts every hook, server and prompt file as it is now (what ``--trust-project`` does for one
run); ``--no`` remembers a no; ``--forget`` drops the answer and what was accepted for the
folder, so the next start asks again. Nothing here runs a hook or starts a server.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import msgspec

from agent_tui.store.redact import redact_text
from agent_tui.terminal_text import visible_line


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("trust", help="what a folder would run, and your answer for it (nothing is started)")
    p.add_argument("folder", nargs="?", default=".", help="default: the current folder")
    action = p.add_mutually_exclusive_group()
    action.add_argument(
        "--yes", action="store_true", help="trust it, accepting its hooks and servers as they are"
    )
    action.add_argument("--no", action="store_true", help="remember that it is not trusted")
    action.add_argument("--forget", action="store_true", help="drop the answer: the next start asks again")
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from agent_tui.agent import hooks as hooks_module
    from agent_tui.agent import permission_rules, prompt_trust, rule_trust, trust
    from agent_tui.agent.extensions import Extensions
    from agent_tui.agent.mcp import config as mcp_config
    from agent_tui.config import config_path, read_config_file

    folder = os.path.realpath(args.folder)
    if not os.path.isdir(folder):
        print(visible_line(f"agent-tui: {args.folder}: not a folder"), file=sys.stderr)
        return 1
    path = config_path()
    data = read_config_file(path) if path.exists() else {}
    store = trust.TrustStore()
    resources = Extensions(folder, data, trust_store=store).project_resources()
    servers = mcp_config.read_servers(data, folder, trusted=True, config_name=str(path)).servers
    hooks, _ = hooks_module.read_hooks(data, folder, trusted=True, config_name=str(path))
    items: list[tuple[str, str, str, bool]] = []  # (key, fingerprint, line, the folder's own)
    for hook in hooks:
        key = folder if hook.project else trust.USER
        items.append((key, trust.hook_fingerprint(hook), trust.describe_hook(hook), hook.project))
    for server in servers:
        key = folder if server.project else trust.USER
        items.append((key, trust.server_fingerprint(server), trust.describe_server(server), server.project))
    prompts = _prompt_files(folder, path.parent, store, trusted=args.yes or store.decision(folder) is True)
    try:
        if args.yes:
            store.remember(folder, True)
            for key in {key for key, *_ in items} | {folder}:
                store.accept(key, [f for k, f, _, _ in items if k == key])
            prompt_trust.accept(store, [item for item, _ in prompts])
            rule_trust.accept_all(store, permission_rules.for_session(folder, path))
        elif args.no:
            store.remember(folder, False)
        elif args.forget:
            store.forget(folder)
    except OSError as e:
        print(visible_line(f"agent-tui: {store.path}: {e.strerror}"), file=sys.stderr)
        return 1
    decision = store.decision(folder)
    accepted = {key: store.accepted(key) for key in {trust.USER, folder}}
    rows: list[dict[str, Any]] = []
    for key, fingerprint, line, own in items:
        known = accepted[key]
        # nothing recorded yet: what is there is accepted at the next start, as it is
        state = "accepted" if known is None or fingerprint in known else "waiting"
        if own and decision is not True:
            state = "not loaded (folder not trusted)"
        rows.append({"what": line, "source": "folder" if own else "user", "state": state})
    for item, state in prompts if not args.forget else []:
        if args.yes:
            state = "accepted"
        own = item.key != prompt_trust.USER_KEY
        what = visible_line(redact_text(f"{item.label}: {item.preview}")[0])
        rows.append({"what": what, "source": "folder" if own else "user", "state": state})
    if args.json:
        report = {
            "folder": folder,
            "trusted": decision,
            "files": resources,
            "items": rows,
        }
        sys.stdout.buffer.write(msgspec.json.encode(report) + b"\n")
        return 0
    said = {True: "trusted", False: "not trusted", None: "never asked"}[decision]
    print(visible_line(f"{folder}: {said}"))
    for resource in resources:
        print(visible_line(f"  its own: {resource}"))
    if not rows:
        print("  no hooks, MCP servers or prompt files would load here")
    for row in rows:
        print(visible_line(f"  {row['state']}: {row['what']}"))
    return 0


def _prompt_files(folder: str, config_dir: Any, store: Any, *, trusted: bool) -> list[tuple[Any, str]]:
    """The prompt files that would load here (SYSTEM.md, APPEND_SYSTEM.md, templates, skills: the
    user's, and the folder's own when it is trusted), each with its state; nothing is written."""
    from agent_tui.agent import prompt_trust
    from agent_tui.agent.prompt_files import Places, PromptFlags
    from agent_tui.agent.resources import load_resources

    resources = load_resources(folder, config_dir, screen=False)
    places = Places.here(folder, config_dir)
    skills = list(resources.skills.values())
    flags = PromptFlags()
    return prompt_trust.states(
        store, places, flags, resources.prompt, resources.templates, skills, trusted=trusted
    )

"""``agent-tui cache FILE`` (why each call's cache missed) and ``agent-tui cost FILE --by-entry``
(what each entry cost by riding along): the call history of ``projection.call_history``, printed."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

import msgspec

from agent_tui.projection.call_history import cache_reports, carry_costs, model_calls
from agent_tui.projection.figures import money, usage_lines
from agent_tui.projection.pricing import session_usage
from agent_tui.store.errors import StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.terminal_text import visible, visible_line

COMMANDS = ("cache", "cost")
DEFAULT_NEXT_CALLS = 10
_encode = msgspec.json.Encoder().encode


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "cache", help="each model call: the prefix it shared with the call before, and why not more"
    )
    p.add_argument("file")
    p.add_argument("--leaf", help="the branch ending at this entry id (default: the session's leaf)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("cost", help="what the session cost; --by-entry: what each entry cost by riding along")
    p.add_argument("file")
    p.add_argument("--leaf", help="the branch ending at this entry id (default: the session's leaf)")
    p.add_argument("--by-entry", action="store_true", help="one row per entry: calls, carried tokens, cost")
    p.add_argument(
        "--next",
        type=int,
        default=DEFAULT_NEXT_CALLS,
        metavar="N",
        help=f"with --by-entry: what hiding each entry would save over the next N calls (default {DEFAULT_NEXT_CALLS})",
    )
    p.add_argument("--sort", choices=("tokens", "cost"), default="tokens", help="with --by-entry")
    p.add_argument("--limit", type=int, default=20, help="with --by-entry, as text: at most this many rows")
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    gc.disable()
    try:
        index = SessionIndex(read_file(Path(args.file)), args.file)
        for warning in index.warnings[:5]:
            print(visible_line(f"agent-tui: warning: {args.file}: {warning}"), file=sys.stderr)
        if args.leaf is not None:
            index.get(args.leaf)
        if args.command == "cost" and args.next < 0:
            print("agent-tui: --next must be 0 or more", file=sys.stderr)
            return 2
        if args.command == "cache":
            return _cache(index, args)
        return _cost(index, args)
    except StoreError as e:
        print(visible(f"agent-tui: {e}"), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


def _cache(index: SessionIndex, args: argparse.Namespace) -> int:
    reports = cache_reports(model_calls(index, args.leaf))
    if args.json:
        sys.stdout.buffer.write(_encode([r.as_json() for r in reports]) + b"\n")
        return 0
    if not reports:
        print("no model calls on this branch")
        return 0
    print("reply     model                 request   shared   server: read / write / input   why not more")
    for r in reports:
        usage = r.call.usage
        share = f"{r.shared_prefix_tokens:,}"
        if r.call.tokens:
            share += f" {100 * r.shared_prefix_tokens // r.call.tokens}%"
        cause = r.cause.kind
        if r.cause.entry_id:
            cause += f" ({r.cause.entry_id})"
        if r.cause.detail:
            cause += f": {r.cause.detail}"
        print(
            visible_line(
                f"{r.call.entry_id[:8]:<9} {(r.call.model or '?')[:21]:<21} {r.call.tokens:>7,} {share:>9}"
                f"   {usage.cache_read:>7,} / {usage.cache_write:>6,} / {usage.input:>6,}   {cause}"
            )
        )
    print("Token counts are estimates on one basis; the server's counts are its own.")
    return 0


def _cost(index: SessionIndex, args: argparse.Namespace) -> int:
    if not args.by_entry:
        branch_ids = {e.id for e in index.path_to(args.leaf if args.leaf is not None else index.leaf_id)}
        file_totals = session_usage(index.entries)
        branch_totals = session_usage(e for e in index.entries if e.id in branch_ids)
        if args.json:
            sys.stdout.buffer.write(
                _encode({"file": file_totals.to_json(), "branch": branch_totals.to_json()}) + b"\n"
            )
            return 0
        for line in usage_lines(file_totals, branch_totals):
            print(visible_line(line))
        return 0
    carries = carry_costs(model_calls(index, args.leaf))
    if args.sort == "cost":
        carries.sort(key=lambda c: (-(c.cost or 0.0), c.entry_id))
    if args.json:
        sys.stdout.buffer.write(_encode([c.as_json(args.next) for c in carries]) + b"\n")
        return 0
    if not carries:
        print("no model calls on this branch")
        return 0
    print(f"entry      calls   carried      cost   hiding it saves over the next {args.next} calls")
    for c in carries[: args.limit]:
        tokens, dollars = c.saving(args.next)
        cost = (
            "unpriced" if c.unpriced_calls == c.calls else money(c.cost) + ("+?" if c.unpriced_calls else "")
        )
        saving = f"{tokens:,} tokens" + (f", {money(dollars)}" if dollars is not None else "")
        print(visible_line(f"{c.entry_id[:10]:<10} {c.calls:>5} {c.carried_tokens:>9,} {cost:>9}   {saving}"))
    if len(carries) > args.limit:
        print(f"… {len(carries) - args.limit} more (--limit)")
    return 0

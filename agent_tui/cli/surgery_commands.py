"""Context surgery from the command line: ``edit FILE A..B --hide|--restore``, ``edit FILE ID --undo``,
``edit FILE COMPACTION_ID --replace TEXT`` and ``prune FILE``. Each prints what it did (or, with
``--preview``, would do) and the tokens of the next request before and after."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from agent_tui.terminal_text import visible

if TYPE_CHECKING:
    from agent_tui.projection.surgery import Surgery
    from agent_tui.store.session import Session


def add_prune_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from agent_tui.projection.surgery import DEFAULT_KEEP_LAST, DEFAULT_MIN_TOKENS

    p = sub.add_parser(
        "prune", help="replace old tool output with a one-line stub (no model call; undo with edit --undo)"
    )
    p.add_argument("file")
    p.add_argument(
        "--keep-last",
        type=int,
        default=DEFAULT_KEEP_LAST,
        metavar="N",
        help=f"keep the last N tool results whatever their size (default {DEFAULT_KEEP_LAST})",
    )
    p.add_argument(
        "--min-tokens",
        type=int,
        default=DEFAULT_MIN_TOKENS,
        metavar="T",
        help=f"prune only output over T tokens (default {DEFAULT_MIN_TOKENS:,})",
    )
    p.add_argument("--preview", action="store_true", help="show what would be pruned; write nothing")


def _print(text: str, file: TextIO | None = None) -> None:
    print(visible(text), file=file or sys.stdout)


def report(surgery: Surgery, *, preview: bool) -> None:
    """The plan in a few lines: the action, notes, the figures."""
    _print(("would " if preview else "") + surgery.summary_line())
    for note in surgery.notes:
        _print(f"  {note}")


def is_span(entry_id: str) -> bool:
    return ".." in entry_id


def run_edit(session: Session, args: argparse.Namespace) -> int:
    """The surgery forms of ``edit``: a span, an undo, or a compaction's summary."""
    from agent_tui.projection.context import project
    from agent_tui.projection.surgery import (
        apply,
        plan_span,
        plan_summary_edit,
        plan_undo,
    )

    projection = project(session.index)
    if args.undo:
        surgery = plan_undo(projection, args.id)
    elif args.replace is None:
        first, _, last = args.id.partition("..") if is_span(args.id) else (args.id, "", args.id)
        if not first or not last:
            _print("agent-tui: a span is FIRST..LAST", file=sys.stderr)
            return 2
        surgery = plan_span(projection, first, last, restore=args.restore)
    else:
        surgery = plan_summary_edit(projection, args.id, args.replace)
    report(surgery, preview=args.preview)
    if args.preview:
        return 0
    record = apply(session, surgery)
    _print(f"{record.id} (undo: agent-tui edit FILE {record.id} --undo)")
    return 0


def run_prune(args: argparse.Namespace) -> int:
    from agent_tui.projection.context import project
    from agent_tui.projection.surgery import apply, plan_prune
    from agent_tui.store.session import Session

    with Session.open(args.file, write=not args.preview) as session:
        surgery = plan_prune(project(session.index), keep_last=args.keep_last, min_tokens=args.min_tokens)
        if not surgery.edits:
            _print(
                f"nothing to prune: no tool output over {args.min_tokens:,} tokens before the last {args.keep_last}"
            )
            return 0
        output = int(surgery.extra.get("outputTokens", 0))
        report(surgery, preview=args.preview)
        _print(f"  {output:,} tokens of tool output in {len(surgery.edits)} results")
        if args.preview:
            return 0
        record = apply(session, surgery)
    _print(f"{record.id} (undo: agent-tui edit FILE {record.id} --undo)")
    return 0

"""The file checkpoint commands: ``checkpoints``, ``diff``, ``restore`` and ``gc``.

``restore`` writes into the folder it is run in, which must be the session's own folder (its
header's ``cwd``): a session file does not choose where files are written, and restoring one
project's snapshot over another folder would delete that folder's files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from agent_tui.agent.checkpointing import (
    CHECKPOINT_TYPE,
    RESTORE_TYPE,
    RestoreConflict,
    list_checkpoints,
    mark_at,
    plan_restore,
    restore,
    skipped_line,
)
from agent_tui.agent.checkpoints import CheckpointError, CheckpointStore
from agent_tui.store.errors import StoreError
from agent_tui.store.paths import sessions_root
from agent_tui.store.reader import read_file
from agent_tui.store.session import Session
from agent_tui.terminal_text import for_terminal, visible

COMMANDS = ("checkpoints", "diff", "restore", "gc")


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser], only: str | None = None) -> None:
    if only in (None, "checkpoints"):
        p = sub.add_parser("checkpoints", help="the file checkpoints on the active branch")
        p.add_argument("file")
        p.add_argument("--json", action="store_true")
    if only in (None, "diff"):
        p = sub.add_parser("diff", help="the files at ENTRY against the disk (or against ENTRY2)")
        p.add_argument("file")
        p.add_argument("entry")
        p.add_argument("entry2", nargs="?")
        p.add_argument("--stat", action="store_true", help="only the paths that differ")
    if only in (None, "restore"):
        p = sub.add_parser("restore", help="write the files back as ENTRY left them")
        p.add_argument("file")
        p.add_argument("entry")
        p.add_argument("--dry-run", action="store_true", help="list what would change, write nothing")
        p.add_argument(
            "--yes", action="store_true", help="also overwrite files changed outside the agent (conflicts)"
        )
        p.add_argument(
            "--outside",
            action="store_true",
            help="also write back files outside the folder that write/edit touched",
        )
        p.add_argument("--json", action="store_true")
    if only in (None, "gc"):
        p = sub.add_parser("gc", help="remove file snapshots no session refers to")
        p.add_argument("--session-dir", action="append", default=[], help="also keep what these refer to")


def run(args: argparse.Namespace) -> int:
    out = for_terminal(sys.stdout)
    try:
        if args.command == "checkpoints":
            return _checkpoints(args, out)
        if args.command == "diff":
            return _diff(args, out)
        if args.command == "restore":
            return _restore(args, out)
        return _gc(args, out)
    except (StoreError, CheckpointError) as e:
        print(visible(f"agent-tui: {e}"), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


def _checkpoints(args: argparse.Namespace, out: TextIO) -> int:
    session = Session.open(args.file, write=False)
    found = list_checkpoints(session)
    if args.json:
        sys.stdout.write(json.dumps(found, ensure_ascii=False) + "\n")
        return 0
    if not found:
        print("no file checkpoints on the active branch", file=out)
    for item in found:
        files = item["files"]
        counts = ", ".join(f"{len(files[k])} {k}" for k in ("added", "changed", "deleted") if files[k])
        print(
            f"{item['entryId']}  {item['kind']:<10} {item['when']:<7} {item['snapshot'][:12]}  {counts or '-'}",
            file=out,
        )
        if item.get("skipped"):
            print(f"    {skipped_line(item['skipped'])}", file=out)
    return 0


def _diff(args: argparse.Namespace, out: TextIO) -> int:
    session = Session.open(args.file, write=False)
    store = CheckpointStore()
    old = _tree(session, args.entry)
    if args.entry2 is not None:
        new = _tree(session, args.entry2)
    else:
        new = store.snapshot(_session_folder(session)).tree
    if args.stat:
        changes = store.changes(old, new)
        for kind, paths in (("A", changes.added), ("M", changes.changed), ("D", changes.deleted)):
            for path in paths:
                print(f"{kind} {path}", file=out)
        return 0
    sys.stdout.flush()
    print(store.patch(old, new), end="", file=out)
    return 0


def _tree(session: Session, entry_id: str) -> str:
    mark = mark_at(session.index, entry_id)
    if mark is None:
        raise CheckpointError(f"no file checkpoint at or before entry {entry_id}")
    return mark.snapshot


def _session_folder(session: Session) -> str:
    """The folder this process runs in, when it is the session's (else CheckpointError)."""
    here = os.path.realpath(os.getcwd())
    theirs = os.path.realpath(session.cwd) if session.cwd else ""
    if here != theirs:
        raise CheckpointError(
            f"the session's folder is {session.cwd or '(none)'}: run this there (files are written "
            "only into the folder they came from)"
        )
    return here


def _restore(args: argparse.Namespace, out: TextIO) -> int:
    store = CheckpointStore()
    with Session.open(args.file, write=not args.dry_run) as session:
        folder = _session_folder(session)
        plan = plan_restore(store, session, folder, args.entry)
        if plan.mark is None:
            raise CheckpointError(f"no file checkpoint at or before entry {args.entry}")
        if args.dry_run or plan.empty:
            if args.json:
                sys.stdout.write(json.dumps(plan.to_json(), ensure_ascii=False) + "\n")
            else:
                for line in plan.lines() or ["nothing to restore: the files are as that entry left them"]:
                    print(line, file=out)
            return 0
        try:
            done = restore(
                store, session, folder, args.entry, force=args.yes, expected=plan, outside=args.outside
            )
        except RestoreConflict as e:
            for line in plan.lines():
                print(line, file=out)
            print(visible(f"agent-tui: {e}; nothing was written (--yes writes them)"), file=sys.stderr)
            return 2
    if args.json:
        data = done.entry.data if done.entry is not None else {}
        sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
        return 0
    refused = dict(done.refused)
    for line, change in zip(plan.lines(), plan.changes, strict=False):
        note = f"  (not written: {refused[change.path]})" if change.path in refused else ""
        print(line + note, file=out)
    if plan.outside and not args.outside:
        print(
            f"{len(plan.outside)} file(s) outside the project folder were left as they are (--outside writes them)",
            file=out,
        )
    if done.undo_id is not None:
        print(f"undo: agent-tui restore {args.file} {done.undo_id}", file=out)
    return 1 if refused else 0


def _gc(args: argparse.Namespace, out: TextIO) -> int:
    keep: set[str] = set()
    folders = [sessions_root(), *(Path(p).expanduser() for p in args.session_dir)]
    files = 0
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in folder.rglob("*.jsonl"):
            try:
                loaded = read_file(path)
            except (StoreError, OSError):
                continue
            files += 1
            for entry in loaded.entries:
                if entry.type != "custom" or entry.data.get("customType") not in (
                    CHECKPOINT_TYPE,
                    RESTORE_TYPE,
                ):
                    continue
                payload = entry.data.get("data") or {}
                for key in ("snapshot", "target"):
                    if isinstance(payload.get(key), str):
                        keep.add(payload[key])
                outside = payload.get("outside")
                if isinstance(outside, dict):
                    keep.update(v for v in outside.values() if isinstance(v, str))
    before, after = CheckpointStore().gc(keep)
    print(
        f"kept {len(keep)} snapshot(s) named by {files} session file(s); store {before:,} -> {after:,} bytes",
        file=out,
    )
    return 0


__all__ = ["COMMANDS", "add_parsers", "run"]

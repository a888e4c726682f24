"""The library commands: export, import, clone and ``sessions`` (with or without ``--search``)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agent_tui.store.errors import StoreError
from agent_tui.terminal_text import VisibleWriter, clip, visible, visible_line

if TYPE_CHECKING:
    from agent_tui.library.search import SessionSummary

LIBRARY_COMMANDS = ("export", "import", "clone")
_encode = msgspec.json.Encoder().encode


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="write a session as HTML, Markdown or JSONL")
    p.add_argument("file")
    p.add_argument(
        "--format",
        choices=("html", "md", "jsonl"),
        help="default: by the -o file's extension (.md, .jsonl), else html",
    )
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "--branch", action="store_true", help="only the active branch (the default for md and jsonl)"
    )
    scope.add_argument(
        "--all",
        action="store_true",
        help="every branch (the default for html; md: other branches after the active one; jsonl: the file as is)",
    )
    p.add_argument("--leaf", help="the branch ending at this entry id (default: the session's leaf)")
    p.add_argument(
        "-o",
        "--output",
        help="file to create, '-' for stdout (default: <file name>.<format> in the current folder)",
    )

    p = sub.add_parser("import", help="turn a Claude Code transcript or a Codex CLI rollout into a session")
    p.add_argument("path", help="a transcript file, or a folder of them")
    where = p.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", help="path of the new session file (one transcript only)")
    where.add_argument("--session-dir", help="folder for the new sessions (default: the data dir, by cwd)")
    p.add_argument("--format", choices=("claude-code", "codex"), help="skip detection")

    p = sub.add_parser("clone", help="a new session file holding the current branch")
    p.add_argument("file")
    p.add_argument("-o", "--output", help="path of the new file (default: beside FILE)")


def run(args: argparse.Namespace) -> int:
    gc.disable()
    try:
        # what goes to stderr (import warnings, index notices) quotes transcripts and files: inert
        with contextlib.redirect_stderr(VisibleWriter(sys.stderr)):
            if args.command == "sessions":
                return cmd_sessions(args)
            return {"export": cmd_export, "import": cmd_import, "clone": cmd_clone}[args.command](args)
    except StoreError as e:
        print(visible(f"agent-tui: {e}"), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:  # Ctrl+C: an index is left as consistent as after each file
        print("agent-tui: interrupted", file=sys.stderr)
        return 130


def cmd_export(args: argparse.Namespace) -> int:
    from agent_tui.library.export import default_export_path, export_bytes, write_new_file
    from agent_tui.store.index import SessionIndex
    from agent_tui.store.reader import read_file

    source = Path(args.file)
    if args.format is None:  # as the app's export prompt: the output file's extension picks it
        suffix = Path(args.output).suffix.lower() if args.output and args.output != "-" else ""
        args.format = {".md": "md", ".jsonl": "jsonl"}.get(suffix, "html")
    index = SessionIndex(read_file(source), args.file)
    whole = args.all or (args.format == "html" and not args.branch)
    if args.format == "jsonl" and args.all and args.leaf:
        raise StoreError("export --format jsonl --all copies the whole file; --leaf does not apply")
    data = export_bytes(index, args.format, leaf_id=args.leaf, whole=whole, source=source)
    if args.output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    out = Path(args.output) if args.output else default_export_path(source, args.format)
    write_new_file(out, data)
    print(out)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from agent_tui.library.importers import import_folder, import_session

    source = Path(args.path)
    if source.is_dir():
        if args.output:
            raise StoreError(f"{source}: a folder of transcripts needs --session-dir, not -o")
        results = import_folder(source, session_dir=args.session_dir, fmt=args.format)
        if not results:
            raise StoreError(f"{source}: no .jsonl transcripts in this folder")
    else:
        results = [
            (source, import_session(source, out=args.output, session_dir=args.session_dir, fmt=args.format))
        ]
    failed = 0
    for path, imported in results:
        if isinstance(imported, StoreError):
            print(f"agent-tui: {imported}", file=sys.stderr)  # one line: the rest is imported
            failed += 1
            continue
        result = imported.result
        print(imported.path)
        kept = ", ".join(f"{n} {what}" for what, n in sorted(result.kept.items()))
        dropped = ", ".join(f"{n} {what}" for what, n in sorted(result.dropped.items())) or "nothing"
        print(
            f"agent-tui: {path}: {result.format} transcript, {len(result.entries)} entries", file=sys.stderr
        )
        print(f"agent-tui:   kept {kept}", file=sys.stderr)
        print(f"agent-tui:   dropped {dropped}", file=sys.stderr)
        for warning in result.warnings[:5]:
            print(f"agent-tui: warning: {warning}", file=sys.stderr)
    return 1 if failed else 0


def cmd_clone(args: argparse.Namespace) -> int:
    from agent_tui.library.actions import clone_session

    print(clone_session(args.file, args.output))
    return 0


def cmd_sessions(args: argparse.Namespace) -> int:
    """``agent-tui sessions``: one path, the library over the session folder(s); ``--search``
    filters it. Without ``--search`` the listing needs no usable index: when the data dir's
    cannot be used, a throwaway one in a temporary folder lists the same summaries."""
    import tempfile

    from agent_tui.cli.progress_line import ProgressLine
    from agent_tui.config import load_model_table
    from agent_tui.library.search import Library, index_error_reason

    load_model_table()  # the config file's prices: each summary's cost
    library = Library.for_cwd(os.getcwd(), all_dirs=args.all, session_dir=args.session_dir)
    # the terminal itself (not the VisibleWriter over it): the line is rewritten with carriage returns
    stderr = sys.stderr.stream if isinstance(sys.stderr, VisibleWriter) else sys.stderr
    progress = ProgressLine("sessions", stream=stderr)
    try:
        with library:
            try:  # the listing needs no full-text index: a first listing reads a fraction of a search's work
                library.refresh(progress, text=args.search is not None, jobs=min(os.cpu_count() or 1, 4))
            finally:
                progress.done()
            if args.search is None:
                return _print_listing(args, library.sessions())
            hits = library.search(args.search, args.limit, locate=args.limit)
    except BrokenPipeError:  # the reader of the listing left (| head): not the index's fault
        raise
    except (sqlite3.Error, OSError) as e:  # a full disk, an unwritable data dir
        reason = index_error_reason(e) if isinstance(e, sqlite3.Error) else e.strerror or str(e)
        print(f"agent-tui: the search index {library.db_path} cannot be used ({reason})", file=sys.stderr)
        if args.search is not None:
            return 1
        with tempfile.TemporaryDirectory(prefix="agent-tui-index-") as folder:
            throwaway = Library(library.roots, nested=library.nested, db_path=Path(folder) / "index.sqlite3")
            with throwaway:
                throwaway.refresh(text=False)
                return _print_listing(args, throwaway.sessions())
    finally:
        for notice in library.notices:
            print(f"agent-tui: {notice}", file=sys.stderr)
    if args.json:
        sys.stdout.write(msgspec.json.format(_encode([h.to_json() for h in hits]), indent=2).decode() + "\n")
        return 0
    for hit in hits:
        s = hit.session
        where = ", ".join(sorted(set(hit.matched.values())))
        print(
            f"{s.modified[:16].replace('T', ' ')}  {clip(s.title, 90, one_line=True)}  [{visible_line(where)}]"
        )
        entry = f"  (entry {visible_line(hit.entry_id)})" if hit.entry_id else ""
        print(f"    {visible_line(s.path)}{entry}")
        if hit.snippet:
            print(f"    > {visible_line(hit.snippet)}")
    if not hits:
        # the search looks in this folder's sessions only: say how to look in every folder's
        hint = (
            ""
            if args.all or args.session_dir
            else " in this folder's sessions; --all searches every folder's"
        )
        print(f"no sessions match{hint}", file=sys.stderr)
        return 1
    return 0


def _cost(summary: SessionSummary) -> str:
    """What the file's model calls cost, as the status line writes it ("$0.0123"; "+?": some calls
    are of a model without a price; tokens only when none has one), or "no calls"."""
    from agent_tui.projection.figures import cost_text
    from agent_tui.projection.pricing import UsageTotals

    totals = UsageTotals.from_json(summary.usage)
    return cost_text(totals) if totals.calls else "no calls"


def _print_listing(args: argparse.Namespace, summaries: list[SessionSummary]) -> int:
    """Every session, most recent activity first (ties: the later file name first)."""
    summaries = sorted(summaries, key=lambda s: (s.modified, Path(s.path).name), reverse=True)
    if args.json:
        data = [s.to_json() for s in summaries]
        sys.stdout.write(msgspec.json.format(_encode(data), indent=2).decode() + "\n")
        return 0
    for s in summaries:
        print(
            f"{visible_line(s.modified)}  {s.entries:6d} entries  {_cost(s):>10}  {visible_line(s.path)}\n"
            f"    {clip(s.title, 100, one_line=True)}"
        )
    if not summaries:
        print("no sessions", file=sys.stderr)
    return 0

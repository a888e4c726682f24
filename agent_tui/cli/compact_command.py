"""``agent-tui compact FILE [--focus TEXT] [--preview | --undo | --review]``: compaction from the
command line (``--review``: the model's summary is printed and opened in ``$VISUAL`` / ``$EDITOR``;
what the file holds when the editor exits is the summary appended).

A compaction here (whole, reviewed, or of a range) runs the ``PreCompact`` hooks first, as the
agent runs them before every compaction (trigger ``manual``): a hook that blocks it (exit 2, or
``{"decision": "block"}``) leaves the file as it is and the command exits 1. The folder's own hooks
run only with ``--trust-project`` or a remembered yes (this command never asks), as in print mode."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from agent_tui.projection import registry
from agent_tui.store.errors import StoreError
from agent_tui.terminal_text import visible

if TYPE_CHECKING:
    from agent_tui.agent.compaction import CompactionOutcome, DraftCompaction
    from agent_tui.agent.events import AgentEvent
    from agent_tui.config import Config
    from agent_tui.store.session import Session


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("compact", help="fold older history into a summary (nothing is deleted)")
    p.add_argument("file")
    p.add_argument("--focus", metavar="TEXT", help="what the summary should concentrate on")
    action = p.add_mutually_exclusive_group()
    action.add_argument(
        "--preview", action="store_true", help="show what would be summarized and kept; no model call"
    )
    action.add_argument(
        "--undo", action="store_true", help="continue from the entry before the latest compaction"
    )
    action.add_argument(
        "--review",
        action="store_true",
        help="print the model's summary and edit it in $VISUAL / $EDITOR before it is appended "
        "(an editor that fails, or an empty file, appends nothing)",
    )
    p.add_argument("--provider", choices=registry.NAMES)
    p.add_argument("--model")
    p.add_argument("--base-url")
    p.add_argument("--keep", type=int, metavar="TOKENS", help="tokens to keep verbatim (default 20,000)")
    p.add_argument(
        "--from",
        dest="range_from",
        metavar="ID",
        help="compact only the range ID..--to ID (widened to whole turns): its first user message "
        "becomes the summary, the rest is hidden; undo with `agent-tui edit FILE RECORD --undo`",
    )
    p.add_argument("--to", dest="range_to", metavar="ID", help="the range's last entry (with --from)")
    p.add_argument(
        "--trust-project",
        action="store_true",
        help="run this folder's own PreCompact hooks (.claude/settings.json) without asking",
    )


def _print(text: str, file: TextIO | None = None) -> None:
    """Entry ids, file names and errors quote the session: printed inert."""
    print(visible(text), file=file or sys.stdout)


async def _hooks_allow(session: Session, config: Config, args: argparse.Namespace) -> bool:
    """The PreCompact hooks of this compaction (their notices on stderr); False, said, when one
    blocks it."""
    import os

    from agent_tui.agent import loop_hooks
    from agent_tui.agent.events import Notice
    from agent_tui.agent.extensions import Extensions
    from agent_tui.store.redact import StreamRedactor, redact_text

    def say(text: str) -> None:  # a hook's words may quote a secret, as print mode's notices
        _print(redact_text(text)[0] if StreamRedactor().enabled else text, file=sys.stderr)

    def emit(event: AgentEvent | None) -> None:
        if isinstance(event, Notice):
            say(f"agent-tui: {event.text}")

    ext = Extensions.from_config_file(config.config_path, os.getcwd(), trust_project=args.trust_project)
    try:
        blocked = await loop_hooks.compaction_blocked(ext, session, None, "manual", args.focus, emit)
    finally:
        await ext.close()
    if blocked is None:
        return True
    say(f"agent-tui: {args.file}: compaction blocked by a PreCompact hook: {blocked}")
    return False


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except StoreError as e:
        _print(f"agent-tui: {e}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    import asyncio
    from dataclasses import replace

    from agent_tui.agent.compaction import (
        NOTHING_TO_COMPACT,
        CompactionError,
        NothingToCompact,
        compact,
        draft_compaction,
        estimated_after,
        preview,
        undo_compaction,
    )
    from agent_tui.config import resolve
    from agent_tui.store.session import Session

    if (args.range_from is None) != (args.range_to is None):
        _print("agent-tui: --from and --to go together", file=sys.stderr)
        return 2
    with Session.open(args.file, write=not args.preview) as session:
        if args.range_from is not None:
            if args.undo:
                _print("agent-tui: undo a range with `agent-tui edit FILE RECORD --undo`", file=sys.stderr)
                return 2
            if args.review:
                _print("agent-tui: --review is for a whole compaction, not a range", file=sys.stderr)
                return 2
            return _run_range(session, args)
        if args.undo:
            try:
                moved = undo_compaction(session)
            except CompactionError as e:
                _print(f"agent-tui: {args.file}: {e}", file=sys.stderr)
                return 1
            _print(f"continuing from {moved.parent_id} (entry {moved.id})")
            return 0
        from agent_tui.projection.context import project

        # The same model and settings a run would use (flags, environment, config file, session).
        resolved = resolve(
            project(session.index).model, provider=args.provider, model=args.model, base_url=args.base_url
        )
        config, settings = resolved.config, resolved.compaction
        if config is None and not args.preview:
            _print(resolved.problem or "agent-tui: no model is configured", file=sys.stderr)
            return 1
        if args.keep:
            settings = replace(settings, keep_recent_tokens=args.keep)
        from agent_tui.agent.window import WindowCache, known_window
        from agent_tui.projection.compaction import fit_to_window
        from agent_tui.projection.models import lookup

        session_model = project(session.index).model or {}
        model = config.model if config is not None else str(session_model.get("modelId") or "")
        provider_name = config.provider if config is not None else str(session_model.get("provider") or "")
        # the server's real window when an overflow taught it (the session's entry, else the cache):
        # the preview plans in it as the compaction would (it used the model's nominal window)
        window = known_window(
            session.index.active_path(),
            provider_name,
            config.base_url if config is not None else None,
            model,
            WindowCache.default(),
        )
        settings = fit_to_window(settings, window or lookup(model).context_window)
        if args.preview:
            plan = preview(session, settings, window=window)
            if plan is None:
                _print(NOTHING_TO_COMPACT)
                return 0
            _print(
                f"summarize: {len(plan.summarized_entry_ids)} entries ({plan.summarized_entry_ids[0]} .. {plan.summarized_entry_ids[-1]})"
                if plan.summarized_entry_ids
                else "summarize: the start of the current turn only"
            )
            _print(
                f"keep:      {len(plan.kept_entry_ids)} entries from {plan.first_kept_entry_id}, ≈ {plan.kept_tokens:,} tokens"
            )
            if plan.is_split_turn:
                _print(
                    f"split turn: its first {len(plan.turn_prefix_messages)} messages are summarized separately"
                )
            if plan.previous_summary is not None:
                _print("updates the previous summary")
            _print(
                f"files read: {', '.join(plan.read_files) or '-'}; modified: {', '.join(plan.modified_files) or '-'}"
            )
            _print(
                f"tokens: ≈ {plan.estimated_before:,} before, ≈ {estimated_after(plan):,} after "
                f"(the summary guessed at {plan.summary_guess:,} tokens)"
            )
            return 0
        assert config is not None
        from agent_tui.agent.build import make_provider
        from agent_tui.agent.compaction import Summarizer

        provider = make_provider(config, model)

        async def go() -> int:
            summarizer = Summarizer(provider, model, config.retry, context_window=window)
            try:
                if not await _hooks_allow(session, config, args):
                    return 1
                if args.review:
                    outcome = _reviewed(
                        session, await draft_compaction(session, summarizer, settings, focus=args.focus)
                    )
                else:
                    outcome = await compact(session, summarizer, settings, focus=args.focus)
            except NothingToCompact as e:  # what was asked is already the case: not a failure
                _print(str(e))
                return 0
            except CompactionError as e:
                _print(f"agent-tui: {args.file}: {e}", file=sys.stderr)
                return 1
            finally:
                await provider.aclose()
            _print(
                f"compacted: entry {outcome.entry.id}, {len(outcome.plan.summarized_entry_ids)} entries summarized, "
                f"≈ {outcome.plan.estimated_before:,} → ≈ {outcome.tokens_after:,} tokens"
            )
            _print_losses(outcome.entry.data.get("details"))
            return 0

        return asyncio.run(go())


def _print_losses(details: object) -> None:
    """What the summary left out of the span it replaced (recorded in the entry's details)."""
    lost = details.get("lost") if isinstance(details, dict) else None
    if not isinstance(lost, list) or not lost:
        return
    _print(f"the summary leaves out {len(lost)}:")
    for item in lost:
        if isinstance(item, dict):
            where = f" ({item.get('entryId')})" if item.get("entryId") else ""
            _print(f"  {item.get('kind')}: {item.get('text')}{where}")


def _reviewed(session: Session, draft: DraftCompaction) -> CompactionOutcome:
    """The draft's summary printed, then edited in ``$VISUAL`` / ``$EDITOR``, then appended."""
    from agent_tui.agent.compaction import CompactionError, append_compaction
    from agent_tui.projection.compaction import grows_the_context
    from agent_tui.projection.context import project
    from agent_tui.tui.external_editor import EditorError, edit_text, editor_command

    _print(draft.summary)
    grown = grows_the_context(project(session.index), draft.plan, draft.summary)
    if grown is not None:  # refused unreviewed; saved after the review, it applies anyway
        _print(
            f"the summary would make the context larger (≈{grown[0]:,} → ≈{grown[1]:,} tokens); "
            "what the editor saves is applied anyway",
            file=sys.stderr,
        )
    sys.stdout.flush()
    try:
        edited = edit_text(draft.summary, editor_command())
    except EditorError as e:
        raise CompactionError(f"{e}; nothing was appended") from None
    return append_compaction(session, draft, edited)


def _run_range(session: Session, args: argparse.Namespace) -> int:
    import asyncio

    from agent_tui.agent.compaction import CompactionError, Summarizer
    from agent_tui.agent.range_compaction import compact_range
    from agent_tui.config import resolve
    from agent_tui.projection.context import project
    from agent_tui.projection.surgery import SurgeryError, plan_range

    try:
        plan = plan_range(project(session.index), args.range_from, args.range_to)
    except SurgeryError as e:
        _print(f"agent-tui: {args.file}: {e}", file=sys.stderr)
        return 1
    for note in plan.notes:
        _print(note)
    _print(
        f"summarize: {plan.first_id}..{plan.last_id} ({len(plan.hidden_ids) + 1} entries); "
        f"the summary replaces {plan.carrier_id}"
    )
    if args.preview:
        return 0
    # the model a whole compaction (and the next turn) would use: the flags', else the session's
    resolved = resolve(
        project(session.index).model, provider=args.provider, model=args.model, base_url=args.base_url
    )
    config = resolved.config
    if config is None:
        _print(resolved.problem or "agent-tui: no model is configured", file=sys.stderr)
        return 1
    from agent_tui.agent.build import make_provider

    model = config.model
    provider = make_provider(config, model)

    async def go() -> int:
        try:
            if not await _hooks_allow(session, config, args):
                return 1
            outcome = await compact_range(
                session,
                Summarizer(provider, model, config.retry),
                args.range_from,
                args.range_to,
                focus=args.focus,
            )
        except (CompactionError, SurgeryError) as e:
            _print(f"agent-tui: {args.file}: {e}", file=sys.stderr)
            return 1
        finally:
            await provider.aclose()
        _print(outcome.surgery.summary_line())
        _print(f"{outcome.record.id} (undo: agent-tui edit FILE {outcome.record.id} --undo)")
        return 0

    return asyncio.run(go())

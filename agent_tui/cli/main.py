"""``agent-tui``: dispatch to a session command or start the app.

Imports stay lazy: ``agent-tui context`` on a 50 MB file must not pay for
pydantic, textual or the SDKs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from agent_tui.terminal_text import visible_line

SESSION_COMMANDS = (
    "context",
    "tree",
    "edit",
    "label",
    "rename",
    "branch",
    "fork",
    "clone",
    "pin",
    "prune",
    "sessions",
    "compact",
    "export",
    "import",
    "cache",
    "cost",
    "checkpoints",
    "diff",
    "restore",
    "gc",
    "trust",
)


class _Choices(Sequence[str]):
    """An argument's choices: ``first``, then what ``more()`` returns, called only when a value is
    not among ``first`` or the list is shown (help, an error)."""

    def __init__(self, first: tuple[str, ...], more: Callable[[], tuple[str, ...]]) -> None:
        self._first = first
        self._more = more
        self._all: tuple[str, ...] | None = None

    def _names(self) -> tuple[str, ...]:
        if self._all is None:
            self._all = (*self._first, *self._more())
        return self._all

    def __contains__(self, value: object) -> bool:
        return value in self._first or value in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        return self._names()[i]


def _provider_names() -> tuple[str, ...]:
    from agent_tui.projection import registry

    return registry.NAMES


def _api_names() -> tuple[str, ...]:
    from agent_tui.projection import registry

    return registry.api_names()


def build_session_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The session commands' parser; with ``only``, just that command's (a 50 MB ``context``
    should not spend milliseconds describing fourteen other commands)."""
    parser = argparse.ArgumentParser(
        prog="agent-tui", description="Session commands (headless, on any session file)."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    if only in (None, "context"):
        p = sub.add_parser("context", help="what the model would see")
        p.add_argument("file")
        p.add_argument("--leaf", help="project the branch ending at this entry id")
        # the providers' names are read from the registry only when the command needs them: not for
        # ``--format json`` (the registry's import is about a tenth of a 50 MB ``context``)
        p.add_argument("--format", default="json").choices = _Choices(("json", "text"), _provider_names)
        p.add_argument("--model", help="model for a provider's request body (default: the session's)")
        p.add_argument("--api", help="the provider's API for the body (as for a run)").choices = _Choices(
            (), _api_names
        )
        p.add_argument("--base-url", help="the base URL the run uses (OpenAI: another one means Chat)")

    if only in (None, "tree"):
        p = sub.add_parser("tree", help="the whole tree, active path marked")
        p.add_argument("file")
        p.add_argument("--json", action="store_true")

    if only in (None, "edit"):
        p = sub.add_parser(
            "edit",
            help="hide, replace or restore an entry (or a span FIRST..LAST) in the model's view",
        )
        p.add_argument("file")
        p.add_argument(
            "id",
            help="an entry; FIRST..LAST for a span (--hide, --restore); a compaction (--replace edits "
            "its summary); a surgery or one of its edits (--undo)",
        )
        action = p.add_mutually_exclusive_group(required=True)
        action.add_argument("--hide", action="store_true")
        action.add_argument("--replace", metavar="TEXT")
        action.add_argument("--restore", action="store_true")
        action.add_argument(
            "--undo", action="store_true", help="undo a surgery (span, prune, range) in one go"
        )
        p.add_argument("--preview", action="store_true", help="with a span or --undo: show, write nothing")

    if only in (None, "label"):
        p = sub.add_parser("label", help="label an entry (no NAME clears the label)")
        p.add_argument("file")
        p.add_argument("id")
        p.add_argument("name", nargs="?")

    if only in (None, "rename"):
        p = sub.add_parser("rename", help="name the session")
        p.add_argument("file")
        p.add_argument("name")

    if only in (None, "branch"):
        p = sub.add_parser("branch", help="make ID the leaf: the next message continues from it")
        p.add_argument("file")
        p.add_argument("id")

    if only in (None, "pin"):
        p = sub.add_parser("pin", help="keep an entry verbatim through compaction")
        p.add_argument("file")
        p.add_argument("id")
        p.add_argument("--unpin", action="store_true")

    if only in (None, "fork"):
        p = sub.add_parser("fork", help="a new session file holding the path to ID")
        p.add_argument("file")
        p.add_argument("id", nargs="?")
        p.add_argument("-o", "--output", help="path of the new file (default: beside FILE)")

    if only in (None, "sessions"):
        p = sub.add_parser("sessions", help="list sessions of the current directory")
        p.add_argument("--all", action="store_true", help="sessions of every directory")
        p.add_argument("--json", action="store_true")
        p.add_argument("--session-dir", help="look here instead of the default folder")
        p.add_argument(
            "--search",
            metavar="TEXT",
            help='full-text search: sessions holding every word (a prefix), every "exact phrase" '
            '(an unclosed quote runs to the end) and no -word or -"phrase", best first',
        )
        p.add_argument("--limit", type=int, default=20, help="with --search: at most this many sessions")

    if only in (None, "prune"):
        from agent_tui.cli.surgery_commands import add_prune_parser

        add_prune_parser(sub)

    if only in (None, "export", "import", "clone"):
        from agent_tui.cli.library_commands import add_parsers

        add_parsers(sub)
    if only in (None, "compact"):
        from agent_tui.cli.compact_command import add_parser as add_compact_parser

        add_compact_parser(sub)
    if only in (None, "trust"):
        from agent_tui.cli.trust_command import add_parser as add_trust_parser

        add_trust_parser(sub)
    if only in (None, "cache", "cost"):
        from agent_tui.cli.call_views import add_parsers as add_call_view_parsers

        add_call_view_parsers(sub)
    if only in (None, "checkpoints", "diff", "restore", "gc"):
        from agent_tui.cli.checkpoint_commands import add_parsers as add_checkpoint_parsers

        add_checkpoint_parsers(sub, only)
    return parser


#: Commands that only read: the console script ends them without tearing down the interpreter.
READ_ONLY_COMMANDS = ("context", "tree", "cache", "cost")


def entry() -> None:
    """The ``agent-tui`` console script.

    After ``context`` or ``tree`` the process exits at once: freeing tens of thousands
    of objects one by one at shutdown costs a 50 MB session about 10% of its run.
    Nothing is open for writing on those paths; the output is flushed first.
    """
    code = main()
    if len(sys.argv) > 1 and sys.argv[1] in READ_ONLY_COMMANDS:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            pass
        os._exit(code)
    sys.exit(code)


#: ``AGENT_TUI_DEBUG_MODULES=FILE``: when the command ends, the names of every module it imported,
#: one a line (the tests check that no headless face imports Textual).
MODULES_ENV = "AGENT_TUI_DEBUG_MODULES"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    finally:
        target = os.environ.get(MODULES_ENV)
        if target:
            with open(target, "w", encoding="utf-8") as f:
                f.write("".join(f"{name}\n" for name in sorted(sys.modules)))


def _main(args: list[str]) -> int:
    if args and args[0] in SESSION_COMMANDS:
        from agent_tui.cli import session_commands

        parsed = build_session_parser(args[0]).parse_args(args)
        if parsed.command in ("export", "import", "clone", "sessions"):
            from agent_tui.cli import library_commands

            return library_commands.run(parsed)
        if parsed.command == "compact":
            from agent_tui.cli import compact_command

            return compact_command.run(parsed)
        if parsed.command in ("checkpoints", "diff", "restore", "gc"):
            from agent_tui.cli import checkpoint_commands

            return checkpoint_commands.run(parsed)
        if parsed.command == "trust":
            from agent_tui.cli import trust_command

            return trust_command.run(parsed)
        if parsed.command in ("cache", "cost"):
            from agent_tui.cli import call_views

            return call_views.run(parsed)
        return session_commands.run(parsed)
    parser = argparse.ArgumentParser(
        prog="agent-tui",
        description="A terminal coding agent. Session commands: "
        + ", ".join(SESSION_COMMANDS)
        + " (agent-tui COMMAND -h); 'agent-tui serve' runs the app in a browser; 'agent-tui acp' is an "
        "Agent Client Protocol agent on stdio (Zed, Toad).",
    )
    if args and args[0] == "serve":
        from agent_tui.tui.launch import serve

        return serve(args[1:])
    if args and args[0] == "acp":
        from agent_tui.acp import stdio as acp_stdio  # the protocol package is imported only on this path

        acp_parser = argparse.ArgumentParser(prog="agent-tui")
        acp_stdio.add_parser(acp_parser.add_subparsers(dest="command", required=True))
        parsed_acp = acp_parser.parse_args(args)
        from agent_tui.agent import sandbox

        sandbox.set_flags(parsed_acp.sandbox, parsed_acp.sandbox_network)
        from agent_tui.cli import model_flags

        problem = model_flags.apply_model_flags(parsed_acp)  # --model as the app and print mode take it
        if problem is not None:
            print(visible_line(problem), file=sys.stderr)
            return 1
        return acp_stdio.run(parsed_acp)
    from agent_tui import __version__
    from agent_tui.projection import registry

    parser.add_argument("--version", action="version", version=f"agent-tui {__version__}")
    parser.add_argument(
        "file",
        nargs="*",
        metavar="FILE | @FILE",
        help="a session file to open (pi's included); with -p, @FILE attaches a file or image to the "
        "prompt (pi's @files)",
    )
    start = parser.add_mutually_exclusive_group()
    start.add_argument(
        "-c", "--continue", dest="continue_last", action="store_true", help="continue the latest session here"
    )
    start.add_argument("-r", "--resume", action="store_true", help="pick a session to resume")
    parser.add_argument(
        "--provider",
        help=f"{', '.join(registry.NAMES)} ({registry.fallback().name}: any compatible server too)",
    )
    parser.add_argument(
        "--model",
        help="provider/id, an id (claude-sonnet-4-5, llama3.1) or an unambiguous part of one "
        "(opus-5-5), with :LEVEL for the thinking level (sonnet-4-5:high)",
    )
    parser.add_argument("--base-url", help="the API's base URL (a local server, a proxy)")
    parser.add_argument(
        "--api",
        choices=registry.api_names(),
        help="the provider's API: responses or chat (OpenAI; default: responses for OpenAI's reasoning "
        "models at OpenAI, chat for compatible servers), messages (Anthropic), gemini (Google)",
    )
    parser.add_argument("--session-dir", help="where sessions are stored (default: the user data dir)")
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        nargs="?",
        const="",  # pi's bare -p: the message follows the flags, or is piped in
        help="run one turn without the app ('-' reads stdin; a bare -p takes the message after the "
        "flags, or what is piped in, as pi's does)",
    )
    parser.add_argument(
        "--steer-stdin",
        action="store_true",
        help="with -p: each line read from stdin while the agent works is a steering message",
    )
    from agent_tui.cli import pi_flags

    pi_flags.add_session_arguments(parser, start)  # --session, --fork, --no-session, -n/--name
    parser.add_argument("--leaf", metavar="ID", help="continue from this entry (a new branch)")
    from agent_tui.projection.models import THINKING_LEVELS

    parser.add_argument("--thinking", help=f"thinking level: {', '.join(THINKING_LEVELS)}")
    parser.add_argument(
        "--permissions",
        choices=("ask", "accept-edits", "plan", "auto", "read-only"),
        help="tool permissions: ask before commands and file edits (the app's default), accept-edits "
        "(file edits in the cwd pass, commands ask), plan (nothing changes files or runs: the model "
        "plans), auto (print mode's default), or read-only",
    )
    parser.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "off"),
        help="where bash, !cmd and hooks run (bubblewrap): workspace-write (the default: only the cwd, "
        "the temp dir and build caches writable, no network), read-only, or off (docs/SANDBOX.md)",
    )
    parser.add_argument(
        "--sandbox-network", action="store_true", help="let sandboxed commands reach the network"
    )
    parser.add_argument(
        "--system-prompt",
        metavar="TEXT|@FILE",
        help="replace the default system prompt (and any SYSTEM.md) with TEXT or FILE's text",
    )
    parser.add_argument(
        "--append-system-prompt",
        metavar="TEXT|@FILE",
        action="append",
        default=[],
        help="add TEXT or FILE's text to the system prompt (instead of APPEND_SYSTEM.md); repeatable",
    )
    parser.add_argument(
        "-nc",
        "--no-context-files",
        action="store_true",
        help="leave AGENTS.md and CLAUDE.md out of the prompt",
    )
    from agent_tui.agent.prompt_files import add_resource_arguments

    add_resource_arguments(parser)
    parser.add_argument(
        "--mode",
        choices=("text", "json", "rpc"),
        default="text",
        help="text: the app, or with -p the reply as text; json: with -p, pi's JSON event stream "
        "on stdout (docs/JSON.md); rpc: JSON-line commands on stdin, responses and events on "
        "stdout (docs/RPC.md)",
    )
    from agent_tui.cli import model_flags

    model_flags.add_arguments(parser)
    pi_flags.add_tool_arguments(parser)  # -t/--tools, -xt/--exclude-tools, -nt, -nbt
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="load this folder's own MCP servers (.mcp.json) and hooks (.claude/settings.json) without asking",
    )
    parsed = parser.parse_args(args)
    from agent_tui.agent import sandbox  # (this call's flags, none left from an earlier main())

    sandbox.set_flags(parsed.sandbox, parsed.sandbox_network)
    if parsed.list_models is not None:
        return model_flags.list_models_command(parsed)
    problem = model_flags.apply_model_flags(parsed)
    if problem is None and not (parsed.mode == "json" and parsed.prompt is None):
        problem = pi_flags.settle(parsed)  # after the checks: a --fork writes its copy here
    if problem is not None:
        print(visible_line(problem), file=sys.stderr)
        return 1
    if parsed.mode == "rpc":
        if parsed.prompt is not None:
            parser.error("--mode rpc takes its prompts on stdin (the prompt command), not -p")
        from agent_tui.cli.rpc_mode import run_rpc

        return run_rpc(parsed)
    if parsed.mode == "json":
        if parsed.prompt is None:
            parser.error("--mode json needs -p PROMPT")
        from agent_tui.cli.json_mode import run_json

        return run_json(parsed)
    web = bool(os.environ.get("TEXTUAL_DRIVER"))  # `agent-tui serve`: the browser speaks on a pipe
    if parsed.prompt is None and not web and sys.stdin is not None and not sys.stdin.isatty():
        # pi's rule: what is piped in is the prompt of a print-mode run; a stdin that is not a
        # terminal and gives nothing (/dev/null, a closed pipe) cannot drive the app either
        from agent_tui.cli.prompt_input import piped_stdin

        piped = piped_stdin(sys.stdin)
        named = getattr(parsed, "file", None) or getattr(parsed, "session", None)
        if piped is None and named and not os.path.isfile(os.path.expanduser(named)):
            print(visible_line(f"agent-tui: {named}: no such session file"), file=sys.stderr)
            return 1  # what the app says first
        if piped is None:
            print(
                "agent-tui: stdin is not a terminal and gave no prompt: run agent-tui in a terminal, "
                "or pass -p PROMPT",
                file=sys.stderr,
            )
            return 2
        parsed.prompt = piped
    if parsed.prompt is not None:
        from agent_tui.cli.print_mode import run_print  # the SDKs are imported only on this path

        return run_print(parsed)
    from agent_tui.tui import gc_pacing

    # few collections while the app's modules are imported and the session opens: the collector
    # otherwise runs some 40 times through the imports alone (40 ms of 280)
    gc_pacing.loading()
    from agent_tui.tui.launch import run_app  # textual is imported only on this path

    return run_app(parsed)


if __name__ == "__main__":
    raise SystemExit(main())

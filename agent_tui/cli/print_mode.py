"""``agent-tui -p PROMPT``: one turn without the app.

The reply streams to stdout; tool activity, retries and the session path go to
stderr as short lines. Tools run without asking unless ``--permissions`` says
otherwise (``ask`` asks on the terminal, or refuses when stdin is not one;
``read-only`` refuses writes, edits and commands). Secrets are redacted from
what is printed as from the session: of the reply only what may still be a
secret waits, as a rule the word under way (see ``StreamRedactor``). Exit codes:
0 done, 1 error (one clear line on stderr), 130 aborted (Ctrl+C, SIGTERM, or SIGHUP
when the terminal is closed).

``AGENT_TUI_DEBUG_ACK=FILE`` appends the id of every entry to FILE once its
write has returned (the crash tests use it to know which entries were
acknowledged).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TextIO, assert_never

from agent_tui.agent import slash_commands
from agent_tui.agent.app_commands import NAMES as APP_COMMANDS  # the app's win a name, here too
from agent_tui.agent.deferred_calls import deferred_call
from agent_tui.agent.events import (
    AgentEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EntryAppended,
    Notice,
    Retrying,
    SubagentEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStreaming,
    ToolFinished,
    ToolStarted,
    ToolUpdate,
    TurnDone,
    TurnError,
)
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.permissions import (
    Approver,
    Decision,
    PermissionMode,
    PermissionModeError,
    PermissionRequest,
    Permissions,
    cwd_notice,
    mode_from_config,
)
from agent_tui.agent.prompt_files import PromptFileError, PromptFlags
from agent_tui.agent.resources import Resources, load_resources
from agent_tui.agent.skills import SkillError
from agent_tui.agent.subagents import progress_line
from agent_tui.config import Config, ConfigError, load_config
from agent_tui.projection.models import lookup
from agent_tui.projection.tool_facts import tool_facts
from agent_tui.providers.base import preload_sdk_in_background
from agent_tui.sdk import Agent, SessionHandle, create_agent
from agent_tui.sdk import open_session as sdk_open_session
from agent_tui.store.content import squeeze_spaces
from agent_tui.store.errors import StoreError
from agent_tui.store.record import JSONObject
from agent_tui.store.redact import StreamRedactor, redact_text
from agent_tui.terminal_text import cut, for_terminal, visible, visible_line, visible_strict

EXIT_ERROR = 1
EXIT_ABORTED = 130
ACK_ENV = "AGENT_TUI_DEBUG_ACK"


def _fail(message: str) -> int:
    text = message if message.startswith("agent-tui") else f"agent-tui: {message}"
    print(_redact(text), file=for_terminal(sys.stderr))
    return EXIT_ERROR


def _redact(text: str) -> str:
    return redact_text(text)[0] if StreamRedactor().enabled else text


def open_session(args: argparse.Namespace, cwd: str) -> SessionHandle:
    """The session the command line names (``--session FILE``, a FILE argument, ``-c``, else a new
    one under ``--session-dir``); its ``note`` is for stderr."""
    target = getattr(args, "session", None) or getattr(args, "file", None)
    handle = sdk_open_session(
        target,
        cwd=cwd,
        session_dir=getattr(args, "session_dir", None),
        continue_last=bool(getattr(args, "continue_last", False)),
        in_memory=bool(getattr(args, "no_session", False)),  # --no-session: nothing is written
    )
    from agent_tui.cli.pi_flags import apply_name, forked_note

    try:
        apply_name(handle.store, args)  # -n/--name
    except BaseException:
        handle.close()
        raise
    forked = forked_note(args)
    if forked is not None:
        handle.note = f"{forked}; {handle.note}" if handle.note else forked
    return handle


def _describe_call(name: str, arguments: dict[str, object]) -> str:
    key = tool_facts(name).title_argument
    detail = str(arguments.get(key, "")) if key else ""
    detail = cut(squeeze_spaces(detail), 120, "...")  # other blanks stay, shown as escapes
    # strict: a character a terminal draws wider than it is measured cannot hide the command's tail
    return visible_strict(_redact(f"{name} {detail}".rstrip()))


async def stream_turn(
    agent: Agent,
    prompt: TurnInput,
    out: TextIO,
    err: TextIO,
    *,
    ack: Callable[[str], None] | None = None,
) -> int:
    """Run one turn, writing the reply to ``out`` and activity to ``err``; return the exit code.

    ``ack`` is called with each appended entry's id, after its write returned.
    """
    wrote_text = False
    ends_with_newline = True
    code = 0
    error: str | None = None
    calls: dict[str, str] = {}
    redactor = StreamRedactor()

    attempt_text = False  # this model call's reply has streamed text (a retry must mark the break)
    cut_off = False

    def write_out(text: str) -> None:
        nonlocal wrote_text, ends_with_newline
        if text:
            out.write(text)
            out.flush()
            wrote_text = True
            ends_with_newline = text.endswith("\n")

    def end_line() -> None:
        nonlocal ends_with_newline
        write_out(redactor.flush())
        if wrote_text and not ends_with_newline:
            out.write("\n")
            out.flush()
            ends_with_newline = True

    events = turn_events(agent, prompt)
    async for event in events:
        if isinstance(event, TextDelta):
            attempt_text = attempt_text or bool(event.text)
            write_out(redactor.feed(event.text))
        elif isinstance(event, EntryAppended):
            if ack is not None:
                ack(event.entry_id)
        elif isinstance(event, ToolStarted):
            end_line()
            attempt_text = False
            calls[event.call_id] = _describe_call(event.name, event.arguments)
            print(f"> {calls[event.call_id]}", file=err, flush=True)
        elif isinstance(event, ToolFinished):
            if event.is_error:
                print(f"  {event.name} failed", file=err, flush=True)
        elif isinstance(event, Retrying):
            if attempt_text:  # the partial reply on stdout is not the one that follows
                end_line()
                attempt_text = False
                print("[retrying] the reply above was cut off; the model answers again below", file=err)
            print(
                _redact(f"retrying in {event.delay:.1f}s (attempt {event.attempt}): {event.reason}"),
                file=err,
                flush=True,
            )
        elif isinstance(event, CompactionStarted):
            write_out(redactor.flush())
            print(f"compacting ({event.reason}, ≈{event.tokens_before:,} tokens)…", file=err, flush=True)
        elif isinstance(event, CompactionFinished):
            print(f"compacted: {event.change()}", file=err, flush=True)
        elif isinstance(event, CompactionFailed):
            prefix = "" if event.nothing_to_do or event.blocked else "compaction failed: "
            print(_redact(prefix + event.message), file=err, flush=True)
        elif isinstance(event, Notice):
            report_notice(event, err)
        elif isinstance(event, TurnError):
            error = event.message
        elif isinstance(event, TurnDone):
            code = exit_code(event.stop_reason)
            cut_off = event.stop_reason == "length"
        elif isinstance(event, SubagentEvent):  # a task call's subagent: its steps on stderr
            line = progress_line(event)
            if line is not None:
                end_line()
                print(f"  {line}", file=err, flush=True)
        elif isinstance(event, ThinkingDelta | ToolCallStreaming | ToolCallDelta | ToolUpdate):
            pass  # print mode writes the reply's text; a call is one line once it starts
        else:
            assert_never(event)  # a new event type must be mapped here (mypy checks)
    end_line()
    if cut_off:
        report_cut_off(agent, err)
    return report_end(code, error, err)


def report_cut_off(agent: Agent, err: TextIO) -> None:
    """Say on ``err`` that the reply stopped at the model's output limit (stop reason ``length``)."""
    limit = lookup(agent.model).max_output
    print(
        visible_line(
            f"agent-tui: the reply was cut off by the output limit ({limit:,} tokens for {agent.model})"
        ),
        file=err,
        flush=True,
    )


def report_notice(notice: Notice, err: TextIO) -> None:
    """A line for the user (a hook's, an MCP server's, a deferred tool call's) on ``err``, redacted."""
    print(_redact(f"agent-tui: {notice.text}"), file=err, flush=True)


def exit_code(stop_reason: str) -> int:
    """The exit status a run's stop reason gives: 130 aborted, 1 error, else 0."""
    return EXIT_ABORTED if stop_reason == "aborted" else EXIT_ERROR if stop_reason == "error" else 0


def report_end(code: int, error: str | None, err: TextIO) -> int:
    """Say on ``err`` how a run ended badly (aborted, or its error, redacted); the final exit code."""
    if code == EXIT_ABORTED:
        print("agent-tui: aborted", file=err, flush=True)
    elif error is not None:
        print(_redact(f"agent-tui: {error}"), file=err, flush=True)
        code = EXIT_ERROR
    return code


def _ack_writer() -> Callable[[str], None] | None:
    """AGENT_TUI_DEBUG_ACK=FILE: one entry id per line, appended once the entry's write has returned."""
    target = os.environ.get(ACK_ENV)
    if not target:
        return None
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def ack(entry_id: str) -> None:
        os.write(fd, f"{entry_id}\n".encode())

    return ack


# -- asking on the terminal --------------------------------------------------------------------


def terminal_approver(stdin: TextIO, err: TextIO) -> Approver:
    """Asks each question on ``err`` and reads the answer from the terminal ``stdin``."""

    async def approve(request: PermissionRequest) -> Decision:
        err.write(ask_text(request))
        err.flush()
        return terminal_answer(await read_line(stdin), request)

    return approve


def terminal_answer(line: str, request: PermissionRequest) -> Decision:
    """What a typed line answers: the number of a choice (``1`` yes, ``2`` don't ask again for the
    rule when there is one, then for this session, then no) or its word (``yes``, ``always``,
    ``session``); ``y`` is yes. No other letter answers (``a`` used to allow for the session:
    the first letter of "also..."), and anything else is no."""
    answer = line.strip().lower()
    always = [Decision.ALLOW_ALWAYS] if request.rule else []
    choices = [Decision.ALLOW_ONCE, *always, Decision.ALLOW_SESSION]
    if answer.isdigit() and 1 <= int(answer) <= len(choices):
        return choices[int(answer) - 1]
    words = {"y": Decision.ALLOW_ONCE, "yes": Decision.ALLOW_ONCE, "session": Decision.ALLOW_SESSION}
    if request.rule:
        words["always"] = Decision.ALLOW_ALWAYS
    return words.get(answer, Decision.DENY)


def choices_text(request: PermissionRequest) -> str:
    """The numbered choices, as the app shows them: ``1 yes, 2 for this session, 3 no: ``."""
    items = ["yes"]
    if request.rule:
        items.append(f"don't ask again for {visible_line(request.rule, strict=True)}")
    items += ["for this session", "no"]
    return ", ".join(f"[{n}] {item}" for n, item in enumerate(items, 1)) + ": "


def ask_text(request: PermissionRequest) -> str:
    """The question, with the whole call: on its line when the call is one line, else every
    line under it, each marked so none can pass for the question. Controls are shown as
    escapes, so nothing in the command can move the cursor or rewrite the question."""
    tool, reason = visible_line(request.tool, strict=True), visible_line(request.reason)
    call = visible_strict(request.details(), exact=True)
    choices = choices_text(request)
    if "\n" not in call:
        return f"agent-tui: allow {tool} {call} ({reason})? {choices}"
    lines = call.split("\n")
    body = "".join(f"  │ {line}\n" for line in lines)
    return f"agent-tui: allow {tool} ({reason})? all {len(lines)} lines:\n{body}agent-tui: {choices}"


async def read_line(stream: TextIO) -> str:
    """One line from a terminal without blocking the event loop (and cancellable: Ctrl+C aborts it)."""
    loop = asyncio.get_running_loop()
    fd = stream.fileno()
    done: asyncio.Future[str] = loop.create_future()
    buffer = bytearray()

    def readable() -> None:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            chunk = b""
        buffer.extend(chunk)
        if (not chunk or b"\n" in buffer) and not done.done():
            done.set_result(buffer.split(b"\n", 1)[0].decode(errors="replace"))

    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)


def make_permissions(args: argparse.Namespace, config: Config, prompt_from_stdin: bool) -> Permissions:
    """Print mode's policy: ``auto`` unless --permissions, AGENT_TUI_PERMISSIONS or the config file
    (``config.permissions``) say otherwise. A mode that asks (``ask``, ``accept-edits``, ``plan``)
    asks on the terminal, or, when stdin is not one, refuses what it would ask about."""
    mode = mode_from_config(getattr(args, "permissions", None), config, default=PermissionMode.AUTO)
    if mode in (PermissionMode.AUTO, PermissionMode.READ_ONLY):  # they never ask
        return Permissions(mode)
    if not prompt_from_stdin and sys.stdin is not None and sys.stdin.isatty():
        return Permissions(mode, terminal_approver(sys.stdin, sys.stderr))
    asked = {
        PermissionMode.ASK: "commands, file edits",
        PermissionMode.ACCEPT_EDITS: "commands, writes outside the working directory",
    }.get(mode, "calls")
    print(
        f"agent-tui: --permissions {mode.value}: stdin is not a terminal, so {asked} and web fetches "
        "that would ask are refused (a permission rule may allow them)",
        file=sys.stderr,
    )
    return Permissions(
        mode,
        None,
        no_approver_reason="agent-tui -p cannot ask (stdin is not a terminal; run with --permissions auto to allow it)",
    )


def steer_from(stream: TextIO, agent: Agent, event_loop: asyncio.AbstractEventLoop) -> None:
    """``--steer-stdin``: each non-empty line of ``stream`` is queued as a steering message (a daemon
    thread reads; the queue is only touched on the event loop). Lines after the agent stopped are not read."""

    def read() -> None:
        for line in stream:
            text = line.rstrip("\n")
            if text.strip():
                with contextlib.suppress(RuntimeError):  # the loop has closed
                    event_loop.call_soon_threadsafe(agent.steer, text)

    threading.Thread(target=read, name="steer-stdin", daemon=True).start()


#: One run of the agent (``prompt`` None: what is queued), writing what it shows; its exit code.
#: Called with the agent, the prompt and the ack callback (AGENT_TUI_DEBUG_ACK).
#: What one run of print mode is for: a prompt (text or content blocks), an app command that runs
#: (``/compact``), or None (resume a deferred tool call, or run the queued steering).
TurnInput = str | list[JSONObject] | slash_commands.Command | None


def turn_events(agent: Agent, prompt: TurnInput) -> AsyncIterator[AgentEvent]:
    """The events of one run: the prompt's turn, a command's run, or the resumed turn."""
    if isinstance(prompt, slash_commands.Command):
        run = slash_commands.run(agent, prompt)
        if isinstance(run, slash_commands.Said):  # print mode answers these before any run
            raise TypeError(f"/{prompt.name} is not a run")
        return run
    return agent.prompt(prompt) if prompt is not None else agent.resume()


TurnRunner = Callable[[Agent, TurnInput, Callable[[str], None] | None], Awaitable[int]]


def _print_turn(agent: Agent, prompt: TurnInput, ack: Callable[[str], None] | None) -> Awaitable[int]:
    out, err = for_terminal(sys.stdout), for_terminal(sys.stderr)  # a pipe gets the exact text
    return stream_turn(agent, prompt, out, err, ack=ack)


async def _main(
    agent: Agent,
    prompt: TurnInput,
    steer_stdin: bool = False,
    run_turn: TurnRunner = _print_turn,
) -> int:
    event_loop = asyncio.get_running_loop()
    interrupts = 0

    def interrupt() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1:  # a second Ctrl+C does not wait for the abort: every entry is already on disk
            os._exit(EXIT_ABORTED)
        agent.abort()

    def hangup() -> None:
        # The terminal is gone: what is still printed would fail (EIO) and stop the turn before
        # the partial reply is written, so print into /dev/null from now on, then stop as Ctrl+C does.
        _detach_output()
        interrupt()

    signals = {signal.SIGINT: interrupt, signal.SIGTERM: interrupt, signal.SIGHUP: hangup}
    with contextlib.suppress(NotImplementedError, RuntimeError):
        for number, handler in signals.items():
            event_loop.add_signal_handler(number, handler)
    if steer_stdin:
        steer_from(sys.stdin, agent, event_loop)
    try:
        ack = _ack_writer()
        code = await run_turn(agent, prompt, ack)
        # steering that arrived as the agent stopped: pi runs it next
        while code == 0 and len(agent.loop.queue):
            code = await run_turn(agent, None, ack)
        return code
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            for number in signals:
                event_loop.remove_signal_handler(number)
        await agent.aclose()


def load_settings(args: argparse.Namespace, stdin_taken: bool) -> tuple[Config, Permissions]:
    """The config the flags, the environment and the config file give, and the permission policy
    (``stdin_taken``: stdin carries the prompt or commands, so nobody can be asked on it). Raises
    ConfigError and PermissionModeError. Print, JSON and RPC modes start here."""
    config = load_config(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        thinking=getattr(args, "thinking", None),
        api=getattr(args, "api", None),
    )
    preload_sdk_in_background(config.provider)  # overlaps the loading of the session and the files
    for line in config.warnings:  # an unknown or mistyped key of the config file: one line each
        _notice(line)
    return config, make_permissions(args, config, stdin_taken)


def headless_agent(
    args: argparse.Namespace,
    session: SessionHandle,
    config: Config,
    permissions: Permissions,
    cwd: str,
    resources: Resources,
) -> Agent:
    """The agent of a mode without the app (print, JSON, RPC): the flags' MCP servers and hooks."""
    return create_agent(
        session,
        config=config,
        permissions=permissions,
        cwd=cwd,
        resources=resources,
        extensions=_extensions(args, config, cwd),
    )


def _extensions(args: argparse.Namespace, config: Config, cwd: str) -> Extensions:
    """MCP servers and hooks; this folder's own only with --trust-project or a remembered yes
    (print mode never asks)."""
    return Extensions.from_config_file(
        config.config_path,
        cwd,
        trust_project=bool(getattr(args, "trust_project", False)),
        notify=_notice,
    )


def _notice(line: str) -> None:
    """An MCP server's failure as it happens (also while the model streams): one stderr line."""
    print(_redact(f"agent-tui: {line}"), file=for_terminal(sys.stderr), flush=True)


def _detach_output() -> None:
    """Point stdout and stderr at /dev/null (after SIGHUP: writes to a closed terminal fail)."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(null, fd)
        os.close(null)


def load_and_expand(args: argparse.Namespace, config: Config, cwd: str, prompt: str) -> tuple[Resources, str]:
    """The user's prompt files, templates and skills (each problem one line on stderr), and the
    prompt with a ``/template`` or ``/skill:name`` expanded, as the app expands it."""
    config_dir = config.config_path.parent if config.config_path is not None else None
    resources = load_resources(
        cwd,
        config_dir,
        flags=PromptFlags.of(args),
        reserved=APP_COMMANDS,
        trust_project=bool(getattr(args, "trust_project", False)),
    )
    err = for_terminal(sys.stderr)
    for warning in resources.warnings:
        print(f"agent-tui: {visible_line(warning)}", file=err)
    expanded = resources.expand(prompt)
    return resources, expanded if expanded is not None else prompt


def run_print(args: argparse.Namespace, run_turn: TurnRunner = _print_turn) -> int:
    """``agent-tui -p``: one prompt (and the steering it gets) on the session the flags name.
    ``run_turn`` writes each run (``--mode json`` passes its own); the rest is shared."""
    prompt = str(args.prompt)
    for stream in (sys.stdout, sys.stderr):  # a reply cut inside an emoji holds a lone surrogate
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
    from_stdin = prompt == "-"
    steer_stdin = bool(getattr(args, "steer_stdin", False))
    if steer_stdin and from_stdin:
        return _fail("--steer-stdin reads steering lines from stdin: give the prompt as an argument, not '-'")
    if from_stdin:
        prompt = sys.stdin.read()
    elif not steer_stdin:  # pi's rule: stdin that is not a terminal is put before the prompt
        from agent_tui.cli.prompt_input import piped_stdin, with_stdin

        piped = piped_stdin(sys.stdin)
        prompt = with_stdin(prompt, piped)
        from_stdin = piped is not None  # read to its end: nobody can be asked on it
    # no prompt: only to continue a session a PreToolUse hook deferred a tool call in
    resume = not prompt.strip() and not getattr(args, "file_args", None)
    named = (
        getattr(args, "session", None) or getattr(args, "file", None) or getattr(args, "continue_last", False)
    )
    if resume and not named:
        return _fail("empty prompt")

    if getattr(args, "resume", False):
        return _fail("--resume needs the app; use --session FILE or -c with -p")
    try:
        config, permissions = load_settings(args, from_stdin or steer_stdin)
    except (ConfigError, PermissionModeError) as e:
        return _fail(str(e))
    cwd = os.getcwd()
    try:
        resources, prompt = load_and_expand(args, config, cwd, prompt)
    except (PromptFileError, SkillError) as e:
        return _fail(str(e))
    if not resume and not prompt.strip() and not getattr(args, "file_args", None):
        return _fail("the prompt template expands to nothing")
    from agent_tui.cli.prompt_input import attach_files, missing_file

    files = list(getattr(args, "file_args", None) or [])
    problem = missing_file(files, cwd)
    if problem is not None:
        return _fail(problem)
    # an app command that needs no screen (/compact, /rename, /session, /model...) runs on the
    # session core, as the app and ACP run it; a template was expanded above, other text is sent
    command = slash_commands.parse(prompt, None) if not files else None
    if isinstance(command, slash_commands.Command):
        content: str | list[JSONObject] | slash_commands.Command = command
        notices: list[str] = []
    else:
        content, notices = attach_files(prompt, files, cwd) if not resume else (prompt, [])
    for line in notices:
        print(_redact(f"agent-tui: {visible_line(line)}"), file=for_terminal(sys.stderr))
    try:
        session = open_session(args, cwd)
    except StoreError as e:
        return _fail(str(e))
    try:
        if session.note:
            print(f"agent-tui: {session.note}", file=for_terminal(sys.stderr))
        elsewhere = cwd_notice(session.cwd, cwd)
        if elsewhere:
            print(f"agent-tui: {elsewhere}", file=for_terminal(sys.stderr))
        if session.read_only:
            return _fail(session.read_only_reason or f"{session.path}: read-only")
        if getattr(args, "leaf", None):
            session.branch(args.leaf)
        if resume and deferred_call(session.store.index.active_path()) is None:
            return _fail("empty prompt (only a session with a deferred tool call is continued without one)")
        agent = headless_agent(args, session, config, permissions, cwd, resources)
        agent.loop.defer_tool_calls = True  # Claude Code honours a PreToolUse defer only with -p
        if isinstance(content, slash_commands.Command):
            answered = slash_commands.run(agent, content)
            if isinstance(answered, slash_commands.Said):  # answered at once: the answer is the output
                print(visible(answered.text), file=for_terminal(sys.stdout))
                return 0
        code = asyncio.run(_main(agent, None if resume else content, steer_stdin, run_turn))
        if not session.store.ephemeral:
            print(f"agent-tui: session {session.path}", file=for_terminal(sys.stderr))
        return code
    except StoreError as e:
        return _fail(str(e))
    finally:
        session.close()


__all__ = [
    "TurnRunner",
    "exit_code",
    "headless_agent",
    "load_and_expand",
    "load_settings",
    "open_session",
    "report_cut_off",
    "report_end",
    "run_print",
    "stream_turn",
]

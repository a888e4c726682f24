"""The cross-face conformance suite's shared parts: the scripted scenarios (what the fake model
server answers, what the user types), the session normalizer and the common event vocabulary.

Every face (the app, print/JSON mode, RPC mode, the ACP agent, the SDK) drives one session core,
so the same scenario must leave the same session file (modulo ids and timestamps) and an
equivalent event sequence in each. :func:`normalize_session` reduces a session file to what must
agree; the ``*_vocabulary`` functions map each face's events to one vocabulary of tuples:

- ``("user", text)``: a user message went into the conversation (the prompt, a steering or a
  follow-up message);
- ``("text", text)``: the assistant's reply text, consecutive deltas concatenated (a face that
  streams it in other pieces says the same);
- ``("tool", name, arguments)``: a tool call started, with the arguments it runs with;
- ``("result", name, is_error)``: it ended;
- ``("queue", steering, follow_up)``: the queues after a change (RPC's ``queue_update``);
- ``("compaction_start", reason)``, ``("compaction_end",)``;
- ``("notice", text)``: one line for the user (an MCP server still starting);
- ``("end", outcome)``: the run settled: "done", "aborted" or "error".

A face conveys only some of these (ACP does not echo the user's prompt, only RPC sends the queue):
:data:`FACE_KINDS` says which, and :func:`restrict` keeps those of a sequence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agent_tui.agent.events import (
    AgentEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EntryAppended,
    Notice,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
)
from tests.support.fake_model_server import (
    Response,
    Stream,
    anthropic_stream,
    text,
    tool_use,
)

Item = tuple[Any, ...]
Record = dict[str, Any]

#: The model without reasoning the impossible thinking level is set on (its only level: off).
PLAIN_MODEL = "claude-3-5-haiku-latest"
#: The default model the fake Anthropic endpoint is used with, and the one the switch goes to.
FIRST_MODEL = "claude-sonnet-5-5"
SECOND_MODEL = "claude-haiku-4-5"

#: Which items of the vocabulary each face conveys (what a client of that face can see).
EVERY_KIND = frozenset(
    {"user", "text", "tool", "result", "queue", "compaction_start", "compaction_end", "notice", "end"}
)
FACE_KINDS: dict[str, frozenset[str]] = {
    "sdk": EVERY_KIND - {"queue"},  # the typed events have no queue event (``Agent.queued()`` asks)
    # the typed events the app is fed; its notices are the app's notifications (the MCP servers are
    # the app's, shared by its sessions: they say a line through ModelChoice.notice, not the run)
    "app": EVERY_KIND - {"queue", "notice"},
    "json": EVERY_KIND - {"queue", "notice"},  # notices go to stderr: see stderr_notices
    "print": frozenset({"end"}),  # and stdout, the reply: printed_reply; tool lines go to stderr
    "rpc": EVERY_KIND - {"notice"},  # notices go to stderr
    "acp": EVERY_KIND - {"user", "queue"},  # the editor sent the prompt; no queue in ACP
}


def restrict(items: Iterable[Item], kinds: Iterable[str]) -> list[Item]:
    """The items of ``items`` of those ``kinds``, consecutive texts joined again (an item left out
    between two texts does not split the reply)."""
    keep = set(kinds)
    out: list[Item] = []
    for item in items:
        if item[0] not in keep:
            continue
        _add(out, item)
    return out


def _add(out: list[Item], item: Item) -> None:
    if item[0] == "text" and out and out[-1][0] == "text":
        out[-1] = ("text", out[-1][1] + item[1])
    elif item[0] == "text" and not item[1]:
        return
    else:
        out.append(item)


def _text_of(message: Record) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


# -- the vocabularies --------------------------------------------------------------------------


def pi_vocabulary(records: Iterable[Record]) -> list[Item]:
    """pi's JSON records (``--mode json``, ``--mode rpc``, the SDK's ``pi_events``) in the vocabulary."""
    out: list[Item] = []
    for r in records:
        kind = r.get("type")
        if kind == "message_end" and r["message"]["role"] == "user":
            _add(out, ("user", _text_of(r["message"])))
        elif kind == "message_update":
            event = r["assistantMessageEvent"]
            if event["type"] == "text_delta":
                _add(out, ("text", event["delta"]))
        elif kind == "tool_execution_start":
            _add(out, ("tool", r["toolName"], r["args"]))
        elif kind == "tool_execution_end":
            _add(out, ("result", r["toolName"], r["isError"]))
        elif kind == "queue_update":
            _add(out, ("queue", tuple(r["steering"]), tuple(r["followUp"])))
        elif kind == "compaction_start":
            _add(out, ("compaction_start", r["reason"]))
        elif kind == "compaction_end":
            _add(out, ("compaction_end",))
        elif kind == "agent_settled":
            _add(out, ("end", "aborted" if r["aborted"] else _pi_outcome(records_before(records, r))))
    return out


def records_before(records: Iterable[Record], end: Record) -> list[Record]:
    seen: list[Record] = []
    for r in records:
        if r is end:
            break
        seen.append(r)
    return seen


def _pi_outcome(records: Sequence[Record]) -> str:
    """ "error" when the run's last assistant message failed, else "done"."""
    for r in reversed(records):
        if r.get("type") == "agent_start":
            break
        if r.get("type") == "message_end" and r["message"]["role"] == "assistant":
            return "error" if r["message"].get("stopReason") == "error" else "done"
    return "done"


def agent_vocabulary(events: Iterable[AgentEvent], user_text: dict[str, str]) -> list[Item]:
    """The session core's typed events (the SDK's and the app's) in the vocabulary; ``user_text``
    maps a user message entry's id to its text (the events name the entry, the file holds it)."""
    out: list[Item] = []
    for event in events:
        if isinstance(event, EntryAppended) and event.role == "user":
            _add(out, ("user", user_text[event.entry_id]))
        elif isinstance(event, TextDelta):
            _add(out, ("text", event.text))
        elif isinstance(event, ToolStarted):
            _add(out, ("tool", event.name, event.arguments))
        elif isinstance(event, ToolFinished):
            _add(out, ("result", event.name, event.is_error))
        elif isinstance(event, CompactionStarted):
            _add(out, ("compaction_start", event.reason))
        elif isinstance(event, CompactionFinished | CompactionFailed):
            _add(out, ("compaction_end",))
        elif isinstance(event, Notice):
            _add(out, ("notice", event.text))
        elif isinstance(event, TurnDone):
            outcome = {"aborted": "aborted", "error": "error"}.get(event.stop_reason, "done")
            _add(out, ("end", outcome))
        elif isinstance(event, TurnError):
            pass  # the TurnDone right after it says "error"
    return out


def user_texts(path: Path) -> dict[str, str]:
    """Each user message entry's text by its id."""
    return {
        e["id"]: _text_of(e["message"])
        for e in entries(path)
        if e["type"] == "message" and e["message"]["role"] == "user"
    }


_COMPACTING = re.compile(r"^compacting the context \((\w+), [\d,]+ tokens\)\n?$")
_NOTICE = re.compile(r"^agent-tui: (.*)\n?$")


def acp_vocabulary(runs: Iterable[tuple[Sequence[Any], str]]) -> list[Item]:
    """An editor's ``session/update`` notifications in the vocabulary: ``runs`` holds each
    prompt's updates (those before its response) and its outcome ("done" for ``end_turn``,
    "aborted" for ``cancelled``, "error" for an error response), an ``end`` each."""
    from acp.schema import (
        AgentMessageChunk,
        AgentThoughtChunk,
        TextContentBlock,
        ToolCallProgress,
        ToolCallStart,
    )

    out: list[Item] = []
    running: dict[str, str] = {}
    for updates, outcome in runs:
        for update in updates:
            if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
                chunk = update.content.text
                if chunk.startswith("Compacted: "):
                    _add(out, ("compaction_end",))
                else:
                    _add(out, ("text", chunk))
            elif isinstance(update, AgentThoughtChunk) and isinstance(update.content, TextContentBlock):
                line = update.content.text
                compacting = _COMPACTING.match(line)
                notice = _NOTICE.match(line)
                if compacting:
                    _add(out, ("compaction_start", compacting.group(1)))
                elif notice:
                    _add(out, ("notice", notice.group(1)))
            elif isinstance(update, ToolCallStart | ToolCallProgress):
                call = update.tool_call_id
                if update.status == "in_progress" and call not in running:
                    running[call] = (update.title or "").split(" ", 1)[0]
                    _add(out, ("tool", running[call], update.raw_input))
                elif update.status in ("completed", "failed") and call in running:
                    _add(out, ("result", running.pop(call), update.status == "failed"))
        _add(out, ("end", outcome))
    return out


def printed_reply(items: Iterable[Item]) -> str:
    """What plain print mode writes to stdout for a run of ``items``: the reply's text, a line
    ended before each tool call (its line goes to stderr) and at the end."""
    out = ""
    for item in items:
        if item[0] == "text":
            out += item[1]
        elif item[0] == "tool" and out and not out.endswith("\n"):
            out += "\n"
    return out if out.endswith("\n") else out + "\n"


def stderr_notices(stderr: str) -> list[str]:
    """The ``agent-tui: ...`` lines of a headless face's stderr that are notices (an MCP server's)."""
    return [
        line.removeprefix("agent-tui: ")
        for line in stderr.splitlines()
        if line.startswith("agent-tui: MCP server")
    ]


# -- the session normalizer -------------------------------------------------------------------

#: Fields whose values depend on when and how fast something ran, or are ids.
_TIMING = frozenset({"timestamp", "durationMs", "duration", "elapsedMs", "elapsed"})
_IDS = frozenset({"id", "parentId"})
#: Fields naming another entry by id (replaced by the index of the entry they name).
_REFS = frozenset({"targetId", "firstKeptEntryId", "fromId", "entryId", "parentEntryId"})


#: A refusal of a call nobody could confirm says why in the face's words (stdin is not a terminal,
#: the editor's dialog failed, the RPC client did not answer): the rest of it is every face's.
_NO_ANSWER = re.compile(r"(needs the user's confirmation and ).*?(\. Do not retry it\.)$", re.S)
NO_ANSWER = "<why the face could not ask>"


def no_answer_reason(text: str) -> str | None:
    """The face's reason in the refusal of a call nobody could confirm (None: no such refusal)."""
    match = re.search(r"needs the user's confirmation and (.*?)\. Do not retry it\.$", text, re.S)
    return match.group(1) if match else None


def entries(path: Path) -> list[Record]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]


def _without_go(entry: Record) -> Record:
    """A file checkpoint without the test's own ``go`` file (touched when the test decides, so a
    face's end-of-turn snapshot may or may not hold it) and with its tree id as ``<tree>``."""
    data = entry.get("data")
    if entry.get("customType") not in ("agent-tui.checkpoint", "agent-tui.restore") or not isinstance(
        data, dict
    ):
        return entry
    files = data.get("files")
    if isinstance(files, dict):
        data["files"] = {
            k: [p for p in v if p != "go"] if isinstance(v, list) else v for k, v in files.items()
        }
    for key in ("snapshot", "target"):
        if key in data:
            data[key] = "<tree>"
    return entry


def normalize_session(path: Path, cwd: Path | str) -> list[Record]:
    """``path``'s entries with what may differ between two runs of one scenario taken out: each id
    becomes the entry's position in the file and each ``parentId`` (and any field naming an entry)
    the position of the one it names (so the tree's structure stays), timestamps and durations
    are dropped, ``cwd`` (the test's folder) becomes ``<cwd>``, and the face's own words in a
    refusal nobody could confirm become :data:`NO_ANSWER` (see :func:`no_answer_reason`). Types,
    roles, content, tool calls, results, usage and custom entries' ``customType`` and ``data``
    stay as written."""
    raw = entries(path)
    position = {e["id"]: i for i, e in enumerate(raw) if "id" in e}
    folder = str(cwd)

    def clean(value: Any, key: str | None = None) -> Any:
        if isinstance(value, dict):
            return {k: clean(v, k) for k, v in value.items() if k not in _TIMING and k not in _IDS}
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, str):
            if key in _REFS and value in position:
                return f"#{position[value]}"
            return _NO_ANSWER.sub(rf"\g<1>{NO_ANSWER}\g<2>", value.replace(folder, "<cwd>"))
        return value

    out: list[Record] = []
    for entry in raw:
        cleaned = _without_go(clean(entry))
        parent = entry.get("parentId")
        cleaned["parent"] = None if parent is None else position.get(parent, "?")
        out.append(cleaned)
    return out


def without_folder(value: Any, folder: Path | str) -> Any:
    """``value`` (JSON) with every occurrence of ``folder`` in its strings replaced by ``<cwd>``
    (a request body names the project's folder in its system prompt), and a refusal's reason as
    :func:`normalize_session` has it."""
    if isinstance(value, dict):
        return {k: without_folder(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [without_folder(v, folder) for v in value]
    if isinstance(value, str):
        return _NO_ANSWER.sub(rf"\g<1>{NO_ANSWER}\g<2>", value.replace(str(folder), "<cwd>"))
    return value


def header(path: Path) -> Record:
    return dict(json.loads(path.read_text().splitlines()[0]))


def summary(normalized: Sequence[Record]) -> list[str]:
    """One short line per entry (its type, role or custom type): what a failure message shows first."""
    lines = []
    for e in normalized:
        if e["type"] == "message":
            lines.append(f"message:{e['message']['role']}")
        elif e["type"] == "custom":
            lines.append(f"custom:{e.get('customType')}")
        else:
            lines.append(str(e["type"]))
    return lines


# -- the scenarios ---------------------------------------------------------------------------


NOTES = "the word is banana\n"
#: A command that runs until the file ``go`` appears in its folder (the test decides when a tool ends).
WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done; echo released"
#: A command that never ends by itself (for an abort mid-tool), once running touching ``started``
#: (an abort before the command started is another result: "Operation aborted", not "Command aborted").
NEVER_ENDS = "touch started; sleep 60"

STEER = "also mention the weather"
FOLLOW_UP = "and now say goodbye"


def reply(value: str, model: str = FIRST_MODEL) -> Stream:
    """One text reply of ``model``."""
    return anthropic_stream(text(value), model=model)


def prompt_scenario() -> list[Response]:
    """A prompt with one tool call (read) and its answer."""
    return [
        anthropic_stream(text("Reading it. "), tool_use("toolu_read", "read", {"path": "notes.txt"})),
        anthropic_stream(text("It says banana.")),
    ]


def steer_scenario() -> list[Response]:
    """A bash call that waits for ``go``; a steering message queued while it runs goes in after it."""
    return [
        anthropic_stream(text("Waiting. "), tool_use("toolu_wait", "bash", {"command": WAIT_FOR_GO})),
        anthropic_stream(text("Done, and the weather is fine.")),
    ]


def follow_up_scenario() -> list[Response]:
    """A bash call that waits for ``go``; a follow-up queued while it runs goes in when the agent
    would stop."""
    return [
        anthropic_stream(text("Waiting. "), tool_use("toolu_wait", "bash", {"command": WAIT_FOR_GO})),
        anthropic_stream(text("Released.")),
        anthropic_stream(text("Goodbye.")),
    ]


def abort_scenario() -> list[Response]:
    """A bash call that never ends: the user aborts while it runs."""
    return [anthropic_stream(text("Sleeping. "), tool_use("toolu_sleep", "bash", {"command": NEVER_ENDS}))]


def two_replies(first: str = "One.", second: str = "Two.", model: str = SECOND_MODEL) -> list[Response]:
    return [anthropic_stream(text(first)), anthropic_stream(text(second), model=model)]


def permission_scenario(marker: str) -> list[Response]:
    """A bash call that is gated in ask mode (it creates ``marker``), then the model's answer."""
    return [
        anthropic_stream(tool_use("toolu_perm", "bash", {"command": f"touch {marker}"})),
        anthropic_stream(text("Understood.")),
    ]


def compaction_responses() -> list[Response]:
    """A prompt's answer, then the summary the compaction asks for."""
    return [
        anthropic_stream(text("The answer is 42.")),
        anthropic_stream(text("## Goal\nThe user asked a question; the answer was 42.")),
    ]


#: Permission records (``agent-tui.permission`` custom entries) of a normalized session.
def permission_records(normalized: Sequence[Record]) -> list[Record]:
    return [
        e["data"]
        for e in normalized
        if e["type"] == "custom" and e.get("customType") == "agent-tui.permission"
    ]


def mcp_config(server_script: Path, python: str, seconds: float) -> str:
    """A config file's MCP section: one server that takes ``seconds`` to answer ``initialize``, a
    turn waiting 1 s for it."""
    return (
        "\n[mcp]\nwait = 1\n\n[mcp.servers.slow]\n"
        f'command = {json.dumps(python)}\nargs = [{json.dumps(str(server_script))}, "{seconds:g}"]\n'
        "startup_timeout = 120\n"
    )


SLOW_MCP_LINE = 'MCP server "slow" is still starting after 1 s: this turn runs without its tools (they join once it is ready)'


__all__ = [
    "EVERY_KIND",
    "FACE_KINDS",
    "FIRST_MODEL",
    "FOLLOW_UP",
    "NEVER_ENDS",
    "NOTES",
    "NO_ANSWER",
    "PLAIN_MODEL",
    "SECOND_MODEL",
    "SLOW_MCP_LINE",
    "STEER",
    "WAIT_FOR_GO",
    "Item",
    "abort_scenario",
    "acp_vocabulary",
    "agent_vocabulary",
    "compaction_responses",
    "entries",
    "follow_up_scenario",
    "header",
    "mcp_config",
    "no_answer_reason",
    "normalize_session",
    "permission_records",
    "permission_scenario",
    "pi_vocabulary",
    "printed_reply",
    "prompt_scenario",
    "reply",
    "restrict",
    "stderr_notices",
    "steer_scenario",
    "summary",
    "two_replies",
    "user_texts",
    "without_folder",
]

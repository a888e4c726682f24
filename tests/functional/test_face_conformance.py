"""The cross-face conformance suite: the same scripted scenarios through print/JSON mode, RPC mode,
the ACP agent and the SDK, against the fake model server (the app's, with Pilot, are in
``tests/e2e/test_face_conformance_app.py``). Every face drives one session core
(``agent_tui.agent.agent_session``), so each scenario must leave the same session file (modulo ids
and timestamps: ``conformance.normalize_session``) and an equivalent event sequence (each face's
events in one vocabulary: ``conformance.*_vocabulary``). Each face's run is compared with the
scenario run through the SDK in the same test (the reference), and both with what the scenario
must show.

Which scenario runs on which face follows what each face offers its user. The SDK is every test's
reference: its run is checked against the scenario's events in each test, and the face's against
both.

======================= ======== ============ ======== ======== ========
scenario                app      print / JSON RPC      ACP      SDK
======================= ======== ============ ======== ======== ========
prompt (a tool call)    yes      yes          yes      yes      yes
steer mid-tool          yes      yes (1)      yes      no       yes
follow-up               yes      no           yes      no       yes
abort mid-tool          yes (2)  yes (3)      yes      yes      yes
switch model            yes (4)  yes (5)      yes      yes (6)  yes
impossible thinking     yes (4)  yes (7)      yes      yes (6)  yes
compact                 yes      no           yes      yes      yes
fork                    yes      no           yes      no       yes
``!cmd`` (user bash)    yes      no           yes      no       yes
permission allowed      yes      no (8)       yes (9)  yes      yes
permission denied       yes      no (8)       yes (9)  yes      yes
permission unanswerable no (10)  yes          yes (9)  yes (11) yes
slow MCP server         yes      yes          yes      yes      yes
======================= ======== ============ ======== ======== ========

(1) ``--steer-stdin``: each line of stdin is a steering message. (2) Esc. (3) SIGINT (Ctrl+C).
(4) ``/model``, ``/thinking``. (5) the session continued with ``--session FILE --model``. (6) the
session's config options (``session/set_config_option``). (7) ``--thinking high``. (8) print mode
asks only on a terminal; with stdin a pipe (as here) nobody can answer. (9) pi's
``extension_ui_request``: answered, or not within ``AGENT_TUI_RPC_ASK_TIMEOUT``. (10) the app
always asks. (11) an editor whose ``session/request_permission`` fails. ACP has no steering or
follow-up (a prompt while one runs is refused), no ``!cmd`` and no fork.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import ToolCallProgress, ToolCallStart, ToolCallUpdate

from agent_tui.agent.events import AgentEvent, ToolStarted
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.permissions import Decision, PermissionRequest
from agent_tui.config import CompactionConfig
from agent_tui.projection.compaction import CompactionSettings
from agent_tui.sdk import Agent, create_agent, open_session
from tests.support import conformance as c
from tests.support.acp_editor import AcpEnv, EditorClient
from tests.support.agent_support import make_config, until
from tests.support.fake_model_server import FakeModelServer, Stream
from tests.support.print_env import Env
from tests.support.rpc_client import Record, RpcClient

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

CONFIG = (
    f'model = "{c.FIRST_MODEL}"\n\n[retry]\nbase_delay = 0.01\n\n'
    "[compaction]\nkeep_recent_tokens = 5\nreserve_tokens = 1000\n"
)
#: The SDK's config: the fake server's, with CONFIG's compaction settings.
COMPACTION = CompactionConfig(default=CompactionSettings(keep_recent_tokens=5, reserve_tokens=1000))
Approve = Callable[[PermissionRequest], Awaitable[Decision]]


@dataclass
class Run:
    """What one face's run of a scenario left: the session file, the events in the vocabulary, the
    folder it ran in, the request bodies the model server got, and what else the face said."""

    path: Path
    events: list[c.Item]
    cwd: Path
    requests: list[Any] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def normalized(self, path: Path | None = None) -> list[c.Record]:
        return c.normalize_session(path or self.path, self.cwd)

    def bodies(self) -> list[Any]:
        """The request bodies, the project's folder named ``<cwd>``."""
        return [c.without_folder(body, self.cwd) for body in self.requests]


def same_session(face: Run, reference: Run, path: Path | None = None, ref_path: Path | None = None) -> None:
    """The two session files agree entry by entry (modulo ids and timestamps)."""
    got, want = face.normalized(path), reference.normalized(ref_path)
    assert c.summary(got) == c.summary(want)
    for number, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"entry {number} ({c.summary([w])[0]}) differs"


def check(
    face_name: str,
    face: Run,
    reference: Run,
    expected: list[c.Item],
    face_expected: list[c.Item] | None = None,
) -> None:
    """The face's events (those it conveys) are the scenario's (``face_expected`` where the face's
    protocol has less), the reference's are too, and the two session files agree."""
    kinds = c.FACE_KINDS[face_name]
    assert c.restrict(reference.events, c.FACE_KINDS["sdk"]) == c.restrict(expected, c.FACE_KINDS["sdk"])
    expected = expected if face_expected is None else face_expected
    got = c.restrict(face.events, kinds)
    assert got == c.restrict(expected, kinds), f"{face_name}'s events: {got}"[:3000]
    same_session(face, reference)


# -- the faces ---------------------------------------------------------------------------------


class Face:
    """One face's driver of the scenarios: a folder of its own (project, session, config)."""

    name = ""

    def __init__(self, server: FakeModelServer, folder: Path) -> None:
        self.server = server
        self.folder = folder
        folder.mkdir(parents=True)
        self.start = len(server.requests)

    def requests(self) -> list[Any]:
        return [r.body for r in self.server.requests[self.start :]]


class Sdk(Face):
    """The SDK in this process: ``open_session`` and ``create_agent``; the reference of every scenario."""

    name = "sdk"

    def __init__(self, server: FakeModelServer, folder: Path) -> None:
        super().__init__(server, folder)
        self.cwd = folder / "project"
        self.cwd.mkdir()
        (self.cwd / "notes.txt").write_text(c.NOTES)
        self.path = folder / "session.jsonl"
        self.config_path = folder / "config.toml"
        self.config_path.write_text(CONFIG)
        self.events: list[AgentEvent] = []
        self.tool_started = asyncio.Event()

    @contextlib.asynccontextmanager
    async def agent(
        self,
        model: str = c.FIRST_MODEL,
        permissions: str = "auto",
        approver: Approve | None = None,
        mcp: bool = False,
    ) -> AsyncIterator[Agent]:
        extensions = (
            Extensions.from_config_file(
                self.config_path, str(self.cwd), trust_file=self.folder / "trust.json"
            )
            if mcp
            else None
        )
        with open_session(self.path, cwd=str(self.cwd)) as session:
            agent = create_agent(
                session,
                config=replace(make_config(self.server, model=model), compaction=COMPACTION),
                cwd=str(self.cwd),
                permissions=permissions,
                approver=approver,
                extensions=extensions,
            )
            try:
                yield agent
            finally:
                await agent.aclose()

    async def run(self, events: AsyncIterator[AgentEvent]) -> None:
        async for event in events:
            self.events.append(event)
            if isinstance(event, ToolStarted):
                self.tool_started.set()

    async def run_until_tool(self, events: AsyncIterator[AgentEvent]) -> asyncio.Task[None]:
        self.tool_started.clear()
        task = asyncio.create_task(self.run(events))
        await asyncio.wait_for(self.tool_started.wait(), 60)
        return task

    def result(self, **extra: Any) -> Run:
        vocabulary = c.agent_vocabulary(self.events, c.user_texts(self.path))
        return Run(self.path, vocabulary, self.cwd, self.requests(), extra)


class Headless(Face):
    """``agent-tui -p ... --mode json`` (and plain print mode), ``--mode rpc`` and ``acp`` as
    subprocesses, on print mode's project, home and config (``tests.support.print_env.Env``)."""

    def __init__(self, server: FakeModelServer, folder: Path) -> None:
        super().__init__(server, folder)
        self.env = self.make_env(folder, server)
        (folder / "config.toml").write_text(CONFIG)
        self.cwd = self.env.work
        (self.cwd / "notes.txt").write_text(c.NOTES)
        self.path = folder / "session.jsonl"

    def make_env(self, folder: Path, server: FakeModelServer) -> Env:
        return Env(folder, server)

    def add_config(self, text: str) -> None:
        config = self.folder / "config.toml"
        config.write_text(config.read_text() + text)


class Json(Headless):
    name = "json"

    def __init__(self, server: FakeModelServer, folder: Path) -> None:
        super().__init__(server, folder)
        self.records: list[Record] = []
        self.stderr = ""

    def args(self, prompt: str, *more: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "agent_tui",
            "-p",
            prompt,
            "--mode",
            "json",
            "--session",
            str(self.path),
            *more,
        ]

    def take(self, stdout: str, stderr: str) -> None:
        lines = [json.loads(line) for line in stdout.splitlines()]
        assert lines and lines[0]["type"] == "session", stdout
        self.records.extend(lines[1:])
        self.stderr += stderr

    def run(self, prompt: str, *more: str, code: int = 0) -> None:
        done = subprocess.run(
            self.args(prompt, *more),
            cwd=self.cwd,
            env=self.env.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == code, done.stderr
        self.take(done.stdout, done.stderr)

    def popen(self, prompt: str, *more: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.args(prompt, *more),
            cwd=self.cwd,
            env=self.env.env,
            # -p reads a stdin that is not a terminal to its end (pi's rule): a pipe only to steer
            stdin=subprocess.PIPE if "--steer-stdin" in more else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def until_tool(self, proc: subprocess.Popen[str]) -> list[str]:
        """The stdout lines up to the first ``tool_execution_start``."""
        assert proc.stdout is not None
        seen: list[str] = []
        for line in proc.stdout:
            seen.append(line)
            if json.loads(line)["type"] == "tool_execution_start":
                return seen
        raise AssertionError(f"no tool started: {seen[-5:]}; stderr: {proc.communicate()[1]}")

    def result(self, **extra: Any) -> Run:
        extra.setdefault("notices", c.stderr_notices(self.stderr))
        return Run(self.path, c.pi_vocabulary(self.records), self.cwd, self.requests(), extra)


class Rpc(Headless):
    name = "rpc"

    def __init__(self, server: FakeModelServer, folder: Path) -> None:
        super().__init__(server, folder)
        self.client: RpcClient | None = None

    def open(self, *more: str) -> RpcClient:
        self.client = RpcClient(["--session", str(self.path), *more], self.cwd, self.env.env)
        return self.client

    def prompt(self, message: str) -> None:
        assert self.client is not None
        assert self.ok({"type": "prompt", "message": message}) == {"disposition": "started"}
        self.client.wait_for(lambda r: r["type"] == "agent_settled", 120)

    def ok(self, command: Record) -> Any:
        assert self.client is not None
        response = self.client.call(command, 120)
        assert response["success"], response
        return response.get("data")

    def finish(self) -> str:
        assert self.client is not None
        code, stderr = self.client.finish(60)
        assert code == 0, stderr
        return stderr

    def result(self, **extra: Any) -> Run:
        assert self.client is not None
        stderr = self.finish() if self.client.proc.poll() is None else ""
        extra.setdefault("notices", c.stderr_notices(stderr))
        events = [r for r in self.client.records if r["type"] not in ("response", "bash_execution_update")]
        return Run(self.path, c.pi_vocabulary(events), self.cwd, self.requests(), extra)

    def kill(self) -> None:
        if self.client is not None:
            self.client.kill()


class RefusingEditor(EditorClient):
    """An editor whose permission dialog fails (it answers ``session/request_permission`` with an error)."""

    async def request_permission(
        self, options: Any, session_id: str, tool_call: ToolCallUpdate, **kwargs: Any
    ) -> Any:
        self.permission_requests.append((tool_call, options))
        self.changed.set()
        raise RequestError.internal_error({"message": "the editor cannot show a dialog"})


class Acp(Headless):
    name = "acp"

    def make_env(self, folder: Path, server: FakeModelServer) -> Env:
        return AcpEnv(folder, server)

    def __init__(self, server: FakeModelServer, folder: Path) -> None:
        super().__init__(server, folder)
        self.runs: list[tuple[int, int, str]] = []  # each prompt's updates (from, to) and outcome
        self.client: EditorClient = EditorClient()

    @property
    def acp(self) -> AcpEnv:
        assert isinstance(self.env, AcpEnv)
        return self.env

    @contextlib.asynccontextmanager
    async def session(self, *args: str, client: EditorClient | None = None) -> AsyncIterator[tuple[Any, str]]:
        """``agent-tui acp ARGS`` with a new session: the connection and the session's id."""
        if client is not None:
            self.client = client
        try:
            async with self.acp.agent(self.client, args=args) as conn:
                created = await asyncio.wait_for(conn.new_session(cwd=str(self.cwd), mcp_servers=[]), 60)
                yield conn, created.session_id
        except ConnectionError as e:  # the agent went away: what it said on stderr
            raise AssertionError(f"agent-tui acp: {e}; stderr:\n{self.acp.stderr_path.read_text()}") from e

    async def prompt(self, conn: Any, session_id: str, message: str) -> None:
        start = len(self.client.updates)
        try:
            response = await asyncio.wait_for(
                conn.prompt(session_id=session_id, prompt=[text_block(message)]), 120
            )
            outcome = "aborted" if response.stop_reason == "cancelled" else "done"
        except RequestError:
            outcome = "error"
        self.runs.append((start, len(self.client.updates), outcome))

    def result(self, **extra: Any) -> Run:
        (path,) = self.acp.sessions()
        updates = [u for _, u in self.client.updates]
        runs = [(updates[a:b], outcome) for a, b, outcome in self.runs]
        return Run(path, c.acp_vocabulary(runs), self.cwd, self.requests(), extra)


@pytest.fixture
def reference(server: FakeModelServer, tmp_path: Path) -> Sdk:
    return Sdk(server, tmp_path / "reference")


# -- prompt ------------------------------------------------------------------------------------

PROMPT = "what does notes.txt say?"
PROMPT_EVENTS: list[c.Item] = [
    ("user", PROMPT),
    ("text", "Reading it. "),
    ("tool", "read", {"path": "notes.txt"}),
    ("result", "read", False),
    ("text", "It says banana."),
    ("end", "done"),
]


async def sdk_prompt(face: Sdk) -> Run:
    face.server.push(*c.prompt_scenario())
    async with face.agent() as agent:
        await face.run(agent.prompt(PROMPT))
    return face.result()


@pytest.mark.parametrize("name", ["json", "print", "rpc", "acp"])
async def test_prompt(name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path) -> None:
    ref = await sdk_prompt(reference)
    if name == "sdk":
        run = await sdk_prompt(Sdk(server, tmp_path / "face"))
    elif name in ("json", "print"):
        face = Json(server, tmp_path / "face")
        server.push(*c.prompt_scenario())
        if name == "json":
            face.run(PROMPT)
            run = face.result()
        else:
            done = subprocess.run(
                [sys.executable, "-m", "agent_tui", "-p", PROMPT, "--session", str(face.path)],
                cwd=face.cwd,
                env=face.env.env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            assert done.stdout == c.printed_reply(PROMPT_EVENTS)
            run = Run(face.path, [("end", "done")], face.cwd, face.requests())
    elif name == "rpc":
        rpc = Rpc(server, tmp_path / "face")
        server.push(*c.prompt_scenario())
        try:
            rpc.open()
            rpc.prompt(PROMPT)
            run = rpc.result()
        finally:
            rpc.kill()
    else:
        acp = Acp(server, tmp_path / "face")
        server.push(*c.prompt_scenario())
        async with acp.session("--permissions", "auto") as (conn, sid):
            await acp.prompt(conn, sid, PROMPT)
        run = acp.result()
    check(name, run, ref, PROMPT_EVENTS)
    assert run.bodies() == ref.bodies()


# -- steer, follow up, abort: while a tool runs ------------------------------------------------

WAIT_PROMPT = "wait for the go file"
TOOL_WAIT: c.Item = ("tool", "bash", {"command": c.WAIT_FOR_GO})
STEER_EVENTS: list[c.Item] = [
    ("user", WAIT_PROMPT),
    ("text", "Waiting. "),
    TOOL_WAIT,
    ("queue", (c.STEER,), ()),
    ("result", "bash", False),
    ("queue", (), ()),
    ("user", c.STEER),
    ("text", "Done, and the weather is fine."),
    ("end", "done"),
]
FOLLOW_UP_EVENTS: list[c.Item] = [
    ("user", WAIT_PROMPT),
    ("text", "Waiting. "),
    TOOL_WAIT,
    ("queue", (), (c.FOLLOW_UP,)),
    ("result", "bash", False),
    ("text", "Released."),
    ("queue", (), ()),
    ("user", c.FOLLOW_UP),
    ("text", "Goodbye."),
    ("end", "done"),
]
ABORT_PROMPT = "sleep a minute"
ABORT_EVENTS: list[c.Item] = [
    ("user", ABORT_PROMPT),
    ("text", "Sleeping. "),
    ("tool", "bash", {"command": c.NEVER_ENDS}),
    ("result", "bash", True),
    ("end", "aborted"),
]

#: What the user does while the tool runs, per scenario.
MID_TOOL = {
    "steer": (c.steer_scenario, WAIT_PROMPT, STEER_EVENTS),
    "follow_up": (c.follow_up_scenario, WAIT_PROMPT, FOLLOW_UP_EVENTS),
    "abort": (c.abort_scenario, ABORT_PROMPT, ABORT_EVENTS),
}


def wait_for_file(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


async def sdk_mid_tool(face: Sdk, scenario: str) -> Run:
    responses, prompt, _ = MID_TOOL[scenario]
    face.server.push(*responses())
    async with face.agent() as agent:
        task = await face.run_until_tool(agent.prompt(prompt))
        if scenario == "steer":
            agent.steer(c.STEER)
        elif scenario == "follow_up":
            agent.follow_up(c.FOLLOW_UP)
        else:
            await until(lambda: (face.cwd / "started").exists(), "the command to run")
            agent.abort()
        (face.cwd / "go").touch()
        await asyncio.wait_for(task, 120)
    return face.result()


def rpc_mid_tool(rpc: Rpc, scenario: str) -> Run:
    responses, prompt, _ = MID_TOOL[scenario]
    rpc.server.push(*responses())
    client = rpc.open()
    assert rpc.ok({"type": "prompt", "message": prompt}) == {"disposition": "started"}
    client.wait_for(lambda r: r["type"] == "tool_execution_start", 120)
    if scenario == "steer":
        rpc.ok({"type": "steer", "message": c.STEER})
    elif scenario == "follow_up":
        rpc.ok({"type": "follow_up", "message": c.FOLLOW_UP})
    else:
        wait_for_file(rpc.cwd / "started")
        rpc.ok({"type": "abort"})  # answered once the run has settled
    (rpc.cwd / "go").touch()
    if scenario != "abort":
        client.wait_for(lambda r: r["type"] == "agent_settled", 120)
    return rpc.result()


def json_mid_tool(face: Json, scenario: str) -> Run:
    responses, prompt, _ = MID_TOOL[scenario]
    face.server.push(*responses())
    proc = face.popen(prompt, *(["--steer-stdin"] if scenario == "steer" else []))
    try:
        seen = face.until_tool(proc)
        if scenario == "steer":
            assert proc.stdin is not None  # a pipe only to steer (-p reads any other stdin to its end)
            proc.stdin.write(c.STEER + "\n")
            proc.stdin.flush()
            # Nothing a client sees says a line of stdin was queued (JSON mode sends no
            # queue_update): the reading thread queues it in well under a second.
            time.sleep(2)
        else:
            wait_for_file(face.cwd / "started")
            proc.send_signal(signal.SIGINT)
        (face.cwd / "go").touch()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == (130 if scenario == "abort" else 0), err
    face.records.extend(json.loads(line) for line in seen[1:])
    face.take(seen[0] + out, err)
    return face.result()


async def acp_abort(acp: Acp) -> Run:
    acp.server.push(*c.abort_scenario())
    async with acp.session("--permissions", "auto") as (conn, sid):
        turn = asyncio.create_task(acp.prompt(conn, sid, ABORT_PROMPT))
        await acp.client.wait_for(
            lambda: any(
                isinstance(u, ToolCallStart | ToolCallProgress) and u.status == "in_progress"
                for _, u in acp.client.updates
            ),
            "the tool to run",
            120,
        )
        await until(lambda: (acp.cwd / "started").exists(), "the command to run")
        await conn.cancel(session_id=sid)
        await asyncio.wait_for(turn, 120)
    return acp.result()


@pytest.mark.parametrize(
    ("scenario", "name"),
    [
        ("steer", "json"),
        ("steer", "rpc"),
        ("follow_up", "rpc"),
        ("abort", "json"),
        ("abort", "rpc"),
        ("abort", "acp"),
    ],
)
async def test_mid_tool(
    scenario: str, name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path
) -> None:
    ref = await sdk_mid_tool(reference, scenario)
    folder = tmp_path / "face"
    if name == "sdk":
        run = await sdk_mid_tool(Sdk(server, folder), scenario)
    elif name == "json":
        run = json_mid_tool(Json(server, folder), scenario)
    elif name == "rpc":
        rpc = Rpc(server, folder)
        try:
            run = rpc_mid_tool(rpc, scenario)
        finally:
            rpc.kill()
    else:
        run = await acp_abort(Acp(server, folder))
    check(name, run, ref, MID_TOOL[scenario][2])
    assert run.bodies() == ref.bodies()


# -- switch model, an impossible thinking level ----------------------------------------------

SWITCH_EVENTS: list[c.Item] = [
    ("user", "one"),
    ("text", "One."),
    ("end", "done"),
    ("user", "two"),
    ("text", "Two."),
    ("end", "done"),
]
THINK_PROMPT = "think hard about it"
THINK_EVENTS: list[c.Item] = [("user", THINK_PROMPT), ("text", "Thought."), ("end", "done")]


async def sdk_switch(face: Sdk) -> Run:
    face.server.push(*c.two_replies())
    async with face.agent() as agent:
        await face.run(agent.prompt("one"))
        agent.set_model(c.SECOND_MODEL)
        await face.run(agent.prompt("two"))
    return face.result()


async def sdk_thinking(face: Sdk) -> Run:
    face.server.push(c.reply("Thought.", c.PLAIN_MODEL))
    async with face.agent(model=c.PLAIN_MODEL) as agent:
        assert agent.set_thinking_level("high") == "off"
        level = agent.thinking_level
        await face.run(agent.prompt(THINK_PROMPT))
    return face.result(level=level)


def thinking_sent(bodies: list[Any]) -> list[Any]:
    """What each request asked of the model's thinking (Anthropic's ``thinking``, a budget or effort)."""
    return [(b.get("thinking"), b.get("output_config")) for b in bodies]


@pytest.mark.parametrize("name", ["json", "rpc", "acp"])
async def test_switch_model(name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path) -> None:
    ref = await sdk_switch(reference)
    folder = tmp_path / "face"
    if name == "sdk":
        run = await sdk_switch(Sdk(server, folder))
    elif name == "json":
        face = Json(server, folder)
        server.push(*c.two_replies())
        face.run("one")
        face.run("two", "--model", c.SECOND_MODEL)
        run = face.result()
    elif name == "rpc":
        rpc = Rpc(server, folder)
        server.push(*c.two_replies())
        try:
            rpc.open()
            rpc.prompt("one")
            model = rpc.ok({"type": "set_model", "provider": "anthropic", "modelId": c.SECOND_MODEL})
            assert model["id"] == c.SECOND_MODEL
            rpc.prompt("two")
            run = rpc.result()
        finally:
            rpc.kill()
    else:
        acp = Acp(server, folder)
        server.push(*c.two_replies())
        async with acp.session("--permissions", "auto") as (conn, sid):
            await acp.prompt(conn, sid, "one")
            await conn.set_config_option(
                config_id="model", session_id=sid, value=f"anthropic/{c.SECOND_MODEL}"
            )
            await acp.prompt(conn, sid, "two")
        run = acp.result()
    check(name, run, ref, SWITCH_EVENTS)
    assert [b["model"] for b in run.bodies()] == [c.FIRST_MODEL, c.SECOND_MODEL]
    assert run.bodies() == ref.bodies()


@pytest.mark.parametrize("name", ["json", "rpc", "acp"])
async def test_an_impossible_thinking_level_ends_as_off(
    name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path
) -> None:
    ref = await sdk_thinking(reference)
    assert ref.extra["level"] == "off"
    folder = tmp_path / "face"
    reply = c.reply("Thought.", c.PLAIN_MODEL)
    if name == "sdk":
        run = await sdk_thinking(Sdk(server, folder))
        level = run.extra["level"]
    elif name == "json":
        face = Json(server, folder)
        server.push(reply)
        face.run(THINK_PROMPT, "--model", c.PLAIN_MODEL, "--thinking", "high")
        run = face.result()
        level = "off" if thinking_sent(run.bodies()) == [(None, None)] else "sent"
    elif name == "rpc":
        rpc = Rpc(server, folder)
        server.push(reply)
        try:
            rpc.open("--model", c.PLAIN_MODEL)
            rpc.ok({"type": "set_thinking_level", "level": "high"})
            assert rpc.client is not None
            changed = [r["level"] for r in rpc.client.records if r["type"] == "thinking_level_changed"]
            assert set(changed) <= {"off"}  # sent when the level changed: off stays off
            level = rpc.ok({"type": "get_state"})["thinkingLevel"]
            rpc.prompt(THINK_PROMPT)
            run = rpc.result()
        finally:
            rpc.kill()
    else:
        acp = Acp(server, folder)
        server.push(reply)
        async with acp.session("--permissions", "auto", "--model", c.PLAIN_MODEL) as (conn, sid):
            options = await conn.set_config_option(config_id="thinking", session_id=sid, value="high")
            (thinking,) = [o for o in options.config_options if o.id == "thinking"]
            level = thinking.current_value
            await acp.prompt(conn, sid, THINK_PROMPT)
        run = acp.result()
    assert level == "off"
    check(name, run, ref, THINK_EVENTS)
    assert thinking_sent(run.bodies()) == thinking_sent(ref.bodies()) == [(None, None)]
    assert run.bodies() == ref.bodies()


# -- compact ---------------------------------------------------------------------------------

#: Replies long enough that their summary makes the context smaller.
LONG_ONE, LONG_TWO = "One. " + "lorem ipsum dolor " * 200, "Two. " + "sit amet consectetur " * 200
COMPACT_EVENTS: list[c.Item] = [
    ("user", "one"),
    ("text", LONG_ONE),
    ("end", "done"),
    ("user", "two"),
    ("text", LONG_TWO),
    ("end", "done"),
    ("compaction_start", "manual"),
    ("compaction_end",),
    ("end", "done"),
]


def compact_replies() -> list[Any]:
    return [*c.two_replies(LONG_ONE, LONG_TWO, model=c.FIRST_MODEL), c.compaction_responses()[1]]


async def sdk_compact(face: Sdk) -> Run:
    face.server.push(*compact_replies())
    async with face.agent() as agent:
        await face.run(agent.prompt("one"))
        await face.run(agent.prompt("two"))
        await face.run(agent.compact())
    return face.result()


@pytest.mark.parametrize("name", ["rpc", "acp"])
async def test_compact(name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path) -> None:
    ref = await sdk_compact(reference)
    folder = tmp_path / "face"
    if name == "sdk":
        run = await sdk_compact(Sdk(server, folder))
    elif name == "rpc":
        rpc = Rpc(server, folder)
        server.push(*compact_replies())
        try:
            rpc.open()
            rpc.prompt("one")
            rpc.prompt("two")
            compacted = rpc.ok({"type": "compact"})
            assert compacted["summary"].startswith("## Goal")
            run = rpc.result()
        finally:
            rpc.kill()
    else:
        acp = Acp(server, folder)
        server.push(*compact_replies())
        async with acp.session("--permissions", "auto") as (conn, sid):
            await acp.prompt(conn, sid, "one")
            await acp.prompt(conn, sid, "two")
            await acp.prompt(conn, sid, "/compact")
        run = acp.result()
    # pi's compact is a command answered by its response, not a run: no agent_settled
    check(name, run, ref, COMPACT_EVENTS, COMPACT_EVENTS[:-1] if name == "rpc" else None)
    assert run.normalized()[-1]["type"] == "compaction"
    assert run.bodies() == ref.bodies()


# -- fork ------------------------------------------------------------------------------------


def first_reply(path: Path) -> str:
    return next(str(e["id"]) for e in c.entries(path) if e.get("message", {}).get("role") == "assistant")


async def sdk_fork(face: Sdk) -> Run:
    face.server.push(*c.two_replies(model=c.FIRST_MODEL))
    async with face.agent() as agent:
        await face.run(agent.prompt("one"))
        await face.run(agent.prompt("two"))
        fork = agent.session.fork(first_reply(face.path))
    return face.result(fork=fork)


@pytest.mark.parametrize("name", ["rpc"])
async def test_fork(name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path) -> None:
    ref = await sdk_fork(reference)
    folder = tmp_path / "face"
    if name == "sdk":
        run = await sdk_fork(Sdk(server, folder))
    else:
        rpc = Rpc(server, folder)
        server.push(*c.two_replies(model=c.FIRST_MODEL))
        try:
            rpc.open()
            rpc.prompt("one")
            rpc.prompt("two")
            forked = rpc.ok({"type": "fork", "entryId": first_reply(rpc.path), "position": "at"})
            run = rpc.result(fork=Path(forked["sessionFile"]))
        finally:
            rpc.kill()
    check(name, run, ref, SWITCH_EVENTS)
    same_session(run, ref, run.extra["fork"], ref.extra["fork"])
    assert c.summary(run.normalized(run.extra["fork"])) == [
        "model_change",
        "message:system",
        "message:user",
        "message:assistant",
    ]
    assert c.header(run.extra["fork"])["parentSession"] == str(run.path.resolve())


# -- !cmd ------------------------------------------------------------------------------------

BASH = "echo hi there"
BASH_EVENTS: list[c.Item] = [
    ("user", "what did it print?"),
    ("text", "It printed hi there."),
    ("end", "done"),
]


async def sdk_bash(face: Sdk) -> Run:
    face.server.push(c.reply("It printed hi there."))
    async with face.agent() as agent:
        message = await agent.bash(BASH)
        assert message["output"] == "hi there\n" and message["exitCode"] == 0
        await face.run(agent.prompt("what did it print?"))
    return face.result()


@pytest.mark.parametrize("name", ["rpc"])
async def test_user_bash(name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path) -> None:
    ref = await sdk_bash(reference)
    folder = tmp_path / "face"
    if name == "sdk":
        run = await sdk_bash(Sdk(server, folder))
    else:
        rpc = Rpc(server, folder)
        server.push(c.reply("It printed hi there."))
        try:
            rpc.open()
            done = rpc.ok({"type": "bash", "command": BASH})
            assert done["output"] == "hi there\n" and done["exitCode"] == 0
            rpc.prompt("what did it print?")
            run = rpc.result()
        finally:
            rpc.kill()
    check(name, run, ref, BASH_EVENTS)
    assert "hi there" in json.dumps(run.bodies()[0]["messages"][0])
    assert run.bodies() == ref.bodies()


# -- permissions -----------------------------------------------------------------------------

MARKER = "made-by-the-tool"
PERMISSION_PROMPT = "make the file"


def permission_events(allowed: bool) -> list[c.Item]:
    return [
        ("user", PERMISSION_PROMPT),
        ("tool", "bash", {"command": f"touch {MARKER}"}),
        ("result", "bash", not allowed),
        ("text", "Understood."),
        ("end", "done"),
    ]


async def sdk_permission(face: Sdk, answer: Decision | None) -> Run:
    face.server.push(*c.permission_scenario(MARKER))

    async def approve(request: PermissionRequest) -> Decision:
        assert answer is not None
        return answer

    async with face.agent(permissions="ask", approver=None if answer is None else approve) as agent:
        await face.run(agent.prompt(PERMISSION_PROMPT))
    return face.result()


ANSWERS = {"allowed": Decision.ALLOW_ONCE, "denied": Decision.DENY, "unanswerable": None}


@pytest.mark.parametrize(
    ("case", "name"),
    [
        ("allowed", "rpc"),
        ("allowed", "acp"),
        ("denied", "rpc"),
        ("denied", "acp"),
        ("unanswerable", "json"),
        ("unanswerable", "rpc"),
        ("unanswerable", "acp"),
    ],
)
async def test_permission(
    case: str, name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path
) -> None:
    answer = ANSWERS[case]
    ref = await sdk_permission(reference, answer)
    folder = tmp_path / "face"
    if name == "sdk":
        run = await sdk_permission(Sdk(server, folder), answer)
    elif name == "json":
        face = Json(server, folder)
        server.push(*c.permission_scenario(MARKER))
        face.run(PERMISSION_PROMPT, "--permissions", "ask")
        run = face.result()
    elif name == "rpc":
        rpc = Rpc(server, folder)
        server.push(*c.permission_scenario(MARKER))
        if answer is None:  # the client never answers: a refusal after the timeout
            rpc.env.env["AGENT_TUI_RPC_ASK_TIMEOUT"] = "1"
        try:
            client = rpc.open("--permissions", "ask")
            assert rpc.ok({"type": "prompt", "message": PERMISSION_PROMPT}) == {"disposition": "started"}
            asked = client.wait_for(lambda r: r["type"] == "extension_ui_request", 120)
            assert asked["toolCallId"] == "toolu_perm"
            if answer is not None:
                value = "Allow once" if answer is Decision.ALLOW_ONCE else "Deny"
                client.send({"type": "extension_ui_response", "id": asked["id"], "value": value})
            client.wait_for(lambda r: r["type"] == "agent_settled", 120)
            run = rpc.result()
        finally:
            rpc.kill()
    else:
        acp = Acp(server, folder)
        server.push(*c.permission_scenario(MARKER))
        editor = RefusingEditor() if answer is None else EditorClient(answers=[answer.value])
        async with acp.session("--permissions", "ask", client=editor) as (conn, sid):
            await acp.prompt(conn, sid, PERMISSION_PROMPT)
        assert len(editor.permission_requests) == 1
        run = acp.result()
    check(name, run, ref, permission_events(case == "allowed"))
    assert (run.cwd / MARKER).exists() == (case == "allowed")
    (record,) = c.permission_records(run.normalized())
    assert record["decision"] == ("allow-once" if case == "allowed" else "deny")
    if answer is None:  # each face says why it could not ask, in its words
        (result,) = [e for e in c.entries(run.path) if e.get("message", {}).get("role") == "toolResult"]
        reason = c.no_answer_reason(result["message"]["content"][0]["text"])
        assert reason is not None and "-p" not in reason if name != "json" else reason
    assert run.bodies() == ref.bodies()


# -- a slow MCP server -----------------------------------------------------------------------

SLOW_SERVER = Path(__file__).parents[1] / "fixtures" / "mcp" / "slow_server.py"
MCP_EVENTS: list[c.Item] = [("notice", c.SLOW_MCP_LINE), ("user", "hello"), ("text", "Hi."), ("end", "done")]


async def sdk_mcp(face: Sdk) -> Run:
    face.config_path.write_text(CONFIG + c.mcp_config(SLOW_SERVER, sys.executable, 60))
    face.server.push(c.reply("Hi."))
    async with face.agent(mcp=True) as agent:
        await face.run(agent.prompt("hello"))
    return face.result()


@pytest.mark.parametrize("name", ["json", "rpc", "acp"])
async def test_slow_mcp_server(name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path) -> None:
    ref = await sdk_mcp(reference)
    folder = tmp_path / "face"
    if name == "sdk":
        run = await sdk_mcp(Sdk(server, folder))
    elif name == "json":
        face = Json(server, folder)
        face.add_config(c.mcp_config(SLOW_SERVER, sys.executable, 60))
        server.push(c.reply("Hi."))
        face.run("hello")
        run = face.result()
    elif name == "rpc":
        rpc = Rpc(server, folder)
        rpc.add_config(c.mcp_config(SLOW_SERVER, sys.executable, 60))
        server.push(c.reply("Hi."))
        try:
            rpc.open()
            rpc.prompt("hello")
            run = rpc.result()
        finally:
            rpc.kill()
    else:
        acp = Acp(server, folder)
        acp.add_config(c.mcp_config(SLOW_SERVER, sys.executable, 60))
        server.push(c.reply("Hi."))
        async with acp.session("--permissions", "auto") as (conn, sid):
            await acp.prompt(conn, sid, "hello")
        run = acp.result()
    check(name, run, ref, MCP_EVENTS)
    if "notice" not in c.FACE_KINDS[name]:
        assert run.extra["notices"] == [c.SLOW_MCP_LINE]  # the one line, on stderr
    assert run.bodies() == ref.bodies()


# -- a reply streams as it comes ---------------------------------------------------------------

#: One line of 20 words, streamed a word at a time (no newline until it ends).
ONE_LINE = "this reply comes a word at a time on one line and no newline ends it until the very last word"
STREAM_EVENTS: list[c.Item] = [("user", "stream it"), ("text", ONE_LINE), ("end", "done")]


def one_line_reply() -> Stream:
    return c.reply(ONE_LINE).slow(50)


def text_pieces(records: list[Record] | None = None, updates: list[Any] | None = None) -> int:
    """How many pieces the reply's text reached the client in."""
    if records is not None:
        return sum(
            1
            for r in records
            if r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta"
        )
    assert updates is not None
    from acp.schema import AgentMessageChunk

    return sum(1 for u in updates if isinstance(u, AgentMessageChunk))


async def sdk_stream(face: Sdk) -> Run:
    from agent_tui.agent.events import TextDelta

    face.server.push(one_line_reply())
    async with face.agent() as agent:
        await face.run(agent.prompt("stream it"))
    return face.result(pieces=sum(1 for e in face.events if isinstance(e, TextDelta)))


@pytest.mark.parametrize("name", ["json", "rpc", "acp"])
async def test_a_one_line_reply_streams_in_pieces(
    name: str, server: FakeModelServer, reference: Sdk, tmp_path: Path
) -> None:
    """Every text delta reaches every face as it arrives: the redactor holds back only what could
    still start a secret, not the line (20 words: at least 10 pieces)."""
    ref = await sdk_stream(reference)
    assert ref.extra["pieces"] >= 10
    folder = tmp_path / "face"
    if name == "json":
        face = Json(server, folder)
        server.push(one_line_reply())
        face.run("stream it")
        run = face.result()
        pieces = text_pieces(records=face.records)
    elif name == "rpc":
        rpc = Rpc(server, folder)
        server.push(one_line_reply())
        try:
            client = rpc.open()
            rpc.prompt("stream it")
            pieces = text_pieces(records=client.records)
            run = rpc.result()
        finally:
            rpc.kill()
    else:
        acp = Acp(server, folder)
        server.push(one_line_reply())
        async with acp.session("--permissions", "auto") as (conn, sid):
            await acp.prompt(conn, sid, "stream it")
        run = acp.result()
        pieces = text_pieces(updates=[u for _, u in acp.client.updates])
    check(name, run, ref, STREAM_EVENTS)
    assert pieces >= 10, f"{name}: the reply came in {pieces} pieces"

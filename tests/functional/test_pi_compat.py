"""agent-tui's projection is pi's: `agent-tui context FILE --format json` against pi 1.6.

For every file of ``sessions.example/`` (at the default leaf and at every entry
as ``--leaf``) and for a few hundred generated sessions (random trees of every
entry type, see ``tests/support/pi_compat/generate.py``), the message arrays must be
equal: same roles, same content, same order, same fields. pi runs once, in one
node process, on copies of all the files (``tests/support/pi_compat/pi_project.mjs``).

Needs node (any version from 20) and pi installed in ``bench/pi``; the fixture
runs ``npm ci`` there when ``node_modules`` is missing. Without node the tests
fail: pi compatibility is not optional.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import re
import shutil
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cli import session_commands
from agent_tui.cli.main import build_session_parser
from agent_tui.cli.main import main as agent_tui_main
from agent_tui.projection.context import project
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from tests.support.pi_compat.generate import GeneratedSession, generate
from tests.support.pi_install import pi_node

# The first test to need pi may have to install it (`npm ci`, about 200 MB): give it time.
pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "sessions.example"
SCRIPT = ROOT / "tests" / "support" / "pi_compat" / "pi_project.mjs"
GENERATED_SEEDS = range(1, 401)
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.jsonl"))
# Local-time timestamps ("2025-01-04T10:00:00") read differently in every zone but UTC:
# run both sides in one with an offset, when the system has it.
ZONE = "America/Sao_Paulo"


# -- running both sides ----------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One projection to compare: a file and a leaf (an id, or for v1 files an entry index)."""

    file: Path
    leaf: str | None = None
    leaf_index: int | None = None

    def pi_request(self) -> dict[str, Any]:
        job: dict[str, Any] = {"file": str(self.file)}
        if self.leaf is not None:
            job["leaf"] = self.leaf
        if self.leaf_index is not None:
            job["leafIndex"] = self.leaf_index
        return job


class Pi:
    def __init__(self, node: str) -> None:
        self.node = node

    def project(self, jobs: list[Job]) -> list[dict[str, Any]]:
        """pi's projections, in one node process: {"messages": [...]} or {"error": "..."} per job."""
        proc = subprocess.run(
            [self.node, str(SCRIPT), "--batch"],
            input=json.dumps([j.pi_request() for j in jobs]),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, f"pi_project.mjs failed:\n{proc.stderr}"
        results: list[dict[str, Any]] = json.loads(proc.stdout)
        assert len(results) == len(jobs)
        return results


@pytest.fixture(scope="session")
def pi() -> Pi:
    return Pi(pi_node())


@pytest.fixture(scope="module")
def zone() -> Any:
    """Both sides in a zone with a UTC offset (if the system has the zone data), then back."""
    if not Path("/usr/share/zoneinfo", ZONE).exists():
        yield
        return
    saved = os.environ.get("TZ")
    os.environ["TZ"] = ZONE
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()


_PARSER = build_session_parser()


def agent_tui_context(job: Job, via_main: bool = False) -> Any:
    """`agent-tui context FILE --format json [--leaf ID]`, run in-process, parsed.

    Building the command-line parser costs more than projecting a small file, so
    the comparisons reuse one (``via_main`` goes through ``main`` instead).
    """
    argv = ["context", str(job.file), "--format", "json"]
    leaf = job.leaf
    if job.leaf_index is not None:
        leaf = SessionIndex(read_file(job.file)).entries[job.leaf_index].id
    if leaf is not None:
        argv += ["--leaf", leaf]
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    gc_was_enabled = gc.isenabled()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = agent_tui_main(argv) if via_main else session_commands.run(_PARSER.parse_args(argv))
        out.flush()
        data = out.buffer.getvalue()
    finally:
        if gc_was_enabled:
            gc.enable()  # the session commands turn the collector off for their short process
    assert code == 0, f"agent-tui {' '.join(argv)} exited {code}"
    return json.loads(data)


def mismatch(job: Job, ours: Any, theirs: Any) -> str:
    where = f"{job.file.name}" + (f" --leaf {job.leaf}" if job.leaf else "")
    where += f" (entry #{job.leaf_index})" if job.leaf_index is not None else ""
    if len(ours) != len(theirs):
        roles = (
            f"\n  agent-tui: {[m.get('role') for m in ours]}\n  pi:        {[m.get('role') for m in theirs]}"
        )
        return f"{where}: {len(ours)} messages, pi has {len(theirs)}{roles}\n  file: {job.file}"
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a != b:
            return f"{where}: message {i} differs\n  agent-tui: {a}\n  pi:        {b}\n  file: {job.file}"
    return f"{where}: differs"


def compare(pi: Pi, jobs: list[Job]) -> list[str]:
    """Project every job on both sides (pi in the background); return one line per mismatch."""
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(pi.project, jobs)
        ours = [agent_tui_context(job) for job in jobs]
        theirs = pending.result()
    problems = []
    for job, mine, result in zip(jobs, ours, theirs, strict=True):
        if "error" in result:
            problems.append(f"{job.file.name}: pi failed: {result['error'].splitlines()[0]}")
        elif mine != result["messages"]:
            problems.append(mismatch(job, mine, result["messages"]))
    return problems


# -- the examples ----------------------------------------------------------------------


def example_jobs(name: str) -> list[Job]:
    """The default leaf, then every entry as the leaf (v1: by position, pi's ids are random)."""
    path = EXAMPLES / name
    index = SessionIndex(read_file(path))
    jobs = [Job(path)]
    if index.version < 2:
        jobs += [Job(path, leaf_index=i) for i in range(len(index.entries))]
    else:
        jobs += [Job(path, leaf=e.id) for e in index.entries]
    return jobs


def test_examples_exist() -> None:
    assert set(EXAMPLE_FILES) >= {
        "branches.jsonl",
        "compaction.jsonl",
        "edits.jsonl",
        "extras.jsonl",
        "pi-v1.jsonl",
        "pi-v2.jsonl",
    }


@pytest.fixture(scope="module")
def example_problems(pi: Pi, zone: None) -> dict[str, tuple[int, list[str]]]:
    """Every example at every leaf, both sides, in one node run: name -> (projections, mismatches)."""
    jobs = {name: example_jobs(name) for name in EXAMPLE_FILES}
    problems = compare(pi, [job for js in jobs.values() for job in js])
    return {name: (len(js), [p for p in problems if p.startswith(f"{name}")]) for name, js in jobs.items()}


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_matches_pi(example_problems: dict[str, tuple[int, list[str]]], name: str) -> None:
    count, problems = example_problems[name]
    assert count > 10
    assert not problems, f"{len(problems)} of {count} projections differ from pi's:\n" + "\n".join(
        problems[:5]
    )


def describe(message: dict[str, Any]) -> str:
    """A message's content as the README writes it: text, <tool>, <thinking>, <image>, (empty)."""
    content = message.get("content")
    if isinstance(content, str):
        parts = [content]
    else:
        parts = []
        for block in content or []:
            kind = block.get("type")
            if kind == "text":
                parts.append(block["text"])
            elif kind == "toolCall":
                parts.append(f"<{block['name']}>")
            else:
                parts.append(f"<{kind}>")
    text = " ".join(" ".join(parts).split())
    return text or "(empty)"


def readme_expectations() -> list[tuple[str, list[str], list[tuple[str, str]]]]:
    """The hand-written projections of sessions.example/README.md: (file, extra args, [(role, words)])."""
    readme = (EXAMPLES / "README.md").read_text()
    found = []
    for block in re.findall(r"^```\n(\$ agent-tui context .*?)^```$", readme, flags=re.S | re.M):
        command, *lines = block.strip().splitlines()
        args = command.split()[3:]
        expected = []
        for line in lines:
            role, _, words = line.partition(" ")
            expected.append((role, " ".join(words.split())))
        found.append((args[0], args[1:], expected))
    return found


def test_readme_lists_every_example() -> None:
    expectations = readme_expectations()
    assert len(expectations) >= 10
    described = {Path(f).name for f, _, _ in expectations}
    assert described == set(EXAMPLE_FILES)


README_CASES = readme_expectations()


@pytest.mark.parametrize(
    ("file", "args", "expected"),
    README_CASES,
    ids=[" ".join([Path(f).name, *a]) for f, a, _ in README_CASES],
)
def test_readme_projection(file: str, args: list[str], expected: list[tuple[str, str]]) -> None:
    """What the README says the model sees is what agent-tui prints (and, above, what pi prints)."""
    leaf = args[args.index("--leaf") + 1] if "--leaf" in args else None
    messages = agent_tui_context(Job(ROOT / file, leaf=leaf), via_main=True)
    got = [(m["role"], describe(m)) for m in messages]
    assert [r for r, _ in got] == [r for r, _ in expected], f"roles of {file} {args}"
    for i, ((role, text), (_, words)) in enumerate(zip(got, expected, strict=True)):
        assert text.startswith(words), f"{file} {args} message {i} ({role}): {text[:120]!r}"


def test_pi_project_cli_leaves_the_file_alone(pi: Pi, tmp_path: Path) -> None:
    """pi rewrites v1/v2 files when it opens them: the script must only ever hand it a copy."""
    for name in ("pi-v1.jsonl", "pi-v2.jsonl"):
        session = tmp_path / name
        shutil.copy(EXAMPLES / name, session)
        before = session.read_bytes()
        proc = subprocess.run(
            [pi.node, str(SCRIPT), str(session)], capture_output=True, text=True, timeout=60, check=False
        )
        assert proc.returncode == 0, proc.stderr
        assert session.read_bytes() == before, f"{name} was rewritten"
        assert json.loads(proc.stdout) == agent_tui_context(Job(session), via_main=True)
    leaf = "ed17000b"
    proc = subprocess.run(
        [pi.node, str(SCRIPT), str(EXAMPLES / "edits.jsonl"), leaf],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    on_branch = json.loads(proc.stdout)
    assert on_branch == agent_tui_context(Job(EXAMPLES / "edits.jsonl", leaf=leaf))
    assert on_branch != agent_tui_context(Job(EXAMPLES / "edits.jsonl"))


# -- generated sessions ----------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[GeneratedSession, Path]]:
    folder = tmp_path_factory.mktemp("generated-sessions")
    out = []
    for seed in GENERATED_SEEDS:
        session = generate(seed)
        path = folder / f"gen-{seed:04d}-v{session.version}.jsonl"
        path.write_text(session.text, encoding="utf-8")
        out.append((session, path))
    return out


def generated_jobs(sessions: list[tuple[GeneratedSession, Path]]) -> list[Job]:
    """Each file at its default leaf, and at two other entries picked by its seed."""
    jobs = []
    for session, path in sessions:
        jobs.append(Job(path))
        if session.entries == 0:
            continue
        picks = {(session.seed * 7919 + k * 104729) % session.entries for k in (1, 2)}
        for i in sorted(picks):
            if session.version < 2:
                jobs.append(Job(path, leaf_index=i))
            else:
                jobs.append(Job(path, leaf=session.ids[i]))
    return jobs


def test_generated_sessions_match_pi(
    pi: Pi, zone: None, generated: list[tuple[GeneratedSession, Path]]
) -> None:
    jobs = generated_jobs(generated)
    problems = compare(pi, jobs)
    assert not problems, f"{len(problems)} of {len(jobs)} projections differ from pi's:\n" + "\n".join(
        problems[:5]
    )


def test_generated_sessions_cover_the_format(generated: list[tuple[GeneratedSession, Path]]) -> None:
    """The comparison above means something only if the corpus holds every case it is meant to."""
    versions: Counter[int] = Counter()
    statuses: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    branched = 0
    for session, path in generated:
        versions[session.version] += 1
        index = SessionIndex(read_file(path))
        if len(index.roots()) > 1 or any(len(c) > 1 for c in index.children.values()):
            branched += 1
        projection = project(index)
        if projection.compaction_id is not None:
            statuses["compacted"] += 1
        for ce in projection.entries:
            statuses[ce.status] += 1
        for m in projection.messages:
            kinds[m.kind] += 1
    assert versions[1] >= 10 and versions[2] >= 10 and versions[3] >= 300, versions
    assert branched >= 100
    for status in ("kept", "summary", "after_compaction", "replaced", "restored", "hidden", "superseded"):
        assert statuses[status] >= 5, (status, statuses)
    assert statuses["compacted"] >= 40, statuses
    for kind in ("user", "assistant", "toolResult", "system", "custom", "bashExecution"):
        assert kinds[kind] >= 20, (kind, kinds)
    for kind in ("compactionSummary", "branchSummary"):
        assert kinds[kind] >= 20, (kind, kinds)


# -- a session appended through the sidecar --------------------------------------------


def test_a_session_appended_through_the_sidecar_reads_the_same_in_pi(
    pi: Pi, zone: None, tmp_path: Path
) -> None:
    """Three rounds of opening through the sidecar (its seal checked, not a full parse) and
    appending as agent-tui does (messages, a tool call and its result, a label, a name, a
    compaction, a branch move), with pi appending one line without the sidecar between two: pi 1.6
    projects every leaf of the file as we do."""
    from agent_tui.store.session import Session
    from agent_tui.store.sidecar import load, sidecar_path
    from agent_tui.store.writer import FsyncPolicy
    from tests.support.session_builder import assistant, tool_result, user

    created = Session.create(tmp_path, tmp_path, fsync=FsyncPolicy.NEVER)
    path = created.path
    ids = [created.append_message(user("start", ts=1_700_000_000_000)).id]
    created.close()
    for round_ in range(3):
        _, side = load(path)
        assert side is not None and sidecar_path(path).exists()  # opened through the sidecar
        with Session.open(path, fsync=FsyncPolicy.NEVER) as session:
            assert session.sidecar is not None
            ts = 1_700_000_000_000 + round_ * 1_000
            call = f"call-{round_}"
            ids.append(
                session.append_message(
                    assistant(f"reading {round_}", [(call, "read", {"path": "a.txt"})], ts=ts)
                ).id
            )
            ids.append(session.append_message(tool_result(call, f"alpha {round_}\n" * 20, ts=ts + 1)).id)
            ids.append(session.append_message(assistant(f"read {round_}", ts=ts + 2)).id)
            session.label(ids[-1], f"round {round_}")
            session.rename(f"sidecar round {round_}")
            if round_ == 1:
                session.append(
                    {
                        "type": "compaction",
                        "summary": "## Goal\nRead a.txt twice.",
                        "firstKeptEntryId": ids[-3],
                        "tokensBefore": 900,
                        "details": {"readFiles": ["a.txt"], "modifiedFiles": []},
                    }
                )
            ids.append(session.append_message(user(f"next {round_}", ts=ts + 3)).id)
            if round_ == 2:
                session.branch(ids[3])  # back to the first round's result: a leaf move
                ids.append(session.append_message(user("on the branch", ts=ts + 4)).id)
        if round_ == 0:  # pi appends without the sidecar: the next open extends it
            with path.open("a", encoding="utf-8") as f:
                line = {
                    "type": "message",
                    "id": "pi000001",
                    "parentId": ids[-1],
                    "timestamp": "2025-01-04T10:00:00.000Z",
                    "message": assistant("pi's own reply", ts=1_700_000_000_500),
                }
                f.write(json.dumps(line) + "\n")
            ids.append("pi000001")
    _, side = load(path)
    assert side is not None
    jobs = [Job(path)] + [Job(path, leaf=i) for i in ids]
    problems = compare(pi, jobs)
    assert not problems, "\n".join(problems[:5])

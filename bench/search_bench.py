"""Session library benchmark: index build and search-as-you-type over a synthetic library.

``run()`` returns ``(label, figure)`` pairs for ``bench/run.py``; run this file
directly to print them (``--sessions``, ``--bytes``, ``--keep``).

The library: 1,000 pi v3 sessions, 1 GiB in all by default, in 25 cwd folders
as the data dir keeps them, written by a deterministic generator from one
``random.Random(seed)`` and cached in ``bench/data/library-<seed>-<n>-<bytes>/``
(regenerated when missing). Sessions look like coding sessions: user prompts,
assistant replies with thinking, text and tool calls, tool results (file
reads, test runs, grep hits) that hold most of the bytes, names and labels on
some, a branch in some, forks of others (``parentSession``). Each session has
words of its own (its topic, identifiers), so the vocabulary grows with it.

Measured:
- index build: every file parsed, summarized and its text put in the FTS
  index, from an empty cache (and the cache's size on disk);
- refresh with nothing changed (a stat per file), and after one append;
- listing: every session's summary, and the fork tree;
- search: queries typed one character at a time, one ``search()`` per
  keystroke on a warm ``Library`` (what the picker does): median, p95, max;
- locate: entry and snippet for the first 20 hits of a query.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = BENCH / "data"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from gen_session import IDENTS, WORDS  # noqa: E402

from agent_tui.library.search import Library  # noqa: E402
from agent_tui.store.session import Session  # noqa: E402

GENERATOR_VERSION = 2
DEFAULT_SESSIONS = 1000
DEFAULT_BYTES = 1 << 30
DEFAULT_SEED = 1000
FOLDERS = 25
QUERIES = (
    "xylophone",  # one session
    "compaction summary",  # common words
    "worker_queue",  # an identifier, split in two words
    "topic512",  # one session's topic
    "fsync timeout error",
    "zzqx",  # nothing
)
_encode = msgspec.json.Encoder().encode


# -- the library -------------------------------------------------------------------------------


class _Pools:
    def __init__(self, rng: random.Random) -> None:
        self.sentences = [self._sentence(rng) for _ in range(4000)]
        self.code = [self._code(rng) for _ in range(1500)]
        self.outputs = [self._output(rng) for _ in range(1500)]

    @staticmethod
    def _sentence(rng: random.Random) -> str:
        words = rng.choices(WORDS, k=rng.randint(6, 24))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), f"`{rng.choice(IDENTS)}_{rng.choice(IDENTS)}()`")
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice(".?:")

    @staticmethod
    def _code(rng: random.Random) -> str:
        lines = []
        for _ in range(int(min(rng.lognormvariate(3.5, 1.0), 900))):
            a, b = rng.choice(IDENTS), rng.choice(IDENTS)
            lines.append(
                rng.choice(
                    (
                        f"def {a}_{b}(self, {b}: {rng.choice(WORDS)}) -> None:",
                        f"    {a} = self.{b}.get({rng.randint(0, 999)})",
                        f"    if {a} is None:  # {' '.join(rng.choices(WORDS, k=5))}",
                        f"        raise {rng.choice(IDENTS).title()}Error(f'{a} {{ {b} }}')",
                        f"    return {a}.{b}({rng.choice(IDENTS)}=True)",
                        "",
                    )
                )
            )
        return "\n".join(lines)

    @staticmethod
    def _output(rng: random.Random) -> str:
        lines = []
        for _ in range(int(min(rng.lognormvariate(2.5, 1.2), 600))):
            lines.append(
                rng.choice(
                    (
                        f"src/{rng.choice(IDENTS)}/{rng.choice(IDENTS)}.py:{rng.randint(1, 900)}: {' '.join(rng.choices(WORDS, k=6))}",
                        f"tests/test_{rng.choice(IDENTS)}.py::test_{rng.choice(IDENTS)} PASSED",
                        f"{rng.randint(1, 300)} passed, {rng.randint(0, 3)} failed in {rng.random():.2f}s",
                        f"E   AssertionError: {' '.join(rng.choices(WORDS, k=4))}",
                    )
                )
            )
        return "\n".join(lines)


def _session(i: int, size: int, rng: random.Random, pools: _Pools, paths: list[Path], root: Path) -> Path:
    folder = root / f"--home-dev-proj{i % FOLDERS}--"
    path = folder / f"2025-03-{1 + i % 28:02d}T10-00-00-000Z_{i:08x}-0000-4000-8000-{i:012x}.jsonl"
    topic = f"topic{i}"
    own = [f"{rng.choice(IDENTS)}_{i}_{k}" for k in range(20)]
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": f"{i:08x}-0000-4000-8000-{i:012x}",
        "timestamp": f"2025-03-{1 + i % 28:02d}T10:00:00.000Z",
        "cwd": f"/home/dev/proj{i % FOLDERS}",
    }
    if i % 10 == 9 and paths:
        header["parentSession"] = str(paths[rng.randrange(len(paths))])
    lines = [_encode(header)]
    total = len(lines[0])
    counter = 0
    parent: str | None = None
    minute = 0
    ids: list[str] = []

    def add(kind: str, **fields: Any) -> str:
        nonlocal counter, parent, total, minute
        counter += 1
        minute += 1
        eid = f"{i % 65536:04x}{counter:04x}"
        data = {
            "type": kind,
            "id": eid,
            "parentId": fields.pop("parentId", parent),
            "timestamp": f"2025-03-{1 + i % 28:02d}T{10 + minute // 60 % 14:02d}:{minute % 60:02d}:00.000Z",
            **fields,
        }
        line = _encode(data)
        lines.append(line)
        total += len(line) + 1
        parent = eid
        ids.append(eid)
        return eid

    add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    if i % 2 == 0:
        add("session_info", name=f"{topic.title()} {rng.choice(IDENTS)} {rng.choice(WORDS)}")
    if i == 123:
        add("message", message={"role": "user", "content": "Tune the xylophone renderer", "timestamp": 1})
    ts = 1_740_000_000_000 + i * 10_000_000
    turn = 0
    while total < size:
        turn += 1
        prompt = f"{rng.choice(pools.sentences)} Work on {topic} and `{rng.choice(own)}`. {rng.choice(pools.sentences)}"
        add("message", message={"role": "user", "content": prompt, "timestamp": ts})
        for _ in range(rng.randint(1, 4)):
            content: list[dict[str, Any]] = []
            if rng.random() < 0.3:
                content.append({"type": "thinking", "thinking": " ".join(rng.choices(pools.sentences, k=3))})
            content.append(
                {"type": "text", "text": " ".join(rng.choices(pools.sentences, k=rng.randint(1, 4)))}
            )
            calls = []
            for c in range(rng.randint(1, 3)):
                tool = rng.choice(("read", "bash", "grep", "edit"))
                call_id = f"toolu_{i}_{counter}_{c}"
                target = f"src/{topic}/{rng.choice(own)}.py"
                args = {
                    "read": {"path": target},
                    "bash": {"command": f"pytest -q tests/test_{rng.choice(own)}.py"},
                    "grep": {"pattern": rng.choice(own), "path": "src"},
                    "edit": {
                        "path": target,
                        "edits": [
                            {"oldText": rng.choice(pools.sentences), "newText": rng.choice(pools.sentences)}
                        ],
                    },
                }[tool]
                content.append({"type": "toolCall", "id": call_id, "name": tool, "arguments": args})
                calls.append((call_id, tool))
            usage = {
                "input": rng.randint(1000, 90000),
                "output": rng.randint(10, 900),
                "cacheRead": 0,
                "cacheWrite": 0,
            }
            add(
                "message",
                message={
                    "role": "assistant",
                    "content": content,
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": usage,
                    "stopReason": "toolUse",
                    "timestamp": ts,
                },
            )
            for call_id, tool in calls:
                body = rng.choice(pools.code if tool == "read" else pools.outputs)
                # a hash, a temp path: every output brings words no other session has
                stamp = f"{rng.getrandbits(40):010x} /tmp/run-{rng.getrandbits(24):06x}"
                text = f"# {rng.choice(own)} {stamp}\n{body}" if tool == "read" else f"{body}\n{stamp}"
                add(
                    "message",
                    message={
                        "role": "toolResult",
                        "toolCallId": call_id,
                        "toolName": tool,
                        "content": [{"type": "text", "text": text}],
                        "isError": False,
                        "timestamp": ts,
                    },
                )
        answer = add(
            "message",
            message={
                "role": "assistant",
                "content": [{"type": "text", "text": rng.choice(pools.sentences)}],
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "stopReason": "stop",
                "timestamp": ts,
            },
        )
        if rng.random() < 0.05:
            add("label", targetId=answer, label=f"{rng.choice(WORDS)}-{rng.choice(own)}")
        if turn == 3 and i % 5 == 0:  # a branch from an earlier entry
            branch_from = ids[len(ids) // 2]
            add(
                "message",
                parentId=branch_from,
                message={
                    "role": "user",
                    "content": f"Instead, {rng.choice(pools.sentences)}",
                    "timestamp": ts,
                },
            )
            parent = answer
    folder.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def ensure_library(
    sessions: int = DEFAULT_SESSIONS, size: int = DEFAULT_BYTES, seed: int = DEFAULT_SEED
) -> tuple[Path, dict[str, Any], bool]:
    """The library folder, generated unless the same one is there. Returns (root, meta, reused)."""
    root = DATA / f"library-{seed}-{sessions}-{size}"
    meta_path = root / "meta.json"
    want = {"generator_version": GENERATOR_VERSION, "seed": seed, "sessions": sessions, "target_bytes": size}
    try:
        meta = json.loads(meta_path.read_text())
        if all(meta.get(k) == v for k, v in want.items()):
            files = list(root.glob("*/*.jsonl"))
            if len(files) == sessions and sum(f.stat().st_size for f in files) == meta["bytes"]:
                return root, meta, True
    except (OSError, ValueError, KeyError):
        pass
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    rng = random.Random(seed)
    pools = _Pools(rng)
    paths: list[Path] = []
    mean = size / sessions
    sizes = [rng.lognormvariate(0, 0.8) for _ in range(sessions)]
    scale = size / sum(sizes)
    for i in range(sessions):
        paths.append(_session(i, max(int(sizes[i] * scale), 2000), rng, pools, paths, root))
    meta = {
        **want,
        "bytes": sum(p.stat().st_size for p in paths),
        "mean_bytes": int(mean),
        "seconds": round(time.perf_counter() - started, 1),
    }
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return root, meta, False


# -- measuring ---------------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def run(
    sessions: int = DEFAULT_SESSIONS, size: int = DEFAULT_BYTES, seed: int = DEFAULT_SEED, keep: bool = False
) -> list[tuple[str, str]]:
    figures: list[tuple[str, str]] = []
    root, meta, reused = ensure_library(sessions, size, seed)
    figures.append(
        (
            "library",
            f"{sessions:,} sessions, {meta['bytes'] / 2**20:,.0f} MiB in {FOLDERS} folders"
            + (" (cached)" if reused else f" (generated in {meta['seconds']} s)"),
        )
    )
    workdir = Path(tempfile.mkdtemp(prefix="search-bench-"))
    db = workdir / "library.sqlite3"
    try:
        lib = Library([root], nested=True, db_path=db)
        started = time.perf_counter()
        stats = lib.refresh()
        build = time.perf_counter() - started
        db_size = sum(p.stat().st_size for p in workdir.iterdir())
        figures.append(
            ("index build (from empty)", f"{build:.1f} s, {stats.bytes_read / 2**20 / build:,.0f} MiB/s")
        )
        figures.append(
            (
                "index size on disk",
                f"{db_size / 2**20:,.0f} MiB ({db_size / meta['bytes']:.0%} of the sessions)",
            )
        )

        noop = []
        for _ in range(5):
            started = time.perf_counter()
            lib.refresh()
            noop.append(time.perf_counter() - started)
        figures.append(("refresh, nothing changed", _ms(statistics.median(noop))))

        target = next(iter(sorted(root.glob("*/*.jsonl"))))
        scratch = workdir / target.name
        shutil.copy(target, scratch)
        with Session.open(scratch) as session:
            session.append_message(
                {"role": "user", "content": "one more message about the xylophone", "timestamp": 1}
            )
        lib2 = Library([workdir], db_path=workdir / "scratch.sqlite3")
        lib2.refresh()
        with Session.open(scratch) as session:
            session.append_message({"role": "user", "content": "and another", "timestamp": 2})
        started = time.perf_counter()
        grown = lib2.refresh()
        figures.append(
            (
                "refresh after one append",
                f"{_ms(time.perf_counter() - started)} ({grown.extended} file extended)",
            )
        )
        lib2.close()

        fresh = Library([root], nested=True, db_path=db)
        started = time.perf_counter()
        listing = fresh.sessions()
        tree = fresh.tree()
        figures.append(
            (
                "listing + fork tree (cold)",
                f"{_ms(time.perf_counter() - started)}, {len(listing):,} sessions, {len(tree):,} top-level",
            )
        )

        keystrokes: list[float] = []
        per_query: list[str] = []
        slowest = (0.0, "")
        for query in QUERIES:
            times = []
            for n in range(1, len(query) + 1):
                started = time.perf_counter()
                hits = fresh.search(query[:n], limit=50)
                times.append(time.perf_counter() - started)
                slowest = max(slowest, (times[-1], query[:n]))
            keystrokes.extend(times)
            per_query.append(f"{query!r}: {len(hits)} hits, last {_ms(times[-1])}")
        figures.append(
            (
                "search per keystroke",
                f"median {_ms(statistics.median(keystrokes))}, p95 {_ms(_percentile(keystrokes, 0.95))}, "
                f"max {_ms(max(keystrokes))} ({slowest[1]!r}; {len(keystrokes)} keystrokes)",
            )
        )
        for line in per_query:
            figures.append(("  query", line))

        hits = fresh.search("compaction summary", limit=20)
        started = time.perf_counter()
        for hit in hits:
            fresh.locate(hit, "compaction summary")
        figures.append(("locate 20 hits (entry + snippet)", _ms(time.perf_counter() - started)))
        fresh.close()
        lib.close()
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS)
    parser.add_argument("--bytes", type=int, default=DEFAULT_BYTES, help="total size of the library")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--keep", action="store_true", help="keep the index (printed) after the run")
    args = parser.parse_args()
    for label, figure in run(args.sessions, args.bytes, args.seed, args.keep):
        print(f"{label:36s} {figure}")


if __name__ == "__main__":
    main()

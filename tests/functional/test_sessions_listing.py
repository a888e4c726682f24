"""``agent-tui sessions`` without a search: the listing refreshes only the summaries (the full-text
index is built when a search needs it, and catches up on the files that grew or were replaced
meanwhile), each row shows the file's cost, and costs follow the price table."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent_tui.cli.main import main
from agent_tui.library.search import Library
from agent_tui.store.session import Session
from tests.support.session_builder import Builder, assistant, header, tool_result, user


def _session(folder: Path, name: str, word: str, model: str = "claude-sonnet-4-5") -> Path:
    b = Builder(lines=[header(f"s-{name}", cwd="/work/proj")])
    b.message(user(f"Look into the {word} module"))
    b.message(assistant("reading", [("c1", "read", {"path": f"src/{word}.py"})], model=model))
    b.message(tool_result("c1", f"def {word}_helper(): pass  # the {word} code"))
    b.message(assistant("Done.", model=model))
    return b.write(folder / f"{name}.jsonl")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    found = tmp_path / "sessions"
    found.mkdir()
    _session(found, "one", "walrus")
    _session(found, "two", "pelican")
    return found


def _text_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def test_a_listing_refresh_indexes_no_text_and_a_search_refresh_then_does(
    folder: Path, tmp_path: Path
) -> None:
    db = tmp_path / "list.sqlite3"
    with Library([folder], db_path=db) as lib:
        stats = lib.refresh(text=False)
        assert stats.files == stats.indexed == 2
        listed = {Path(s.path).name: s for s in lib.sessions()}
        assert _text_rows(db) == 0  # nothing in the full-text index yet
        with Library([folder], db_path=tmp_path / "full.sqlite3") as full:
            full.refresh()
            assert {Path(s.path).name: s for s in full.sessions()} == listed  # the same summaries
        assert lib.refresh(text=False).bytes_read == 0  # nothing changed: nothing read
        assert lib.search("tool output walrus_helper") == []  # text not indexed: no text hits
        lib.refresh()
        assert _text_rows(db) == 2
        assert [Path(h.session.path).name for h in lib.search("walrus_helper")] == ["one.jsonl"]
        again = lib.refresh()
        assert again.bytes_read == 0 and _text_rows(db) == 2


def test_the_text_index_catches_up_with_a_file_that_grew_while_only_listed(
    folder: Path, tmp_path: Path
) -> None:
    db = tmp_path / "db.sqlite3"
    path = folder / "one.jsonl"
    with Library([folder], db_path=db) as lib:
        lib.refresh()
        with Session.open(path) as session:
            session.append_message(user("and now the narwhal part"))
        stats = lib.refresh(text=False)
        assert stats.extended == 1
        one = next(s for s in lib.sessions() if Path(s.path).name == "one.jsonl")
        assert one.entries == 5  # the listing sees the new entry
        assert lib.search("narwhal") == []  # the text index lags until a search refresh
        stats = lib.refresh()
        assert stats.extended == 1 and stats.indexed == 0  # only the new lines were read into it
        assert _text_rows(db) == 3
        assert [Path(h.session.path).name for h in lib.search("narwhal")] == ["one.jsonl"]
        assert [Path(h.session.path).name for h in lib.search("walrus_helper")] == ["one.jsonl"]


def test_a_file_replaced_while_only_listed_loses_its_old_text(folder: Path, tmp_path: Path) -> None:
    with Library([folder], db_path=tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        _session(folder, "one", "octopus")  # the same path, other content
        lib.refresh(text=False)
        lib.refresh()
        assert lib.search("walrus_helper") == []
        assert [Path(h.session.path).name for h in lib.search("octopus_helper")] == ["one.jsonl"]


def test_the_sessions_command_lists_without_building_the_text_index(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(tmp_path / "none.toml"))
    assert main(["sessions", "--session-dir", str(folder)]) == 0
    assert "one.jsonl" in capsys.readouterr().out
    db = tmp_path / "home" / "index" / "library-v5.sqlite3"
    assert _text_rows(db) == 0
    assert main(["sessions", "--session-dir", str(folder), "--search", "pelican_helper"]) == 0
    assert "two.jsonl" in capsys.readouterr().out
    assert _text_rows(db) == 2


def test_each_listed_session_shows_its_cost_as_the_status_line_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(tmp_path / "none.toml"))
    folder = tmp_path / "sessions"
    folder.mkdir()
    _session(folder, "priced", "walrus")  # claude-sonnet-4-5, $3/$15: two calls of 10 in, 5 out
    _session(folder, "unknown", "pelican", model="a-model-without-a-price")
    Builder(lines=[header("s-quiet")]).write(folder / "quiet.jsonl")
    assert main(["sessions", "--session-dir", str(folder)]) == 0
    rows = {
        Path(line.split()[-1]).name: line for line in capsys.readouterr().out.splitlines() if ".jsonl" in line
    }
    assert "  $0.0002  " in rows["priced.jsonl"]  # 2 * (10 * 3 + 5 * 15) / 1e6 = $0.00021
    assert "  Σ 30 tok  " in rows["unknown.jsonl"] and "$" not in rows["unknown.jsonl"]
    assert "  no calls  " in rows["quiet.jsonl"]
    assert main(["sessions", "--session-dir", str(folder), "--json"]) == 0
    listed = {Path(s["path"]).name: s for s in json.loads(capsys.readouterr().out)}
    assert listed["priced.jsonl"]["usage"]["cost"] == pytest.approx(0.00021)
    assert listed["unknown.jsonl"]["usage"]["cost"] is None
    assert listed["unknown.jsonl"]["usage"]["totalTokens"] == 30
    assert listed["quiet.jsonl"]["usage"]["calls"] == 0


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_listed_costs_follow_a_price_change_in_the_config_file(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    _session(folder, "one", "walrus", model="house-model")
    config = tmp_path / "config.toml"
    env = {**os.environ, "AGENT_TUI_HOME": str(tmp_path / "home"), "AGENT_TUI_CONFIG": str(config)}

    def listing() -> dict[str, object]:
        out = subprocess.run(
            [sys.executable, "-m", "agent_tui", "sessions", "--session-dir", str(folder), "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        (summary,) = json.loads(out.stdout)
        usage = summary["usage"]
        assert isinstance(usage, dict)
        return usage

    config.write_text('[models."house-model"]\nprovider = "openai"\ncost = { input = 1000, output = 0 }\n')
    assert listing()["cost"] == pytest.approx(0.02)  # 20 input tokens at $1,000 per million
    config.write_text('[models."house-model"]\nprovider = "openai"\ncost = { input = 2000, output = 0 }\n')
    assert listing()["cost"] == pytest.approx(0.04)  # the cached summary was priced again
    config.write_text("")
    assert listing()["cost"] is None  # no price any more: tokens only


_IN_PROCESSES = """
import json, sys, threading
from pathlib import Path
import agent_tui.library.search_index as search_index
from agent_tui.library.search import Library
from agent_tui.store.session import Session

folder, db = Path(sys.argv[1]), Path(sys.argv[2])
search_index.PARALLEL_BYTES, search_index.PARALLEL_FILES = 0, 1  # these small files are a large batch
out = {"threads": [t.name for t in threading.enumerate()]}  # forking needs this program's one thread
with Library([folder], db_path=db) as lib:
    stats = lib.refresh(text=False, jobs=2)
    out["first"] = [stats.processes, stats.indexed, stats.unreadable]
    out["listed"] = sorted((s.to_json() for s in lib.sessions()), key=lambda s: s["path"])
    with Session.open(folder / "one.jsonl") as session:  # grown: its summary again, elsewhere
        session.append_message({"role": "user", "content": "and now the narwhal part", "timestamp": 9})
    grown = lib.refresh(text=False, jobs=2)
    out["grown"] = [grown.processes, grown.extended, grown.indexed]
    out["entries"] = next(s.entries for s in lib.sessions() if s.path.endswith("one.jsonl"))
    texts = lib.refresh(jobs=2)  # the text index of every file, read elsewhere too
    out["text"] = [texts.processes, texts.indexed, texts.extended]
    out["narwhal"] = [Path(h.session.path).name for h in lib.search("narwhal")]
    out["word3"] = [Path(h.session.path).name for h in lib.search("word3_helper")]
    out["chunks"] = lib.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    with Session.open(folder / "one.jsonl") as session:  # grown again: only its new text, elsewhere
        session.append_message({"role": "user", "content": "then the pelican bits", "timestamp": 10})
    again = lib.refresh(jobs=2)
    out["again"] = [again.processes, again.extended, again.indexed]
    out["pelican"] = [Path(h.session.path).name for h in lib.search("pelican bits")]
    out["chunks again"] = lib.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
print(json.dumps(out))
"""


def test_summaries_worked_out_in_other_processes_are_the_same(folder: Path, tmp_path: Path) -> None:
    for n in range(6):
        _session(folder, f"more-{n}", f"word{n}")
    (folder / "broken.jsonl").write_text("not a session\n")
    with Library([folder], db_path=tmp_path / "serial.sqlite3") as serial:
        expected = serial.refresh(text=False)
        listed = sorted((s.to_json() for s in serial.sessions()), key=lambda s: s["path"])
    # in a process of its own: forking is for single-threaded programs (the CLI), which pytest may not be
    done = subprocess.run(
        [sys.executable, "-c", _IN_PROCESSES, str(folder), str(tmp_path / "parallel.sqlite3")],
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(done.stdout)
    assert out["threads"] == ["MainThread"]  # whatever threads the tests left: not this program's
    assert out["first"] == [2, expected.indexed, expected.unreadable] == [2, 8, 1]
    assert out["listed"] == json.loads(json.dumps(listed))
    assert out["grown"] == [2, 1, 0] and out["entries"] == 5
    assert out["text"] == [2, 8, 0]  # every summary was current: each text indexed from the start
    assert out["narwhal"] == ["one.jsonl"] and out["word3"] == ["more-3.jsonl"]
    assert out["chunks"] == 8  # one per readable file: nothing twice
    assert out["again"] == [2, 1, 0] and out["pelican"] == ["one.jsonl"]
    assert out["chunks again"] == 9


def test_a_program_with_other_threads_reads_the_files_itself(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agent_tui.library.search_index as search_index

    monkeypatch.setattr(search_index, "PARALLEL_BYTES", 0)  # these small files are a large batch
    monkeypatch.setattr(search_index, "PARALLEL_FILES", 1)
    for n in range(4):
        _session(folder, f"more-{n}", f"word{n}")
    release = threading.Event()
    other = threading.Thread(target=release.wait, name="another thread", daemon=True)
    other.start()  # as a UI's would be: a fork would copy only the calling one
    try:
        with Library([folder], db_path=tmp_path / "db.sqlite3") as lib:
            stats = lib.refresh(jobs=2)
            assert [stats.processes, stats.indexed] == [1, 6]
            assert [Path(h.session.path).name for h in lib.search("word2_helper")] == ["more-2.jsonl"]
    finally:
        release.set()
        other.join()


_WORKER_DIES = """
import json, os, sys
from pathlib import Path
import agent_tui.library.search_index as search_index
from agent_tui.library.search import Library

folder, db = Path(sys.argv[1]), Path(sys.argv[2])
search_index.PARALLEL_BYTES, search_index.PARALLEL_FILES = 0, 1
real = search_index._scan_elsewhere

def dies_on_one(job):
    if job[0].endswith("more-2.jsonl"):
        os._exit(9)  # as the kernel's out-of-memory killer would end it
    return real(job)

search_index._scan_elsewhere = dies_on_one  # the forked workers inherit it
with Library([folder], db_path=db) as lib:
    stats = lib.refresh(jobs=2)
    print(json.dumps({
        "stats": [stats.processes, stats.indexed, stats.unreadable],
        "listed": sorted(Path(s.path).name for s in lib.sessions()),
        "found": [Path(h.session.path).name for h in lib.search("word2_helper")],
    }))
"""


def test_a_worker_that_dies_leaves_its_files_to_the_refresh_itself(folder: Path, tmp_path: Path) -> None:
    for n in range(5):
        _session(folder, f"more-{n}", f"word{n}")
    done = subprocess.run(
        [sys.executable, "-c", _WORKER_DIES, str(folder), str(tmp_path / "db.sqlite3")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    out = json.loads(done.stdout)
    assert out["stats"] == [2, 7, 0]
    assert out["listed"] == sorted([*(f"more-{n}.jsonl" for n in range(5)), "one.jsonl", "two.jsonl"])
    assert out["found"] == ["more-2.jsonl"]


def test_ctrl_c_during_a_first_index_is_one_line_and_the_next_listing_goes_on(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(tmp_path / "none.toml"))
    import agent_tui.library.search_index as search_index

    real = search_index.IndexDatabase._index_file
    calls = 0

    def interrupted_after_one(self: search_index.IndexDatabase, *args: object, **kwargs: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise KeyboardInterrupt  # as Ctrl+C would, between two files
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search_index.IndexDatabase, "_index_file", interrupted_after_one)
    assert main(["sessions", "--session-dir", str(folder)]) == 130
    out = capsys.readouterr()
    assert out.err == "agent-tui: interrupted\n" and out.out == ""
    monkeypatch.setattr(search_index.IndexDatabase, "_index_file", real)
    assert main(["sessions", "--session-dir", str(folder)]) == 0
    listed = capsys.readouterr().out
    assert "one.jsonl" in listed and "two.jsonl" in listed

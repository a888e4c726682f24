"""The session library: listing, full-text search, incremental refresh, forks under their parent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st

from agent_tui.library.actions import fork_session
from agent_tui.library.search import Library, SearchHit, fold, group_forks, query_words
from agent_tui.library.search_query import parse_query
from agent_tui.store.session import Session
from tests.support.session_builder import Builder, assistant, header, tool_result, user

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "sessions.example").glob("*.jsonl"))


@pytest.fixture
def library_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for path in EXAMPLES:
        shutil.copy(path, folder / path.name)
    b = Builder(lines=[header("s-cafe", cwd="/work/café")])
    b.message(user("Le café est prêt? Check the espresso_machine module"))
    b.message(assistant("checking", [("c1", "bash", {"command": "grep -rn brewTemperature src/"})]))
    b.message(tool_result("c1", "src/machine.py:12: BREW_TEMPERATURE = 93  # celsius", name="bash"))
    b.message(assistant("The brew temperature is 93 °C."))
    b.write(folder / "cafe.jsonl")
    return folder


def make(folder: Path, db: Path) -> Library:
    return Library([folder], db_path=db)


def test_listing(library_dir: Path, tmp_path: Path) -> None:
    with make(library_dir, tmp_path / "db.sqlite3") as lib:
        stats = lib.refresh()
        assert stats.files == len(EXAMPLES) + 1 and stats.indexed == stats.files and stats.unreadable == 0
        sessions = lib.sessions()
        assert [s.modified for s in sessions] == sorted((s.modified for s in sessions), reverse=True)
        by_name = {Path(s.path).name: s for s in sessions}
        branches = by_name["branches.jsonl"]
        assert branches.name == "Fix divide by zero" and branches.cwd == "/home/dev/calc"
        assert branches.branches == 2 and branches.entries == 21
        assert branches.labels == [("5a0c1e0a", "divide-fixed")]
        assert branches.first_message.startswith("tests/test_ops.py::test_divide_by_zero fails")
        assert branches.size == (library_dir / "branches.jsonl").stat().st_size
        assert by_name["cafe.jsonl"].branches == 1 and by_name["cafe.jsonl"].title.startswith("Le café")
        # nothing changed: a second refresh reads nothing
        again = lib.refresh()
        assert again.indexed == again.extended == again.bytes_read == 0


def test_search_ranks_and_matches(library_dir: Path, tmp_path: Path) -> None:
    with make(library_dir, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        hits = lib.search("divide")
        names = [Path(h.session.path).name for h in hits]
        assert names[0] == "branches.jsonl" and hits[0].matched == {"divide": "name"}
        assert len(names) >= 3 and all(h.score >= hits[-1].score for h in hits)
        # prefixes, several words (all must match), tool output, accents and case
        assert [Path(h.session.path).name for h in lib.search("brew_temp")] == ["cafe.jsonl"]
        assert [Path(h.session.path).name for h in lib.search("CAFE espresso")] == ["cafe.jsonl"]
        assert lib.search("espresso divide") == []
        assert lib.search("zzzunknownword") == []
        celsius = lib.search("celsius", locate=1)
        assert [Path(h.session.path).name for h in celsius] == ["cafe.jsonl"]
        assert celsius[0].matched == {"celsius": "text"} and "celsius" in (celsius[0].snippet or "")
        assert celsius[0].entry_id == "e0003"  # the tool result that said it
        # a label: the hit points at the labelled entry
        label = lib.search("divide-fixed")[0]
        assert label.entry_id == "5a0c1e0a" and label.matched["fixed"] == "label"
        # an empty query lists everything, most recent first
        assert len(lib.search("")) == len(EXAMPLES) + 1
        # locate finds the latest entry holding every word
        hit = lib.search("ZeroDivisionError ValueError", locate=3)[0]
        assert hit.entry_id is not None and "ZeroDivisionError" in (hit.snippet or "")


def test_system_prompts_are_not_searched(library_dir: Path, tmp_path: Path) -> None:
    b = Builder()
    b.message({"role": "system", "content": "You are a helpful frobnicator.", "timestamp": 1})
    b.message(user("hello"))
    b.write(library_dir / "sys.jsonl")
    with make(library_dir, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        assert lib.search("frobnicator") == []


def test_refresh_is_incremental(library_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    with make(library_dir, db) as lib:
        lib.refresh()
        assert lib.search("quasar") == []
        with Session.open(library_dir / "cafe.jsonl") as session:
            session.append_message(
                {"role": "user", "content": "what about the quasar module?", "timestamp": 9}
            )
            session.rename("Coffee and quasars")
        stats = lib.refresh()
        assert stats.extended == 1 and stats.indexed == 0
        hits = lib.search("quasar")
        assert [Path(h.session.path).name for h in hits] == ["cafe.jsonl"]
        assert hits[0].matched == {"quasar": "name"} and hits[0].session.entries == 6
        assert lib.search("celsius")  # the older text is still there
        # another program replaces a file: indexed again, the old text forgotten
        replacement = Builder(lines=[header("other-id")])
        replacement.message(user("nebula only"))
        replacement.write(library_dir / "cafe.jsonl")
        os.utime(library_dir / "cafe.jsonl", ns=(1, 1))
        stats = lib.refresh()
        assert stats.indexed == 1
        assert lib.search("celsius") == [] and len(lib.search("nebula")) == 1
        # a file that disappears is forgotten
        (library_dir / "cafe.jsonl").unlink()
        assert lib.refresh().removed == 1 and lib.search("nebula") == []
    # the cache survives a restart, and a new Library sees what the last one indexed
    with make(library_dir, db) as lib:
        assert lib.refresh().bytes_read == 0 and lib.search("divide")


def test_index_is_rebuildable(library_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    with make(library_dir, db) as lib:
        lib.refresh()
        first = [h.session.path for h in lib.search("divide")]
    db.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with make(library_dir, db) as lib:
        assert lib.refresh().indexed == len(EXAMPLES) + 1
        assert [h.session.path for h in lib.search("divide")] == first
        assert lib.rebuild().indexed == len(EXAMPLES) + 1
        assert [h.session.path for h in lib.search("divide")] == first


def test_forks_are_grouped_under_their_parent(library_dir: Path, tmp_path: Path) -> None:
    source = library_dir / "branches.jsonl"
    fork = fork_session(source, "5a0c1e10", library_dir / "fork.jsonl")
    fork_of_fork = fork_session(fork, None, library_dir / "fork2.jsonl")
    with make(library_dir, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        tree = lib.tree()
        top = {Path(n.summary.path).name: n for n in tree}
        assert "fork.jsonl" not in top and "fork2.jsonl" not in top
        node = top["branches.jsonl"]
        assert [Path(f.summary.path).name for f in node.forks] == ["fork.jsonl"]
        assert [Path(f.summary.path).name for f in node.forks[0].forks] == ["fork2.jsonl"]
        assert [(d, Path(s.path).name) for d, s in node.walk()] == [
            (0, "branches.jsonl"),
            (1, "fork.jsonl"),
            (2, "fork2.jsonl"),
        ]
        assert len(tree) + 2 == len(lib.sessions())
    assert fork_of_fork.exists()


def test_group_forks_survives_a_parent_cycle(library_dir: Path, tmp_path: Path) -> None:
    with make(library_dir, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        a, b = lib.sessions()[:2]
    a.parent_session, b.parent_session = b.path, a.path
    roots = group_forks([a, b])
    assert sum(1 for r in roots for _ in r.walk()) == 2


def test_query_words() -> None:
    assert query_words("Café, CAFE café-au-lait snake_case") == ["cafe", "au", "lait", "snake", "case"]
    assert fold("Ñandú") == "nandu" and query_words("  ") == []


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_search_command(library_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "AGENT_TUI_HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_tui", "sessions", "--session-dir", str(library_dir), *args],
            capture_output=True,
            text=True,
            env=env,
        )

    out = run("--search", "divide")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].endswith("Fix divide by zero  [name]")
    data = json.loads(run("--search", "celsius", "--json").stdout)
    assert len(data) == 1 and data[0]["entryId"] == "e0003" and "celsius" in data[0]["snippet"]
    none = run("--search", "zzznothing")
    assert none.returncode == 1 and "no sessions match" in none.stderr
    assert (tmp_path / "home" / "index" / "library-v5.sqlite3").exists()  # the cache lives in the data dir


def test_every_prefix_of_a_query_over_300_sessions_answers(tmp_path: Path) -> None:
    """300 sessions, searched as the query is typed (how fast: bench/search_bench.py, not a test)."""
    folder = tmp_path / "lib"
    folder.mkdir()
    for n in range(300):
        b = Builder(lines=[header(f"s{n}")])
        b.message(user(f"session {n}: refactor the module_{n % 37} parser and widget_{n}"))
        b.message(
            assistant(f"done with module_{n % 37}", [(f"c{n}", "bash", {"command": f"pytest tests/t{n}.py"})])
        )
        b.message(tool_result(f"c{n}", f"{n} passed\nwarning: deprecated_call_{n % 11}", name="bash"))
        b.write(folder / f"{n:04d}.jsonl")
    with make(folder, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        query = "module_5 deprecated_call_3"
        for i in range(1, len(query) + 1):
            hits = lib.search(query[:i], limit=20)  # each keystroke's search, as the picker runs it
        # words, not phrases: module_5 + deprecated_call_3 (190) and module_3 + deprecated_call_5 (225)
        assert {Path(h.session.path).name for h in hits} == {"0190.jsonl", "0225.jsonl"}


def test_a_rewritten_file_is_indexed_again(library_dir: Path, tmp_path: Path) -> None:
    """Same header, larger size, but not an append (another program rewrote it): start over."""
    path = library_dir / "cafe.jsonl"
    with make(library_dir, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        lines = path.read_text().splitlines()
        lines[1] = lines[1].replace("espresso_machine", "percolator_device")
        path.write_text("\n".join(lines) + "\n" + json.dumps({**json.loads(lines[-1]), "id": "zz"}) + "\n")
        stats = lib.refresh()
        assert stats.indexed == 1 and stats.extended == 0
        assert lib.search("espresso") == [] and len(lib.search("percolator")) == 1


def test_refresh_in_a_worker_while_searching(library_dir: Path, tmp_path: Path) -> None:
    import threading

    seen: list[tuple[int, int]] = []
    with make(library_dir, tmp_path / "db.sqlite3") as lib:
        worker = threading.Thread(target=lambda: lib.refresh(progress=lambda d, t: seen.append((d, t))))
        worker.start()
        while worker.is_alive():
            lib.search("divide")  # never raises, whatever the worker is doing
        worker.join()
        assert seen[-1] == (len(EXAMPLES) + 1, len(EXAMPLES) + 1) and len(seen) == len(EXAMPLES) + 1
        assert Path(lib.search("divide")[0].session.path).name == "branches.jsonl"


def test_forgotten_files_are_eventually_compacted(tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    for n in range(3):
        b = Builder(lines=[header(f"s{n}")])
        b.message(user(f"word{n} text"))
        b.write(folder / f"{n}.jsonl")
    with make(folder, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        lib.db.execute("INSERT OR REPLACE INTO meta VALUES('orphans', '5000')")  # as after many deletions
        (folder / "0.jsonl").unlink()
        stats = lib.refresh()
        assert stats.removed == 1 and stats.indexed == 2  # rebuilt from the files
        assert lib.db.execute("SELECT count(*) FROM text").fetchone()[0] == 2
        assert lib.search("word0") == [] and len(lib.search("word1")) == 1


# -- query syntax: "phrases", -exclusions, anything typed ------------------------------------------


@pytest.fixture
def phrase_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "phrases"
    folder.mkdir()

    def session(name: str, *texts: str, title: str | None = None) -> None:
        b = Builder(lines=[header(f"s-{name}")])
        b.message(user("hello"))
        for text in texts:
            b.message(assistant(text))
        if title:
            b.add("session_info", name=title)
        b.write(folder / f"{name}.jsonl")

    session("together", "Open the context edit panel and tweak foo.")
    session("together-nofoo", "The Context-Edit entry hides a message.")
    session("apart", "Edit the context, then foo.")  # same words, other order
    session("split", "we talked about context", "edit: done with foo")  # adjacent only across entries
    session("titled", "nothing here", title="Review of context edit entries")
    return folder


def _names(hits: list[SearchHit]) -> set[str]:
    return {Path(h.session.path).stem for h in hits}


def test_phrase_matches_adjacent_words_only(phrase_dir: Path, tmp_path: Path) -> None:
    with make(phrase_dir, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        assert _names(lib.search("context edit")) == {
            "together",
            "together-nofoo",
            "apart",
            "split",
            "titled",
        }
        assert _names(lib.search('"context edit"')) == {"together", "together-nofoo", "titled"}
        assert _names(lib.search('"context edit" foo')) == {"together"}
        assert _names(lib.search('foo "edit context"')) == set()
        assert _names(lib.search('"edit the context"')) == {"apart"}
        # case, punctuation between the words and the field it is in do not matter
        titled = next(h for h in lib.search('"CONTEXT edit"') if Path(h.session.path).stem == "titled")
        assert titled.matched == {'"context edit"': "name"}
        # words of a closed phrase are whole words; the snippet shows the phrase
        assert lib.search('"context edi"') == []
        hit = lib.search('"context edit" foo', locate=1)[0]
        assert hit.snippet is not None and "context edit panel" in hit.snippet
        assert hit.matched == {'"context edit"': "text", "foo": "text"}


def test_exclusion(phrase_dir: Path, tmp_path: Path) -> None:
    with make(phrase_dir, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        assert _names(lib.search("context -foo")) == {"together-nofoo", "titled"}
        assert _names(lib.search('context -"context edit"')) == {"apart", "split"}
        assert _names(lib.search("context -panel -review")) == {"together-nofoo", "apart", "split"}
        assert _names(lib.search("-fo")) == {"together-nofoo", "titled"}  # a prefix, like a plain word
        # only exclusions: every other session, most recent first
        assert len(lib.search("-zzz")) == 5
        # a minus inside a word is not an exclusion; a lone minus is nothing
        assert _names(lib.search("context-edit -")) == _names(lib.search("context edit"))


def test_unclosed_quote_is_a_phrase_to_the_end(phrase_dir: Path, tmp_path: Path) -> None:
    with make(phrase_dir, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        assert _names(lib.search('"context edit')) == _names(lib.search('"context edit"'))
        assert _names(lib.search('"context ed')) == {
            "together",
            "together-nofoo",
            "titled",
        }  # last word: prefix
        assert _names(lib.search('foo -"edit the')) == {"together", "split"}
        query = 'foo "context edit" -"tweak ba'
        for n in range(len(query) + 1):  # what the picker sees, keystroke by keystroke
            assert isinstance(lib.search(query[:n]), list)
        assert _names(lib.search(query)) == {"together"}
        assert _names(lib.search('foo "context edit" -"tweak fo')) == set()


def test_parse_query() -> None:
    q = parse_query('plain "two Words" -skip -"no way" "open é')
    assert [(t.words, t.prefix, t.negated, t.phrase) for t in q.terms] == [
        (("plain",), True, False, False),
        (("two", "words"), False, False, True),
        (("skip",), True, True, False),
        (("no", "way"), False, True, True),
        (("open", "e"), False, False, True),  # open quote; a one-letter last word stays whole
    ]
    assert [t.fts() for t in q.terms] == ['"plain"*', '"two words"', '"skip"*', '"no way"', '"open e"']
    assert not parse_query('  "" - -"" ()*:^ ')
    assert [t.words for t in parse_query("a AND b OR NOT (c) NEAR(d e, 3) col:f ^g h*").terms] == [
        (w,) for w in ["a", "and", "b", "or", "not", "c", "near", "d", "e", "3", "col", "f", "g", "h"]
    ]
    assert parse_query("-snake_case").terms[0].words == ("snake", "case")  # excluded as a phrase


FTS_NOISE = st.sampled_from(
    ['"', "'", "(", ")", "*", ":", "^", "-", "+", "NEAR", "NEAR(", "AND", "OR", "NOT", "{", "}", ",",
     "\\", "\x00", " ", "“", "”", "context", "edit", "é", "ß", "ﬁ", "\u0301", "𝟙", "\ue000", "\u19b0", "_", "0"]
)  # fmt: skip


def test_any_text_is_a_query(phrase_dir: Path, tmp_path: Path) -> None:
    """Operators, quotes, control characters, any script: results or an empty list, never an exception."""
    from hypothesis import HealthCheck, given, settings

    with make(phrase_dir, tmp_path / "db.sqlite3") as lib:
        lib.refresh()
        # U+19B0 is a letter to Python, a separator to unicode61: one query word, two FTS tokens
        assert lib.search("con\u19b0text") == [] and lib.search('"context\u19b0edit"')

        @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(st.one_of(st.text(), st.lists(FTS_NOISE).map("".join), st.lists(FTS_NOISE).map(" ".join)))
        def check(query: str) -> None:
            hits = lib.search(query, locate=2)
            assert isinstance(hits, list)
            assert all(isinstance(h, SearchHit) for h in hits)

        check()


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_search_command_phrase(phrase_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "index").mkdir(parents=True)
    (home / "index" / "library-v2.sqlite3").write_bytes(b"an index of the previous version")
    query = '"context edit" -review'
    out = subprocess.run(
        [sys.executable, "-m", "agent_tui", "sessions", "--session-dir", str(phrase_dir), "--search", query],
        capture_output=True,
        text=True,
        env={**os.environ, "AGENT_TUI_HOME": str(home)},
    )
    assert out.returncode == 0, out.stderr
    paths = sorted(Path(line.split()[0]).stem for line in out.stdout.splitlines() if line.startswith("    /"))
    assert paths == ["together", "together-nofoo"]
    assert "> Open the context edit panel" in out.stdout
    assert not (home / "index" / "library-v2.sqlite3").exists()  # the old version's cache is gone


def test_an_index_of_an_older_version_is_rebuilt(phrase_dir: Path, tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "db.sqlite3"
    old = sqlite3.connect(db)  # what version 1 left: no phrases table
    old.executescript(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES('version', '1');"
        "CREATE VIRTUAL TABLE text USING fts5(body, content='', detail=none);"
    )
    old.close()
    with make(phrase_dir, db) as lib:
        assert lib.refresh().indexed == 5
        assert _names(lib.search('"context edit" foo')) == {"together"}


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_a_search_that_finds_nothing_here_points_at_all(tmp_path: Path) -> None:
    """``sessions --search`` looks in this folder's sessions: finding nothing says how to look in
    every folder's (it said only "no sessions match")."""
    env = {**os.environ, "AGENT_TUI_HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_tui", "sessions", "--search", "zzznothing", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )

    here = run()
    assert here.returncode == 1 and "--all searches every folder's" in here.stderr
    everywhere = run("--all")
    assert everywhere.returncode == 1 and "--all" not in everywhere.stderr

"""The @ picker's file index: the tools' walker, ranked matching, a time budget."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_tui.tui.completion import context_at, file_insert, path_candidates, slash_candidates
from agent_tui.tui.file_index import FileIndex


def test_ranking_name_prefix_then_name_then_path_then_fuzzy() -> None:
    index = FileIndex(Path("/unused"))
    index.set_paths(
        [
            "src/parser.py",
            "lib/old_parser.py",
            "parser_docs/intro.md",
            "src/pa_r_ser.txt",
            "tests/test_parse.py",
        ]
    )
    assert [m.path for m in index.search("parser")] == [
        "src/parser.py",  # the name starts with it
        "lib/old_parser.py",  # the name holds it
        "parser_docs/intro.md",  # the path holds it
        "src/pa_r_ser.txt",  # the name's letters in order
    ]
    assert [m.path for m in index.search("PARSE")][:1] == ["src/parser.py"]  # any case
    assert [m.path for m in index.search("src/pa")] == ["src/parser.py", "src/pa_r_ser.txt"]
    assert index.search("") != [] and index.search("qqq") == []


def test_a_scan_stops_at_its_budget_and_says_so() -> None:
    index = FileIndex(Path("/unused"))
    index.set_paths([f"d{i % 97}/f{i}.txt" for i in range(200_000)])
    found, complete = index.search_within("zzz", budget=0.0)
    assert not complete and found == []
    found, complete = index.search_within("f1999", budget=None)
    assert complete and found[0].path.endswith("/f1999.txt")


def test_the_index_lists_through_the_tools_walker_respecting_gitignore(tmp_path: Path) -> None:
    if subprocess.run(["git", "--version"], capture_output=True, check=False).returncode != 0:
        pytest.skip("git is not installed")  # the walker's non-git path is covered by the tools' tests
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("x")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("x")
    index = FileIndex(tmp_path)
    index.ensure()
    paths = [m.path for m in index.search("", limit=100)]
    assert "src/main.py" in paths and "src/" in paths
    assert not any(p.startswith("build") for p in paths)


def test_completion_contexts_and_candidates(tmp_path: Path) -> None:
    assert context_at("/comp", 5, first_line=True).kind == "slash"  # type: ignore[union-attr]
    assert context_at("/compact now", 12, first_line=True) is None
    assert context_at("see @src/ma", 11, first_line=False).query == "src/ma"  # type: ignore[union-attr]
    assert context_at("me@example", 10, first_line=False) is None
    rows = [("pin", "/pin [ID]", "pin"), ("unpin", "/unpin [ID]", "unpin"), ("skill:unpack", "", "")]
    assert [c.insert for c in slash_candidates("unp", rows)] == ["/unpin ", "/skill:unpack "]
    assert file_insert("a b/c.py") == '@"a b/c.py" ' and file_insert("src/") == "@src/"
    (tmp_path / "alpha.txt").write_text("x")
    (tmp_path / "alps").mkdir()
    (tmp_path / ".hidden").write_text("x")
    assert [c.insert for c in path_candidates("al", tmp_path)] == ["alpha.txt", "alps/"]
    assert [c.insert for c in path_candidates(".h", tmp_path)] == [".hidden"]
    assert path_candidates("nothing/here", tmp_path) == []

"""The scriptable session commands, run as the real console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.session_builder import Builder, assistant, tool_result, user

ROOT = Path(__file__).resolve().parents[2]

#: Every test here starts agent-tui (or Python, lint-imports) as a process, one to four times:
#: integration by nature, so ``make test`` runs them and the edit loop does not.
pytestmark = pytest.mark.slow


def cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    b = Builder()
    b.message(user("please read a"))
    b.message(assistant("reading", [("c1", "read", {"path": "a"})]))
    b.message(tool_result("c1", "contents of a"))
    b.message(assistant("a says hello"))
    return b.write(tmp_path / "s.jsonl")


def test_context_formats(session_file: Path) -> None:
    out = cli("context", str(session_file))
    assert out.returncode == 0, out.stderr
    messages = json.loads(out.stdout)
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    text = cli("context", str(session_file), "--format", "text").stdout
    assert "e0003" in text and "kept" in text and "total ≈" in text and "tokens of 200,000" in text
    body = json.loads(cli("context", str(session_file), "--format", "anthropic").stdout)
    assert body["model"] == "claude-sonnet-4-5" and body["messages"][2]["content"][0]["type"] == "tool_result"
    body = json.loads(cli("context", str(session_file), "--format", "openai").stdout)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "assistant"]
    leaf = json.loads(cli("context", str(session_file), "--leaf", "e0001").stdout)
    assert len(leaf) == 1


def test_tree(session_file: Path) -> None:
    out = cli("tree", str(session_file))
    assert out.returncode == 0
    assert out.stdout.splitlines()[0].startswith("* e0001 user: please read a")
    assert out.stdout.rstrip().endswith("<- leaf")
    data = json.loads(cli("tree", str(session_file), "--json").stdout)
    assert data["leafId"] == "e0004" and all(n["active"] for n in data["nodes"])


def test_tree_of_a_file_pi_wrote_shows_no_secret(tmp_path: Path) -> None:
    """pi stores what was typed as it was: the tree (text and JSON) shows it redacted."""
    key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4
    b = Builder()
    first = b.message(user(f"deploy with ANTHROPIC_API_KEY={key} please"))
    b.message(tool_result("c1", "sshpass -p Sshp4ssSecret ssh deploy@host", name="bash"))
    b.message(assistant("db(password=hunter2hunter2) is set"))
    b.add("label", targetId=first, label="key mailgun key-0123456789abcdef0123456789abcdef")
    b.add("session_info", name="bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0")
    path = b.write(tmp_path / "pi.jsonl")
    secrets = [
        key,
        "Sshp4ssSecret",
        "hunter2hunter2",
        "0123456789abcdef0123456789abcdef",
        "AAHdqTcvCH1vGWJxf",
    ]
    for args in (("tree", str(path)), ("tree", str(path), "--json")):
        out = cli(*args)
        assert out.returncode == 0, out.stderr
        for secret in secrets:
            assert secret[:12] not in out.stdout, (args, secret)
        assert "[REDACTED anthropic-key]" in out.stdout and "[REDACTED mailgun-key]" in out.stdout
    shown = cli("tree", str(path), env={"AGENT_TUI_REDACT": "off"}).stdout
    assert key[:40] in shown and "Sshp4ssSecret" in shown  # redaction off: as the file holds it


def test_actions_append_one_entry_each_and_never_rewrite(session_file: Path, tmp_path: Path) -> None:
    steps = [
        ("edit", str(session_file), "e0001", "--replace", "read b instead"),
        ("edit", str(session_file), "e0003", "--hide"),
        ("edit", str(session_file), "e0003", "--restore"),
        ("label", str(session_file), "e0002", "checkpoint"),
        ("rename", str(session_file), "reading files"),
        ("pin", str(session_file), "e0001"),
        ("branch", str(session_file), "e0002"),
    ]
    for step in steps:
        before = session_file.read_bytes()
        out = cli(*step)
        assert out.returncode == 0, (step, out.stderr)
        after = session_file.read_bytes()
        assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1, step
    tree = json.loads(cli("tree", str(session_file), "--json").stdout)
    assert tree["name"] == "reading files"
    assert [n["id"] for n in tree["nodes"] if n["active"]][:2] == ["e0001", "e0002"]
    context = json.loads(cli("context", str(session_file)).stdout)
    assert [m["role"] for m in context] == ["user", "assistant"]
    assert context[0]["content"] == "please read a"  # the edit lies on the branch we left: branch-relative
    fork = tmp_path / "fork.jsonl"
    out = cli("fork", str(session_file), "e0002", "-o", str(fork))
    assert out.returncode == 0 and Path(out.stdout.strip()) == fork
    lines = [json.loads(x) for x in fork.read_text().splitlines()]
    assert lines[0]["parentSession"] == str(session_file.resolve())
    assert [x["id"] for x in lines[1:3]] == ["e0001", "e0002"]
    assert lines[-1]["type"] == "label" and lines[-1]["label"] == "checkpoint"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("edit", "{f}", "nope", "--hide"), "no entry with id 'nope'"),
        (("edit", "{f}", "e0002", "--hide", "--leaf-typo"), None),
        (("label", "{f}", "zzz", "x"), "no entry with id 'zzz'"),
        (("context", "{f}", "--leaf", "zzz"), "no entry with id 'zzz'"),
        (("branch", "{missing}", "e0001"), "no such session file"),
        (("tree", "{notsession}"), "line 1 is not a session header"),
    ],
)
def test_bad_input_is_one_line_exit_1_file_untouched(
    session_file: Path, tmp_path: Path, args: tuple[str, ...], message: str | None
) -> None:
    notsession = tmp_path / "n.jsonl"
    notsession.write_text('{"hello": 1}\n')
    before = session_file.read_bytes()
    real = [a.format(f=session_file, missing=tmp_path / "missing.jsonl", notsession=notsession) for a in args]
    out = cli(*real)
    assert out.returncode != 0
    if message is not None:
        assert out.returncode == 1
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], out.stderr
        assert "Traceback" not in out.stderr
    assert session_file.read_bytes() == before


def test_editing_an_entry_off_the_branch_is_refused(session_file: Path) -> None:
    assert cli("branch", str(session_file), "e0001").returncode == 0
    out = cli("edit", str(session_file), "e0004", "--hide")
    assert out.returncode == 1 and "not on the active branch" in out.stderr


def test_second_writer_gets_a_clear_error(session_file: Path) -> None:
    from agent_tui.store.session import Session

    with Session.open(session_file):
        out = cli("rename", str(session_file), "x")
    assert out.returncode == 1 and "another agent-tui process is writing this session" in out.stderr


def test_sessions_lists_by_cwd(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "proj"
    project.mkdir()
    from agent_tui.store.paths import session_dir_for
    from agent_tui.store.session import Session

    os.environ["AGENT_TUI_HOME"] = str(home)
    try:
        with Session.create(session_dir_for(project), project) as s:
            s.append_message(user("first words here"))
    finally:
        del os.environ["AGENT_TUI_HOME"]
    out = cli("sessions", "--json", cwd=project, env={"AGENT_TUI_HOME": str(home)})
    infos = json.loads(out.stdout)
    assert (
        len(infos) == 1
        and infos[0]["first_message"] == "first words here"
        and infos[0]["path"] == str(s.path)
    )
    assert str(home) in infos[0]["path"]
    assert (
        json.loads(cli("sessions", "--all", "--json", env={"AGENT_TUI_HOME": str(home)}).stdout)[0]["id"]
        == s.id
    )


def test_sessions_lists_one_summary_through_the_library(tmp_path: Path) -> None:
    """``sessions`` and ``sessions --search`` print the same summary (the old listing's keys too),
    and the plain listing still works when the data dir's index cannot be made."""
    folder = tmp_path / "sessions"
    from agent_tui.store.session import Session

    with Session.create(folder, tmp_path) as s:
        s.append_message(user("first words here"))
    home = tmp_path / "home"
    listed = json.loads(
        cli("sessions", "--session-dir", str(folder), "--json", env={"AGENT_TUI_HOME": str(home)}).stdout
    )
    old_keys = {"path", "id", "cwd", "name", "first_message", "modified", "entries", "size", "parent_session"}
    assert len(listed) == 1 and old_keys <= set(listed[0]) and listed[0]["branches"] == 1
    found = cli(
        "sessions",
        "--session-dir",
        str(folder),
        "--search",
        "first",
        "--json",
        env={"AGENT_TUI_HOME": str(home)},
    )
    assert json.loads(found.stdout)[0]["session"] == listed[0]
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the data dir would be")
    out = cli("sessions", "--session-dir", str(folder), "--json", env={"AGENT_TUI_HOME": str(blocked)})
    assert out.returncode == 0 and json.loads(out.stdout) == listed and "cannot be used" in out.stderr


def test_warnings_go_to_stderr_and_output_stays_valid(session_file: Path) -> None:
    with open(session_file, "a") as f:
        f.write('{"type":"message","id":"torn","parentId":"e0004","mess')
    out = cli("context", str(session_file))
    assert out.returncode == 0 and "torn last line" in out.stderr
    assert len(json.loads(out.stdout)) == 4


def test_core_never_imports_ui_sdks_or_pydantic_on_the_read_path(session_file: Path) -> None:
    code = (
        "import sys, io\n"
        "from agent_tui.cli.main import main\n"
        "sys.stdout = io.TextIOWrapper(io.BytesIO())\n"
        f"main(['context', {str(session_file)!r}, '--format', 'text'])\n"
        "main(['tree', " + repr(str(session_file)) + "])\n"
        "bad = [m for m in ('textual', 'rich', 'anthropic', 'openai', 'httpx', 'pydantic') if m in sys.modules]\n"
        "print(bad, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stderr.strip().endswith("[]"), out.stderr


def test_import_layers_contract() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "broken" in out.stdout and "0 broken" in out.stdout

"""Terminal controls from untrusted text never reach a terminal.

The sanitizer (``agent_tui.terminal_text``) on each class of control; property tests
that its output never holds one; the CLI's text outputs; print mode on a terminal and
its ask prompt; and, in tmux, the real program reading a file full of OSC 52 / OSC 0 /
CSI 2J without the terminal's title or clipboard changing.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from agent_tui.agent.permissions import Permissions
from agent_tui.cli.main import main
from agent_tui.cli.print_mode import ask_text
from agent_tui.terminal_text import clip, cut, for_terminal, pictured, visible, visible_line
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, call, openai_stream, text
from tests.support.poisoned import BIDI, CSI2J, OSC0, OSC52, write_poisoned

#: What must never reach a terminal: C0 but newline and tab, DEL, C1, the bidi controls, surrogates.
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


# -- the sanitizer, class by class -----------------------------------------------------------


@pytest.mark.parametrize("code", [c for c in range(0x20) if c not in (0x09, 0x0A)])
def test_every_c0_control_but_newline_and_tab_is_shown_as_an_escape(code: int) -> None:
    assert visible(f"a{chr(code)}b") == f"a\\x{code:02x}b"


def test_newline_and_tab_stay_and_crlf_reads_as_a_newline() -> None:
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("one\r\ntwo\rthree") == "one\ntwo\\x0dthree"
    assert visible("one\r\ntwo", exact=True) == "one\\x0d\ntwo"  # the dialog shows every byte


@pytest.mark.parametrize("code", [0x7F, *range(0x80, 0xA0)])
def test_del_and_every_c1_control_are_shown_as_escapes(code: int) -> None:
    assert visible(chr(code)) == f"\\x{code:02x}"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J", "\\x1b[2J"),  # CSI: clear the screen
        ("\x1b[2K\x1b[1G", "\\x1b[2K\\x1b[1G"),  # CSI: erase the line, back to column 1
        ("\x9b31m", "\\x9b31m"),  # 8-bit CSI
        ("\x1b]52;c;Y3VybA==\x07", "\\x1b]52;c;Y3VybA==\\x07"),  # OSC 52 up to BEL: the clipboard
        ("\x1b]0;title\x1b\\", "\\x1b]0;title\\x1b\\"),  # OSC 0 up to ST: the window title
        ("\x9d0;title\x9c", "\\x9d0;title\\x9c"),  # 8-bit OSC and ST
        ("\x1bPq#0;1\x1b\\", "\\x1bPq#0;1\\x1b\\"),  # DCS (sixel)
        ("\x1b_apc\x1b\\", "\\x1b_apc\\x1b\\"),  # APC
        ("\x1b^pm\x1b\\", "\\x1b^pm\\x1b\\"),  # PM
        ("\x1bXsos\x1b\\", "\\x1bXsos\\x1b\\"),  # SOS
        ("\x1bc", "\\x1bc"),  # two-character escape: reset the terminal
        ("\x1b7\x1b8", "\\x1b7\\x1b8"),  # save / restore the cursor
        ("\x1b", "\\x1b"),  # a lone ESC
    ],
)
def test_escape_sequences_are_shown_whole_and_never_emitted(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert "\x1b" not in visible(raw) and FORBIDDEN.search(visible(raw)) is None


@pytest.mark.parametrize("code", [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
def test_bidi_overrides_and_isolates_are_shown_by_name(code: int) -> None:
    assert visible(f"a{chr(code)}b") == f"a⟨U+{code:04X}⟩b"


def test_a_lone_surrogate_is_shown_not_emitted() -> None:
    assert visible("cut \ud83d") == "cut ⟨U+D83D⟩"
    visible("cut \ud83d").encode("utf-8")  # encodable: a terminal write cannot fail on it


def test_ordinary_text_is_returned_unchanged() -> None:
    sample = "naïve café — 日本語 emoji 🎉 [b]markup[/b] \\x1b"
    assert visible(sample) is sample
    assert visible(visible("\x1b]0;t\x07")) == visible("\x1b]0;t\x07")  # idempotent


def test_one_line_places_show_newlines() -> None:
    assert visible_line("echo x\nrm -rf ~\tz") == "echo x⏎rm -rf ~ z"


def test_pictured_keeps_one_character_for_one() -> None:
    raw = "a\x1b]0;t\x07b\u202ec\x9b"
    assert pictured(raw) == "a␛]0;t␇b\ufffdc\ufffd"
    assert len(pictured(raw)) == len(raw)


# -- truncation never cuts inside a sequence --------------------------------------------------


def test_clip_keeps_a_sequence_whole_or_leaves_it_out() -> None:
    raw = "abc" + OSC0 + "def"
    assert clip(raw, 6) == "abc…"  # the sequence does not fit: left out, not cut
    assert clip(raw, 100) == visible(raw)
    assert clip(raw, len(visible(raw)) - 1) == "abc\\x1b]0;PWNED-TITLE\\x07d…"
    assert clip("ab\x1bcd", 4) == "ab…"  # never "ab\\x…"


def test_cut_of_raw_text_never_leaves_an_unterminated_osc() -> None:
    raw = "abc" + OSC52 + "tail"
    for limit in range(len(raw) + 2):
        out = cut(raw, limit)
        assert len(out) <= max(limit, 1)
        body = out.removesuffix("…")
        assert "\x1b" not in body or OSC52 in body, (limit, out)


# -- properties --------------------------------------------------------------------------------

_piece = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x2FF),
    st.sampled_from(["\x1b", "\x07", "\x9b", "\x9c", "\x9d", "\u202e", "\u2066", "\ud83d", "[", "]", "\\"]),
    st.sampled_from([OSC52, OSC0, CSI2J, "\x1b[2K", "\x1b\\", "\r\n", "\x1b]8;;http://x\x1b\\"]),
)
_nasty = st.lists(_piece, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_nasty)
def test_visible_output_never_holds_a_control(raw: str) -> None:
    for shown in (visible(raw), visible(raw, exact=True), visible_line(raw), pictured(raw)):
        assert FORBIDDEN.search(shown) is None, repr(shown)
    assert "\n" not in visible_line(raw)


@settings(max_examples=400, deadline=None)
@given(_nasty, st.integers(min_value=0, max_value=90))
def test_clip_is_inert_short_and_a_prefix_of_the_visible_text(raw: str, limit: int) -> None:
    out = clip(raw, limit)
    assert FORBIDDEN.search(out) is None
    assert len(out) <= max(limit, 1)
    shown = visible(raw)
    assert shown.startswith(out.removesuffix("…")) or out == shown


# -- Rich passes escapes through: measured ----------------------------------------------------


def _rich_output(renderable: Any) -> str:
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, color_system=None, width=200).print(renderable)
    return buffer.getvalue()


def test_rich_text_alone_lets_osc_52_through_and_the_sanitizer_does_not() -> None:
    payload = "x" + OSC52 + OSC0 + CSI2J + BIDI + "y"
    assert "\x1b]52;c;" in _rich_output(Text(payload))  # why everything goes through visible()
    shown = _rich_output(Text(visible(payload)))
    assert FORBIDDEN.search(shown) is None and "\\x1b]52;c;" in shown


# -- the command line ---------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tree_context_and_sessions_print_no_escape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    sessions = tmp_path / "sessions"
    path = write_poisoned(sessions / "poisoned.jsonl")
    raw = path.read_text()
    assert "\\u001b]52" in raw  # the file really holds the sequences
    outputs = {}
    for argv in (
        ("tree", str(path)),
        ("context", str(path), "--format", "text"),
        ("sessions", "--session-dir", str(sessions)),
        ("sessions", "--session-dir", str(sessions), "--search", "PWNED"),
    ):
        code, out, err = _run(capsys, *argv)
        assert code == 0, (argv, err)
        outputs[argv[0] + str(len(argv))] = out
        assert out.strip(), argv
        assert "\x1b" not in out and "\x07" not in out and FORBIDDEN.search(out + err) is None, (argv, out)
        assert "\\x1b]52;c;" in out, (argv, out)  # shown, as an escape
    assert "⟨U+202E⟩" in outputs["tree2"]


def test_json_outputs_keep_the_exact_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_poisoned(tmp_path / "sessions" / "poisoned.jsonl")
    code, out, _ = _run(capsys, "tree", str(path), "--json")
    assert code == 0
    texts = [node["text"] for node in json.loads(out)["nodes"]]
    assert any(OSC0 in t for t in texts)  # exact, escaped by JSON on the wire
    assert "\x1b" not in out  # JSON itself escapes ESC
    code, out, _ = _run(capsys, "context", str(path), "--format", "anthropic")
    assert code == 0 and "\x1b" not in out
    assert any(OSC52 in s for s in _strings(json.loads(out)))  # the request body: exact


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# -- print mode -----------------------------------------------------------------------------


def test_print_mode_shows_the_whole_command_and_no_sequence_can_rewrite_the_question(tmp_path: Path) -> None:
    attack = "rm -f victim #\x1b[2K\x1b[1Gagent-tui: allow bash ls -la"
    request = Permissions().request_for("bash", {"command": attack}, str(tmp_path), "c1")
    assert request is not None
    question = ask_text(request)
    assert "\x1b" not in question and FORBIDDEN.search(question) is None
    assert "rm -f victim #\\x1b[2K\\x1b[1Gagent-tui: allow bash ls -la" in question
    long = "echo " + "a" * 500 + "\nrm -rf ~/x\n" + "echo done"
    request = Permissions().request_for("bash", {"command": long}, str(tmp_path), "c2")
    assert request is not None
    question = ask_text(request)
    assert "a" * 500 in question  # whole: print mode cut it at 200 characters before
    assert "  │ rm -rf ~/x\n" in question and "  │ echo done\n" in question  # every line, marked


def test_for_terminal_wraps_only_a_terminal() -> None:
    buffer = io.StringIO()
    assert for_terminal(buffer) is buffer  # a pipe or a file gets the exact text
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "w", closefd=True) as tty:
            wrapped = for_terminal(tty)
            assert wrapped is not tty
            wrapped.write("a" + OSC0 + "b\n")
            wrapped.flush()
            assert os.read(master, 1000) == b"a\\x1b]0;PWNED-TITLE\\x07b\r\n"
    finally:
        os.close(master)


def _env(tmp_path: Path, server: FakeModelServer, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))}
    env.update(
        {
            "AGENT_TUI_HOME": str(tmp_path / "home"),
            "AGENT_TUI_CONFIG": str(tmp_path / "config.toml"),
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "AGENT_TUI_FSYNC": "never",
            **extra,
        }
    )
    return env


@pytest.mark.slow  # two agent-tui processes
def test_print_mode_on_a_terminal_prints_the_reply_inert_and_a_pipe_gets_it_exact(
    server: FakeModelServer, tmp_path: Path
) -> None:
    reply = "before " + OSC52 + OSC0 + CSI2J + BIDI + " after"
    server.push(anthropic_stream(text(reply)), anthropic_stream(text(reply)))
    piped = subprocess.run(
        [sys.executable, "-m", "agent_tui", "-p", "hi"],
        cwd=tmp_path,
        env=_env(tmp_path, server),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == reply + "\n"  # exact: a pipe is not a terminal
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "-p", "hi"],
        cwd=tmp_path,
        env=_env(tmp_path, server),
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            elif proc.poll() is not None:
                break
        proc.wait(timeout=30)
    finally:
        os.close(master)
    assert proc.returncode == 0, seen
    assert b"\x1b" not in seen and b"\x07" not in seen and "\u202e".encode() not in seen, seen
    assert b"before \\x1b]52;c;" in seen and "⟨U+202E⟩ after".encode() in seen


# -- the real terminal, in tmux -------------------------------------------------------------------


class _Tmux:
    def __init__(self, name: str) -> None:
        self.name = name
        self.tmux = shutil.which("tmux") or "tmux"
        self.socket = f"agent-tui-safety-{os.getpid()}"

    def run(self, *args: str) -> str:
        return subprocess.run(
            [self.tmux, "-L", self.socket, *args], capture_output=True, text=True, check=False
        ).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def wait(self, needle: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if needle in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {needle!r}; the screen:\n{screen}")


@pytest.mark.slow  # the real program in tmux, twice
@pytest.mark.timeout(120)
def test_a_file_read_by_the_model_and_a_session_file_leave_the_terminal_title_and_clipboard_alone(
    tmp_path: Path, server: FakeModelServer
) -> None:
    assert shutil.which("tmux"), "the end-to-end test needs tmux"
    work = tmp_path / "project"
    work.mkdir()
    poison = "evil file\n" + OSC52 + OSC0 + CSI2J + "\x1b]2;PWNED-TITLE2\x07" + BIDI + "end of evil\n"
    (work / "evil.txt").write_text(poison)
    sessions = tmp_path / "sessions"
    opened = write_poisoned(tmp_path / "given" / "poisoned.jsonl")
    config = tmp_path / "config.toml"
    config.write_text("[retry]\nbase_delay = 0.01\n")
    server.push(openai_stream(None, tool_calls=[call("r1", "read", {"path": "evil.txt"})]))
    server.push(openai_stream("I read it: " + OSC0 + OSC52 + " done reading."))
    env = {
        "AGENT_TUI_HOME": str(tmp_path / "home"),
        "AGENT_TUI_CONFIG": str(config),
        "OPENAI_API_KEY": "test-key",
        "AGENT_TUI_FSYNC": "never",
        "COLUMNS": "200",
        "LINES": "50",
    }
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    unset = " ".join(
        f"-u {k}" for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
    )
    base = f"env {unset} {exports} {sys.executable} -m agent_tui --provider openai --model gpt-4o"
    tmux = _Tmux("safety")
    tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "keeper", "-x", "200", "-y", "50", "sleep 600")
    tmux.run("set", "-g", "set-clipboard", "on")
    tmux.run("set", "-g", "allow-rename", "on")
    tmux.run("set", "-g", "allow-passthrough", "off")
    try:
        for name, command in (
            ("read", f"{base} --base-url {server.openai_base_url} --session-dir {sessions}; sleep 30"),
            ("open", f"{base} --session-dir {sessions} {opened}; sleep 30"),
        ):
            tmux.name = name
            tmux.run("new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", str(work), command)
            tmux.run("select-pane", "-t", name, "-T", "clean-title")
            before_buffers = tmux.run("list-buffers")
            if name == "read":
                tmux.wait("Send")
                tmux.run("send-keys", "-t", name, "-l", "read evil.txt please")
                tmux.run("send-keys", "-t", name, "Enter")
                deadline = time.monotonic() + 30
                while not any("done reading." in f.read_text() for f in sessions.glob("*.jsonl")):
                    assert time.monotonic() < deadline, tmux.screen()
                    time.sleep(0.1)
            else:
                tmux.wait("lastreply")
            time.sleep(1.0)  # the reply painted
            title = tmux.run("display", "-p", "-t", name, "#{pane_title}").strip()
            assert title == "clean-title", f"{name}: the window title was set to {title!r}"
            assert tmux.run("list-buffers") == before_buffers == "", f"{name}: the clipboard was written"
            screen = tmux.wait("done reading." if name == "read" else "lastreply-z")
            assert "\\x1b]0;PWNED-TITLE\\x07" in screen, screen  # the escapes are shown, as text
            tmux.run("kill-session", "-t", name)
    finally:
        tmux.run("kill-server")


def test_import_reports_quote_the_transcript_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "t.jsonl"
    first = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s",
        "cwd": "/tmp",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "hi"},
    }
    odd = {"type": "weird" + OSC0, "uuid": "x"}  # its type is named in the "kept" line
    transcript.write_text(json.dumps(first) + "\n" + json.dumps(odd) + "\n")
    code, out, err = _run(capsys, "import", str(transcript), "--session-dir", str(tmp_path / "s"))
    assert code == 0, err
    assert "weird\\x1b]0;PWNED-TITLE\\x07" in err
    assert FORBIDDEN.search(out + err) is None

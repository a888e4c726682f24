"""Secrets never reach anything agent-tui writes; what it creates is private."""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_tui.agent.hooks import HookCommand, Hooks
from agent_tui.agent.tools.base import ToolContext
from agent_tui.agent.tools.bash import BashTool
from agent_tui.agent.user_bash import parse_user_command, run_user_command
from agent_tui.config import Config, load_config
from agent_tui.providers.base import log_request
from agent_tui.store import redact
from agent_tui.store.errors import NotASessionError
from agent_tui.store.paths import make_private_dirs
from agent_tui.store.redact import StreamRedactor, redact_text, register_secret
from agent_tui.store.session import Session
from tests.support.fake_model_server import FakeModelServer, anthropic_error, anthropic_stream, text, tool_use

EXTRA = {
    "gitlab-token": "glpat-" + "x1Y2z3W4v5U6t7S8r9Q0",
    "huggingface-token": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "npm-token": "npm_" + "a1b2c3d4e5f6g7h8i9j0a1b2c3d4e5f6g7h8",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.fixture(autouse=True)
def _clean_literals() -> Iterator[None]:
    saved = dict(redact._LITERALS)
    yield
    redact._LITERALS.clear()
    redact._LITERALS.update(saved)
    redact.refresh_environment()


@pytest.mark.parametrize(("kind", "secret"), sorted(EXTRA.items()))
def test_more_token_kinds(kind: str, secret: str) -> None:
    out, found = redact_text(f"token: {secret} end")
    assert secret not in out and f"[REDACTED {kind}]" in out and kind in found


def test_headers_urls_and_json_assignments() -> None:
    cases = {
        "curl -H 'x-api-key: abcdefghijklmnop0123' https://api": "abcdefghijklmnop0123",
        "DATABASE_URL=postgres://app:s3cretPassw0rd@db:5432/app": "s3cretPassw0rd",
        'config = {"client_secret": "Zq8xW3vB9nM2kL5j", "name": "x"}': "Zq8xW3vB9nM2kL5j",
        '  "apiKey": "AbC123dEf456GhI"': "AbC123dEf456GhI",
        "password: hunter2hunter2": "hunter2hunter2",
    }
    for line, secret in cases.items():
        out, found = redact_text(line)
        assert secret not in out and found, line


def test_ordinary_text_stays() -> None:
    ordinary = (
        "MAX_TOKENS=100000\n"
        '{"max_tokens": 4096, "input_tokens": "1234567", "token_count": 12}\n'
        "see http://localhost:8080/v1 and git@github.com:owner/repo.git, mail me@example.com\n"
        "ssh://git@host/repo  https://user@host/path  postgres://app:$PASSWORD@db/app\n"
        "def tokenize(api_key_name): return KEYMAP\n"
    )
    assert redact_text(ordinary) == (ordinary, [])


def test_literal_and_environment_secrets() -> None:
    register_secret("zz-custom-key-0123456789")  # matches no pattern: only the literal catches it
    register_secret("short")  # too short to register: it would replace ordinary words
    redact.refresh_environment(
        {
            "MY_SERVICE_TOKEN": "plainvalue9876543210",
            "MAX_TOKENS": "100000000000000",  # plural: a count, not a secret
            "HOME_PATH_SECRET": "/home/me/x1",  # a path, not a secret
            "PLAIN": "plainvalue1111111111",
        }
    )
    out, found = redact_text("k=zz-custom-key-0123456789; t=plainvalue9876543210; short; 100000000000000")
    assert out == "k=[REDACTED api-key]; t=[REDACTED $MY_SERVICE_TOKEN]; short; 100000000000000"
    assert sorted(found) == ["$MY_SERVICE_TOKEN", "api-key"]


def test_custom_entry_data_is_scanned(tmp_path: Path) -> None:
    """``data`` holds images as strings (skipped) but custom entries' state as objects (scanned)."""
    key = "sk-ant-api03-" + "Q" * 40
    with Session.create(tmp_path, tmp_path) as s:
        s.append({"type": "custom", "customType": "x", "data": {"note": f"key {key}"}})
    raw = s.path.read_text()
    assert key not in raw and "[REDACTED anthropic-key]" in raw


SECRET_POOL = [
    "sk-ant-api03-" + "B" * 30,
    "ghp_" + "c" * 36,
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----",
    "Authorization: Bearer abcdefghijklmnopqrstuvwx",
    "\nAPI_KEY=verysecretvalue123\n",
    "AKIAIOSFODNN7EXAMPLE",
]


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(
        st.one_of(
            st.sampled_from(SECRET_POOL),
            st.text(alphabet="abc xyz.\n-=", max_size=40),
        ),
        max_size=12,
    ),
    cuts=st.lists(st.integers(1, 50), max_size=40),
    hold=st.integers(128, 300),
)
def test_stream_redactor_never_lets_a_secret_through(parts: list[str], cuts: list[int], hold: int) -> None:
    whole = "".join(parts)
    pieces: list[str] = []
    rest = whole
    for size in cuts:
        pieces.append(rest[:size])
        rest = rest[size:]
    pieces.append(rest)
    r = StreamRedactor(enabled=True, hold=hold)
    out = "".join(r.feed(piece) for piece in pieces) + r.flush()
    caught = redact_text(whole)[0]
    for secret in SECRET_POOL:
        core = secret.strip().split()[-1] if "Bearer" in secret else secret.strip().split("=")[-1]
        if "PRIVATE KEY" in secret:
            core = "MIIEow"
        # Streaming never shows a secret more often than redacting the whole text does (glued to the
        # word before it, no pattern sees it, streamed or not).
        assert out.count(core) <= caught.count(core), (pieces, out)
    if not any(s.strip() in whole for s in SECRET_POOL) and "-----" not in whole:
        assert out == whole


def test_stream_redactor_streams_long_lines_and_holds_key_blocks() -> None:
    r = StreamRedactor(enabled=True)
    assert r.feed("hello wor") == "hello "  # only the word under way waits
    assert r.feed("ld\nnext ") == "world\nnext "
    assert r.feed("word " * 100) == "word " * 100
    r2 = StreamRedactor(enabled=True)
    assert r2.feed("a\n-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n" + "x " * 300) == "a\n"
    tail = r2.feed("\n-----END OPENSSH PRIVATE KEY-----\nafter\n") + r2.flush()
    assert tail.startswith("[REDACTED private-key]") and "abc" not in tail and tail.endswith("after\n")
    assert StreamRedactor(enabled=False).feed("sk-ant-api03-" + "B" * 30) == "sk-ant-api03-" + "B" * 30


# -- private files and folders -------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_folder_we_create_is_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        with Session.create(tmp_path / "a" / "b" / "c", tmp_path) as s:
            pass
        assert _mode(s.path) == 0o600
        for folder in (tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"):
            assert _mode(folder) == 0o700, folder
        log = tmp_path / "logs" / "deep" / "requests.jsonl"
        log_request(log, {"messages": []})
        assert _mode(log) == 0o600 and _mode(log.parent) == 0o700 and _mode(log.parent.parent) == 0o700
        (tmp_path / "shared").mkdir(mode=0o755)
        make_private_dirs(tmp_path / "shared" / "mine")
        assert _mode(tmp_path / "shared") == 0o755  # existing folders are not ours to change
        assert _mode(tmp_path / "shared" / "mine") == 0o700
    finally:
        os.umask(old)


def test_a_file_left_empty_by_a_crash_gets_its_header(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.touch(mode=0o600)  # created exclusively, then killed before the header was written
    with pytest.raises(NotASessionError):
        Session.open(path, write=False)
    with Session.open(path) as s:
        entry = s.append_message({"role": "user", "content": "hi", "timestamp": 1})
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "session" and json.loads(lines[1])["id"] == entry.id
    with Session.open(path) as again:
        assert again.leaf_id == entry.id


async def test_bash_full_output_file_is_redacted(tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "Z" * 40
    script = tmp_path / "gen.py"
    script.write_text(f"for i in range(4000):\n    print('line', i, {key!r} if i % 1000 == 7 else '')\n")
    result = await BashTool().execute({"command": f"{sys.executable} {script}"}, ToolContext(str(tmp_path)))
    full = Path(result.details["fullOutputPath"]) if result.details else None
    assert full is not None and full.exists()
    try:
        saved = full.read_text()
        assert key not in saved and saved.count("[REDACTED anthropic-key]") == 4
        assert saved.count("\n") == 4000 and _mode(full) == 0o600
    finally:
        full.unlink()


def test_config_never_shows_the_key(tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('[anthropic]\napi_key = "zz-from-the-file-0123456789"\n')
    config = load_config(env={}, path=config_file)
    assert isinstance(config, Config) and config.api_key == "zz-from-the-file-0123456789"
    shown = repr(config) + str(config) + config.auth_hint()
    assert "zz-from-the-file" not in shown and "api_key under [anthropic]" in config.auth_hint()


# -- end to end: print mode -----------------------------------------------------------------


def test_keys_never_reach_any_file_or_output(tmp_path: Path) -> None:
    """A key from the config file (no pattern matches it) and a pattern key in the project's .env:
    the model reads .env, echoes both, the server's error echoes the key. None of session, request
    log, stdout and stderr (saved to files), the bash full-output file or exports holds either."""
    config_key = "zz-config-key-0123456789abcdef"
    env_key = "sk-proj-" + "Rr9Qq8Pp7Oo6Nn5Mm4Ll" * 2
    work = tmp_path / "project"
    work.mkdir()
    (work / ".env").write_text(f"OPENAI_API_KEY={env_key}\nDEBUG=1\n")
    config = tmp_path / "config.toml"
    with FakeModelServer() as server:
        config.write_text(
            f'[anthropic]\napi_key = "{config_key}"\nbase_url = "{server.anthropic_base_url}"\n'
            "[retry]\nbase_delay = 0.01\nmax_retries = 1\n"
        )
        long_output = f"python3 -c \"print('\\n'.join(['{env_key}'] * 3000))\""
        server.push(
            anthropic_stream(
                text(f"Reading it. Your key is {config_key} and "),
                tool_use("toolu_1", "read", {"path": ".env"}),
                tool_use("toolu_2", "bash", {"command": f"echo {config_key}; {long_output}"}),
            ),
            anthropic_stream(text(f"The .env holds\nOPENAI_API_KEY={env_key}\nand {config_key}.\n")),
            anthropic_error(500, "api_error", f"internal error for key {config_key}"),
            anthropic_error(500, "api_error", f"internal error for key {config_key}"),
        )
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))
        }
        log = tmp_path / "logs" / "requests.jsonl"
        env.update(
            AGENT_TUI_HOME=str(tmp_path / "home"),
            AGENT_TUI_CONFIG=str(config),
            AGENT_TUI_LOG_REQUESTS=str(log),
        )
        outputs = []
        for prompt in ("read .env", "again"):
            out_file, err_file = tmp_path / f"{prompt}.out", tmp_path / f"{prompt}.err"
            with open(out_file, "w") as out, open(err_file, "w") as err:
                subprocess.run(
                    [sys.executable, "-m", "agent_tui", "-p", prompt, "-c"],
                    cwd=work,
                    env=env,
                    stdout=out,
                    stderr=err,
                    timeout=60,
                    check=False,
                )
            outputs += [out_file, err_file]
        headers = [r.headers for r in server.requests]
    # used, only on the wire (x-api-key or a bearer token, depending on the SDK version)
    assert all(config_key in (h.get("x-api-key"), h.get("authorization", "")[7:]) for h in headers)
    (session,) = (tmp_path / "home").glob("sessions/*/*.jsonl")
    stdout = outputs[0].read_text()
    assert "Your key is [REDACTED api-key]" in stdout and "OPENAI_API_KEY=[REDACTED" in stdout
    assert "internal error for key [REDACTED api-key]" in outputs[3].read_text()
    full_outputs = sorted({Path(p) for p in re.findall(r"Full output: (/[^\]\s]+)\]", session.read_text())})
    assert full_outputs, "the bash output was long enough to be saved"

    from agent_tui.library.export import export_bytes
    from agent_tui.store.index import SessionIndex
    from agent_tui.store.reader import read_file

    index = SessionIndex(read_file(session), str(session))
    exports = [export_bytes(index, fmt, source=session).decode() for fmt in ("md", "html", "jsonl")]
    files = [session, log, *outputs, *full_outputs]
    for content in [*(f.read_text() for f in files), *exports]:
        assert config_key not in content and env_key not in content
    assert "x-api-key" not in log.read_text() and "[REDACTED" in session.read_text()
    for f in full_outputs:
        f.unlink()


def test_redaction_switch_off_keeps_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TUI_REDACT", "off")
    r = StreamRedactor()
    assert r.feed("ghp_" + "c" * 36 + " ") == "ghp_" + "c" * 36 + " "
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message({"role": "user", "content": "ghp_" + "c" * 36, "timestamp": 1})
    assert "ghp_" + "c" * 36 in s.path.read_text()


def test_a_fork_of_a_file_we_did_not_write_is_redacted(tmp_path: Path) -> None:
    """pi writes secrets as they are; forking its file into one of ours leaves them behind."""
    key = "ghp_" + "q" * 36
    source = tmp_path / "pi.jsonl"
    source.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}\n'
        '{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
        f'"message":{{"role":"user","content":"token {key}","timestamp":1}}}}\n'
    )
    with Session.open(source, write=False) as s:
        out = s.fork(None, tmp_path / "fork.jsonl")
    assert key not in out.read_text() and "[REDACTED github-token]" in out.read_text()
    assert key in source.read_text()  # the source is never touched


# -- secrets that got through ------------------------------------------------------------

KEY_BODY = [  # the body of a made-up 2048-bit RSA key: 64-wide lines of base64, then a shorter one
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
    "9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvre",
    "dZRgxLHJ4ZJl3G5Zo9Mq9Xy2sXI=",
]
RSA_BEGIN, RSA_END = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"


def _leaks(text: str, secrets: list[str]) -> list[str]:
    out = redact_text(text)[0]
    return [s for s in secrets if s in out]


def test_arguments_named_data_or_id_are_scanned(tmp_path: Path) -> None:
    """Tool call arguments ``data`` and ``id`` (and the call's own id) were never scanned; image data
    and signatures stay byte for byte."""
    key, token = "sk-ant-api03-" + "D" * 40, "ghp_" + "e5" * 18
    image = "iVBORw0KGgo" + "A" * 200
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "x", "thinkingSignature": "EqQB" + "s" * 40},
                    {
                        "type": "toolCall",
                        "id": "call_1",
                        "name": "http",
                        "arguments": {"data": key, "id": token},
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "m",
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
                "stopReason": "toolUse",
                "timestamp": 1,
            }
        )
        s.append_message(
            {
                "role": "user",
                "content": [{"type": "image", "data": image, "mimeType": "image/png"}],
                "timestamp": 2,
            }
        )
    raw = s.path.read_text()
    assert key not in raw and token not in raw
    assert '"data":"[REDACTED anthropic-key]"' in raw and '"id":"[REDACTED github-token]"' in raw
    assert image in raw and "EqQB" + "s" * 40 in raw


def test_partial_private_key_reads_are_redacted() -> None:
    body = "\n".join(KEY_BODY)
    offset_read = f"{body}\n{RSA_END}\n"  # read with an offset past BEGIN, or a tail that cut it
    limit_read = f"{RSA_BEGIN}\n{body}\n\n[Showing lines 1-6 of 28. Use offset=7 to continue.]"
    middle = "\n".join(KEY_BODY[:4])  # neither marker in view
    numbered = "\n".join(f"{n:6}→{line}" for n, line in enumerate(KEY_BODY, 12))  # Claude Code's Read
    for sample in (offset_read, limit_read, middle, numbered):
        assert _leaks(sample, KEY_BODY[:4]) == [], sample
        assert "[REDACTED private-key]" in redact_text(sample)[0]
    out = redact_text(limit_read)[0]
    assert out.endswith("[Showing lines 1-6 of 28. Use offset=7 to continue.]")  # the notice stays


def test_ordinary_base64_is_not_a_key() -> None:
    import base64

    blob = base64.b64encode(bytes(range(256)) * 2).decode()
    cases = [
        "\n".join(KEY_BODY[:2]),  # two lines: not enough to call it a key
        "\n".join(blob[i : i + 76] for i in range(0, len(blob), 76)),  # `base64` wraps at 76
        "-----BEGIN CERTIFICATE-----\n" + "\n".join(blob[i : i + 64] for i in range(0, 512, 64)) + "\n",
        "\n".join(blob[i : i + 64] for i in range(0, 512, 64)) + "\n-----END PUBLIC KEY-----",
        blob,  # one long line (an image, a hash)
        "abcdefgh\n" * 10,
    ]
    for sample in cases:
        assert redact_text(sample) == (sample, []), sample


def test_a_key_split_by_a_newline_loses_its_tail() -> None:
    key = "sk-ant-api03-" + "Qw3rTy" * 10
    wrapped = f"key: {key[:40]}\n{key[40:]}\ndone\n"
    out, found = redact_text(wrapped)
    assert key[:40] not in out and key[40:] not in out and found == ["anthropic-key"]
    assert out == "key: [REDACTED anthropic-key]\ndone\n"
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    assert redact_text(f"{token[:40]}\n{token[40:]} rest")[0] == "[REDACTED github-token] rest"
    assert redact_text(f"{token}\nnext line\n")[0] == "[REDACTED github-token]\nnext line\n"
    r = StreamRedactor(enabled=True)
    out = "".join(r.feed(piece) for piece in (f"{key[:40]}\n", key[40:], "\nafter\n")) + r.flush()
    assert key[40:] not in out and out == "[REDACTED anthropic-key]\nafter\n"


LEAKS = {
    # text -> the secret in it
    "GET https://api.example.com/v1/data?api_key=Zx81kLmQ2pR7tY&format=json": "Zx81kLmQ2pR7tY",
    "https://graph.example.com/me?fields=id&access_token=EAAGm0PX4ZCpsBAhbcd": "EAAGm0PX4ZCpsBAhbcd",
    "wss://stream.example.com/feed?token=opaqueValueWithoutDigits": "opaqueValueWithoutDigits",
    '{"headers": {"Authorization": "Bearer abcDEFghiJKLmnoPQRstu"}}': "abcDEFghiJKLmnoPQRstu",
    "curl -u deploy:Tr0ub4dor https://ci.example.com/api": "Tr0ub4dor",
    "curl --user admin:swordfishes -X POST https://x": "swordfishes",
    "mysql -h db -u root -pHunterTwo appdb": "HunterTwo",
    "pg_dump --password=plainpassword mydb": "plainpassword",
    "deploy --db-password s3cr3tvalue --yes": "s3cr3tvalue",
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=q8Vh3kL0pZ+xY2bW5nR7tE9sA1cD4fG6hJ8kL0mN2pQ==;EndpointSuffix=core.windows.net": "q8Vh3kL0pZ+xY2bW5nR7tE9sA1cD4fG6hJ8kL0mN2pQ==",
    "machine api.example.com login deploy password horsebatterystaple": "horsebatterystaple",
    "machine github.com\n  login octocat\n  password gitpassword\n": "gitpassword",
    "client_secret GOCSPX-AbCdEfGhIjKlMnOpQrStUvWxYz12 ok": "GOCSPX-AbCdEfGhIjKlMnOpQrStUvWxYz12",
    "SENDGRID=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 ok": "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",
    "do: dop_v1_" + "ab12" * 16 + " end": "dop_v1_" + "ab12" * 16,
    "docker login -p dckr_pat_2b3e36beeb386dfdaacb9b46004 x": "dckr_pat_2b3e36beeb386dfdaacb9b46004",
    "HOME=/root\x00DB_PASSWORD=correcthorsebatterystaple\x00PATH=/usr/bin\x00": "correcthorsebatterystaple",
    '"x-api-key": "abcdefghijklmnop"': "abcdefghijklmnop",
    # password= in the middle of a line, unquoted or quoted
    "mysql_connect(host, user='root', password=hunter2hunter2)": "hunter2hunter2",
    "db.connect(host='db', password='plain-literal')": "plain-literal",
    "mount -t cifs //srv/share /mnt -o username=bob,password=Sup3r-S3cret!": "Sup3r-S3cret!",
    "Server=db;Database=app;User Id=sa;Password=Hunter2Hunter2;": "Hunter2Hunter2",
    'run.sh --env \\"db_password=\\"Qu0ted-Esc4ped\\"': "Qu0ted-Esc4ped",
    "docker login -u ci -p Sup3rS3cretPw registry.example.com": "Sup3rS3cretPw",
    "podman login -pS3cretGlued quay.io": "S3cretGlued",
    "docker login --password Sup3rS3cretPw2 registry": "Sup3rS3cretPw2",
    "sshpass -p 'Sshp4ssSecret' ssh deploy@host": "Sshp4ssSecret",
    "sshpass -v -pGlu3dSecret ssh host": "Glu3dSecret",
    "twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmcCJGE4ZjY3YzMyLWI3ZTAtNDVlZi1iZmE2LWJlZGY1MzZhNzAy"
    "NQACKlszLCI1NGRjMjE2ZS1jYWRjLTQ1OTEtYWE4Yy04NzUxZGFmNGNmZjIiXQAABiD7g dist/*": "pypi-AgEIcHlwaS5vcmcCJGE4ZjY3",
    "curl https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/getMe": (
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
    ),
    "twilio api key SK0123456789abcdef0123456789abcdef ok": "SK0123456789abcdef0123456789abcdef",
    "client = Client('AC0123456789abcdef0123456789abcdef', 'f0e1d2c3b4a5968778695a4b3c2d1e0f')": (
        "f0e1d2c3b4a5968778695a4b3c2d1e0f"
    ),
    "curl -X POST https://api.twilio.com/x AC0123456789abcdef0123456789abcdef:f0e1d2c3b4a5968778695a4b3c2d1e0f": (
        "f0e1d2c3b4a5968778695a4b3c2d1e0f"
    ),
    "mailgun key-0123456789abcdef0123456789abcdef ok": "key-0123456789abcdef0123456789abcdef",
}


@pytest.mark.parametrize(("text", "secret"), sorted(LEAKS.items()))
def test_more_secret_shapes(text: str, secret: str) -> None:
    out, found = redact_text(text)
    assert secret not in out and found, out


def test_those_shapes_leave_ordinary_text() -> None:
    ordinary = (
        "git push -u origin main\ndocker run -u 1000:1000 img\nmysql -u root -p appdb\n"
        "sorted(items, key=len)\nhttps://example.com/search?q=tokens&page=2\n"
        "the machine is fast\n--password-stdin\nls --color=auto\n"
        "HOME=/root\x00PATH=/usr/bin:/bin\x00TERM=xterm\x00"
    )
    assert redact_text(ordinary) == (ordinary, [])
    environ = "HOME=/root\x00DB_PASSWORD=correcthorsebatterystaple\x00PATH=/usr/bin\x00"
    assert redact_text(environ)[0] == "HOME=/root\x00DB_PASSWORD=[REDACTED env-secret]\x00PATH=/usr/bin\x00"


#: Code and commands around ``password=``, ``-p`` and the new token prefixes that hold no secret.
NOT_SECRETS = [
    "conn = connect(user='x', password=getpass())",
    "conn = connect(user='x', password=getpass.getpass())",
    "db(password=os.environ['DB_PASSWORD'])",
    "db(password=os.environ.get('PW'), timeout=3)",
    "db(password=settings.DB_PASSWORD)",
    "db(password=password, user=user)",
    "db(password=db_password)",
    "db(password=None) or db(password=true)",
    "db(password=\"\") and db(password='')",
    'db(password="$DB_PASSWORD") and db(password=$DB_PASSWORD) and db(password=${PW})',
    "psql password=[REDACTED env-secret] host=x",
    "if password == other or password != x: pass",
    "x.password_field='abcdefgh'; y.password_hash = hash(z)",
    "db(password=self.password)",
    "db(password=pw1)",
    "cur.execute(sql, password=%s)",
    "db(password='%(pw)s') and db(password=\"{pw}\") and db(password=f'{pw}')",
    "db(password=<your-password>) db(password=***) db(password=...) db(password=/run/secrets/pw)",
    "docker run -p 8080:80 img",
    "docker login registry && docker run -p 8080:80 img",
    "echo $PW | docker login -u me --password-stdin",
    'docker login -u me -p "$REGISTRY_PASSWORD" registry',
    "sshpass -f pwfile ssh host",
    "sshpass -e ssh -p 2222 host",
    'sshpass -p "$SSHPASS" ssh host',
    "pip install pypi-simple pypi-server",
    "at 12:30:00 AAAA 123456789:AAbc",
    "task: ask SKIP the SKU, ACME",
    "api-key-header and key-value store, key-0123",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_the_new_shapes_leave_code_and_commands(text: str) -> None:
    assert redact_text(text) == (text, [])


def test_password_named_environment_values_without_a_digit() -> None:
    redact.refresh_environment(
        {"DB_PASSWORD": "correcthorsebatterystaple", "AWS_SECRET_NAME": "production", "SHORT_TOKEN": "abc"}
    )
    out = redact_text("connected with correcthorsebatterystaple to production")[0]
    assert out == "connected with [REDACTED $DB_PASSWORD] to production"


#: Model service keys set in agent-tui's environment, each with a value that looks like no key.
MODEL_KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "K" * 40,
    "OPENAI_API_KEY": "sk-proj-" + "L" * 40,
    "GEMINI_API_KEY": "plainvalue1",
    "OPENROUTER_API_KEY": "plainvalue2",
    "AZURE_OPENAI_API_KEY": "plainvalue3",
    "GOOGLE_API_KEY": "plainvalue4",
}
#: Prints ``NAME=value`` for each of them, ``unset`` when absent.
ECHO_KEYS = " ".join(f"{name}=${{{name}-unset}}" for name in MODEL_KEYS)


async def test_bash_does_not_inherit_agent_tui_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's commands run without any model service's key (by name) or a configured key."""
    for name, value in MODEL_KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MY_PROXY_KEY", "zz-config-key-0123456789")  # what the config file's key also is
    monkeypatch.setenv("UNRELATED", "stays")
    register_secret("zz-config-key-0123456789")
    command = f'echo "{ECHO_KEYS} p=${{MY_PROXY_KEY-unset}} u=$UNRELATED"'
    result = await BashTool().execute({"command": command}, ToolContext(str(tmp_path)))
    unset = " ".join(f"{name}=unset" for name in MODEL_KEYS)
    assert result.content[0]["text"].strip() == f"{unset} p=unset u=stays"


async def test_user_commands_and_hooks_do_not_inherit_model_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in MODEL_KEYS.items():
        monkeypatch.setenv(name, value)
    unset = " ".join(f"{name}=unset" for name in MODEL_KEYS)
    command = parse_user_command(f"!echo {ECHO_KEYS}")
    assert command is not None
    message = await run_user_command(command, str(tmp_path), asyncio.Event())
    assert message["output"].strip() == unset
    seen = tmp_path / "hook.txt"
    hooks = Hooks([HookCommand("Stop", "", f"echo {ECHO_KEYS} > {seen}", 10, "test")], str(tmp_path))
    await hooks.run("Stop", {})
    assert seen.read_text().strip() == unset


async def test_a_read_with_offset_or_limit_of_a_key_file_stores_no_key_line(tmp_path: Path) -> None:
    from agent_tui.agent.tools.read import ReadTool

    key_file = tmp_path / "id_rsa"
    key_file.write_text(RSA_BEGIN + "\n" + "\n".join(KEY_BODY) + "\n" + RSA_END + "\n")
    with Session.create(tmp_path, tmp_path) as s:
        for n, args in enumerate(({"offset": 2, "limit": 3}, {"offset": 3}, {"limit": 4}, {"offset": 2})):
            result = await ReadTool().execute({"path": str(key_file), **args}, ToolContext(str(tmp_path)))
            s.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": f"c{n}",
                    "toolName": "read",
                    "content": result.content,
                    "isError": False,
                    "timestamp": n,
                }
            )
    raw = s.path.read_text()
    assert [line for line in KEY_BODY if line in raw] == [] and raw.count("[REDACTED private-key]") == 4


def test_the_search_index_and_its_snippets_hold_no_secret(tmp_path: Path) -> None:
    """pi writes secrets as they are: ``sessions --search`` neither indexes nor prints them."""
    token = "ghp_" + "Zq7Xw2Vb9Nm4Lk1Jh6Gf3Ds8Ap5Oi0Uy" + "Tr4E"
    password = "correcthorsebatterystaple"
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "pi.jsonl").write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}\n'
        '{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
        f'"message":{{"role":"user","content":"deploy with {token} please","timestamp":1}}}}\n'
        '{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text",'
        f'"text":"frobnicate ok\\nDB_PASSWORD={password}\\n"}}],"isError":false,"timestamp":2}}}}\n'
        '{"type":"label","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:02.000Z","targetId":"b",'
        f'"label":"pw {token}"}}\n'
    )
    env = {**os.environ, "AGENT_TUI_HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_tui", "sessions", "--session-dir", str(folder), *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )

    for query in ("deploy", "frobnicate", "--json deploy"):
        out = run("--search", *query.split()[::-1]) if query.startswith("--") else run("--search", query)
        assert out.returncode == 0, out.stderr
        assert token not in out.stdout and password not in out.stdout and "[REDACTED" in out.stdout, (
            out.stdout
        )
    listing = run()
    assert listing.returncode == 0 and token not in listing.stdout
    for secret_word in (token.lower(), password):  # the index holds no word of them to find
        assert run("--search", secret_word).returncode == 1
    index = b"".join(p.read_bytes() for p in (tmp_path / "home" / "index").iterdir())
    assert token.encode() not in index and password.encode() not in index


def test_imported_claude_code_fields_named_data_or_id_are_scanned(tmp_path: Path) -> None:
    from agent_tui.library.importers import import_session

    key, token = "sk-ant-api03-" + "F" * 40, "ghp_" + "g7" * 18
    base = {"sessionId": "s", "cwd": str(tmp_path), "timestamp": "2026-01-01T00:00:00.000Z"}
    lines = [
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "message": {"role": "user", "content": "go"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "u2",
            "parentUuid": "u1",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "Post", "input": {"data": key}}],
            },
        },
        {**base, "type": "system", "uuid": "u3", "parentUuid": "u2", "subtype": "x", "id": token},
    ]
    source = tmp_path / "claude.jsonl"
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    raw = import_session(source, out=tmp_path / "out.jsonl").path.read_text()
    assert key not in raw and token not in raw and raw.count("[REDACTED") == 2


def test_streamed_key_bodies_are_redacted_whatever_the_pieces() -> None:
    texts = [
        "\n".join(KEY_BODY[:4]) + "\nafter\n",  # a middle read
        "\n".join(KEY_BODY) + "\n" + RSA_END + "\nafter\n",  # a tail that cut BEGIN
        "before\n" + RSA_BEGIN + "\n" + "\n".join(KEY_BODY[:3]) + "\n",  # a head that cut END
    ]
    for whole in texts:
        for size in (1, 7, 65, 200):
            r = StreamRedactor(enabled=True)
            out = "".join(r.feed(whole[i : i + size]) for i in range(0, len(whole), size)) + r.flush()
            assert [line for line in KEY_BODY if line in out] == [], (size, out)
            assert "[REDACTED private-key]" in out


def test_a_snippet_out_of_a_long_output_holds_no_secret(tmp_path: Path) -> None:
    from agent_tui.library.search import Library
    from tests.support.session_builder import Builder, tool_result, user

    token = "ghp_" + "Hy5Tg8Rf2Ed4Ws6Qa9Zx1Cv3Bn7Mk0Lp" + "Jj4K"
    b = Builder()
    b.message(user("look"))
    filler = "\n".join(f"line {i} of the build log" for i in range(3000))
    b.message(tool_result("c1", f"{filler}\nexport GH={token} # quuxification step\n{filler}", name="bash"))
    (tmp_path / "sessions").mkdir()
    b.write(tmp_path / "sessions" / "pi.jsonl")
    with Library([tmp_path / "sessions"], db_path=tmp_path / "index.sqlite3") as library:
        library.refresh()
        (hit,) = library.search("quuxification", locate=1)
    assert hit.snippet and "quuxification" in hit.snippet and "[REDACTED github-token]" in hit.snippet
    assert token not in hit.snippet

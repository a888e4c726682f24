"""Secrets never reach a session file: known patterns are replaced before the write."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.store.redact import redact_text
from agent_tui.store.session import Session

SECRETS = {
    "anthropic-key": "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4,
    "openai-key": "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt" * 3,
    "aws-access-key-id": "AKIAIOSFODNN7EXAMPLE",
    "github-token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2,
    "slack-token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "google-api-key": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
}
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\nAAAA\n-----END OPENSSH PRIVATE KEY-----"


@pytest.mark.parametrize(("kind", "secret"), sorted(SECRETS.items()))
def test_known_keys_are_replaced(kind: str, secret: str) -> None:
    text, found = redact_text(f"the key is {secret} ok")
    assert secret not in text and f"[REDACTED {kind}]" in text and found == [kind]


def test_private_keys_env_lines_bearer_and_aws_secret() -> None:
    env = "DATABASE_URL=postgres://x\nSTRIPE_SECRET_KEY=abcd1234efgh5678\nexport GITHUB_TOKEN='qwertyuiop123'\nDEBUG=true\nPASSWORD=\n"
    text, found = redact_text(env)
    assert "abcd1234efgh5678" not in text and "qwertyuiop123" not in text
    assert (
        "STRIPE_SECRET_KEY=[REDACTED env-secret]" in text and "DEBUG=true" in text and "PASSWORD=\n" in text
    )
    assert found.count("env-secret") == 2
    text, _ = redact_text(f"key:\n{PRIVATE_KEY}\ndone")
    assert "b3BlbnNz" not in text and "[REDACTED private-key]" in text and text.endswith("done")
    text, _ = redact_text("curl -H 'Authorization: Bearer abcdefghijklmnop1234567890'")
    assert "abcdefghijklmnop" not in text and "Authorization: Bearer [REDACTED bearer-token]" in text
    text, _ = redact_text("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    assert "wJalrXUtnFEMI" not in text


def test_ordinary_text_is_untouched() -> None:
    ordinary = "def sk_learn(): return 'skeleton'  # task-ant-colony, AKIA is a prefix, token = None"
    assert redact_text(ordinary) == (ordinary, [])


def test_session_file_never_holds_the_original(tmp_path: Path) -> None:
    secret = SECRETS["anthropic-key"]
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message({"role": "user", "content": f"use {secret}", "timestamp": 1})
        s.append_message(
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "bash",
                "content": [
                    {
                        "type": "text",
                        "text": f"cat .env\nOPENAI_API_KEY={SECRETS['openai-key']}\n{PRIVATE_KEY}",
                    }
                ],
                "isError": False,
                "timestamp": 2,
            }
        )
        s.replace(s.index.entries[0].id, f"again {SECRETS['github-token']}")
    raw = s.path.read_text()
    for value in [*SECRETS.values(), PRIVATE_KEY]:
        if value in (SECRETS["aws-access-key-id"], SECRETS["slack-token"], SECRETS["google-api-key"]):
            continue
        assert value not in raw
    assert raw.count("[REDACTED") == 4
    assert "OPENAI_API_KEY=[REDACTED openai-key]\\n" in raw  # one placeholder, the name kept


def test_switch_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TUI_REDACT", "off")
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message({"role": "user", "content": SECRETS["aws-access-key-id"], "timestamp": 1})
    assert SECRETS["aws-access-key-id"] in s.path.read_text()


def test_exports_of_files_we_did_not_write_are_redacted(tmp_path: Path) -> None:
    """A pi file (or one written with redaction off) holds a key: no export carries it."""
    from agent_tui.library.export import export_bytes
    from agent_tui.store.index import SessionIndex
    from agent_tui.store.reader import read_file
    from tests.support.session_builder import Builder, tool_result, user

    secret = SECRETS["anthropic-key"]
    b = Builder()
    b.message(user(f"my key is {secret}"))
    b.message(tool_result("c1", f"OPENAI_API_KEY={SECRETS['openai-key']}"))
    path = b.write(tmp_path / "pi.jsonl")
    index = SessionIndex(read_file(path), str(path))
    for fmt in ("html", "md", "jsonl"):
        for whole in (False, True):
            data = export_bytes(index, fmt, whole=whole, source=path)
            assert secret.encode() not in data and SECRETS["openai-key"].encode() not in data, (fmt, whole)
            assert b"[REDACTED anthropic-key]" in data, (fmt, whole)
    whole_jsonl = export_bytes(index, "jsonl", whole=True, source=path)
    assert (
        whole_jsonl.splitlines()[0] == path.read_bytes().splitlines()[0]
    )  # lines without secrets: byte for byte


def test_imported_transcripts_are_redacted(tmp_path: Path) -> None:
    import json

    from agent_tui.library.importers import import_session

    secret = SECRETS["github-token"]
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s",
            "cwd": str(tmp_path),
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": f"token {secret}"},
        },
    ]
    source = tmp_path / "claude.jsonl"
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    imported = import_session(source, out=tmp_path / "out.jsonl")
    text = imported.path.read_text()
    assert secret not in text and "[REDACTED github-token]" in text

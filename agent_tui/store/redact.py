"""Secrets out of transcripts: known credential patterns are replaced before anything is written.

Applied by ``Session.append`` to every string in an entry (so session files,
forks and exports built from them never hold the original), and by the request
log, print mode's output and the bash tool's full-output files.
``AGENT_TUI_REDACT=off`` turns it off.

Three sources of "known":

- patterns of credentials (Anthropic, OpenAI, AWS, GitHub, GitLab, Slack, Google,
  Stripe, Hugging Face, npm, JWTs, private key blocks, bearer and x-api-key
  headers, passwords in URLs, ``.env``-style and JSON ``"..._key": "..."``
  assignments);
- the values of secret-looking environment variables of this process
  (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``... that look like a
  credential), so ``echo $GITHUB_TOKEN`` in a tool's output is caught too;
- literal values registered with :func:`register_secret` (the API keys the
  configuration holds, wherever they came from).

Each is replaced by ``[REDACTED <kind>]``; the original is never stored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

# (kind, needles, pattern, group holding the secret (0 = whole match)). A pattern only runs when one
# of its needles occurs in the lower-cased text: most text holds none, and a regex scan per pattern
# over every position of a 50 KB tool output costs milliseconds.
_SECRET_NAME = r"(?:API_?KEY|ACCESS_?KEY|SECRET|TOKEN(?!S)|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_KEY)"
_PATTERNS: list[tuple[str, tuple[str, ...], re.Pattern[str], int]] = [
    (
        "private-key",
        ("private key",),
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        ),
        0,
    ),
    ("anthropic-key", ("sk-ant-",), re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), 0),
    ("openai-key", ("sk-",), re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0),
    (
        "aws-access-key-id",
        ("akia", "asia", "aida", "aroa"),
        re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA)[0-9A-Z]{16}\b"),
        0,
    ),
    (
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        0,
    ),
    ("gitlab-token", ("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), 0),
    ("slack-token", ("xox",), re.compile(r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}"), 0),
    (
        "slack-webhook",
        ("hooks.slack.com",),
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
        0,
    ),
    ("google-api-key", ("aiza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), 0),
    ("stripe-key", ("_live_",), re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}"), 0),
    ("huggingface-token", ("hf_",), re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), 0),
    ("npm-token", ("npm_",), re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
    (
        "jwt",
        ("eyj",),
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        0,
    ),
    (
        "bearer-token",
        ("bearer",),
        re.compile(r"(?i)\bauthorization:\s*bearer\s+([A-Za-z0-9._~+/=-]{16,})"),
        1,
    ),
    (
        "api-key-header",
        ("x-api-key", "api-key:"),
        re.compile(r"(?i)\b(?:x-)?api-key:\s*[\"']?(?!\[REDACTED)([A-Za-z0-9._~+/=-]{16,})"),
        1,
    ),
    (
        "url-password",
        ("://",),
        re.compile(r"://[^\s/:@\"'<>]{1,256}:(?!\$|\[REDACTED)([^\s/@\"'<>]{1,256})@"),
        1,
    ),
    (
        "aws-secret-key",
        ("aws_secret_access_key",),
        re.compile(r"(?i)\baws_secret_access_key\b\s*[=:]\s*[\"']?([A-Za-z0-9/+=]{40})"),
        1,
    ),
    (
        # .env style: NAME_WITH_KEY/SECRET/TOKEN/PASSWORD = value (the value goes, the name stays)
        "env-secret",
        ("key", "secret", "token", "passw", "credential"),
        re.compile(
            r"(?im)^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*" + _SECRET_NAME + r"[A-Z0-9_]*"
            r"[ \t]*[=:][ \t]*[\"']?(?!\[REDACTED)([^\s\"'#$][^\s\"'#]{5,})"
        ),
        1,
    ),
    (
        # JSON style: "client_secret": "value" (the key must end with the secret-ish word)
        "json-secret",
        ("key", "secret", "token", "passw", "credential"),
        re.compile(r"(?i)\"[A-Za-z0-9_.-]*" + _SECRET_NAME + r"\"\s*:\s*\"(?!\[REDACTED)([^\"\s]{6,})\""),
        1,
    ),
]

_PRIVATE_KEY = _PATTERNS[0][2]

#: Keys whose string values are opaque blobs we never scan (and that are never secrets).
_SKIP_KEYS = frozenset({"thinkingSignature", "signature", "data", "id", "parentId", "toolCallId", "targetId"})

#: Literal secret values (the configured API keys) -> the kind their placeholder names.
_LITERALS: dict[str, str] = {}
_ENV_SECRETS: dict[str, str] | None = None
_ENV_NAME = re.compile(r"(?i)" + _SECRET_NAME)
MIN_LITERAL = 8  # shorter values would replace ordinary words
MIN_HOLD = 128


def placeholder(kind: str) -> str:
    return f"[REDACTED {kind}]"


def register_secret(value: str | None, kind: str = "api-key") -> None:
    """Redact this exact value from now on in this process (e.g. an API key from the config file)."""
    if value and len(value) >= MIN_LITERAL and not value.isspace():
        _LITERALS[value] = kind


def looks_like_secret(value: str) -> bool:
    """A value worth redacting wherever it appears: long, no spaces, letters and digits, not a path."""
    return (
        len(value) >= 12
        and not any(c.isspace() for c in value)
        and any(c.isalpha() for c in value)
        and any(c.isdigit() for c in value)
        and value[0] not in "/~."
    )


def environment_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Values of secret-named environment variables that look like credentials -> ``$NAME``."""
    environ = os.environ if environ is None else environ
    return {
        value: f"${name}"
        for name, value in environ.items()
        if _ENV_NAME.search(name) and looks_like_secret(value)
    }


def refresh_environment(environ: Mapping[str, str] | None = None) -> None:
    """Re-read the environment's secrets (they are read once, on first use)."""
    global _ENV_SECRETS
    _ENV_SECRETS = environment_secrets(environ)


def _literals() -> list[tuple[str, str]]:
    if _ENV_SECRETS is None:
        refresh_environment()
    assert _ENV_SECRETS is not None
    merged = {**_ENV_SECRETS, **_LITERALS}
    return sorted(merged.items(), key=lambda item: -len(item[0]))  # longest first: no partial leftovers


def redact_text(text: str) -> tuple[str, list[str]]:
    """``text`` with every known secret replaced, and the kinds found."""
    found: list[str] = []
    lowered = text.lower()
    for kind, needles, pattern, group in _PATTERNS:
        if not any(needle in lowered for needle in needles):
            continue
        if group == 0:
            text, n = pattern.subn(placeholder(kind), text)
        else:
            text, n = pattern.subn(_replace_group(group, placeholder(kind)), text)
        if n:
            found.extend([kind] * n)
    for value, kind in _literals():
        if value in text:
            found.extend([kind] * text.count(value))
            text = text.replace(value, placeholder(kind))
    return text, found


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where known secrets (with the context their pattern needs) are in ``text``: (start, end) pairs."""
    spans: list[tuple[int, int]] = []
    lowered = text.lower()
    for _, needles, pattern, _ in _PATTERNS:
        if any(needle in lowered for needle in needles):
            spans.extend(m.span() for m in pattern.finditer(text))
    for value, _ in _literals():
        start = text.find(value)
        while start >= 0:
            spans.append((start, start + len(value)))
            start = text.find(value, start + 1)
    return spans


def _replace_group(group: int, replacement: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        start, end = match.span(group)
        whole_start = match.start()
        text = match.group(0)
        return text[: start - whole_start] + replacement + text[end - whole_start :]

    return replace


def redact_value(value: Any, found: list[str] | None = None) -> Any:
    """A copy of a JSON value with secrets replaced in every string (keys untouched)."""
    if isinstance(value, str):
        text, kinds = redact_text(value)
        if found is not None:
            found.extend(kinds)
        return text
    if isinstance(value, list):
        return [redact_value(v, found) for v in value]
    if isinstance(value, dict):
        return {
            k: (v if k in _SKIP_KEYS and isinstance(v, str) else redact_value(v, found))
            for k, v in value.items()
        }
    return value


def redaction_enabled() -> bool:
    """On unless ``AGENT_TUI_REDACT`` is ``off``/``0``/``false``/``no``."""
    return os.environ.get("AGENT_TUI_REDACT", "on").strip().lower() not in ("off", "0", "false", "no")


class StreamRedactor:
    """Redacts text that arrives in pieces (a streamed reply, a command's output) before it is shown or saved.

    ``feed`` returns what is safe to pass on: everything up to a cut that no
    secret can straddle. A cut is the start of a line or, in a long line, a space
    at least ``hold`` characters before the end; never inside a match, never
    after the ``-----BEGIN`` of an unfinished private key block. ``flush`` returns
    the rest. With redaction off, text passes through unchanged.
    """

    def __init__(self, enabled: bool | None = None, hold: int = 256) -> None:
        self.enabled = redaction_enabled() if enabled is None else enabled
        self.hold = max(hold, MIN_HOLD)  # longer than any secret with the words before it a pattern needs
        self._pending = ""

    def feed(self, text: str) -> str:
        if not self.enabled:
            return text
        self._pending += text
        cut = self._safe_cut()
        if cut <= 0:
            return ""
        out, self._pending = self._pending[:cut], self._pending[cut:]
        return redact_text(out)[0]

    def flush(self) -> str:
        out, self._pending = self._pending, ""
        return redact_text(out)[0] if self.enabled and out else out

    def _safe_cut(self) -> int:
        buf = self._pending
        limit = len(buf)
        begin = buf.rfind("-----BEGIN")
        if begin >= 0:
            header_end = buf.find("-----", begin + 10)
            header = buf[begin:header_end] if header_end >= 0 else None
            if header is None or ("PRIVATE KEY" in header and not _PRIVATE_KEY.match(buf, begin)):
                limit = begin  # a private key block (or what may become one) still arriving: hold it all
        cut = buf.rfind("\n", 0, limit) + 1  # after the last complete line
        far = min(limit, len(buf) - self.hold)
        if far > cut:  # a long line: a space far enough from the end that no secret can straddle it
            cut = max(cut, buf.rfind(" ", 0, far) + 1, buf.rfind("\t", 0, far) + 1)
        if cut <= 0:
            return 0
        spans = secret_spans(buf)
        moved = True
        while moved and cut > 0:
            moved = False
            for start, end in spans:
                if start < cut < end:
                    cut, moved = start, True
        return cut


__all__ = [
    "StreamRedactor",
    "environment_secrets",
    "looks_like_secret",
    "placeholder",
    "redact_text",
    "redact_value",
    "redaction_enabled",
    "refresh_environment",
    "register_secret",
    "secret_spans",
]


def redact_jsonl(data: bytes) -> bytes:
    """A JSONL file with secrets replaced inside every line that holds one; other lines byte for byte.

    For copies of files agent-tui did not write (pi's, or written with redaction off).
    """
    import msgspec

    out: list[bytes] = []
    for line in data.splitlines(keepends=True):
        try:
            value = msgspec.json.decode(line)
        except (msgspec.DecodeError, RecursionError):
            text, kinds = redact_text(line.decode("utf-8", "replace"))
            out.append(text.encode() if kinds else line)
            continue
        found: list[str] = []
        cleaned = redact_value(value, found)
        out.append(msgspec.json.encode(cleaned) + (b"\n" if line.endswith(b"\n") else b"") if found else line)
    return b"".join(out)

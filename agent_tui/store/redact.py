"""Secrets out of transcripts: known credential patterns are replaced before anything is written.

Applied by ``Session.append`` to every string in an entry (so session files,
forks and exports built from them never hold the original), and available to
the request log and exporters. ``AGENT_TUI_REDACT=off`` turns it off.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

# (kind, needles, pattern, group holding the secret (0 = whole match)). A pattern only runs when one
# of its needles occurs in the lower-cased text: most text holds none, and a regex scan per pattern
# over every position of a 50 KB tool output costs milliseconds.
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
    ("slack-token", ("xox",), re.compile(r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}"), 0),
    (
        "slack-webhook",
        ("hooks.slack.com",),
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
        0,
    ),
    ("google-api-key", ("aiza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), 0),
    ("stripe-key", ("_live_",), re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}"), 0),
    (
        "bearer-token",
        ("bearer",),
        re.compile(r"(?i)\bauthorization:\s*bearer\s+([A-Za-z0-9._~+/=-]{16,})"),
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
            r"(?im)^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*(?:API_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_KEY)[A-Z0-9_]*"
            r"[ \t]*[=:][ \t]*[\"']?(?!\[REDACTED)([^\s\"'#$][^\s\"'#]{5,})"
        ),
        1,
    ),
]

#: Keys whose values are opaque blobs we never scan (and that are never secrets).
_SKIP_KEYS = frozenset({"thinkingSignature", "signature", "data", "id", "parentId", "toolCallId", "targetId"})


def placeholder(kind: str) -> str:
    return f"[REDACTED {kind}]"


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
    return text, found


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
        return {k: (v if k in _SKIP_KEYS else redact_value(v, found)) for k, v in value.items()}
    return value


def redaction_enabled() -> bool:
    """On unless ``AGENT_TUI_REDACT`` is ``off``/``0``/``false``/``no``."""
    return os.environ.get("AGENT_TUI_REDACT", "on").strip().lower() not in ("off", "0", "false", "no")

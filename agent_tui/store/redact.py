"""Secrets out of transcripts: known credential patterns are replaced before anything is written.

Applied by ``Session.append`` to every string in an entry but its ids, thinking
signatures and image data (so session files, forks and exports built from them
never hold the original), by importers, the request log, print mode's output,
the bash tool's full-output files, the search index and its snippets, and the
session listing. ``AGENT_TUI_REDACT=off`` turns it off. :func:`tool_environment`
is the environment the model's commands run in: without agent-tui's own keys.

Three sources of "known":

- patterns of credentials (Anthropic, OpenAI, AWS, GitHub, GitLab, Slack, Google,
  Stripe, Hugging Face, npm, SendGrid, DigitalOcean, Docker, JWTs, private key
  blocks and their bodies without BEGIN or END, bearer and x-api-key headers,
  passwords and ``?token=`` parameters in URLs, ``curl -u``, ``mysql -p``,
  ``--password=``, Azure ``AccountKey=``, ``.netrc``, ``.env``-style, NUL-separated
  and JSON ``"..._key": "..."`` assignments);
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
from collections.abc import Callable, Iterator, Mapping
from typing import Any

# (kind, needles, pattern, group holding the secret (0 = whole match)). A pattern with needles only
# runs when one of them occurs in the lower-cased text: most text holds none, and a regex that tries
# every position of a 50 KB tool output costs milliseconds. Token patterns start with their literal
# (``sk-ant-(?<!\wsk-ant-)`` rather than ``\bsk-ant-``): the regex engine then jumps from one
# occurrence of it to the next, so the few without needles (AWS, GitHub: several prefixes) cost
# one such scan rather than a needle per prefix.
_SECRET_NAME = r"(?:API[_-]?KEY|ACCESS[_-]?KEY|SECRET|TOKEN(?!S)|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_KEY)"
#: A token's tail wrapped onto the following lines (a terminal or ``fold`` cut it): lines of token
#: characters alone. :func:`_wrapped_tail` decides which of them are key material.
_WRAPPED = r"(?:\r?\n[A-Za-z0-9_-]{1,256}(?=\s|\Z))*"
_PATTERNS: list[tuple[str, tuple[str, ...], re.Pattern[str], int]] = [
    (
        "private-key",
        ("private key",),
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        ),
        0,
    ),
    (
        # a BEGIN line whose END never came (a read cut by ``limit``, ``head``): the body lines after it
        "private-key",
        ("private key",),
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[ \t]*\r?\n[ \t]*(?:\d+(?:→|\t))?[ \t]*(?:[A-Za-z0-9+/]{1,80}={0,2}|[A-Za-z-]+: [^\n]*))*"
        ),
        0,
    ),
    ("anthropic-key", ("sk-",), re.compile(r"sk-ant-(?<!\wsk-ant-)[A-Za-z0-9_-]{20,}" + _WRAPPED), 0),
    (
        "openai-key",
        ("sk-",),
        re.compile(r"sk-(?<!\wsk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}" + _WRAPPED),
        0,
    ),
    (
        "aws-access-key-id",
        (),
        re.compile(r"A(?<!\wA)(?:KIA|SIA|IDA|ROA)[0-9A-Z]{16}\b"),
        0,
    ),
    (
        "github-token",
        (),
        re.compile(r"gh(?<!\wgh)(?:[pousr]_[A-Za-z0-9]{36,}|ithub_pat_[A-Za-z0-9_]{22,})" + _WRAPPED),
        0,
    ),
    ("gitlab-token", ("glpat-",), re.compile(r"glpat-(?<!\wglpat-)[A-Za-z0-9_-]{20,}" + _WRAPPED), 0),
    ("slack-token", ("xox",), re.compile(r"xox(?<!\wxox)[abeoprs]-[A-Za-z0-9-]{10,}" + _WRAPPED), 0),
    (
        "slack-webhook",
        ("hooks.slack.com",),
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
        0,
    ),
    ("google-api-key", ("aiza",), re.compile(r"AIza(?<!\wAIza)[0-9A-Za-z_-]{35}\b"), 0),
    ("stripe-key", ("_live_",), re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}"), 0),
    ("huggingface-token", ("hf_",), re.compile(r"hf_(?<!\whf_)[A-Za-z0-9]{30,}" + _WRAPPED + r"\b"), 0),
    ("npm-token", ("npm_",), re.compile(r"npm_(?<!\wnpm_)[A-Za-z0-9]{36}\b"), 0),
    (
        "google-oauth-secret",
        ("gocspx-",),
        re.compile(r"GOCSPX-(?<!\wGOCSPX-)[A-Za-z0-9_-]{20,}" + _WRAPPED),
        0,
    ),
    ("sendgrid-key", ("sg.",), re.compile(r"SG\.(?<!\wSG\.)[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}"), 0),
    (
        "digitalocean-token",
        ("_v1_",),
        re.compile(r"do(?<!\wdo)[opr]_v1_[a-f0-9]{64}\b"),
        0,
    ),
    (
        "docker-token",
        ("dckr_pat_",),
        re.compile(r"dckr_pat_(?<!\wdckr_pat_)[A-Za-z0-9_-]{20,}" + _WRAPPED),
        0,
    ),
    (
        "jwt",
        ("eyj",),
        re.compile(r"eyJ(?<!\weyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        0,
    ),
    (
        "bearer-token",
        ("authorization",),
        re.compile(
            r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+(?!\[REDACTED)([A-Za-z0-9._~+/=-]{8,})"
        ),
        1,
    ),
    (
        "api-key-header",
        ("api-key",),
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
        # ?api_key=... &access_token=... &token=... &sig=... in a URL
        "url-secret",
        ("=",),
        re.compile(
            r"(?i)[?&](?:[a-z0-9_.-]*(?:key|token|secret|password|passwd|pwd|sig|signature|auth|credentials?))"
            r"=(?!\[REDACTED|\$)([^&\s#\"'<>]{6,})"
        ),
        1,
    ),
    (
        "curl-password",
        ("curl",),
        re.compile(
            r"(?m)curl(?<!\wcurl)\b[^\n]*?(?:\s-u[ \t]*|\s--user(?:[ \t]+|=))[\"']?[^\s:\"']+:(?!\$|\[REDACTED)([^\s\"']+)"
        ),
        1,
    ),
    (
        "mysql-password",
        ("mysql", "mariadb"),
        re.compile(
            r"(?m)\b(?i:mysql|mysqldump|mysqladmin|mysqlsh|mariadb|mariadb-dump)\b[^\n]*?\s-p[\"']?"
            r"(?![$\[])([^\s\"']+)"
        ),
        1,
    ),
    (
        # --password=..., --db-password ..., --api-key=..., --token=...
        "password-option",
        ("--",),
        re.compile(
            r"(?i)--(?:[a-z0-9]+-)*(?:(?:password|passwd)(?:=|[ \t]+(?!-))|(?:pass|secret|token|api-key|apikey|"
            r"access-key|secret-key|auth-token)=)[\"']?(?![$\[])([^\s\"']{1,256})"
        ),
        1,
    ),
    (
        "azure-key",
        ("accountkey=", "sharedaccesskey=", "sharedsecret="),
        re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecret)=(?!\[REDACTED)([A-Za-z0-9+/=%]{16,})"),
        1,
    ),
    (
        # .netrc: machine HOST login USER password SECRET (on one line or several)
        "netrc-password",
        ("passw",),
        re.compile(
            r"(?i)\b(?:machine\s+\S+\s+|default\s+)(?:(?:login|account|port)\s+\S+\s+)+password\s+"
            r"(?!\[REDACTED)(\S+)"
        ),
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
            r"(?im)^[ \t]*(?:export[ \t]+)?(?P<name>[A-Z0-9_]++)"
            r"[ \t]*[=:][ \t]*[\"']?(?!\[REDACTED)([^\s\"'#$\x00][^\s\"'#\x00]{5,})"
        ),
        2,
    ),
    (
        # NUL-separated NAME=value (what /proc/PID/environ holds): the value runs to the NUL
        "env-secret",
        ("\x00",),
        re.compile(r"(?i)(?:^|\x00)(?P<name>[A-Z0-9_]++)=(?!\[REDACTED)([^\x00\n]{4,})"),
        2,
    ),
    (
        # JSON style: "client_secret": "value" (the key must end with the secret-ish word)
        "json-secret",
        ("key", "secret", "token", "passw", "credential"),
        re.compile(r"(?i)\"(?P<name>[A-Za-z0-9_.-]++)\"\s*:\s*\"(?!\[REDACTED)([^\"\s]{6,})\""),
        2,
    ),
]
#: Patterns that capture any assignment's ``name``: a match counts only if the name is secret-ish
#: (checked on the name alone: one regex over each line's name with the secret words in it
#: backtracked on every identifier of a source file).
_NAME_IN = re.compile(r"(?i)" + _SECRET_NAME)
_NAME_ENDS = re.compile(r"(?i)" + _SECRET_NAME + r"\Z")
_NAME_CHECKS: dict[re.Pattern[str], re.Pattern[str]] = {
    pattern: _NAME_ENDS if kind == "json-secret" else _NAME_IN
    for kind, _, pattern, _ in _PATTERNS
    if "(?P<name>" in pattern.pattern
}

_PRIVATE_KEY = _PATTERNS[0][2]
_WRAPS = frozenset(
    kind for kind, _, pattern, group in _PATTERNS if group == 0 and _WRAPPED in pattern.pattern
)

#: Every needle once, grouped by a character it holds (text without an ``_`` holds no ``ghp_``): one
#: ``in`` of a character skips the group. Most text has few of ``_ = - . : NUL``.
_GATES = ("_", "=", "-", ".", ":", "\x00")


def _needle_groups() -> list[tuple[str, tuple[str, ...]]]:
    groups: dict[str, list[str]] = {}
    for needle in dict.fromkeys(n for _, needles, _, _ in _PATTERNS for n in needles):
        gate = next((c for c in _GATES if c in needle), "")
        groups.setdefault(gate, []).append(needle)
    return [(gate, tuple(needles)) for gate, needles in groups.items()]


_NEEDLE_GROUPS = _needle_groups()
#: No secret a pattern or literal catches fits in fewer characters.
MIN_SECRET = 8

#: Structural keys of an entry (its id and its parent's): never a secret, never changed.
_ENTRY_KEYS = frozenset({"id", "parentId"})
#: Keys whose string values are provider-signed blobs: changing one breaks the next request.
_SKIP_KEYS = frozenset({"thinkingSignature", "signature"})

#: Literal secret values (the configured API keys) -> the kind their placeholder names.
_LITERALS: dict[str, str] = {}
_ENV_SECRETS: dict[str, str] | None = None
_ENV_NAME = re.compile(r"(?i)" + _SECRET_NAME)
#: Names that say the value is a secret whatever it looks like (``DB_PASSWORD=correcthorse...``).
_ENV_SECRET_SUFFIX = re.compile(
    r"(?i)(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|SECRET_KEY|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_KEY)$"
)
MIN_LITERAL = 8  # shorter values would replace ordinary words
MIN_HOLD = 128
#: agent-tui's own key variables: read by agent-tui, never passed to the commands the model runs.
OWN_KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


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


def _env_value_is_secret(name: str, value: str) -> bool:
    if looks_like_secret(value):
        return True
    # a password-named variable holds a password even without a digit; not a path or a URL
    return (
        _ENV_SECRET_SUFFIX.search(name) is not None
        and len(value) >= 12
        and not any(c.isspace() for c in value)
        and any(c.isalpha() for c in value)
        and value[0] not in "/~."
        and "://" not in value
    )


def environment_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Values of secret-named environment variables that look like credentials -> ``$NAME``."""
    environ = os.environ if environ is None else environ
    return {
        value: f"${name}"
        for name, value in environ.items()
        if _ENV_NAME.search(name) and _env_value_is_secret(name, value)
    }


def refresh_environment(environ: Mapping[str, str] | None = None) -> None:
    """Re-read the environment's secrets (they are read once, on first use)."""
    global _ENV_SECRETS
    _ENV_SECRETS = environment_secrets(environ)


def tool_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for commands the model runs: this process's, without agent-tui's own API keys
    (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, and any variable holding a key registered with
    :func:`register_secret`, e.g. the config file's)."""
    environ = os.environ if environ is None else environ
    return {
        name: value
        for name, value in environ.items()
        if name not in OWN_KEY_VARIABLES and value not in _LITERALS
    }


def _literals() -> list[tuple[str, str]]:
    if _ENV_SECRETS is None:
        refresh_environment()
    assert _ENV_SECRETS is not None
    merged = {**_ENV_SECRETS, **_LITERALS}
    return sorted(merged.items(), key=lambda item: -len(item[0]))  # longest first: no partial leftovers


def redact_text(text: str) -> tuple[str, list[str]]:
    """``text`` with every known secret replaced, and the kinds found."""
    found: list[str] = []
    if len(text) < MIN_SECRET:
        return text, found
    present = _needles_in(text.lower())
    for kind, needles, pattern, group in _PATTERNS:
        if needles and present.isdisjoint(needles):
            continue
        if pattern in _NAME_CHECKS:
            text, n = _sub_named(pattern, group, placeholder(kind), text)
        elif kind in _WRAPS:
            text, n = pattern.subn(_replace_wrapped(placeholder(kind)), text)
        elif group == 0:
            text, n = pattern.subn(placeholder(kind), text)
        else:
            text, n = pattern.subn(_replace_group(group, placeholder(kind)), text)
        if n:
            found.extend([kind] * n)
    spans = _pem_body_spans(text)
    if spans:
        found.extend(["private-key"] * len(spans))
        text = _replace_spans(text, spans, placeholder("private-key"))
    for value, kind in _literals():
        if value in text:
            found.extend([kind] * text.count(value))
            text = text.replace(value, placeholder(kind))
    return text, found


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where known secrets (with the context their pattern needs) are in ``text``: (start, end) pairs."""
    spans: list[tuple[int, int]] = []
    present = _needles_in(text.lower())
    for _, needles, pattern, _ in _PATTERNS:
        if not needles or not present.isdisjoint(needles):
            spans.extend(m.span() for m in _named_matches(pattern, text))
    # key bodies without BEGIN/END are not here: a stream holds the last lines of such a run back
    # (_before_key_body) instead of a span as long as the run
    for value, _ in _literals():
        start = text.find(value)
        while start >= 0:
            spans.append((start, start + len(value)))
            start = text.find(value, start + 1)
    return spans


def _needles_in(lowered: str) -> set[str]:
    """The needles ``lowered`` holds; those holding a gate character only looked for when it is there."""
    present: set[str] = set()
    for gate, needles in _NEEDLE_GROUPS:
        if gate in lowered:
            present.update(needle for needle in needles if needle in lowered)
    return present


def _named_matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    check = _NAME_CHECKS.get(pattern)
    for match in pattern.finditer(text):
        if check is None or check.search(match.group("name")):
            yield match


def _sub_named(pattern: re.Pattern[str], group: int, replacement: str, text: str) -> tuple[str, int]:
    spans = [m.span(group) for m in _named_matches(pattern, text)]
    return (_replace_spans(text, spans, replacement), len(spans)) if spans else (text, 0)


def _replace_group(group: int, replacement: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        start, end = match.span(group)
        whole_start = match.start()
        text = match.group(0)
        return text[: start - whole_start] + replacement + text[end - whole_start :]

    return replace


def _replace_wrapped(replacement: str) -> Callable[[re.Match[str]], str]:
    """The token and those of the lines after it that carry on its characters (see :data:`_WRAPPED`)."""

    def replace(match: re.Match[str]) -> str:
        text = match.group(0)
        cut = text.find("\n")
        if cut < 0:
            return replacement
        lines = text[cut + 1 :].split("\n")
        taken = 0
        for line in lines:
            if not _wrapped_tail(line):
                break
            taken += 1
        rest = lines[taken:]
        return replacement + ("\n" + "\n".join(rest) if rest else "")

    return replace


def _wrapped_tail(line: str) -> bool:
    """Does this line, right after a token that ended the line before, read as the token's tail?
    Key material: a digit or a capital after its first character, or long; not a word like ``done``."""
    return len(line) >= 16 or any(c.isdigit() or c.isupper() for c in line[1:])


# -- private key bodies without their BEGIN or END line --------------------------------------------

_KEY_MARK = re.compile(r"-----(BEGIN|END) ((?:[A-Z0-9]+ )*)([A-Z0-9 ]*?)-----")
#: One line of a PEM body: base64 only, after an optional line number (``cat -n``, Claude Code's Read).
_BODY_LINE = re.compile(r"[ \t]*(?:\d+(?:→|\t))?[ \t]*([A-Za-z0-9+/]{1,76}={0,2})[ \t]*\r?")
_FULL_BODY_LINE = re.compile(r"[ \t]*(?:\d+(?:→|\t))?[ \t]*[A-Za-z0-9+/]{64}(?:[A-Za-z0-9+/]{6})?[ \t]*\r?")
#: PEM wraps a key body at 64 characters, OpenSSH at 70.
_FULL_LINE = (64, 70)
#: Body lines in a row that are a key body even without a BEGIN or END line in view.
MIN_BODY_LINES = 3
#: A stream holds back at most this many body lines (a 4096-bit key has about 50): a longer run of
#: base64 is not a key, and holding it all would make a stream of it quadratic.
MAX_HELD_BODY_LINES = 128


def _pem_body_spans(text: str) -> list[tuple[int, int]]:
    """Runs of private-key body lines whose BEGIN or END line is not in ``text`` (a read with an
    ``offset`` or ``limit``, a ``tail`` that cut BEGIN): next to an END (or BEGIN) line of a private
    key, or at least :data:`MIN_BODY_LINES` full lines of one PEM width (64 or 70) with no marker of
    something else (a certificate) beside them. Ordinary base64 (one line, 76-wide ``base64``
    output, a certificate) is left alone."""
    if "\n" not in text:
        return []
    lines = text.split("\n")
    if not any(_FULL_BODY_LINE.fullmatch(line) for line in lines if 64 <= len(line) <= 96):
        return []  # no full-width body line (most text): done without a loop over the lines
    n = len(lines)
    # body: (start, end, full width or 0) of the base64 on each line that is only base64
    body: list[tuple[int, int, int] | None] = [None] * n
    offset = 0
    any_full = False
    for i, line in enumerate(lines):
        size = len(line)
        if 0 < size <= 96 and " " not in line.strip(" \t"):
            m = _BODY_LINE.fullmatch(line)
            if m is not None:
                width = m.end(1) - m.start(1)
                full = width if width in _FULL_LINE and "=" not in m.group(1) else 0
                any_full = any_full or bool(full)
                body[i] = (offset + m.start(1), offset + m.end(1), full)
        offset += size + 1
    if not any_full:
        return []
    spans: list[tuple[int, int]] = []
    i = 0
    while i < n:
        if body[i] is None:
            i += 1
            continue
        j = i
        while j + 1 < n and body[j + 1] is not None:
            j += 1
        before = _marker(lines[i - 1]) if i > 0 else None
        after = _marker(lines[j + 1]) if j + 1 < n else None
        first, last = body[i], body[j]
        assert first is not None and last is not None
        if after == ("END", True) or before == ("BEGIN", True):
            spans.append((first[0], last[1]))
        elif not (before and not before[1]) and not (after and not after[1]):
            widths = [b[2] for b in body[i : j + 1] if b is not None]
            fulls = [w for w in widths if w]
            # the shape of a key body: full lines of one width, a shorter one only at either end
            if len(fulls) >= MIN_BODY_LINES and len(set(fulls)) == 1 and all(widths[1:-1]):
                spans.append((first[0], last[1]))
        i = j + 1
    return spans


def _line_end_open(text: str, end: int) -> bool:
    """Does ``end`` end a line whose next line is not complete yet?"""
    if text.startswith("\r\n", end):
        end += 1
    return text.startswith("\n", end) and text.find("\n", end + 1) < 0


def _before_key_body(text: str, cut: int) -> int:
    """``cut``, or the start of the run of key-body lines that ends there (the END line, or more body
    lines, may still come: the run is redacted whole)."""
    start = cut
    full = False
    for _ in range(MAX_HELD_BODY_LINES):
        if start <= 0 or text[start - 1] != "\n":
            break
        line_start = text.rfind("\n", 0, start - 1) + 1
        m = _BODY_LINE.fullmatch(text, line_start, start - 1)
        if m is None:
            break
        full = full or (m.end(1) - m.start(1)) in _FULL_LINE
        start = line_start
    return start if full else cut


def _marker(line: str) -> tuple[str, bool] | None:
    """("BEGIN" or "END", is it a private key) for a PEM marker line, else None."""
    if "-----" not in line:
        return None
    m = _KEY_MARK.search(line)
    if m is None:
        return None
    return m.group(1), "PRIVATE KEY" in (m.group(2) + m.group(3))


def _replace_spans(text: str, spans: list[tuple[int, int]], replacement: str) -> str:
    out: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start < at:
            continue
        out.append(text[at:start])
        out.append(replacement)
        at = end
    out.append(text[at:])
    return "".join(out)


#: Block types whose ``data`` is base64 or a provider's opaque blob, never text: an image (ours, and
#: Anthropic's ``source``) and redacted thinking.
_BLOB_TYPES = frozenset({"image", "base64", "redacted_thinking"})


def redact_value(value: Any, found: list[str] | None = None) -> Any:
    """A copy of a JSON value with secrets replaced in every string (keys untouched), but for an
    entry's own ``id``/``parentId``, thinking signatures and the ``data`` of image blocks."""
    if isinstance(value, dict):
        return {
            k: v if isinstance(v, str) and k in _ENTRY_KEYS else _redact(v, found) for k, v in value.items()
        }
    return _redact(value, found)


def _redact(value: Any, found: list[str] | None) -> Any:
    if isinstance(value, str):
        text, kinds = redact_text(value)
        if found is not None:
            found.extend(kinds)
        return text
    if isinstance(value, list):
        return [_redact(v, found) for v in value]
    if isinstance(value, dict):
        blob = value.get("type") in _BLOB_TYPES
        return {
            k: v if isinstance(v, str) and (k in _SKIP_KEYS or (blob and k == "data")) else _redact(v, found)
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
    after the ``-----BEGIN`` of an unfinished private key block, never inside a run of key-body
    lines (its END line may follow). ``flush`` returns
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
        cut = _before_key_body(buf, cut)
        if cut <= 0:
            return 0
        spans = secret_spans(buf)
        # a secret that ends its line may go on in the next one (a wrapped key): hold it until that
        # line is complete
        spans += [(start, len(buf) + 1) for start, end in spans if _line_end_open(buf, end)]
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
    "tool_environment",
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

"""Secrets out of transcripts: known credential patterns are replaced before anything is written.

Applied by ``Session.append`` to every string in an entry but its ids, thinking
signatures and image data (so session files, forks and exports built from them
never hold the original), by importers, the request log, print mode's output,
the bash tool's full-output files, the search index and its snippets, and the
session listing. ``AGENT_TUI_REDACT=off`` turns it off. :func:`tool_environment`
is the environment the model's commands run in: without the key variables it is given.

Three sources of "known":

- patterns of credentials (Anthropic, OpenAI, AWS, GitHub, GitLab, Slack, Google,
  Stripe, Hugging Face, npm, PyPI, Telegram bots, Twilio, Mailgun, SendGrid,
  DigitalOcean, Docker, JWTs, private key blocks and their bodies without BEGIN or
  END, bearer and x-api-key headers, passwords and ``?token=`` parameters in URLs,
  ``curl -u``, ``mysql -p``, ``docker login -p``, ``sshpass -p``, ``--password=``,
  ``password=`` anywhere in a line, Azure ``AccountKey=``, ``.netrc``, ``.env``-style,
  NUL-separated and JSON ``"..._key": "..."`` assignments);
- the values of secret-looking environment variables of this process
  (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``... that look like a
  credential), so ``echo $GITHUB_TOKEN`` in a tool's output is caught too;
- literal values registered with :func:`register_secret` (the API keys the
  configuration holds, wherever they came from).

Each is replaced by ``[REDACTED <kind>]``; the original is never stored.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
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
#: A container registry login command, up to its ``login`` (on the same command of the line).
_REGISTRY_LOGIN = r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras)\b[^\n;&|]{0,256}?\slogin\b"
#: The value of ``password=`` anywhere in a line (``connect(password='...')``, ``-o password=...``,
#: ``Password=...;`` of a connection string), but what reads as code: a variable (letters, or an
#: identifier with ``_`` or shorter than 8), a call, an attribute or an index (``getpass()``,
#: ``os.environ[...]``, ``settings.DB_PASSWORD``), ``None``/``true``..., ``$VAR``, ``%s``, ``{x}``,
#: ``<placeholder>``, ``***``, a path, an empty string. Quoted, any literal of 6 characters or more.
#: Every exclusion looks at most 100 characters past the value's start (a stream holds more).
_VALUE_END = r"(?=[\s\\\"',;&()\[\]{}<>|`]|\Z)"
_PASSWORD_VALUE = (
    r"(?:(?<=[\"'])(?![$%{<*#\[])[^\s\"'\\]{6,}"
    r"|(?<![\"'])(?![$%{<*#\[(:./~@?\\-])"
    r"(?!(?i:none|null|nil|true|false|undefined)\b)"
    r"(?![A-Za-z_]\w{0,48}[.(\[])"
    r"(?!(?:[A-Za-z_]{1,48}|\w{1,7}|\w{0,48}_\w{0,48})" + _VALUE_END + r")"
    r"[^\s\"'\\,;&()\[\]{}<>|`]{6,})"
)
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
    ("pypi-token", ("pypi-",), re.compile(r"pypi-(?<!\wpypi-)[A-Za-z0-9_-]{50,}" + _WRAPPED), 0),
    (
        # BOT_ID:SECRET, the secret 35 characters from AA (api.telegram.org/botID:SECRET/...)
        "telegram-bot-token",
        (":aa",),
        re.compile(r"AA(?<=\d{8}:AA)[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
        0,
    ),
    ("twilio-api-key", ("sk",), re.compile(r"SK(?<!\wSK)[0-9a-fA-F]{32}\b"), 0),
    (
        # an account SID (not a secret) with the auth token after it: AC...:TOKEN, "AC...", "TOKEN"
        "twilio-auth-token",
        ("ac",),
        re.compile(r"AC(?<!\wAC)[0-9a-fA-F]{32}\b[^\n]{1,40}?(?<![0-9A-Za-z])([0-9a-fA-F]{32})\b"),
        1,
    ),
    ("mailgun-key", ("key-",), re.compile(r"key-(?<!\wkey-)[0-9a-fA-F]{32}\b"), 0),
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
        # docker login -p SECRET (and -pSECRET, -p=SECRET); --password is a password-option
        "registry-password",
        ("login",),
        re.compile(_REGISTRY_LOGIN + r"[^\n;&|]*?\s-p(?:[ \t]+|=)?[\"']?(?![$\[-])([^\s\"']+)"),
        1,
    ),
    (
        "sshpass-password",
        ("sshpass",),
        re.compile(
            r"sshpass(?<!\wsshpass)(?:[ \t]+-(?:v|P[ \t]*\S+))*[ \t]+-p[ \t]*[\"']?(?![$\[-])([^\s\"']+)"
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
    (
        # password=VALUE in the middle of a line (a name ending in password, passwd or passphrase)
        "password-assignment",
        ("passw", "passphrase"),
        re.compile(
            r"(?i:passw(?:or)?d|passphrase)[ \t]*=(?!=)[ \t]*(?:\\?[\"'])?+(?!\[REDACTED)("
            + _PASSWORD_VALUE
            + ")"
        ),
        1,
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


def tool_environment(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment (or ``environ``) without the variables ``names`` and any variable
    holding a key registered with :func:`register_secret` (the config file's, wherever it came from).

    The names are the caller's (the provider registry's key variables: this layer does not know
    them), so no caller can forget them; ``agent.child_env`` is the one that passes them."""
    environ = os.environ if environ is None else environ
    stripped = frozenset(names)
    return {name: value for name, value in environ.items() if name not in stripped and value not in _LITERALS}


def _literals() -> list[tuple[str, str]]:
    if _ENV_SECRETS is None:
        refresh_environment()
    assert _ENV_SECRETS is not None
    merged = {**_ENV_SECRETS, **_LITERALS}
    return sorted(merged.items(), key=lambda item: -len(item[0]))  # longest first: no partial leftovers


def redact_text(text: str) -> tuple[str, list[str]]:
    """``text`` with every known secret replaced, and the kinds found."""
    return _redact_text(text, frozenset())


def _redact_text(text: str, also: frozenset[str], present: set[str] | None = None) -> tuple[str, list[str]]:
    """:func:`redact_text`, running the patterns of the needles ``also`` as if the text held them
    (``present``: the needles of a text ``text`` is the start of, when known)."""
    found: list[str] = []
    if len(text) < MIN_SECRET:
        return text, found
    present = (_needles_in(text.lower()) if present is None else present) | also
    for kind, _, pattern, group in _active(frozenset(present)):
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


@functools.lru_cache(maxsize=512)
def _active(present: frozenset[str]) -> tuple[tuple[str, tuple[str, ...], re.Pattern[str], int], ...]:
    """The patterns that run on a text holding the needles ``present``, in their order."""
    return tuple(p for p in _PATTERNS if not p[1] or not present.isdisjoint(p[1]))


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


def _before_key_body(text: str, cut: int, *, any_width: bool = False) -> int:
    """``cut``, or the start of the run of key-body lines that ends there (the END line, or more body
    lines, may still come: the run is redacted whole). A run is held when one of its lines is a full
    one, or with ``any_width`` (a full line elsewhere in the text: next to an END line any run is)."""
    start = cut
    full = any_width
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


# -- streams -------------------------------------------------------------------------------------

#: What a stream keeps of the text it released, for the patterns to look back on (``password=``,
#: ``Authorization: Bearer``, ``curl -u user:``, a ``.netrc`` entry over four lines, a PEM marker
#: before key-body lines): the last lines, within this many characters.
CONTEXT_LINES = 4
CONTEXT_CHARS = 512
#: A run without a word boundary (a hash, hex) longer than this is cut anyway, ``hold`` characters
#: before its end (see :class:`StreamRedactor`).
MAX_UNBROKEN = 4096
#: An unfinished private key block is held until its END line up to this size: an 8192-bit RSA key
#: in PEM is about 6.5 KB. Longer, its BEGIN line and key-body lines are redacted as a block whose
#: END never came.
MAX_KEY_BLOCK = 16384

_KEY_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_KEY_BEGIN_SO_FAR = re.compile(r"-----BEGIN(?: [A-Z0-9 ]*-{0,4})?\Z")
_ANY_FULL_BODY_LINE = re.compile(
    r"(?m)^[ \t]*(?:\d+(?:→|\t))?[ \t]*[A-Za-z0-9+/]{64}(?:[A-Za-z0-9+/]{6})?[ \t]*\r?$"
)
_BODY_LINE_SO_FAR = re.compile(r"[ \t]*(?:\d+(?:→|\t)?)?[ \t]*[A-Za-z0-9+/]{0,76}={0,2}[ \t]*\r?")
_LAST_NON_WORD = re.compile(r"\W\w*\Z")
_SPACE = re.compile(r"\s")
_ASCII_SPACE = " \t\n\r\f\v"
#: What would make a pattern's secret begin inside the text and run to its end, for the patterns a
#: longer text can match where a shorter one did not yet (a closing ``@`` or ``"`` still to come, a
#: value that may hold spaces, a JWT's next segment): (pattern ending at the end, the secret's group,
#: the check of its ``name``). The other patterns match as soon as their secret begins.
_UNDER_WAY: list[tuple[re.Pattern[str], int, re.Pattern[str] | None]] = [
    (re.compile(r"(?i)(?:^|\x00)(?P<name>[A-Z0-9_]++)=(?!\[REDACTED)([^\x00\n]*)\Z"), 2, _NAME_IN),
    (re.compile(r"://[^\s/:@\"'<>]{1,256}:(?!\$|\[REDACTED)([^\s/@\"'<>]{0,256})\Z"), 1, None),
    (
        re.compile(r"(?i)\"(?P<name>[A-Za-z0-9_.-]++)\"\s*:\s*\"(?!\[REDACTED)([^\"\s]*)\Z"),
        2,
        _NAME_ENDS,
    ),
    (
        re.compile(
            r"eyJ(?<!\weyJ)[A-Za-z0-9_-]*(?:\.(?:e(?:y(?:J[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*)?)?)?)?)?\Z"
        ),
        0,
        None,
    ),
]
#: How far before the run under way the context of those but the first may begin (``://``, a user
#: of at most 256 characters and ``:``; a JSON key and the spaces after it).
_UNDER_WAY_REACH = 600
#: Commands whose secret is anywhere later on their line (``curl ... -u user:pass``): named again
#: before the context when a long line's start is dropped from it.
_LINE_COMMANDS = re.compile(
    r"curl(?<!\wcurl)\b|\b(?i:mysql|mysqldump|mysqladmin|mysqlsh|mariadb|mariadb-dump)\b|" + _REGISTRY_LOGIN
)
_NUL = frozenset({"\x00"})


def _stream_spans(text: str, present: set[str]) -> Iterator[tuple[int, int, bool]]:
    """(start, end, may go on in the next lines) of every secret the patterns and literals find in
    ``text`` (holding the needles ``present``): the secret alone, without the context before it that
    its pattern needs."""
    for kind, _, pattern, group in _active(frozenset(present)):
        wraps = kind in _WRAPS
        for m in _named_matches(pattern, text):
            start, end = m.span(group)
            yield start, end, wraps
    for start, end in _pem_body_spans(text):
        yield start, end, False
    for value, _ in _literals():
        start = text.find(value)
        while start >= 0:
            yield start, start + len(value), False
            start = text.find(value, start + 1)


class StreamRedactor:
    """Redacts text that arrives in pieces (a streamed reply, its thinking, a tool call's arguments,
    a command's output) before it is shown or saved.

    ``feed`` returns at once what no secret can claim any more, redacted; it holds back only what
    could still be (part of) a secret:

    - the word being written (the run of text after the last whitespace): every secret the patterns
      know but a private key block, a wrapped token and a NUL-separated value is one such run, so a
      finished word is decided. A run longer than ``hold`` (a JSON tool argument, a base64 blob) is
      released up to ``hold`` characters before its end, at a word boundary, unless a secret already
      runs to its end (``sk-ant-...``, ``Bearer ...``: every pattern that needs no closing character
      matches before ``hold`` characters and goes on as long as its characters do) or may still be
      under way (``_UNDER_WAY``: ``://user:...`` before its ``@``, a JSON ``"x_key": "...`` before
      its closing quote, a NUL-separated value, a JWT's segments). ``hold`` (at least 128) is longer
      than the unfinished start of any secret with a bounded length (a SendGrid key is at most 99
      characters). A run with no boundary in it is held up to :data:`MAX_UNBROKEN` characters;
    - a secret that reaches the end of the text (it may go on), or the end of its line when it may
      wrap onto the next (a token cut by a terminal);
    - an unfinished private key block, from its ``-----BEGIN`` (or what may become one), up to
      :data:`MAX_KEY_BLOCK`; a run of key-body lines while the line after it is not complete;
    - the start of a literal secret (a configured key, a secret environment value) at the end.

    What was released stays as context (the last :data:`CONTEXT_LINES` lines, at most
    :data:`CONTEXT_CHARS` characters) and the part released is cut from the redaction of context and
    part together, so ``password=`` or ``Authorization: Bearer`` already shown still make the
    secret after them found. Fed any way, the output is ``redact_text`` of the whole text, but for
    context a line longer than :data:`CONTEXT_CHARS` dropped (a ``curl`` or ``mysql`` word is kept,
    ``^`` at a dropped start may match once more), a run cut after :data:`MAX_UNBROKEN`, a key block
    longer than :data:`MAX_KEY_BLOCK`, and a text starting ``NAME=value``: redacted there as a
    NUL-separated variable even when no NUL follows. ``flush`` returns the rest. With redaction off,
    text passes through unchanged.
    """

    def __init__(self, enabled: bool | None = None, hold: int = 256) -> None:
        self.enabled = redaction_enabled() if enabled is None else enabled
        self.hold = max(hold, MIN_HOLD)
        self._pending = ""
        self._context = ""  # released, kept (as it came) for the patterns to look back on
        self._prefix = ""  # stands for what was dropped before the context ("": the text's start)
        self._context_out = ""  # redact(prefix + context)
        #: Releases whose redaction reached back into text already released (none expected): what
        #: was shown stays, the rest of the redaction follows.
        self.mismatches = 0
        self._present: set[str] = set()  # the needles of the text _safe_cut saw last

    def feed(self, text: str) -> str:
        if not self.enabled:
            return text
        self._pending += text
        if not text:
            return ""
        window = self._prefix + self._context + self._pending
        base = len(window) - len(self._pending)
        cut = self._safe_cut(window, base)
        return self._release(window, cut - base) if cut > base else ""

    def flush(self) -> str:
        if not self.enabled or not self._pending:
            out, self._pending = self._pending, ""
            return out
        window = self._prefix + self._context + self._pending
        return self._release(window, len(self._pending))

    def _also(self) -> frozenset[str]:
        # at the text's start ``^NAME=value`` is a NUL-separated variable's (what /proc/PID/environ
        # starts with) whether or not a NUL comes later
        return _NUL if not self._prefix else frozenset()

    def _release(self, window: str, n: int) -> str:
        head = len(window) - len(self._pending) + n
        out_full = _redact_text(window[:head], self._also(), self._present)[0]
        before = self._context_out
        if out_full.startswith(before):
            out = out_full[len(before) :]
        else:
            self.mismatches += 1
            same = next((i for i, (a, b) in enumerate(zip(before, out_full, strict=False)) if a != b), 0)
            out = out_full[same:]
        self._context += self._pending[:n]
        self._pending = self._pending[n:]
        self._context_out = out_full
        if self._trim():
            self._context_out = _redact_text(self._prefix + self._context, self._also())[0]
        return out

    def _trim(self) -> bool:
        """Drop released text the patterns no longer need to look back on (when the context is
        twice what is kept: the cost of a feed stays bounded), never in the middle of a secret (what
        is left of it could read as something else)."""
        ctx = self._context
        if len(ctx) <= 2 * CONTEXT_CHARS and ctx.count("\n") <= 2 * CONTEXT_LINES:
            return False
        keep = -1
        at = len(ctx)
        for _ in range(CONTEXT_LINES + 1):  # the line under way and the complete ones before it
            nl = ctx.rfind("\n", 0, at)
            if nl < 0 or len(ctx) - nl - 1 > CONTEXT_CHARS:
                break
            keep, at = nl + 1, nl
        if keep >= 0:
            prefix = "\n"
        else:  # the line under way alone is longer: keep its end, from a whitespace character
            line_start = ctx.rfind("\n") + 1
            keep = len(ctx) - CONTEXT_CHARS
            space = _SPACE.search(ctx, keep)
            if space is not None:
                keep = space.start()
            words = dict.fromkeys(m.group() for m in _LINE_COMMANDS.finditer(ctx, line_start, keep))
            if line_start == 0 and self._prefix.startswith("\x01"):
                words = {**dict.fromkeys(self._prefix[1:].split()), **words}
            prefix = "\x01" + "".join(f"{w} " for w in words)
        shift = len(self._prefix)
        spans = [
            (a - shift, b - shift)
            for a, b, _ in _stream_spans(
                self._prefix + ctx, _needles_in((self._prefix + ctx).lower()) | self._also()
            )
        ]
        moved = True
        while moved:
            moved = False
            for start, stop in spans:
                if start < keep < stop:
                    keep, moved = stop, True
        if keep <= 0:
            return False
        if ctx[keep - 1] != "\n" and prefix == "\n":
            prefix = "\x01"
        self._prefix = prefix
        self._context = ctx[keep:]
        return True

    def _safe_cut(self, text: str, base: int) -> int:
        """Where the text that may still be claimed by a secret begins (at least ``base``)."""
        end = len(text)
        self._present = _needles_in(text.lower()) | self._also()
        word = max(text.rfind(c) for c in _ASCII_SPACE) + 1  # what Unicode spaces break off is held too
        cut = word if end - word <= self.hold else self._cut_in_run(text, max(word, base), end)
        if cut <= base:
            return base
        cut = min(cut, self._key_block(text, base))
        last_line = text.rfind("\n") + 1
        run = _before_key_body(text, last_line, any_width=True)
        # body-like lines before the line under way: held while they may be a key's (that line may
        # be a full body line, or an END line when the run or the context has a full one)
        if run < last_line and (
            _BODY_LINE_SO_FAR.fullmatch(text, last_line) is not None
            or _before_key_body(text, last_line) < last_line
            or _ANY_FULL_BODY_LINE.search(text) is not None
        ):
            cut = min(cut, run)
        for value, _ in _literals():  # a literal secret's start at the end
            at = text.find(value[0], max(base, end - len(value) + 1))
            while at >= 0:
                if value.startswith(text[at:]):
                    cut = min(cut, at)
                    break
                at = text.find(value[0], at + 1)
        # secrets under way: from a run longer than ``hold`` (a shorter one is held whole), but
        # a NUL-separated value, which may hold spaces
        for n, (pattern, group, check) in enumerate(_UNDER_WAY if end - word > self.hold else _UNDER_WAY[:1]):
            if n == 0 and "\x00" not in self._present:
                continue
            m = pattern.search(text, last_line if n == 0 else max(0, word - _UNDER_WAY_REACH))
            while m is not None and check is not None and check.search(m.group("name")) is None:
                m = pattern.search(text, m.start() + 1)
            if m is not None:
                cut = min(cut, m.start(group))
        line = text.rfind("\n", 0, cut) + 1
        if (
            line < cut
            and _BODY_LINE.fullmatch(text, line, cut) is not None
            and _before_key_body(text, line, any_width=True) < line
            and _ANY_FULL_BODY_LINE.search(text, 0, cut) is not None
        ):
            cut = line  # cut there, the start of the line would read as a whole key-body line
        if cut <= base:
            return base
        spans: list[tuple[int, int]] = []
        for start, stop, wraps in _stream_spans(text, self._present):
            if stop >= end or (wraps and text[stop:] in ("\n", "\r", "\r\n")):
                cut = min(cut, start)  # it may go on
            spans.append((start, stop))
        moved = True
        while moved and cut > base:
            moved = False
            for start, stop in spans:
                if start < cut < stop:
                    cut, moved = start, True
        return max(cut, base)

    def _cut_in_run(self, text: str, start: int, end: int) -> int:
        """In a run without whitespace from ``start``: a word boundary ``hold`` characters or more
        before its end (no pattern's ``\\b`` reads differently there than at the end of the text),
        else ``start``; a run longer than :data:`MAX_UNBROKEN` is cut there anyway."""
        far = end - self.hold
        m = _LAST_NON_WORD.search(text, start, far + 1)
        if m is not None:
            q = m.start()
            cut = q + 1 if q < far else q
            if cut > start:
                return cut
        return far if end - start > MAX_UNBROKEN else start

    def _key_block(self, text: str, base: int) -> int:
        """The ``-----BEGIN`` of an unfinished private key block (or of what may become one)."""
        at = base
        while (i := text.find("-----BEGIN", at)) >= 0:
            if _KEY_BEGIN_SO_FAR.match(text, i):
                return i
            header = _KEY_BEGIN.match(text, i)
            if header is not None:
                block = _PRIVATE_KEY.match(text, i) if "-----END" in text[header.end() :] else None
                if block is not None:
                    at = block.end()
                    continue
                if len(text) - i <= MAX_KEY_BLOCK:
                    return i
            at = i + 10
        return len(text)


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

"""Permission rules that persist: Claude Code's syntax and files, judged for every face.

A rule is ``Tool`` or ``Tool(specifier)`` in one of three lists, ``allow``, ``ask`` and ``deny``:

- ``Bash`` (any command), ``Bash(npm run test:*)`` or ``Bash(npm run test *)`` (the command
  starts with these words), ``Bash(git * main)`` (``*`` is any text), ``Bash(npm test)`` (exactly
  this command). A line is judged by every command it would run (:mod:`agent_tui.agent.shell_parse`):
  an allow rule must cover each one (``echo ok && rm -rf x`` is not covered by ``Bash(echo:*)``)
  and each file a ``>`` writes must pass as a write would; a deny or ask rule hits when it matches
  any one of them, or a wrapper around one (``sudo rm`` is ``sudo`` and ``rm``). A line the parser
  cannot fully resolve (a variable as a command name, ``eval``, ``$IFS``...) matches no allow rule,
  and where a ``Bash`` deny rule exists it asks (in every mode: the deny rule cannot be checked).
- ``Read(glob)``, ``Edit(glob)``, ``Write(glob)``: gitignore patterns (``pathspec``) on the path a
  tool reads or changes (``Read`` for ``read``, ``ls``, ``grep``, ``find``; ``Edit`` and ``Write``
  for any tool that changes the one file it names, and ``>`` targets). ``//abs/path`` is absolute,
  ``~/x`` is under the home folder, ``/x`` is relative to the folder the settings file is for (the
  project for ``.claude/settings.json``, the home folder for ``~/.claude/settings.json``), ``./x``
  or ``x`` relative to the working directory. An allow rule must match both the path as named
  and its real path (a symlink pointing out is not covered); a deny or ask rule either.
- ``WebFetch(domain:example.com)`` (``*.example.com``: its subdomains), ``mcp__server`` or
  ``mcp__server__*`` (any tool of that server), ``mcp__server__tool``, or any tool by its Claude
  name (``Grep``, ``Task``) or agent-tui name.

Deny beats ask beats allow, whatever file a rule comes from. Files, in the order listed:
agent-tui's config file (``[permissions] allow/ask/deny``), ``~/.claude/settings.json``, the
project's ``.claude/settings.json`` and ``.claude/settings.local.json`` (``permissions.allow``...)
and ``.agent-tui/config.toml``. A project's own allow and ask rules apply only in a folder the
user trusts (``agent.trust``); its deny rules always do. A rule that cannot be read is one warning
naming it and its file; the others still load. :meth:`PermissionRules.keep` adds the rule an
"always allow" answer showed to ``.claude/settings.local.json``; :func:`remove` takes one out of
the file it came from.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import shlex
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import msgspec

from agent_tui.agent.shell_parse import SHELLS, Analysis, Run, Word, analyze
from agent_tui.agent.tools.base import resolve_path
from agent_tui.config_schema import MAX_JSON_FILE_BYTES, convert, convert_fields, read_json_file
from agent_tui.projection.tool_facts import ToolFacts, tool_facts

if TYPE_CHECKING:
    from agent_tui.agent.tools.base import Tool

Kind = Literal["allow", "ask", "deny"]
KINDS: tuple[Kind, ...] = ("deny", "ask", "allow")
LOCAL_SETTINGS = Path(".claude") / "settings.local.json"
CLAUDE_PROJECT_FILES = (Path(".claude") / "settings.json", LOCAL_SETTINGS)
PROJECT_CONFIG = Path(".agent-tui") / "config.toml"
PATH_TOOLS = frozenset({"Read", "Edit", "Write"})
_RULE = re.compile(r"^([A-Za-z][A-Za-z0-9_\-]*(?:__\*)?)(?:\((.*)\))?$", re.DOTALL)


class RuleError(Exception):
    """A rule that cannot be kept or removed (the message says why)."""


@dataclass(frozen=True, slots=True)
class Rule:
    text: str  # as written
    kind: Kind
    tool: str
    content: str | None
    source: str  # the file it came from, as shown
    root: str  # the folder ``/x`` patterns are relative to
    project: bool = False  # from the project's own files: allow and ask need the folder's trust
    granted: bool = False  # kept by the user's "always allow" in this process: applies at once

    def shown(self) -> str:
        return f"{self.text} ({self.kind}, {self.source})"


@dataclass(frozen=True, slots=True)
class Ruling:
    """Which rules decided a call: the kind, and the rule(s) that matched."""

    kind: Kind
    rules: tuple[Rule, ...]

    @property
    def rule(self) -> str:
        return ", ".join(dict.fromkeys(r.text for r in self.rules))

    @property
    def source(self) -> str:
        return ", ".join(dict.fromkeys(r.source for r in self.rules))


# -- parsing ------------------------------------------------------------------------------------


def parse_rule(text: str, kind: Kind, source: str, root: str, *, project: bool = False) -> Rule:
    """One rule; raises ValueError saying what is wrong with it."""
    match = _RULE.match(text.strip())
    if match is None:
        raise ValueError("not Tool or Tool(specifier)")
    tool, content = match.group(1), match.group(2)
    if content is not None and content.strip() in ("", "*"):
        content = None  # Bash() and Bash(*) are Bash
    if content is not None:
        if tool == "Bash":
            _bash_pattern(content)
        elif tool in PATH_TOOLS:
            _path_pattern(content, root, os.getcwd())
        elif tool == "WebFetch":
            if not content.startswith("domain:") or not content[7:].strip():
                raise ValueError("WebFetch takes domain:NAME")
        elif tool.startswith("mcp__"):
            raise ValueError("an MCP rule has no specifier (mcp__server or mcp__server__tool)")
        else:
            raise ValueError(f"agent-tui does not read {tool}'s specifier")
    return Rule(text.strip(), kind, tool, content, source, root, project)


@dataclass(frozen=True, slots=True)
class _BashPattern:
    prefix: tuple[str, ...] | None = None  # words the command starts with
    exact: tuple[str, ...] | None = None
    wildcard: re.Pattern[str] | None = None


def _bash_pattern(content: str) -> _BashPattern:
    text = content.strip()
    prefix = None
    if text.endswith(":*") or (text.endswith(" *") and text.count("*") == 1):
        prefix = text[:-2]
    try:
        if prefix is not None:
            words = tuple(shlex.split(prefix))
            if not words:
                raise ValueError("an empty command")
            return _BashPattern(prefix=words)
        if "*" in text:
            pieces = [re.escape(" ".join(p.split())) for p in text.split("*")]
            return _BashPattern(wildcard=re.compile(".*".join(pieces), re.DOTALL))
        words = tuple(shlex.split(text))
    except ValueError as e:
        raise ValueError(f"the command cannot be read ({e})") from None
    if not words:
        raise ValueError("an empty command")
    return _BashPattern(exact=words)


def _path_pattern(content: str, root: str, cwd: str) -> tuple[str, Any]:
    """(the folder the pattern is relative to, a pathspec matcher)."""
    import pathspec

    text = content.strip()
    if text.startswith("//"):
        base, pattern = "/", "/" + text[2:]
    elif text == "~" or text.startswith("~/"):
        base, pattern = str(Path.home()), "/" + (text[2:] or "**")
    elif text.startswith("/"):
        base, pattern = root, text
    elif text.startswith("./"):
        base, pattern = cwd, "/" + text[2:]
    else:
        base, pattern = cwd, text
    if pattern in ("", "/"):
        pattern = "/**"
    try:
        spec = pathspec.GitIgnoreSpec.from_lines([pattern])
    except Exception as e:  # pathspec's errors for a bad pattern
        raise ValueError(f"not a gitignore pattern ({e})") from None
    return base, spec


# -- loading -------------------------------------------------------------------------------------


class RuleLists(msgspec.Struct, frozen=True):
    """``permissions`` in Claude Code's settings and agent-tui's config files: the rules by kind,
    each read on its own (one that is wrong is one warning); its other keys (Claude Code's
    ``defaultMode``, ``additionalDirectories``..., agent-tui's ``mode``) are not rules."""

    allow: list[Any] = msgspec.field(default_factory=list)
    ask: list[Any] = msgspec.field(default_factory=list)
    deny: list[Any] = msgspec.field(default_factory=list)


class ConfigRules(msgspec.Struct, frozen=True):
    """agent-tui's config file, and a project's ``.agent-tui/config.toml``, as the rules see them
    (``permissions = "ask"`` is a mode: no rules)."""

    permissions: str | RuleLists | None = None


class SandboxNetwork(msgspec.Struct, frozen=True, rename="camel"):
    allowed_domains: list[Any] = msgspec.field(default_factory=list)


class SandboxSettings(msgspec.Struct, frozen=True):
    network: SandboxNetwork = msgspec.field(default_factory=SandboxNetwork)


class ClaudeSettings(msgspec.Struct, frozen=True):
    """Claude Code's ``settings.json`` as the rules see it (its other keys are Claude Code's)."""

    permissions: RuleLists = msgspec.field(default_factory=RuleLists)
    sandbox: SandboxSettings = msgspec.field(default_factory=SandboxSettings)


DOMAINS_KEY = "sandbox.network.allowedDomains"


@dataclass
class PermissionRules:
    """The rules in force for one working directory (see the module doc)."""

    cwd: str
    rules: list[Rule] = field(default_factory=list)
    #: Claude Code's ``sandbox.network.allowedDomains`` entries (``agent.sandbox_proxy``: the
    #: hosts sandboxed commands may reach besides ``WebFetch(domain:...)`` allow rules).
    domains: list[Rule] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _warned: int = 0
    #: Whether the user trusts the folder (its allow and ask rules apply); asked when needed.
    trusted: Callable[[], bool] = lambda: False
    #: Reads the files again (:func:`for_session`'s): a file changed since is read before a decision.
    reader: Callable[[], PermissionRules] | None = None
    files: tuple[Path, ...] = ()
    _stamp: tuple[Any, ...] = ()
    #: Allow and ask rules (kind, text) not accepted as they are (agent.rule_trust): not applied.
    held: set[tuple[str, str]] = field(default_factory=set)
    #: Those rules for the question (store key, fingerprint, line): ``agent.extensions`` asks.
    waiting: list[tuple[str, str, str]] = field(default_factory=list)
    #: Told of each rule the user keeps ("don't ask again"): agent.rule_trust accepts it.
    on_keep: Callable[[Rule], None] | None = None

    @classmethod
    def load(
        cls,
        cwd: str,
        *,
        config_data: Mapping[str, Any] | None = None,
        config_name: str = "config.toml",
        home: Path | None = None,
        trusted: Callable[[], bool] = lambda: False,
    ) -> PermissionRules:
        home = home or Path.home()
        found = cls(cwd, trusted=trusted)
        found.files = (
            Path(os.path.expanduser(config_name)),
            home / ".claude" / "settings.json",
            *(Path(cwd) / n for n in (*CLAUDE_PROJECT_FILES, PROJECT_CONFIG)),
        )
        found._stamp = _stamp(found.files)
        config_root = os.path.expanduser(str(Path(config_name).parent)) if config_name else str(home)
        found._toml(config_data or {}, config_name, config_root, project=False)
        found._json(home / ".claude" / "settings.json", str(home), project=False)
        for name in CLAUDE_PROJECT_FILES:
            found._json(Path(cwd) / name, cwd, project=True)
        project_config = Path(cwd) / PROJECT_CONFIG
        if project_config.is_file():
            try:
                if (size := project_config.stat().st_size) > MAX_JSON_FILE_BYTES:  # as a settings file
                    raise ValueError(
                        f"{size:,} bytes, over the {MAX_JSON_FILE_BYTES:,} a settings file may be"
                    )
                data = tomllib.loads(project_config.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                found.warnings.append(f"{_shown(project_config)}: cannot read its rules: {e}")
            except RecursionError:  # a repository's file: 100,000 '[' was a traceback at the start
                found.warnings.append(f"{_shown(project_config)}: cannot read its rules: nested too deeply")
            else:
                found._toml(data, _shown(project_config), cwd, project=True)
        return found

    def _toml(self, data: Mapping[str, Any], source: str, root: str, *, project: bool) -> None:
        read, problems = convert_fields(data, ConfigRules)
        self.warnings += [f"{source}: {line}; not read" for line in problems]
        if isinstance(read.permissions, RuleLists):
            self._add(read.permissions, source, root, project=project)

    def _json(self, path: Path, root: str, *, project: bool) -> None:
        settings, problems = read_json_file(path, ClaudeSettings, _shown(path), "not read")
        self.warnings += problems
        if settings is not None:
            self._add(settings.permissions, _shown(path), root, project=project)
            self._domains(settings.sandbox.network.allowed_domains, _shown(path), root, project=project)

    def _strings(self, entries: list[Any], key: str, source: str, what: str) -> list[str]:
        """The entries of the list at ``key`` that are strings; a warning for each other one."""
        found = []
        for i, raw in enumerate(entries):
            try:
                found.append(convert(raw, str, key=f"{key}[{i}]", json_words=source.endswith(".json")))
            except ValueError as e:
                self.warnings.append(f"{source}: {e}; that {what} ignored")
        return found

    def _domains(self, entries: list[Any], source: str, root: str, *, project: bool) -> None:
        for entry in self._strings(entries, "sandbox.network.allowedDomains", source, "entry"):
            try:
                parse_domain(entry)
            except ValueError as e:
                self.warnings.append(f"{source}: sandbox.network.allowedDomains {entry!r} ignored: {e}")
                continue
            self.domains.append(
                Rule(entry.strip(), "allow", "allowedDomains", entry.strip(), source, root, project)
            )

    def _add(self, lists: RuleLists, source: str, root: str, *, project: bool) -> None:
        for kind in KINDS:
            for item in self._strings(getattr(lists, kind), f"permissions.{kind}", source, "rule"):
                try:
                    self.rules.append(parse_rule(item, kind, source, root, project=project))
                except ValueError as e:
                    self.warnings.append(f"{source}: permission rule {item!r} ignored: {e}")

    def take_warnings(self) -> list[str]:
        """The warnings not said yet (each is said once)."""
        new, self._warned = self.warnings[self._warned :], len(self.warnings)
        return new

    def refresh(self, *, force: bool = False) -> None:
        """Read the files again when one changed (edited by hand, by another agent-tui), or always
        with ``force`` (rules just accepted): the rules "always allow" kept in this process still
        apply at once."""
        if self.reader is None or (not force and _stamp(self.files) == self._stamp):
            return
        fresh = self.reader()
        granted = {r.text for r in self.rules if r.granted}
        self.rules = [
            Rule(r.text, r.kind, r.tool, r.content, r.source, r.root, r.project, granted=r.text in granted)
            if r.kind == "allow" and r.source.endswith("settings.local.json")
            else r
            for r in fresh.rules
        ]
        self.domains = fresh.domains
        self.warnings += [w for w in fresh.warnings if w not in self.warnings]
        self._stamp = fresh._stamp
        self.held = fresh.held
        self.waiting = fresh.waiting

    # -- what applies ---------------------------------------------------------------------------

    def applies(self, rule: Rule) -> bool:
        if rule.kind == "deny" or rule.granted:
            return True
        held = ("domain" if rule.tool == "allowedDomains" else rule.kind, rule.text)  # rule_trust.held_key
        return (not rule.project or self.trusted()) and held not in self.held

    def in_force(self) -> list[Rule]:
        return [r for r in self.rules if self.applies(r)]

    def decide(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        cwd: str,
        info: Tool | None = None,
        write_ok: Callable[[str], bool] = lambda path: False,
    ) -> Ruling | None:
        """The rules that decide this call: deny, else ask, else allow; None when none does.
        ``write_ok``: whether the policy lets a write of a real path pass without a rule (a ``>``
        inside the working directory)."""
        self.refresh()
        if not self.rules:
            return None
        call = _Call.of(tool, arguments, cwd, info)
        by_kind: dict[Kind, list[Rule]] = {k: [] for k in KINDS}
        for rule in self.rules:
            by_kind[rule.kind].append(rule)
        for kind in ("deny", "ask"):
            rules = [r for r in by_kind[kind] if self.applies(r)] if kind == "ask" else by_kind[kind]
            hit = [r for r in rules if _hits(r, call)]
            if hit:
                return Ruling(kind, tuple(hit))
            if kind == "deny" and call.analysis is not None and not call.analysis.resolved:
                unsure = [r for r in rules if r.tool == "Bash"]
                if unsure:  # a line the deny rules cannot be checked against asks, even in auto mode
                    return Ruling("ask", tuple(unsure))
        allow = [r for r in by_kind["allow"] if self.applies(r)]
        covered = _covers(allow, call, write_ok)
        return Ruling("allow", covered) if covered else None

    # -- keeping -------------------------------------------------------------------------------

    def keep(self, text: str) -> str:
        """Add ``text`` to the project's ``.claude/settings.local.json`` ``permissions.allow``
        (created, or merged keeping every other key; written whole, 0600) and to the rules in
        force now. Returns the file as shown; raises RuleError or OSError."""
        rule = parse_rule(text, "allow", "", self.cwd, project=True)
        folder = Path(self.cwd) / ".claude"
        real = os.path.realpath(folder)
        root = os.path.realpath(self.cwd)
        if os.path.commonpath([real, root]) != root:
            raise RuleError(f"{folder} points outside the working directory ({real})")
        path = folder / "settings.local.json"
        data = _read_json(path)
        permissions = data.setdefault("permissions", {})
        if not isinstance(permissions, dict):
            raise RuleError(f"{_shown(path)}: permissions is not an object")
        allow = permissions.setdefault("allow", [])
        if not isinstance(allow, list):
            raise RuleError(f"{_shown(path)}: permissions.allow is not a list")
        if rule.text not in allow:
            allow.append(rule.text)
        folder.mkdir(mode=0o700, exist_ok=True)
        _write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", 0o600)
        shown = _shown(path)
        kept = Rule(rule.text, "allow", rule.tool, rule.content, shown, self.cwd, True, granted=True)
        if kept not in self.rules:
            self.rules.append(kept)
        if self.on_keep is not None:
            self.on_keep(kept)
        return shown

    # -- /permissions ----------------------------------------------------------------------------

    def listed(self) -> list[dict[str, Any]]:
        """Every rule (deny, ask, allow) and ``allowedDomains`` entry, as ``/permissions`` lists
        them: ``kind``, ``rule`` (an entry: ``sandbox.network.allowedDomains HOST``), ``source``
        (its file), ``applied``, and ``why`` when it is not (RPC's ``get_permission_rules``)."""
        self.refresh()
        found: list[dict[str, Any]] = []
        ordered = [r for kind in KINDS for r in self.rules if r.kind == kind]
        for rule in [*ordered, *self.domains]:
            domain = rule.tool == "allowedDomains"
            why = None if self.applies(rule) else "this folder is not trusted"
            if ("domain" if domain else rule.kind, rule.text) in self.held:
                why = "new since you accepted the rules"
            text = f"{DOMAINS_KEY} {rule.text}" if domain else rule.text
            found.append({"kind": rule.kind, "rule": text, "source": rule.source, "applied": why is None})
            if why is not None:
                found[-1]["why"] = why
        return found

    def describe(self) -> str:
        """Every rule, its kind and the file it came from (and whether it is in force)."""
        listed = self.listed()
        lines: list[str] = []
        if not listed:
            lines.append("No permission rules.")
        for row in listed:
            note = f"  (not applied: {row['why']})" if "why" in row else ""
            lines.append(f"{row['kind']:<5}  {row['rule']}  {row['source']}{note}")
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [
            "",
            "Files: agent-tui's config [permissions], ~/.claude/settings.json, .claude/settings.json, "
            ".claude/settings.local.json, .agent-tui/config.toml. Deny beats ask beats allow.",
            "/permissions remove RULE takes a rule out of its file (remove HOST, or remove "
            "sandbox.network.allowedDomains HOST, an allowedDomains entry).",
        ]
        return "\n".join(lines)

    def remove(self, text: str) -> list[str]:
        """Take the rule ``text`` out of each file it came from; returns one line per removal.
        Raises RuleError when no such rule is loaded or a file cannot be changed."""
        text = text.strip()
        entry = text.removeprefix(DOMAINS_KEY).strip() if text.startswith(DOMAINS_KEY + " ") else None
        found = [] if entry is not None else [r for r in self.rules if r.text == text]
        if not found:
            return self._remove_domain(text if entry is None else entry)
        done: list[str] = []
        for rule in found:
            path = Path(os.path.expanduser(rule.source))
            if not path.is_absolute():
                path = Path(self.cwd) / path
            if path.suffix == ".toml":
                _remove_toml(path, rule)
            else:
                _remove_json(path, rule)
            self.rules = [r for r in self.rules if r != rule]
            done.append(f"removed {rule.kind} {rule.text} from {rule.source}")
        return done

    def _remove_domain(self, text: str) -> list[str]:
        """Take the ``sandbox.network.allowedDomains`` entry ``text`` out of each settings file it
        came from (as :meth:`remove` a rule)."""
        found = [r for r in self.domains if r.text == text]
        if not found:
            raise RuleError(f"no permission rule or allowedDomains entry {text!r} (/permissions lists them)")
        done: list[str] = []
        for entry in found:
            path = Path(os.path.expanduser(entry.source))
            if not path.is_absolute():
                path = Path(self.cwd) / path
            data = _read_json(path)
            sandbox = data.get("sandbox")
            network = sandbox.get("network") if isinstance(sandbox, dict) else None
            items = network.get("allowedDomains") if isinstance(network, dict) else None
            if (
                not isinstance(network, dict)
                or not isinstance(items, list)
                or text not in [str(i).strip() for i in items]
            ):
                raise RuleError(f"{entry.source} no longer has {text!r} in {DOMAINS_KEY}")
            network["allowedDomains"] = [i for i in items if str(i).strip() != text]
            _write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            self.domains = [d for d in self.domains if d != entry]
            done.append(f"removed {DOMAINS_KEY} {text} from {entry.source}")
        return done


def project_rule_files(cwd: str | Path) -> list[Path]:
    """The project's own files that hold allow or ask rules (they apply once the folder is trusted)."""
    found = PermissionRules.load(str(cwd), home=Path(os.devnull))
    files = {r.source for r in found.rules if r.project and r.kind != "deny"}
    return [p for p in (Path(cwd) / n for n in (*CLAUDE_PROJECT_FILES, PROJECT_CONFIG)) if _shown(p) in files]


def command_text(rules: PermissionRules | None, argument: str) -> str:
    """What ``/permissions [remove RULE]`` answers, for every face."""
    if rules is None:
        return "No permission rules here (tool calls are not gated)."
    verb, _, rest = argument.strip().partition(" ")
    if not verb:
        return rules.describe()
    if verb != "remove" or not rest.strip():
        return "Usage: /permissions [remove RULE]"
    try:
        return "\n".join(rules.remove(rest))
    except (RuleError, OSError, ValueError) as e:
        return f"not removed: {e}"


# -- the call -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Call:
    tool: str
    names: frozenset[str]  # the names a bare rule may call it by
    kind: Literal["bash", "read", "edit", "fetch", "mcp", "other"]
    cwd: str
    paths: tuple[tuple[str, str], ...] = ()  # (lexical, real) of the file it reads or changes
    command: str = ""
    analysis: Analysis | None = None
    host: str | None = None

    @classmethod
    def of(cls, tool: str, arguments: Mapping[str, Any], cwd: str, info: Tool | None) -> _Call:
        # a tool known by name only (no Tool at hand): its row in the tool facts table
        facts: Tool | ToolFacts = info if info is not None else tool_facts(tool)
        claude = facts.claude_name
        names = frozenset(n for n in (tool, claude) if n)
        if claude == "Bash" or tool == "bash":
            command = str(arguments.get("command", ""))
            return cls(tool, names, "bash", cwd, command=command, analysis=analyze(command))
        if tool.startswith("mcp__"):
            return cls(tool, names, "mcp", cwd)
        if claude == "WebFetch":
            host = urlsplit(str(arguments.get("url", ""))).hostname
            return cls(tool, names, "fetch", cwd, host=(host or "").rstrip(".").lower() or None)
        argument, reads = facts.path_argument, facts.reads_only
        if argument is not None and (reads or facts.file_effect == "path"):
            raw = arguments.get(argument)
            raw = raw if isinstance(raw, str) and raw else "."
            return cls(tool, names, "read" if reads else "edit", cwd, paths=(_both(raw, cwd),))
        return cls(tool, names, "other", cwd)


def _both(raw: str, cwd: str) -> tuple[str, str]:
    if raw == "~" or raw.startswith("~/"):
        raw = str(Path.home()) + raw[1:]
    lexical = os.path.normpath(resolve_path(raw, cwd))
    return lexical, os.path.realpath(lexical)


def _matches_tool(rule: Rule, call: _Call) -> bool:
    if rule.tool.startswith("mcp__") and call.kind == "mcp":
        name = rule.tool.removesuffix("__*")
        return call.tool == name or (name.count("__") == 1 and call.tool.startswith(name + "__"))
    if rule.tool in PATH_TOOLS and rule.content is not None:
        return False  # judged on paths
    if rule.tool == "Read":
        return call.kind == "read"
    if rule.tool in ("Edit", "Write"):
        return call.kind == "edit" or rule.tool in call.names
    return rule.tool in call.names


def _path_hit(rule: Rule, path: tuple[str, str], cwd: str, *, both: bool) -> bool:
    if rule.content is None:
        return True
    base, spec = _path_pattern(rule.content, rule.root, cwd)
    results = []
    for form, folder in ((path[0], os.path.abspath(base)), (path[1], os.path.realpath(base))):
        rel = os.path.relpath(form, folder)
        inside = rel != "." and not rel.startswith("..") and not os.path.isabs(rel)
        results.append(inside and bool(spec.match_file(rel.replace(os.sep, "/"))))
    return all(results) if both else any(results)


def _words_hit(rule: Rule, words: tuple[Word, ...]) -> bool:
    if rule.content is None:
        return True
    pattern = _bash_pattern(rule.content)
    if pattern.prefix is not None:
        n = len(pattern.prefix)
        return len(words) >= n and all(w == p for w, p in zip(words, pattern.prefix, strict=False))
    if pattern.exact is not None:
        return words == pattern.exact
    assert pattern.wildcard is not None
    joined = " ".join(w if w is not None else "\x00" for w in words)
    return pattern.wildcard.fullmatch(joined) is not None


def _levels(run: Run) -> list[tuple[Word, ...]]:
    """The command and its wrappers, each also by its program's base name (``/bin/rm`` is ``rm``
    to a deny rule)."""
    levels = [run.words, *run.wrappers]
    for words in list(levels):
        if words and words[0] is not None and "/" in words[0]:
            levels.append((words[0].rsplit("/", 1)[-1], *words[1:]))
    return levels


def _hits(rule: Rule, call: _Call) -> bool:
    """Whether a deny or ask rule hits the call: any command, wrapper or file of it."""
    if call.kind == "bash" and call.analysis is not None:
        if rule.tool == "Bash":
            if rule.content is None or call.analysis.incomplete:
                return True  # (a line too deep to read whole: any Bash deny or ask rule hits it)
            if any(_words_hit(rule, level) for run in call.analysis.runs for level in _levels(run)):
                return True
            pattern = _bash_pattern(rule.content)
            return pattern.wildcard is not None and bool(
                pattern.wildcard.fullmatch(" ".join(call.command.split()))
            )
        if rule.tool in PATH_TOOLS and rule.content is not None:
            targets = call.analysis.writes if rule.tool != "Read" else call.analysis.reads
            return any(
                _path_hit(rule, _both(t, call.cwd), call.cwd, both=False) for t in targets if t is not None
            )
        return False
    if not _matches_tool(rule, call) and not (rule.tool in PATH_TOOLS and rule.content is not None):
        return False
    if rule.tool in PATH_TOOLS and rule.content is not None:
        wanted = "read" if rule.tool == "Read" else "edit"
        return call.kind == wanted and any(_path_hit(rule, p, call.cwd, both=False) for p in call.paths)
    if rule.tool == "WebFetch" and rule.content is not None:
        return _host_hit(rule.content, call.host)
    return True


def _covers(allow: list[Rule], call: _Call, write_ok: Callable[[str], bool]) -> tuple[Rule, ...]:
    """The allow rules that cover every part of the call (empty: it is not covered)."""
    if call.kind == "bash" and call.analysis is not None:
        bash = [r for r in allow if r.tool == "Bash"]
        whole = [r for r in bash if r.content is None]
        if whole:
            return (whole[0],)
        analysis = call.analysis
        if not analysis.resolved or not analysis.runs:
            return ()
        used: list[Rule] = []
        for run in analysis.runs:
            if run.name is None:
                return ()
            rule = next((r for r in bash if _words_hit(r, run.words)), None)
            if rule is None:
                return ()
            used.append(rule)
        for target in analysis.writes:
            if target is None or (analysis.changes_dir and not _absolute(target)):
                return ()
            lexical, real = _both(target, call.cwd)
            if write_ok(real):
                continue
            rule = next(
                (
                    r
                    for r in allow
                    if r.tool in ("Edit", "Write") and _path_hit(r, (lexical, real), call.cwd, both=True)
                ),
                None,
            )
            if rule is None:
                return ()
            used.append(rule)
        return tuple(dict.fromkeys(used))
    for rule in allow:
        if rule.tool in PATH_TOOLS and rule.content is not None:
            wanted = "read" if rule.tool == "Read" else "edit"
            if (
                call.kind == wanted
                and call.paths
                and all(_path_hit(rule, p, call.cwd, both=True) for p in call.paths)
            ):
                return (rule,)
            continue
        if not _matches_tool(rule, call):
            continue
        if rule.tool == "WebFetch" and rule.content is not None and not _host_hit(rule.content, call.host):
            continue
        return (rule,)
    return ()


def _absolute(word: str) -> bool:
    return word.startswith(("/", "~"))


def _host_hit(content: str, host: str | None) -> bool:
    """Claude Code's matching: ``example.com`` is that host, ``*.example.com`` its subdomains only
    (``content``: ``domain:PATTERN`` or the pattern)."""
    if host is None:
        return False
    domain = content.removeprefix("domain:").strip().rstrip(".").lower()
    if domain.startswith("*."):
        return host.endswith(domain[1:])
    return host == domain


host_hit = _host_hit
_HOST = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")


def normal_host(raw: str) -> str | None:
    """``raw`` as a rule compares it (lower case, no trailing dot, an IPv6 address without its
    brackets), or None when it is no host name or address."""
    host = raw.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host:
        return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    return host if len(host) <= 253 and _HOST.match(host) else None


def parse_domain(entry: str) -> tuple[str, int | None]:
    """A ``sandbox.network.allowedDomains`` entry: ``example.com``, ``*.example.com``, either with
    ``:PORT``; raises ValueError saying what is wrong."""
    text = entry.strip().lower()
    port: int | None = None
    name, sep, tail = text.rpartition(":")
    if sep and tail.isdigit() and not name.endswith(":"):
        text, port = name, int(tail)
        if not 0 < port < 65536:
            raise ValueError(f"port {port} is out of range")
    wild = text.startswith("*.")
    host = normal_host(text[2:] if wild else text)
    if host is None:
        raise ValueError("not a domain (example.com, *.example.com, optionally with :PORT)")
    return ("*." + host if wild else host), port


# -- what "always allow" keeps ---------------------------------------------------------------------

#: Commands whose second word is a subcommand worth keeping in a prefix rule (``git status:*``).
_SUBCOMMANDS = frozenset(
    {"git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "podman", "kubectl", "pip", "pip3"}
    | {"uv", "poetry", "make", "gh", "brew", "apt", "dotnet", "mvn", "gradle", "deno", "rustup", "npx"}
)
_RUNNERS = frozenset({"run", "exec", "x"})  # npm run test: three words
#: Commands a prefix rule would let run anything: only the exact command is kept.
_ANYTHING = SHELLS | frozenset(
    {"env", "sudo", "doas", "xargs", "exec", "command", "builtin", "eval", "nohup", "nice", "timeout"}
    | {"busybox"}
    | {"time", "stdbuf", "setsid", "ssh", "python", "python3", "node", "perl", "ruby", "php", "lua"}
    | {"find", "awk", "sed", "watch", "script", "su", "chroot", "unshare", "strace", "flock", "source", "."}
)
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@+=,-]*$")


def suggest(tool: str, arguments: Mapping[str, Any], cwd: str, info: Tool | None = None) -> str | None:
    """The rule an "always allow" answer would keep for this call, in Claude Code's syntax, or None
    when no rule can say exactly this call (a compound command, a path a glob cannot name). The
    rule always covers the call it was made for."""
    call = _Call.of(tool, arguments, cwd, info)
    if call.kind == "bash":
        text = _bash_rule(call)
    elif call.kind == "edit" and call.paths:
        text = _edit_rule(call.paths[0], cwd)
    elif call.kind == "mcp":
        text = tool
    elif call.kind == "fetch":
        text = f"WebFetch(domain:{call.host})" if call.host and _PLAIN_WORD.match(call.host) else None
    elif call.kind == "read":
        text = None  # reads never ask
    else:
        text = next(iter(sorted(call.names - {tool}) or [tool]), None)
    if text is None:
        return None
    try:
        rule = parse_rule(text, "allow", "", cwd)
    except ValueError:
        return None
    return text if _covers([rule], call, lambda path: False) else None


def _bash_rule(call: _Call) -> str | None:
    analysis = call.analysis
    if (
        analysis is None
        or not analysis.resolved
        or len(analysis.runs) != 1
        or analysis.writes
        or analysis.reads
    ):
        return None
    run = analysis.runs[0]
    command = call.command.strip()
    if run.wrappers or any(w is None for w in run.words) or not run.words or "\n" in call.command.strip():
        return None
    words = [w for w in run.words if w is not None]
    name = words[0]
    if name in _ANYTHING or "/" in name or not _PLAIN_WORD.match(name):
        return f"Bash({command})"
    keep = 1
    if (
        name in _SUBCOMMANDS
        and len(words) > 1
        and _PLAIN_WORD.match(words[1])
        and not words[1].startswith("-")
    ):
        keep = 2
        if (
            words[1] in _RUNNERS
            and len(words) > 2
            and _PLAIN_WORD.match(words[2])
            and not words[2].startswith("-")
        ):
            keep = 3
    return f"Bash({' '.join(words[:keep])}:*)"


def _edit_rule(path: tuple[str, str], cwd: str) -> str | None:
    lexical, real = path
    if lexical != real:
        return None  # a symlink: the rule would name one of the two
    root = os.path.realpath(cwd)
    rel = os.path.relpath(real, root)
    special = re.compile(r"[*?\[\]!#\\\s()]")
    if rel != "." and not rel.startswith("..") and not special.search(rel):
        return f"Edit({rel})" if "/" in rel else f"Edit(./{rel})"
    if not special.search(real):
        return f"Edit(/{real})"  # //abs/path
    return None


# -- files -------------------------------------------------------------------------------------


def _stamp(files: tuple[Path, ...]) -> tuple[Any, ...]:
    stamps: list[Any] = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            stamps.append(None)
        else:
            stamps.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(stamps)


def _shown(path: Path) -> str:
    text = str(path)
    home = str(Path.home())
    return "~" + text[len(home) :] if text.startswith(home + os.sep) else text


def _read_json(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as e:
        raise RuleError(f"{_shown(path)} is not valid JSON ({e}); it was not changed") from None
    except RecursionError:
        raise RuleError(f"{_shown(path)} is not valid JSON (nested too deeply); it was not changed") from None
    if not isinstance(data, dict):
        raise RuleError(f"{_shown(path)} is not a JSON object; it was not changed")
    return data


def _write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Replace ``path`` whole (a temporary file renamed over it): ``mode``, or the mode it had
    (0600 for a new file)."""
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o777
        except OSError:
            mode = 0o600
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _remove_json(path: Path, rule: Rule) -> None:
    data = _read_json(path)
    items = data.get("permissions", {}).get(rule.kind) if isinstance(data.get("permissions"), dict) else None
    if not isinstance(items, list) or rule.text not in [str(i).strip() for i in items]:
        raise RuleError(f"{rule.source} no longer has {rule.text!r} in permissions.{rule.kind}")
    data["permissions"][rule.kind] = [i for i in items if str(i).strip() != rule.text]
    _write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _remove_toml(path: Path, rule: Rule) -> None:
    import tomlkit

    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    table = document.get("permissions")
    items = table.get(rule.kind) if isinstance(table, Mapping) else None
    if items is None or rule.text not in [str(i).strip() for i in items]:
        raise RuleError(f"{rule.source} no longer has {rule.text!r} in [permissions] {rule.kind}")
    for i in reversed(range(len(items))):
        if str(items[i]).strip() == rule.text:
            del items[i]
    _write_text(path, tomlkit.dumps(document))


__all__ = [
    "KINDS",
    "LOCAL_SETTINGS",
    "PermissionRules",
    "Rule",
    "RuleError",
    "Ruling",
    "command_text",
    "for_session",
    "host_hit",
    "normal_host",
    "parse_domain",
    "parse_rule",
    "project_rule_files",
    "suggest",
]


def for_session(
    cwd: str, config_path: Path | None, extensions: Callable[[], Any] = lambda: None
) -> PermissionRules:
    """The rules of every file for an agent in ``cwd``: agent-tui's config file at ``config_path``
    (read through the one config reader), Claude Code's and the project's; the folder's trust is
    what ``extensions()`` settled (``--trust-project``, the user's answer) or the trust store's."""
    from agent_tui.agent import rule_trust
    from agent_tui.agent.trust import TrustStore
    from agent_tui.config import ConfigError, read_config_file

    def trusted() -> bool:
        ext = extensions()
        store = TrustStore() if ext is None else getattr(ext, "trust_store", None)
        if ext is not None and (ext.trust_project or ext.trusted is True):
            return True
        try:
            return store is not None and store.decision(cwd) is True
        except OSError:
            return False

    def read() -> PermissionRules:
        warnings: list[str] = []
        data: Mapping[str, Any] = {}
        if config_path is not None:
            try:
                data = read_config_file(config_path)
            except ConfigError as e:
                warnings.append(f"permission rules of the config file not read: {e}")
        name = _shown(config_path) if config_path is not None else "config.toml"
        rules = PermissionRules.load(cwd, config_data=data, config_name=name, trusted=trusted)
        rules.warnings[:0] = warnings
        rules.reader = read
        ext = extensions()  # allow and ask rules new since accepted wait (agent.rule_trust)
        store = TrustStore() if ext is None else getattr(ext, "trust_store", None)
        rule_trust.screen(rules, store, accept_all=bool(getattr(ext, "trust_project", False)))
        rules.on_keep = partial(rule_trust.accept_kept, store, cwd)
        return rules

    return read()

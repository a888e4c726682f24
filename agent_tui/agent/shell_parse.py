"""What a shell command line would run, read with a real shell parser (tree-sitter-bash).

:func:`analyze` finds every simple command a line would run, wherever it stands: joined by ``&&``,
``||``, ``;``, ``&`` or a newline, in a pipeline, a subshell, a ``{ ...; }`` group, an ``if``, a loop,
a function's body, a ``$(...)``, a backtick, a ``<(...)``, the script of ``bash -c '...'`` (and
``sh``, ``zsh``, ``dash``, ``ksh``), the command a wrapper starts (``env X=1 rm``, ``command rm``,
``exec``, ``sudo``, ``xargs``, ``timeout``, ``nice``, ``nohup``, ``time``, ``stdbuf``, ``setsid``,
``find -exec``, ``busybox rm``), and the files it redirects into (``> path`` writes the path) or out of.

Each :class:`Run` keeps its words as the shell would pass them when they are known before it runs
(quotes removed, ``\\`` escapes taken), and None for a word that is only known at run time (a
variable, a substitution, a glob, a brace expansion). What cannot be fully resolved is said in
``unresolved`` (a variable or substitution as the command's name, ``eval``, ``alias``, ``trap``,
``$IFS``, an assignment to ``PATH``, ``LD_PRELOAD`` and the like, a wrapper's option it does not
know, a shell reading its commands from its input (``curl ... | sh``, ``bash <<< ...``), a parse
error): a permission rule never allows such a line, so it asks.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

#: A word only known at run time.
Word = str | None

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash"})
#: Builtins that make later words mean something else, or run text as code.
OPAQUE = frozenset({"eval", "alias", "trap", "enable", "shopt", "fc"})
#: Variables whose value changes which program a later command name runs, or what it loads.
DANGEROUS_VARS = frozenset(
    {
        "PATH",
        "IFS",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "CDPATH",
        "GLOBIGNORE",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "GIT_PAGER",
    }
)
DANGEROUS_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_")
_GLOB = re.compile(r"[*?]|\[[^\]]+\]|\{[^}]*(,|\.\.)[^}]*\}")
#: Redirections whose target is no file (or a terminal / standard stream).
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})


@dataclass(frozen=True, slots=True)
class Run:
    """One simple command the line runs: its words, and the wrappers it runs under (outermost
    first), e.g. ``sudo env X=1 rm x`` -> words ``rm x``, wrappers ``(sudo env X=1 rm x,)``..."""

    words: tuple[Word, ...]
    wrappers: tuple[tuple[Word, ...], ...] = ()
    text: str = ""

    @property
    def name(self) -> Word:
        return self.words[0] if self.words else None


@dataclass(slots=True)
class Analysis:
    runs: list[Run] = field(default_factory=list)
    #: Files written by a redirection (``>``, ``>>``, ``&>``, ``>|``): the word as written (None: built at run time).
    writes: list[Word] = field(default_factory=list)
    #: Files read by a redirection (``<``).
    reads: list[Word] = field(default_factory=list)
    #: Why the line cannot be fully resolved (empty: it can).
    unresolved: list[str] = field(default_factory=list)
    #: The line changes directory (``cd``, ``pushd``, ``popd``): a relative redirection is not known.
    changes_dir: bool = False
    #: Not every command was found (nested too deep to walk): a deny or ask rule takes it as a hit.
    incomplete: bool = False

    @property
    def resolved(self) -> bool:
        return not self.unresolved


@functools.cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


MAX_DEPTH = 8  # bash -c inside bash -c ...: deeper than this is not resolved


def analyze(command: str) -> Analysis:
    """Every command ``command`` would run (see the module doc)."""
    found = Analysis()
    try:
        _analyze(command, found, (), 0)
    except RecursionError:
        found.unresolved.append("nested too deep to read")
        found.incomplete = True
    return found


def _analyze(source: str, found: Analysis, wrappers: tuple[tuple[Word, ...], ...], depth: int) -> None:
    if depth > MAX_DEPTH:
        found.unresolved.append("shells nested too deep")
        return
    if "\x00" in source:
        found.unresolved.append("a NUL character")
        return
    data = source.encode("utf-8", "surrogatepass")
    tree = _parser().parse(data)
    if tree.root_node.has_error:
        found.unresolved.append("the shell cannot parse it")
    _Walker(found, wrappers, depth).walk(tree.root_node)


class _Walker:
    def __init__(self, found: Analysis, wrappers: tuple[tuple[Word, ...], ...], depth: int) -> None:
        self.found = found
        self.wrappers = wrappers
        self.depth = depth

    def walk(self, node: Any) -> None:
        kind = node.type
        if kind == "command":
            self.command(node)
        elif kind == "declaration_command":
            self.declaration(node)
        elif kind == "variable_assignment":
            self.assignment(node)
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            self.redirect(node)
        elif kind in ("simple_expansion", "expansion"):
            self.expansion(node)
        elif kind == "ERROR":
            self.found.unresolved.append("the shell cannot parse it")
            self.children(node)
        else:
            self.children(node)

    def children(self, node: Any) -> None:
        for child in node.children:
            self.walk(child)

    # -- words -------------------------------------------------------------------------------

    def value(self, node: Any) -> Word:
        """The word's value when known before the line runs (any substitution in it is walked)."""
        kind = node.type
        text = _text(node)
        if kind == "word":
            if _GLOB.search(re.sub(r"\\.", "", text)):
                return None
            return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""))
        if kind == "number":
            return text
        if kind == "raw_string":
            return text[1:-1]
        if kind == "string":
            parts: list[str] = []
            known = True
            for child in node.children:
                if child.type == '"':
                    continue
                if child.type == "string_content":
                    parts.append(re.sub(r'\\([$`"\\\n])', r"\1", _text(child)))
                else:
                    self.walk(child)
                    known = False
            return "".join(parts) if known else None
        if kind == "concatenation":
            if any(c.type == "word" and ("{" in _text(c) or "}" in _text(c)) for c in node.children):
                self.children(node)
                return None  # a brace expansion: several words
            values = [self.value(c) for c in node.children]
            if any(v is None for v in values):
                return None
            return "".join(v for v in values if v is not None)
        self.walk(node)  # an expansion or substitution: its commands run
        return None

    def expansion(self, node: Any) -> None:
        if any(c.type == "variable_name" and _text(c) == "IFS" for c in node.children):
            self.found.unresolved.append("$IFS")
        self.children(node)

    # -- commands ----------------------------------------------------------------------------

    def assignment(self, node: Any) -> None:
        name = node.child_by_field_name("name")
        shown = _text(name) if name is not None else ""
        if _dangerous(shown):
            self.found.unresolved.append(f"it sets {shown}")
        value = node.child_by_field_name("value")
        if value is not None:
            self.value(value)
        for child in node.children:
            if child.type not in ("variable_name", "=") and (value is None or child.id != value.id):
                self.walk(child)

    def declaration(self, node: Any) -> None:
        words: list[Word] = [_text(node.children[0])] if node.children else []
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                self.assignment(child)
                words.append(_text(child.child_by_field_name("name") or child))
            elif child.type == "variable_name":
                words.append(_text(child))
            else:
                words.append(self.value(child))
        self.found.runs.append(Run(tuple(words), self.wrappers, _text(node)))

    def redirect(self, node: Any) -> None:
        operator = ""
        target: Any = None
        for child in node.children:
            if child.type in ("file_descriptor",):
                continue
            if child.child_count == 0 and not child.is_named:
                operator = _text(child)
            elif node.type == "file_redirect" and target is None:
                target = child
            else:
                self.walk(child)
        if node.type != "file_redirect" or target is None:
            return
        if (
            operator in (">&", "<&", ">&-", "<&-")
            and target.type in ("number", "word")
            and (_text(target).isdigit() or _text(target) == "-")
        ):
            return  # 2>&1, 1>&-: a file descriptor, not a file
        value = self.value(target)
        if target.type == "process_substitution":
            return
        if value in HARMLESS_TARGETS:
            return
        if "<" in operator and ">" not in operator:
            self.found.reads.append(value)
        else:
            self.found.writes.append(value)

    def command(self, node: Any) -> None:
        words: list[Word] = []
        for child in node.children:
            if child.type == "variable_assignment":
                self.assignment(child)
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                self.redirect(child)
            elif child.type == "command_name":
                named = child.children[0] if child.children else child
                words.append(self.value(named))
            else:
                words.append(self.value(child))
        self.run(tuple(words), _text(node))

    def run(self, words: tuple[Word, ...], text: str) -> None:
        if not words:
            return
        name = words[0]
        if name is None:
            self.found.unresolved.append("the command's name is only known when it runs")
            self.found.runs.append(Run(words, self.wrappers, text))
            return
        base = name.rsplit("/", 1)[-1]
        if base == "find":  # find itself, and what its -exec runs
            self.found.runs.append(Run(words, self.wrappers, text))
            inner_find = _find_exec(words)
            if isinstance(inner_find, str):
                self.found.unresolved.append(inner_find)
            elif inner_find is not None:
                _Walker(self.found, (*self.wrappers, words), self.depth).run(inner_find[1], text)
            return
        if base in ("cd", "pushd", "popd"):
            self.found.changes_dir = True
        if base in OPAQUE:
            self.found.unresolved.append(f"{base} runs or redefines commands")
        inner = _unwrap(base, words)
        if inner is None:
            self.found.runs.append(Run(words, self.wrappers, text))
            return
        if isinstance(inner, str):  # a wrapper it cannot read
            self.found.unresolved.append(inner)
            self.found.runs.append(Run(words, self.wrappers, text))
            return
        kind, rest = inner
        outer = (*self.wrappers, words)
        if kind == "script":
            script = rest[0] if rest else None
            if script is None:
                self.found.unresolved.append(f"the script {base} -c runs is only known when it runs")
                self.found.runs.append(Run(words, self.wrappers, text))
                return
            _analyze(script, self.found, outer, self.depth + 1)
            return
        if not rest:  # env, command, nohup...: with no command of their own they run nothing else
            self.found.runs.append(Run(words, self.wrappers, text))
            return
        nested = _Walker(self.found, outer, self.depth)
        nested.run(rest, text)


def _dangerous(name: str) -> bool:
    return name in DANGEROUS_VARS or name.startswith(DANGEROUS_PREFIXES)


def _text(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", "surrogatepass")


# -- wrappers -------------------------------------------------------------------------------------

#: Options that take a value, per wrapper (any other option starting with ``-`` is a flag, for the
#: wrappers in :data:`_FLAGS_OK`; unknown options of the others are not resolved).
_VALUED: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "exec": frozenset({"-a"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "sudo": frozenset(
        {"-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "-D", "-R", "-T", "-U"}
    ),
    "doas": frozenset({"-u", "-C"}),
    "xargs": frozenset(
        {
            "-I",
            "-n",
            "-P",
            "-L",
            "-d",
            "-E",
            "-s",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--replace",
        }
    ),
    "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "setsid": frozenset(),
    "coproc": frozenset(),
}
#: Flags that make a wrapper run nothing but itself (``command -v rm`` only looks ``rm`` up).
_LOOKUP_ONLY = {
    "command": frozenset({"-v", "-V"}),
    "sudo": frozenset({"-l", "-v", "-k", "-K", "-V", "-s", "-i"}),
}
#: Flags with no value the wrapper is known to take.
_FLAGS: dict[str, frozenset[str]] = {
    "env": frozenset({"-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-"}),
    "exec": frozenset({"-c", "-l", "-cl", "-lc"}),
    "nice": frozenset(),
    "timeout": frozenset({"--foreground", "--preserve-status", "-v", "--verbose", "-f", "-p"}),
    "stdbuf": frozenset(),
    "sudo": frozenset(
        {"-E", "-H", "-n", "-S", "-b", "-P", "-A", "-B", "--preserve-env", "--non-interactive", "--stdin"}
    ),
    "doas": frozenset({"-n", "-s"}),
    "xargs": frozenset(
        {"-0", "-r", "-t", "-p", "-x", "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit"}
    ),
    "ionice": frozenset({"-t"}),
    "command": frozenset({"-p"}),
    "builtin": frozenset(),
    "nohup": frozenset(),
    "time": frozenset({"-p", "-v", "--verbose", "--portability", "-a", "--append"}),
    "setsid": frozenset({"-c", "-f", "-w", "--ctty", "--fork", "--wait"}),
    "coproc": frozenset(),
}


def _unwrap(base: str, words: tuple[Word, ...]) -> tuple[str, tuple[Word, ...]] | str | None:
    """What a wrapper runs: ("run", the inner command's words), ("script", (the -c script,)); a
    reason when it cannot tell; None when ``base`` is no wrapper."""
    if base == "busybox":  # busybox APPLET ARGS: the applet (rm, sh -c ...) is the command
        applet = words[1] if len(words) > 1 else None
        if applet is not None and not applet.startswith("-"):
            return "run", words[1:]
        if applet is None and len(words) > 1:
            return "busybox's applet is only known when it runs"
        return None
    if base in SHELLS:
        return _shell_script(base, words)
    if base not in _VALUED:
        return None
    valued, flags = _VALUED[base], _FLAGS[base]
    rest = list(words[1:])
    while rest:
        word = rest[0]
        if word is None:
            return f"{base}'s arguments are only known when it runs"
        if word == "--":
            rest.pop(0)
            break
        if base == "env" and "=" in word and not word.startswith("-"):
            if _dangerous(word.partition("=")[0]):
                return f"it sets {word.partition('=')[0]}"
            rest.pop(0)
            continue
        if not word.startswith("-") or (word == "-" and base != "env"):
            break
        if word in _LOOKUP_ONLY.get(base, ()):
            return None  # only looks the name up: the wrapper itself is the command
        if word in valued:
            rest = rest[2:]
            continue
        if any(word.startswith(v + "=") for v in valued if v.startswith("--")) or word in flags:
            rest.pop(0)
            continue
        if len(word) > 2 and word[:2] in valued:  # -n10, -uroot
            rest.pop(0)
            continue
        if base in ("nice",) and word[1:].isdigit():  # nice -10
            rest.pop(0)
            continue
        return f"{base} {word} is not an option agent-tui knows"
    if base == "timeout":
        if not rest:
            return "run", ()
        rest.pop(0)  # the duration
    if base == "xargs":
        if not rest:
            return "run", ("echo", None)
        return "run", (*rest, None)  # xargs adds words of its input
    return "run", tuple(rest)


def _shell_script(base: str, words: tuple[Word, ...]) -> tuple[str, tuple[Word, ...]] | str | None:
    """``bash -c SCRIPT``: the script; ``bash file`` is the command itself (as ``python x.py``);
    a shell with no script file, or ``-s``, reads its commands from its input (``echo rm | bash``,
    ``bash <<< 'rm x'``): not resolved, as ``eval``."""
    has_c = has_s = False
    rest = list(words[1:])
    while rest:
        word = rest[0]
        if word is None:
            return f"{base}'s arguments are only known when it runs"
        if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            rest = rest[2:]
            continue
        if word == "--":
            rest.pop(0)
            break
        if word.startswith("--"):
            rest.pop(0)
            continue
        if word[:1] in "-+" and len(word) > 1:
            has_c = has_c or (word[0] == "-" and "c" in word[1:])
            has_s = has_s or (word[0] == "-" and "s" in word[1:])
            rest.pop(0)
            continue
        break
    if not has_c:
        if has_s or not rest or rest[0] == "-":
            return f"{base} reads the commands it runs from its input, only known when it runs"
        return None
    return "script", (rest[0] if rest else None,)


def _find_exec(words: tuple[Word, ...]) -> tuple[str, tuple[Word, ...]] | str | None:
    """``find ... -exec CMD {} ;``: the command each file runs (one of them is judged)."""
    for i, word in enumerate(words):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            inner: list[Word] = []
            for w in words[i + 1 :]:
                if w in (";", "+"):
                    break
                inner.append(None if w == "{}" else w)
            if not inner:
                return "find -exec with no command"
            if any(w in ("-exec", "-execdir", "-ok", "-okdir") for w in words[i + 1 + len(inner) :]):
                return "find runs several commands"
            return "run", tuple(inner)
    return None


__all__ = ["SHELLS", "Analysis", "Run", "Word", "analyze"]

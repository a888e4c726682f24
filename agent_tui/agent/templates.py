"""Prompt templates: Markdown files that become ``/name`` commands, in pi's and Claude Code's format.

A template's file name (without ``.md``) is its command; its YAML frontmatter may give a
``description`` (else the first non-empty line) and an ``argument-hint``. ``/name ARGS``
expands to the body with the arguments substituted, and that expanded text is what the
session stores as the user message. The substitutions are pi's:

``$1`` ``$2`` ...  one argument            ``$@`` ``$ARGUMENTS``  all, joined by spaces
``${1:-default}``  the argument or a default   ``${@:-default}``   all, or a default
``${@:N}``         from the Nth on              ``${@:N:L}``        L of them from the Nth

Arguments are split as pi splits them (:func:`split_args`): shell-like quotes, which open only
at the start of an argument; an unclosed quote is text. Values are never substituted again.
Claude Code's ``!`command``` lines are not run: a template is text, never a program.

Folders, first found wins a name (project before user): ``.agent-tui/prompts/``,
``.pi/prompts/``, ``.claude/commands/`` (its subfolders too, as Claude Code reads them), then
the user config dir's ``prompts/``, ``~/.pi/agent/prompts/`` and ``~/.claude/commands/``. Then pi's
``--prompt-template PATH`` (repeatable: a folder's ``.md`` files, or one file), which still load
with ``--no-prompt-templates`` (no folder above is read then).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_tui.agent.prompt_files import FrontmatterError, Places, flag_files, parse_frontmatter, read_text

DESCRIPTION_CHARS = 60  # pi cuts a description taken from the body's first line here
MAX_TEMPLATES_PER_DIR = 500
_NAME = re.compile(r"^[^\s/:]+$")
_PLACEHOLDER = re.compile(r"\$\{(\d+|ARGUMENTS|@):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$(ARGUMENTS|@|\d+)")


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    description: str
    argument_hint: str | None
    body: str
    path: str

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.argument_hint}" if self.argument_hint else f"/{self.name}"


def split_args(text: str) -> list[str]:
    """pi's parseCommandArgs: whitespace-separated arguments with shell-like quoting.

    A quote opens only at the start of an argument (``doesn't`` stays one word); inside it a
    backslash before the same quote keeps the quote; other backslashes stay as typed; an
    unclosed quote is read again as plain text; ``""`` is an empty argument.
    """
    args: list[str] = []
    current = ""
    has_token = False
    quote: str | None = None
    quote_start = 0
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if quote is not None:
            if char == "\\" and i + 1 < n and text[i + 1] == quote:
                current += quote
                i += 1
            elif char == quote:
                quote = None
            else:
                current += char
        elif char in "\"'" and not has_token:
            quote = char
            quote_start = i
            has_token = True
        elif char.isspace():
            if has_token:
                args.append(current)
                current = ""
                has_token = False
        else:
            current += char
            has_token = True
        if quote is not None and i == n - 1:
            # Unclosed: the quote character is text and the rest is parsed again without it.
            quote = None
            current = text[quote_start]
            i = quote_start
        i += 1
    if has_token:
        args.append(current)
    return args


def substitute(body: str, args: list[str]) -> str:
    """pi's substituteArgs: the placeholders of ``body`` replaced, in one pass."""
    everything = " ".join(args)

    def replace(m: re.Match[str]) -> str:
        default_target, default, slice_start, slice_length, simple = m.groups()
        if default_target:
            value = everything if default_target in ("@", "ARGUMENTS") else _nth(args, int(default_target))
            return value or default
        if slice_start:
            start = max(int(slice_start) - 1, 0)
            if slice_length:
                return " ".join(args[start : start + int(slice_length)])
            return " ".join(args[start:])
        if simple in ("ARGUMENTS", "@"):
            return everything
        return _nth(args, int(simple))

    return _PLACEHOLDER.sub(replace, body)


def _nth(args: list[str], number: int) -> str:
    return args[number - 1] if 1 <= number <= len(args) else ""


def expand(text: str, templates: dict[str, Template]) -> str | None:
    """``/name ARGS`` expanded with the template of that name; None when ``text`` is not one."""
    m = re.match(r"^/(\S+)(?:\s+([\s\S]*))?$", text)
    if m is None:
        return None
    template = templates.get(m.group(1))
    if template is None:
        return None
    return substitute(template.body, split_args(m.group(2) or ""))


def load_template(path: Path) -> Template:
    """One template file. Raises OSError or FrontmatterError."""
    meta, body = parse_frontmatter(read_text(path))
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        first = next((line.strip() for line in body.split("\n") if line.strip()), "")
        description = first[:DESCRIPTION_CHARS] + ("..." if len(first) > DESCRIPTION_CHARS else "")
    hint = meta.get("argument-hint")
    return Template(
        path.name.removesuffix(".md"),
        " ".join(description.split()),
        " ".join(hint.split()) if isinstance(hint, str) and hint.strip() else None,
        body,
        str(path),
    )


def _markdown_files(folder: Path, recursive: bool) -> Iterator[Path]:
    """The ``.md`` files of ``folder`` (of its subfolders too when ``recursive``; hidden ones
    and ``node_modules`` skipped), sorted, at most :data:`MAX_TEMPLATES_PER_DIR`."""
    found: list[Path] = []
    if recursive:
        for root, dirs, files in os.walk(folder, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
            found.extend(Path(root) / f for f in sorted(files) if f.endswith(".md"))
            if len(found) >= MAX_TEMPLATES_PER_DIR:
                break
    else:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        found = [folder / n for n in names if n.endswith(".md")]
    for path in found[:MAX_TEMPLATES_PER_DIR]:
        try:
            if path.is_file():
                yield path
        except OSError:
            continue


def template_dirs(places: Places) -> list[tuple[Path, bool]]:
    """(folder, read its subfolders too), in the order that decides a name."""
    project = [(d / "prompts", False) for d in places.project_dirs()]
    user = [(d / "prompts", False) for d in places.user_dirs()]
    return [
        *project,
        (places.cwd / ".claude" / "commands", True),
        *user,
        (places.home / ".claude" / "commands", True),
    ]


def load_templates(
    places: Places,
    reserved: Collection[str] = (),
    *,
    discover: bool = True,
    paths: Sequence[str] = (),
) -> tuple[dict[str, Template], list[str]]:
    """Every template by name, and one warning line per file skipped or name shadowed.
    A name in ``reserved`` (the app's own commands) is never a template. ``discover``: False for
    ``--no-prompt-templates`` (no folder of :func:`template_dirs` is read); ``paths``: pi's
    ``--prompt-template`` paths, after them (a folder's ``.md`` files, or one ``.md`` file)."""
    templates: dict[str, Template] = {}
    warnings: list[str] = []
    seen: set[str] = set()

    def add(path: Path) -> None:
        real = os.path.realpath(path)
        if real in seen:
            return  # the same file through a symlink or a shared folder
        seen.add(real)
        name = path.name.removesuffix(".md")
        if not _NAME.match(name):
            warnings.append(f"template {path}: skipped: its name has a space, a colon or a slash")
            return
        if name in reserved:
            warnings.append(f"template {path}: skipped: /{name} is a built-in command")
            return
        if name in templates:
            warnings.append(f"template {path}: skipped: /{name} is already {templates[name].path}")
            return
        try:
            templates[name] = load_template(path)
        except (OSError, FrontmatterError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            warnings.append(f"template {path}: skipped: {reason}")

    for folder, recursive in template_dirs(places) if discover else []:
        if folder.is_dir():
            for path in _markdown_files(folder, recursive):
                add(path)
    for path in flag_files(
        paths, places.cwd, "--prompt-template", lambda folder: _markdown_files(folder, False), warnings
    ):
        add(path)
    return templates, warnings


__all__ = [
    "Template",
    "expand",
    "load_template",
    "load_templates",
    "split_args",
    "substitute",
    "template_dirs",
]

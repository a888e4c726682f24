"""Exporting a session: JSONL (lossless), Markdown (readable), HTML (see ``html_export``).

Every function takes a loaded :class:`SessionIndex` (and, where it matters, the
projection of the branch to show) and returns the document; writing it is
:func:`write_new_file` (:mod:`agent_tui.library.new_file`), which never overwrites anything.
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from agent_tui.library.marks import Mark, branch_marks
from agent_tui.library.new_file import write_new_file
from agent_tui.library.text import args_json, fence, longest_run, tool_calls_by_id
from agent_tui.projection.context import Projection, project
from agent_tui.projection.describe import first_line, kind, plural, tokens_before
from agent_tui.projection.request import system_message_text
from agent_tui.projection.tool_facts import shown_facts, shown_path
from agent_tui.store.content import blocks, content_text, edit_diff
from agent_tui.store.errors import StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.kinds import entry_type, kind_info
from agent_tui.store.record import Entry, JSONObject
from agent_tui.store.redact import redact_jsonl, redaction_enabled
from agent_tui.store.session import fork_entries
from agent_tui.store.writer import encode_line

Format = Literal["html", "md", "jsonl"]
FORMATS: tuple[Format, ...] = ("html", "md", "jsonl")
EXTENSIONS: dict[str, str] = {"html": ".html", "md": ".md", "jsonl": ".jsonl"}


# -- JSONL ---------------------------------------------------------------------------------


def export_jsonl(
    index: SessionIndex,
    leaf_id: str | None = None,
    *,
    whole: bool = False,
    source: bytes | Path | None = None,
) -> bytes:
    """The branch ending at ``leaf_id`` (default: the leaf) as a standalone v3 session.

    The entries are re-chained as a fork does (labels of kept entries re-added,
    compaction boundaries kept), under a fresh header with the same cwd and no
    ``parentSession``: opening the result gives the same projection.
    With ``whole``, the file itself, byte for byte (``source`` is its bytes or path).
    """
    if whole:
        if source is None:
            raise StoreError(f"{index.file_name}: exporting the whole file needs its bytes or path")
        return source if isinstance(source, bytes) else _read_bytes(source)
    entries = fork_entries(index, leaf_id)
    header: JSONObject = {
        "type": "session",
        "version": 3,
        "id": str(uuid.uuid4()),
        "timestamp": _now_iso(),
        "cwd": str(index.header.get("cwd") or os.getcwd()),
    }
    return b"".join([encode_line(header), *(encode_line(e) for e in entries)])


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise StoreError(f"{path}: cannot read: {e.strerror}") from None


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- Markdown ------------------------------------------------------------------------------


def export_markdown(
    index: SessionIndex,
    projection: Projection | None = None,
    *,
    all_branches: bool = False,
    max_tool_lines: int | None = 60,
    source_name: str | None = None,
    source: Path | None = None,
) -> str:
    """The branch of ``projection`` (default: the active one) as readable Markdown.

    Each entry is a section with its id; hidden, replaced and summarized entries
    say so. Tool output longer than ``max_tool_lines`` is cut (the JSONL export
    is the lossless one). With ``all_branches``, every other branch follows,
    from the point where it leaves the branches already shown.
    """
    projection = projection if projection is not None else project(index)
    writer = _MarkdownWriter(index, max_tool_lines)
    out: list[str] = [writer.heading(projection, source_name)]
    marks = branch_marks(projection)
    out.append("## Active branch" if all_branches else "## Conversation")
    shown: set[str] = set()
    for entry in projection.path:
        out.append(writer.entry(entry, marks.get(entry.id)))
        shown.add(entry.id)
    if all_branches:
        for leaf in _leaves(index):
            if leaf.id in shown:
                continue
            path = index.path_to(leaf.id)
            fresh = [e for e in path if e.id not in shown]
            fork_point = next((e for e in reversed(path) if e.id in shown), None)
            label = index.labels.get(leaf.id)
            title = f"## Branch ending at {_code(leaf.id)}" + (f" ({_md_inline(label)})" if label else "")
            where = (
                f"*Continues from {_code(fork_point.id)} ({_md_inline(kind(fork_point))}: "
                f"{_md_inline(first_line(fork_point, 60))}).*"
                if fork_point is not None
                else "*A separate root.*"
            )
            out.extend([title, where])
            branch_mark = branch_marks(project(index, leaf.id))
            for entry in fresh:
                out.append(writer.entry(entry, branch_mark.get(entry.id)))
                shown.add(entry.id)
    if source is not None:
        out.extend(_subagent_sections(index, source, max_tool_lines))
    return "\n\n".join(part for part in out if part) + "\n"


def _subagent_sections(index: SessionIndex, source: Path, max_tool_lines: int | None) -> list[str]:
    """Each task call's subagent transcript (its own file, read here), after the conversation."""
    from agent_tui.projection.subagent_links import subagent_rows
    from agent_tui.store.reader import read_file

    out: list[str] = []
    for row in subagent_rows(index.entries, source):
        title = (
            f"## Subagent {_md_inline(str(row['type']))}: {_md_inline(str(row['description']))}"
            f" · call {_code(row['toolCallId'])} · {_md_inline(str(row['status']))}"
        )
        out.append(title)
        if not row["exists"]:
            out.append(f"*Its file {_code(row['file'])} is not there.*")
            continue
        try:
            child = SessionIndex(read_file(Path(row["file"])), str(row["file"]))
        except (OSError, StoreError) as e:
            out.append(f"*Its file {_code(row['file'])} could not be read: {_md_inline(str(e))}*")
            continue
        if redaction_enabled():
            child = child.redacted()
        out.append(f"*File {_code(row['file'])}.*")
        writer = _MarkdownWriter(child, max_tool_lines)
        marks = branch_marks(project(child))
        out.extend(writer.entry(entry, marks.get(entry.id)) for entry in project(child).path)
    return out


def _leaves(index: SessionIndex) -> list[Entry]:
    children = index.children
    return [e for e in index.entries if index.by_id.get(e.id) is e and not children.get(e.id)]


def _md_inline(text: str) -> str:
    """Text safe inside a Markdown line: no markup characters take effect."""
    out = []
    for c in text:
        out.append("\\" + c if c in "\\`*_[]<>#|~" else c)
    return "".join(out)


def _code(value: object) -> str:
    """``value`` as an inline code span (nothing in one takes effect as Markdown or HTML), delimited by
    more backticks than any run inside it, on one line."""
    text = " ".join(str(value).split("\n"))
    ticks = "`" * (longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


#: An HTML block put after a text to see whether the text left anything open (a fence, an HTML
#: block) that would swallow or re-open what follows it.
_PROBE = "<x-agent-tui-probe>"
_md_parser: Any = None


def _md_text(text: str) -> str:
    """Markdown from the session (a reply, a thought, a summary) kept as Markdown when it holds no
    raw HTML and closes everything it opens, so that it cannot affect what follows; otherwise in a
    fence (longer than any backtick run inside). Decided by a CommonMark parser (markdown-it)."""
    if "<" not in text and "```" not in text and "~~~" not in text:
        return text
    global _md_parser
    if _md_parser is None:
        from markdown_it import MarkdownIt

        _md_parser = MarkdownIt("commonmark")
    html: list[Any] = []
    pending = list(_md_parser.parse(f"{text}\n\n{_PROBE}\n"))
    while pending:
        token = pending.pop()
        if token.type in ("html_block", "html_inline"):
            html.append(token)
        pending.extend(token.children or ())
    if len(html) == 1 and html[0].type == "html_block" and html[0].content.startswith(_PROBE):
        return text
    return fence(text)


def _stamp(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    return value.replace("T", " ")[:16] + (" UTC" if value.endswith("Z") else "")


class _MarkdownWriter:
    def __init__(self, index: SessionIndex, max_tool_lines: int | None) -> None:
        self.index = index
        self.max_lines = max_tool_lines
        self.calls = tool_calls_by_id(index)

    def heading(self, projection: Projection, source_name: str | None) -> str:
        index = self.index
        title = index.name or f"Session {index.header.get('id')}"
        lines = [f"# {_md_inline(title)}", ""]
        if source_name:
            lines.append(f"- File: {_code(source_name)}")
        lines.append(f"- Working directory: {_code(index.header.get('cwd'))}")
        lines.append(f"- Started: {_stamp(index.header.get('timestamp'))}")
        if index.entries:
            lines.append(f"- Last activity: {_stamp(index.entries[-1].data.get('timestamp'))}")
        model = projection.model or {}
        if model.get("modelId"):
            lines.append("- Model: " + _md_inline(f"{model.get('provider')}/{model.get('modelId')}"))
        branches = len(_leaves(index))
        lines.append(
            f"- Branch: leaf {_code(projection.leaf_id)}, {plural(len(projection.path), 'entry', 'entries')}"
            + (f" (the file has {branches} branches)" if branches > 1 else "")
        )
        lines.append(f"- Model's view: {plural(len(projection.messages), 'message')}")
        return "\n".join(lines)

    def entry(self, entry: Entry, mark: Mark | None) -> str:
        known = entry_type(entry.type)
        if known is not None and kind_info(known).look == "event":
            return self._event(entry, mark)
        title, body = self._render(entry)
        label = self.index.labels.get(entry.id)
        head = f"### {title} · {_code(entry.id)}"
        stamp = _stamp(entry.data.get("timestamp"))
        if stamp:
            head += f" · {stamp}"
        notes = []
        if label:
            notes.append(f"label **{_md_inline(label)}**")
        if mark is not None:
            notes.append(_md_inline(mark.describe()))
        if notes:
            head += "\n\n*" + "; ".join(notes) + "*"
        return head + ("\n\n" + body if body else "")

    def _render(self, entry: Entry) -> tuple[str, str]:
        data = entry.data
        etype = entry.type
        known = entry_type(etype)
        if known == "message":
            return self._message(entry.message or {})
        if known == "compaction":
            body = _quote(_md_text(str(data.get("summary") or "")))
            extra = (
                f"*{_md_inline(tokens_before(data.get('tokensBefore')))}; keeps from"
                f" {_code(data.get('firstKeptEntryId'))}.*"
            )
            return "Compaction", f"{extra}\n\n{body}"
        if known == "branch_summary":
            return "Branch summary", f"*From {_code(data.get('fromId'))}.*\n\n" + _quote(
                _md_text(str(data.get("summary") or ""))
            )
        if known == "custom_message":
            text = content_text(data.get("content"))
            return f"Extension message ({_md_inline(str(data.get('customType')))})", _md_text(text)
        return _md_inline(etype), fence(
            args_json({k: v for k, v in data.items() if k not in ("id", "parentId")})
        )

    def _event(self, entry: Entry, mark: Mark | None) -> str:
        """Settings, labels, names, edits, pins, extension state: one line each."""
        data = entry.data
        known = entry_type(entry.type)
        name = kind_info(known).title if known is not None else entry.type
        if known == "custom":
            name += f" ({data.get('customType')})"
        line = f"*{_md_inline(name)}: {_md_inline(first_line(entry, 200))}* ({_code(entry.id)})"
        if mark is not None:
            line += f" *({_md_inline(mark.describe())})*"
        if (
            entry.type == "context_edit"
            and isinstance(data.get("replacement"), dict)
            and not data.get("restore")
        ):
            line += "; the model sees instead:\n\n" + _quote(
                _md_text(content_text(data["replacement"].get("content")))
            )
        return line

    def _message(self, message: JSONObject) -> tuple[str, str]:
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            return "User", self._blocks(content)
        if role == "assistant":
            body = self._blocks(content)
            footer = []
            if message.get("model"):
                footer.append(str(message.get("model")))
            usage = message.get("usage")
            if isinstance(usage, dict) and usage.get("output"):
                footer.append(f"{usage.get('input', 0)} in / {usage.get('output', 0)} out tokens")
            if message.get("stopReason") in ("error", "aborted"):
                footer.append(f"stopped: {message.get('stopReason')}")
            if message.get("errorMessage"):
                footer.append(f"error: {message.get('errorMessage')}")
            if footer:
                body += "\n\n*" + _md_inline(" · ".join(footer)) + "*"
            return "Assistant", body.strip()
        if role == "toolResult":
            name = str(message.get("toolName") or "tool")
            title = f"Tool result: {_md_inline(name)}" + (" (error)" if message.get("isError") else "")
            text = content_text(content)
            return title, self._cut(text, self._language(message)) if text else "*(no output)*"
        if role == "system":
            return "System prompt", fence(
                system_message_text(message)
            )  # whole: it is what the model reads first
        if role == "bashExecution":
            cmd = str(message.get("command") or "")
            out = str(message.get("output") or "")
            tail = (
                f"\n\n*exit code {_md_inline(str(message.get('exitCode')))}*"
                if message.get("exitCode") not in (None, 0)
                else ""
            )
            return "Shell command", fence(f"$ {cmd}", "sh") + "\n\n" + self._cut(out) + tail
        if role == "custom":
            return f"Extension message ({_md_inline(str(message.get('customType')))})", _md_text(
                content_text(content)
            )
        return _md_inline(str(role)), fence(args_json(message))

    def _blocks(self, content: Any) -> str:
        parts: list[str] = []
        for block in blocks(content):
            btype = block.get("type")
            if btype == "text":
                parts.append(_md_text(str(block.get("text") or "")))
            elif btype == "thinking":
                thought = str(block.get("thinking") or "")
                parts.append(
                    _quote("*Thinking:*\n\n" + _md_text(thought)) if thought else "> *Thinking (redacted)*"
                )
            elif btype == "toolCall":
                parts.append(self._tool_call(block))
            elif btype == "image":
                parts.append(f"*[image: {_md_inline(str(block.get('mimeType')))}]*")
        return "\n\n".join(p for p in parts if p)

    def _tool_call(self, block: JSONObject) -> str:
        name = str(block.get("name") or "tool")
        args = block.get("arguments")
        head = f"**→ {_md_inline(name)}**"
        if isinstance(args, dict):
            command = args.get("command")
            if isinstance(command, str) and set(args) <= {"command", "timeout", "description"}:
                return f"{head}\n\n" + fence(command, "sh")
            path = shown_path(name, args)
            if isinstance(path, str) and len(args) == 1:
                return f"{head} {_code(path)}"
            style = shown_facts(name).diff
            diff = edit_diff(args) if style == "edits" else None
            if isinstance(path, str) and diff is not None:
                return f"{head} {_code(path)}\n\n" + fence(diff, "diff")
            content = args.get("content")
            if isinstance(path, str) and isinstance(content, str) and style == "content":
                return f"{head} {_code(path)}\n\n" + fence(
                    content, LANGUAGES.get(Path(path).suffix.lower(), "")
                )
        return f"{head}\n\n" + fence(args_json(args), "json")

    def _language(self, message: JSONObject) -> str:
        call = self.calls.get(str(message.get("toolCallId")))
        args = call.get("arguments") if call is not None else None
        name = str(message.get("toolName") or "")
        path = shown_path(name, args) if isinstance(args, dict) else None
        if not shown_facts(name).reads_file or not isinstance(path, str):
            return ""
        return LANGUAGES.get(Path(path).suffix.lower(), "")

    def _cut(self, text: str, lang: str = "") -> str:
        lines = text.split("\n")
        if self.max_lines is not None and len(lines) > self.max_lines:
            more = len(lines) - self.max_lines
            return (
                fence("\n".join(lines[: self.max_lines]), lang)
                + f"\n\n*… {more} more lines (the JSONL export has them all)*"
            )
        return fence(text, lang)


#: Fence languages for file reads, by suffix.
LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".rb": "ruby",
    ".sh": "sh",
    ".md": "markdown",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
}


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


# -- any format ------------------------------------------------------------------------------


def export_html(
    index: SessionIndex,
    projection: Projection | None = None,
    *,
    branch_only: bool = False,
    source_name: str | None = None,
    source: Path | None = None,
) -> str:
    """One self-contained HTML page: the tree, the branch of ``projection``, every branch a click away.

    See :mod:`agent_tui.library.html_export` (imported here on first use: it loads
    pygments and markdown-it).
    """
    from agent_tui.library import html_export

    return html_export.export_html(
        index, projection, branch_only=branch_only, source_name=source_name, source=source
    )


def export_bytes(
    index: SessionIndex,
    fmt: str,
    *,
    leaf_id: str | None = None,
    whole: bool = False,
    source: Path | None = None,
) -> bytes:
    """The export in ``fmt`` (``html``, ``md``, ``jsonl``) as bytes.

    ``whole``: every branch (HTML: the whole tree, the default there; Markdown:
    every branch after the active one; JSONL: the file byte for byte).
    Without it HTML holds only the branch, Markdown and JSONL the branch.
    """
    if leaf_id is not None:
        index.get(leaf_id)
    name = source.name if source is not None else None
    redact = redaction_enabled()  # our own files are redacted already; pi's and others may not be
    if fmt == "jsonl":
        if whole:
            data = export_jsonl(index, leaf_id, whole=True, source=source)
            return redact_jsonl(data) if redact else data
        return export_jsonl(index.redacted() if redact else index, leaf_id)
    if redact:
        index = index.redacted()
    projection = project(index, leaf_id)
    if fmt == "md":
        return export_markdown(
            index, projection, all_branches=whole, source_name=name, source=source
        ).encode()
    if fmt == "html":
        return export_html(index, projection, branch_only=not whole, source_name=name, source=source).encode()
    raise StoreError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")


def export_session(
    index: SessionIndex,
    fmt: str,
    *,
    source: Path | None = None,
    out: Path | None = None,
    leaf_id: str | None = None,
    whole: bool | None = None,
    directory: Path | None = None,
) -> Path:
    """Export and write in one call (what the app's export action needs); returns the new file.

    ``whole`` defaults to every branch for HTML and the branch for Markdown and
    JSONL. ``out`` defaults to :func:`default_export_path` in ``directory`` (the
    current folder). Never overwrites a file.
    """
    if whole is None:
        whole = fmt == "html"
    data = export_bytes(index, fmt, leaf_id=leaf_id, whole=whole, source=source)
    name = source if source is not None else Path(f"session-{index.header.get('id')}.jsonl")
    target = out if out is not None else default_export_path(name, fmt, directory)
    return write_new_file(target, data)


def default_export_path(source: Path, fmt: str, directory: Path | None = None) -> Path:
    """``<directory>/<source stem>.<ext>``, numbered (``-2``, ``-3``...) past any file already there."""
    directory = directory if directory is not None else Path.cwd()
    ext = EXTENSIONS[fmt]
    stem = source.stem + ("-export" if fmt == "jsonl" else "")
    candidate = directory / f"{stem}{ext}"
    n = 2
    while candidate.exists():
        candidate = directory / f"{stem}-{n}{ext}"
        n += 1
    return candidate


__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "default_export_path",
    "export_bytes",
    "export_html",
    "export_jsonl",
    "export_markdown",
    "export_session",
    "write_new_file",
]

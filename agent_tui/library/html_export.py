"""The HTML export: one self-contained page that works offline.

Everything is rendered here, in Python: Markdown by markdown-it (raw HTML
disabled, links limited to http, https and mailto, images shown as links),
code by pygments, everything else escaped. Each entry's rendering goes into an
inert ``<template>``; the page's script (``viewer.js``) clones the templates of
the branch being read, a window of entries at a time, so a 20,000-entry
session opens as fast as a small one. The tree and the marks (hidden,
replaced, summarized...) of every branch travel as JSON inside
``<script type="application/json">`` with ``<``, ``>``, ``&`` and U+2028/9
escaped, and the script only ever sets text, never markup, from it. A
Content-Security-Policy allows the page's own script (by hash) and nothing
else: no network, no inline handlers, no other script, even if something
slipped through the escaping.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight as _pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.util import ClassNotFound

from agent_tui.library.marks import CODES, branch_marks
from agent_tui.library.text import args_json, tool_calls_by_id
from agent_tui.projection.context import Projection, project_path
from agent_tui.projection.describe import first_line, kind, plural, tokens_before
from agent_tui.projection.request import system_message_text
from agent_tui.projection.tool_facts import shown_facts, shown_path
from agent_tui.store.content import blocks, content_text, edit_diff
from agent_tui.store.errors import StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.record import Entry, JSONObject

ASSETS = Path(__file__).resolve().parent

#: Code blocks longer than this are shown plain (pygments runs at about 1 MB/s).
HIGHLIGHT_MAX_CHARS = 30_000
#: Tool output (file reads) is highlighted up to this size.
HIGHLIGHT_RESULT_CHARS = 8_000
#: Total characters highlighted per export; past it, code is shown plain.
HIGHLIGHT_BUDGET = 2_000_000
#: Tool results with more lines than this start collapsed.
OPEN_RESULT_LINES = 12
#: Images larger than this (base64 characters) are left out of the page.
MAX_IMAGE_CHARS = 2_000_000
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_NUMBERED = re.compile(r"\s*\d+(\u2192|\t|: )")
SAFE_SCHEMES = ("http://", "https://", "mailto:")

_FORMATTER = HtmlFormatter(nowrap=True)


def esc(text: Any) -> str:
    """HTML-escape text for element content and quoted attributes."""
    return html.escape(str(text), quote=True)


def json_for_script(value: Any) -> str:
    """JSON that can sit inside ``<script type="application/json">``: no ``<``, ``>``, ``&``, U+2028/9."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


# -- highlighting and Markdown -------------------------------------------------------------------


@cache
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        lexer = get_lexer_by_name(name, stripnl=False)
    except ClassNotFound:
        return None
    return None if isinstance(lexer, TextLexer) else lexer


@cache
def _lexer_for_suffix(suffix: str) -> Lexer | None:
    try:
        lexer = get_lexer_for_filename(f"file{suffix}", stripnl=False)
    except ClassNotFound:
        return None
    return None if isinstance(lexer, TextLexer) else lexer


def lexer_for_path(path: str) -> Lexer | None:
    name = path.rsplit("/", 1)[-1]
    if name in ("Makefile", "Dockerfile"):
        return _lexer_by_name(name.lower())
    suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
    return _lexer_for_suffix(suffix.lower()) if suffix else None


class _SafeMarkdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        target = url.strip().lower()
        return target.startswith(SAFE_SCHEMES) or target.startswith("#")


class Renderer:
    """Renders entries to HTML fragments. Keeps a budget of highlighted characters per export."""

    def __init__(self, index: SessionIndex, source: Path | None = None) -> None:
        self.index = index
        self.source = source  # the session's file: its subagents' transcripts are read beside it
        self.calls = tool_calls_by_id(index)
        self.budget = HIGHLIGHT_BUDGET
        md = _SafeMarkdown("commonmark", {"html": False, "linkify": False, "typographer": False})
        md.enable(["table", "strikethrough"])
        md.disable("image")
        md.options["highlight"] = self._fence
        md.add_render_rule("link_open", _link_open)
        self.md = md

    # -- code -----------------------------------------------------------------------------------

    def code(self, text: str, lexer: Lexer | None, cls: str = "", limit: int = HIGHLIGHT_MAX_CHARS) -> str:
        """A ``<pre>`` of ``text``, highlighted by ``lexer`` while the budget lasts."""
        classes = f"code {cls}".strip()
        if lexer is not None and len(text) <= limit and self.budget >= len(text):
            self.budget -= len(text)
            body = _pygments_highlight(text, lexer, _FORMATTER)
            return f'<pre class="{classes} hl"><code>{body}</code></pre>'
        return f'<pre class="{classes}"><code>{esc(text)}</code></pre>'

    def _fence(self, text: str, lang: str, attrs: str) -> str:
        lexer = _lexer_by_name(lang.strip().lower()) if lang.strip() else None
        return self.code(text, lexer)

    def markdown(self, text: str) -> str:
        return f'<div class="md">{self.md.render(text)}</div>'

    # -- entries ---------------------------------------------------------------------------------

    def entry(self, entry: Entry) -> str:
        etype = entry.type
        data = entry.data
        if etype == "message":
            return self.message(entry.message or {})
        if etype == "compaction":
            first = data.get("firstKeptEntryId")
            facts = esc(tokens_before(data.get("tokensBefore")))
            if isinstance(first, str):
                facts += "; keeps nothing" if first == entry.id else f"; keeps from {_entry_link(first)}"
            body = self.markdown(str(data.get("summary") or ""))
            system = data.get("systemMessage")
            if isinstance(system, dict):
                body += self._details("System prompt snapshot", _plain(system_message_text(system)), "system")
            return f'<div class="summary">{body}<div class="facts">{facts}</div></div>'
        if etype == "branch_summary":
            return (
                f'<div class="summary">{self.markdown(str(data.get("summary") or ""))}'
                f'<div class="facts">summary of the branch from {_entry_link(data.get("fromId"))}</div></div>'
            )
        if etype == "custom_message":
            return f'<div class="facts">{esc(data.get("customType"))}</div>' + self._user_blocks(
                data.get("content")
            )
        if etype == "context_edit":
            replacement = data.get("replacement")
            target = _entry_link(data.get("targetId"))
            if replacement is None:
                return f'<div class="event">hides {target} from the model</div>'
            if data.get("restore"):
                return f'<div class="event">restores {target} to its original content</div>'
            inner = replacement.get("content") if isinstance(replacement, dict) else replacement
            return f'<div class="event">replaces {target}; the model sees instead:</div>' + self._user_blocks(
                inner
            )
        if etype in ("label", "pin") and isinstance(data.get("targetId"), str):
            return f'<div class="event">{esc(first_line(entry, 300))} <span class="muted">({_entry_link(data.get("targetId"))})</span></div>'
        if etype in ("session_info", "model_change", "thinking_level_change", "label", "pin"):
            return f'<div class="event">{esc(first_line(entry, 300))}</div>'
        rest = {k: v for k, v in data.items() if k not in ("type", "id", "parentId", "timestamp")}
        return f'<div class="event">{esc(first_line(entry, 300))}</div>' + self._details(
            "data", self.code(args_json(rest), _lexer_by_name("json")), "raw"
        )

    def message(self, message: JSONObject) -> str:
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            return self._user_blocks(content)
        if role == "assistant":
            parts = [self._assistant_block(b) for b in blocks(content)]
            facts = []
            if message.get("model"):
                facts.append(esc(message.get("model")))
            usage = message.get("usage")
            if isinstance(usage, dict) and (usage.get("input") or usage.get("output")):
                facts.append(f"{esc(usage.get('input', 0))} in · {esc(usage.get('output', 0))} out")
                if usage.get("cacheRead"):
                    facts.append(f"{esc(usage.get('cacheRead'))} cached")
            stop = message.get("stopReason")
            if stop in ("error", "aborted", "length"):
                facts.append(f'<span class="bad">stopped: {esc(stop)}</span>')
            if message.get("errorMessage"):
                parts.append(f'<div class="error">{_plain(str(message.get("errorMessage")))}</div>')
            if facts:
                parts.append(f'<div class="facts">{" · ".join(facts)}</div>')
            return "".join(parts)
        if role == "toolResult":
            return self._tool_result(message)
        if role == "system":
            text = system_message_text(message)
            return self._details(f"System prompt · {len(text):,} characters", _plain(text), "system")
        if role == "bashExecution":
            command = str(message.get("command") or "")
            output = str(message.get("output") or "")
            code = message.get("exitCode")
            state = f"exit code {esc(code)}" if code not in (None, 0) else "ok"
            if message.get("cancelled"):
                state = "cancelled"
            note = " · not sent to the model" if message.get("excludeFromContext") else ""
            return self.code("$ " + command, _lexer_by_name("bash"), "cmd") + self._details(
                f"output · {plural(output.count(chr(10)) + 1 if output else 0, 'line')} · {state}{note}",
                self.code(output or "(no output)", None),
                "result",
                open_=output.count("\n") < OPEN_RESULT_LINES,
            )
        if role == "custom":
            return f'<div class="facts">{esc(message.get("customType"))}</div>' + self._user_blocks(content)
        return self._details("message", self.code(args_json(message), _lexer_by_name("json")), "raw")

    def _user_blocks(self, content: Any) -> str:
        parts = []
        for block in blocks(content):
            btype = block.get("type")
            if btype == "text":
                parts.append(_plain(str(block.get("text") or "")))
            elif btype == "image":
                parts.append(_image(block))
            else:
                parts.append(self._details(esc(btype), self.code(args_json(block), None), "raw"))
        return "".join(parts)

    def _assistant_block(self, block: JSONObject) -> str:
        btype = block.get("type")
        if btype == "text":
            return self.markdown(str(block.get("text") or ""))
        if btype == "thinking":
            thought = str(block.get("thinking") or "")
            if not thought:
                return '<div class="facts">thinking (redacted)</div>'
            return self._details("Thinking", _plain(thought), "thinking")
        if btype == "toolCall":
            return self._tool_call(block)
        if btype == "image":
            return _image(block)
        return self._details(esc(btype), self.code(args_json(block), None), "raw")

    def _tool_call(self, block: JSONObject) -> str:
        name = str(block.get("name") or "tool")
        args = block.get("arguments")
        head = f'<div class="call-head"><span class="call-name">{esc(name)}</span>'
        body = ""
        if isinstance(args, dict):
            path = shown_path(name, args)
            command = args.get("command") or args.get("cmd")
            if isinstance(path, str):
                head += f' <span class="call-path">{esc(path)}</span>'
            style = shown_facts(name).diff
            if isinstance(command, list) and all(isinstance(c, str) for c in command):
                command = " ".join(command)
            if isinstance(command, str):
                body = self.code(command, _lexer_by_name("bash"), "cmd")
                rest = {k: v for k, v in args.items() if k not in ("command", "cmd")}
                if rest:
                    body += f'<div class="facts">{esc(json.dumps(rest, ensure_ascii=False))}</div>'
            elif style == "edits" and isinstance(path, str):
                body = self._edit_diff(args, path)
            elif style == "content" and isinstance(path, str) and isinstance(args.get("content"), str):
                body = self.code(args["content"], lexer_for_path(path))
            elif isinstance(path, str) and set(args) <= {"path", "file_path", "offset", "limit"}:
                rest = {k: v for k, v in args.items() if k not in ("path", "file_path")}
                body = f'<div class="facts">{esc(json.dumps(rest))}</div>' if rest else ""
            else:
                body = self.code(args_json(args), _lexer_by_name("json"))
        else:
            body = self.code(args_json(args), None)
        return f'<div class="call">{head}</div>{body}</div>'

    def _edit_diff(self, args: JSONObject, path: str) -> str:
        diff = edit_diff(args)
        if diff is None:
            return self.code(args_json(args), _lexer_by_name("json"))
        return self.code(diff, _lexer_by_name("diff"), "diff")

    def _tool_result(self, message: JSONObject) -> str:
        content = message.get("content")
        text = content_text(content)
        images = [b for b in blocks(content) if b.get("type") == "image"]
        name = str(message.get("toolName") or "tool")
        call = self.calls.get(str(message.get("toolCallId")))
        lexer = None
        if call is not None and isinstance(call.get("arguments"), dict):
            path = shown_path(name, call["arguments"])
            if shown_facts(name).reads_file and isinstance(path, str) and not _NUMBERED.match(text):
                lexer = lexer_for_path(
                    path
                )  # not when lines are numbered (cat -n style, as Claude Code reads)
        lines = text.count("\n") + 1 if text else 0
        error = bool(message.get("isError"))
        summary = f"{esc(name)} · {lines:,} line{'s' if lines != 1 else ''}" + (" · error" if error else "")
        body = (
            self.code(text, lexer, limit=HIGHLIGHT_RESULT_CHARS)
            if text
            else '<div class="facts">(no output)</div>'
        )
        body += "".join(_image(b) for b in images)
        body += self._subagent(message)
        return self._details(
            summary, body, "result error" if error else "result", open_=lines <= OPEN_RESULT_LINES
        )

    def _subagent(self, message: JSONObject) -> str:
        """A task result's subagent transcript (its own file, beside the session's), folded."""
        details = message.get("details")
        link = details.get("subagent") if isinstance(details, dict) else None
        if self.source is None or not isinstance(link, dict) or not isinstance(link.get("file"), str):
            return ""
        from agent_tui.projection.subagent_links import resolve_link
        from agent_tui.store.reader import read_file
        from agent_tui.store.redact import redaction_enabled

        path = resolve_link(self.source, link["file"])
        try:
            child = SessionIndex(read_file(path), str(path))
        except (OSError, StoreError):
            return f'<div class="facts">subagent transcript {esc(path.name)}: not readable</div>'
        if redaction_enabled():
            child = child.redacted()
        inner = Renderer(child)  # one level: a nested subagent's result is shown, not opened
        inner.budget = given = self.budget // 4  # highlighting shared with the page
        rows = "".join(inner.entry(e) for e in project_path(child.active_path(), child.leaf_id).path)
        self.budget -= given - inner.budget
        summary = (
            f"subagent transcript · {esc(link.get('type'))} · {esc(link.get('status'))} · {esc(path.name)}"
        )
        return self._details(summary, rows, "subagent")

    @staticmethod
    def _details(summary: str, body: str, cls: str, *, open_: bool = False) -> str:
        return (
            f'<details class="{cls}"{" open" if open_ else ""}><summary>{summary}</summary>{body}</details>'
        )


def _link_open(renderer: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    token.attrSet("rel", "noopener noreferrer nofollow")
    token.attrSet("target", "_blank")
    result: str = renderer.renderToken(tokens, idx, options, env)
    return result


def _plain(text: str) -> str:
    return f'<div class="plain">{esc(text)}</div>'


def _entry_link(entry_id: Any) -> str:
    if not isinstance(entry_id, str):
        return esc(entry_id)
    from urllib.parse import quote

    return f'<a class="ref" href="#entry={esc(quote(entry_id, safe=""))}">{esc(entry_id)}</a>'


def _image(block: JSONObject) -> str:
    mime = block.get("mimeType")
    data = block.get("data")
    if (
        isinstance(mime, str)
        and mime in IMAGE_TYPES
        and isinstance(data, str)
        and len(data) <= MAX_IMAGE_CHARS
        and _BASE64.fullmatch(data)
    ):
        return f'<img class="image" alt="image" src="data:{mime};base64,{"".join(data.split())}">'
    return f'<div class="facts">[image {esc(mime)}, not embedded]</div>'


# -- the page --------------------------------------------------------------------------------


def _nodes(index: SessionIndex, projection: Projection, branch_only: bool) -> list[Entry]:
    if branch_only:
        return list(projection.path)
    return [e for root in index.roots() for e in index.walk(root)]


def export_html(
    index: SessionIndex,
    projection: Projection | None = None,
    *,
    branch_only: bool = False,
    source_name: str | None = None,
    source: Path | None = None,
) -> str:
    """The page. ``projection``: the branch shown first (default: the active one); ``source``:
    the session's file (its subagents' transcripts are folded into their task results).

    ``branch_only`` leaves the other branches out of the page.
    """
    if projection is None:
        projection = project_path(index.active_path(), index.leaf_id)
    nodes = _nodes(index, projection, branch_only)
    position = {e.id: i for i, e in enumerate(nodes)}
    parents = [position.get(e.parent_id, -1) if e.parent_id is not None else -1 for e in nodes]
    if branch_only:
        parents = [i - 1 for i in range(len(nodes))]
    for root in index.roots() if not branch_only else nodes[:1]:  # cycle breakers are roots
        if root.id in position:
            parents[position[root.id]] = -1
    has_child = [False] * len(nodes)
    for p in parents:
        if p >= 0:
            has_child[p] = True

    # The branch each node opens: its subtree's leaf written last (nodes are in pre-order).
    lines = [e.line for e in nodes]
    last_leaf = list(range(len(nodes)))
    for i in range(len(nodes) - 1, -1, -1):
        p = parents[i]
        if p >= 0 and (not has_child[p] or last_leaf[p] == p or lines[last_leaf[i]] > lines[last_leaf[p]]):
            last_leaf[p] = last_leaf[i]
    active = position.get(projection.leaf_id, -1) if projection.leaf_id is not None else -1

    # Marks per branch, only where the path holds something that makes any (edits, compactions, pins).
    special = [False] * len(nodes)
    for i, e in enumerate(nodes):
        special[i] = (parents[i] >= 0 and special[parents[i]]) or e.type in (
            "compaction",
            "context_edit",
            "pin",
        )
    leaves = [i for i in range(len(nodes)) if not has_child[i]]
    if active >= 0 and active not in leaves:
        leaves.append(active)
    mark_sets: list[dict[str, list[object]]] = []
    seen_sets: dict[str, int] = {}
    views: dict[str, int] = {}
    for leaf in leaves:
        if not special[leaf]:
            continue
        path = _path(nodes, parents, leaf)
        leaf_projection = (
            projection if nodes[leaf].id == projection.leaf_id else project_path(path, nodes[leaf].id)
        )
        marks = {
            str(position[eid]): [CODES[m.status], position.get(m.edit_id or m.compaction_id or "", -1)]
            for eid, m in branch_marks(leaf_projection).items()
            if eid in position
        }
        if not marks:
            continue
        key = json.dumps(marks, sort_keys=True)
        if key not in seen_sets:
            seen_sets[key] = len(mark_sets)
            mark_sets.append(marks)
        views[str(leaf)] = seen_sets[key]

    renderer = Renderer(index, source)
    templates = [f'<template id="t{i}">{renderer.entry(e)}</template>' for i, e in enumerate(nodes)]
    data = {
        "leaf": active,
        "nodes": [
            [
                e.id,
                parents[i],
                kind(e),
                first_line(e, 120),
                index.labels.get(e.id),
                _short_time(e.data.get("timestamp")),
                last_leaf[i],
            ]
            for i, e in enumerate(nodes)
        ],
        "views": views,
        "markSets": mark_sets,
        "branchOnly": branch_only,
    }
    title = index.name or f"Session {index.header.get('id')}"
    return _page(index, projection, title, source_name, templates, data, nodes, leaves)


def _path(nodes: list[Entry], parents: list[int], leaf: int) -> list[Entry]:
    path: list[Entry] = []
    i = leaf
    while i >= 0 and len(path) <= len(nodes):
        path.append(nodes[i])
        i = parents[i]
    path.reverse()
    return path


def _short_time(value: Any) -> str:
    return value.replace("T", " ")[:19] if isinstance(value, str) else ""


@cache
def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


@cache
def _pygments_css() -> str:
    light = HtmlFormatter(style="default").get_style_defs(".hl")
    dark = HtmlFormatter(style="github-dark").get_style_defs(".hl")
    return f"{_hl_rules(light)}\n@media (prefers-color-scheme: dark) {{\n{_hl_rules(dark)}\n}}\n"


def _hl_rules(css: str) -> str:
    return "\n".join(line for line in css.splitlines() if line.startswith(".hl"))


def _page(
    index: SessionIndex,
    projection: Projection,
    title: str,
    source_name: str | None,
    templates: list[str],
    data: dict[str, Any],
    nodes: list[Entry],
    leaves: list[int],
) -> str:
    script = _asset("viewer.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )
    facts = [f"<span>cwd <code>{esc(index.header.get('cwd'))}</code></span>"]
    if source_name:
        facts.append(f"<span>file <code>{esc(source_name)}</code></span>")
    facts.append(f"<span>started {esc(_short_time(index.header.get('timestamp')))}</span>")
    if index.entries:
        facts.append(
            f"<span>last activity {esc(_short_time(index.entries[-1].data.get('timestamp')))}</span>"
        )
    facts.append(f"<span>{len(nodes):,} entries</span>")
    facts.append(f"<span>{len(leaves):,} branch{'es' if len(leaves) != 1 else ''}</span>")
    model = projection.model or {}
    if model.get("modelId"):
        facts.append(f"<span>model {esc(model.get('provider'))}/{esc(model.get('modelId'))}</span>")
    legend = "".join(f'<span class="badge m-{code}">{esc(name)}</span>' for name, code in CODES.items())
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">\n',
            '<meta name="referrer" content="no-referrer">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            '<meta name="generator" content="agent-tui">\n',
            f"<title>{esc(title)}</title>\n<style>\n{_asset('viewer.css')}\n{_pygments_css()}</style>\n</head>\n",
            '<body>\n<header id="top">',
            f"<h1>{esc(title)}</h1>",
            f'<div class="facts">{" · ".join(facts)}</div>',
            f'<div class="legend">marks: {legend}</div>',
            "</header>\n",
            '<div id="layout">\n<nav id="sidebar">',
            '<section id="branches"><h2>Branches</h2><ol id="branch-list"></ol></section>',
            '<section id="tree-box"><h2>Tree</h2><div id="tree"></div></section>',
            "</nav>\n",
            '<main id="chat"><div id="chat-head"></div><div id="entries">',
            "<noscript>This page needs JavaScript to show the conversation (nothing is loaded from the network).</noscript>",
            "</div></main>\n</div>\n",
            '<div id="store" hidden>\n',
            "\n".join(templates),
            "\n</div>\n",
            f'<script type="application/json" id="session-data">{json_for_script(data)}</script>\n',
            f"<script>{script}</script>\n</body></html>\n",
        ]
    )


__all__ = ["Renderer", "esc", "export_html", "json_for_script", "lexer_for_path"]

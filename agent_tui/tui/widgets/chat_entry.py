"""One entry of the active branch in the chat: a message, a tool result, a summary or a note.

Assistant text is markdown; thinking is collapsed; each tool call shows its
arguments (an ``edit`` call shows its edits as a diff); tool results are
collapsible; errors are shown in the error colour. Entries the model no
longer sees carry their status (hidden, replaced, summarized).

A text too big to lay out at once (a 20 MB pasted log, a huge tool output) is shown capped, as
plain text (:mod:`~agent_tui.tui.widgets.capped_text`).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from typing import Any

from rich.markdown import Markdown as RichMarkdown
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from agent_tui.agent.attachments import image_line
from agent_tui.projection.describe import first_line, is_permission, plural
from agent_tui.projection.image_tokens import ImageRule, anthropic_tokens, image_tokens
from agent_tui.projection.request import system_message_text
from agent_tui.projection.tokens import estimate_text
from agent_tui.projection.tool_facts import shown_facts
from agent_tui.store.content import args_summary, content_text, edit_diff
from agent_tui.store.kinds import BRANCH_MARKER, entry_type, kind_info
from agent_tui.store.record import Entry
from agent_tui.terminal_text import clip, visible, visible_line
from agent_tui.tui.symbols import lead
from agent_tui.tui.widgets.capped_text import CappedText, is_big, plain

MAX_RESULT_LINES = 400
MAX_ARG_CHARS = 20_000
CODE_THEME = "ansi_dark"


def text_widget(text: str, style: str = "", *, classes: str = "") -> Widget:
    """``text`` as plain text, capped when big."""
    if is_big(text):
        return CappedText(text, style, classes=classes)
    return Static(plain(text, style=style), classes=classes)


def markdown_widget(text: str) -> Widget:
    """Finished markdown; a big text is shown capped, as plain text (laying out megabytes of
    markdown takes minutes)."""
    if is_big(text):
        return CappedText(text, classes="markdown")
    return Static(markdown_renderable(text), classes="markdown")


def markdown_renderable(text: str) -> RichMarkdown:
    """Finished markdown as the chat shows it (the streamed reply renders its long fences with it too);
    terminal controls in it are made visible first."""
    return RichMarkdown(visible(text), code_theme=CODE_THEME)


def title_content(title: str) -> Content:
    """A collapsible's title from untrusted text: one line, never markup, controls visible."""
    return Content(visible_line(title))


def split_attachments(content: Any, images_by: ImageRule = anthropic_tokens) -> tuple[str, str]:
    """A user message's typed text, and what is attached to it: one line naming the files (the
    ``<file name="...">`` blocks an ``@path`` adds) with their tokens, and one line per image naming
    it (from the ``<file name>`` block before it), its format, pixel size and tokens (by
    ``images_by``, the rule of the API the next request goes to)."""
    if not isinstance(content, list):
        return content_text(content, "\n", image="[image]"), ""
    typed: list[str] = []
    files: list[str] = []
    images: list[str] = []
    named: str | None = None  # the file a ``<file name>`` block just named, for an image after it
    for block in content:
        if not isinstance(block, dict):
            continue
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str) and text.startswith('<file name="'):
            name = text[len('<file name="') :].split('"', 1)[0].rsplit("/", 1)[-1]
            files.append(f"{name} ({plural(estimate_text(text), 'token')})")
            named = name
            continue
        if block.get("type") == "image":
            if named is not None:
                files.pop()  # the image's own ``<file name>`` block: named on the image's line
            images.append(image_line(block, named, image_tokens(block, images_by)))
        else:
            typed.append(content_text([block], "\n", image="[image]"))
        named = None
    lines = (["attached: " + " · ".join(files)] if files else []) + images
    return "\n".join(typed), "\n".join(lines)


def clip_lines(text: str, limit: int = MAX_RESULT_LINES) -> str:
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    return "\n".join(lines[:limit]) + f"\n… {plural(len(lines) - limit, 'more line')}"


def text_diff(old: str, new: str, name: str) -> str:
    return "\n".join(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), f"{name} (original)", f"{name} (now)", lineterm="", n=1
        )
    )


def markdown_parts(text: str) -> list[tuple[str, str, str]]:
    """``text`` cut at its top-level fenced code blocks: ("md", "", source) and
    ("code", language, the code itself) parts, in order; the code part keeps its fence in
    ``source`` form through :func:`markdown_widgets`."""
    if "```" not in text and "~~~" not in text:
        return [("md", "", text)]
    from markdown_it import MarkdownIt

    lines = text.splitlines(keepends=True)
    parts: list[tuple[str, str, str]] = []
    pos = 0
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence" or token.level != 0 or not token.map:
            continue
        start, end = token.map
        if start > pos:
            parts.append(("md", "", "".join(lines[pos:start])))
        parts.append(("code", token.info.strip(), "".join(lines[start:end])))
        parts.append(("content", "", token.content))
        pos = end
    if pos < len(lines):
        parts.append(("md", "", "".join(lines[pos:])))
    return parts


class CodeHeader(Static):
    """The line above a code block in a reply: a click copies the block (OSC 52 where needed)."""

    DEFAULT_CSS = """
    CodeHeader { color: $text-muted; margin-top: 1; width: auto; }
    CodeHeader:hover { color: $accent; text-style: underline; }
    """

    def __init__(self, language: str, code: str) -> None:
        lines = code.count("\n") + (0 if code.endswith("\n") or not code else 1)
        label = f"⧉ copy {language + ' ' if language else ''}({lines} {'line' if lines == 1 else 'lines'})"
        super().__init__(Text(lead(visible_line(label))), classes="code-header")
        self.code = code

    def on_click(self) -> None:
        self.app.copy_to_clipboard(self.code)
        self.app.notify(f"Copied the code block ({plural(len(self.code), 'character')}).")


def markdown_widgets(text: str) -> list[Widget]:
    """A reply's markdown, with a copy header over each top-level code block."""
    if is_big(text):
        return [markdown_widget(text)]
    widgets: list[Widget] = []
    parts = markdown_parts(text)
    for i, (kind, info, source) in enumerate(parts):
        if kind == "md" and source.strip():
            widgets.append(markdown_widget(source))
        elif kind == "code":
            code = parts[i + 1][2] if i + 1 < len(parts) else ""
            widgets.append(CodeHeader(info.split(" ")[0], code))
            widgets.append(markdown_widget(source))
    return widgets


class LazyCollapsible(Collapsible):
    """A collapsible whose content is built the first time it is expanded (tool results can be big)."""

    def __init__(
        self, build: Callable[[], Widget], *, title: str, collapsed: bool = True, classes: str = ""
    ) -> None:
        self._build: Callable[[], Widget] | None = build
        if collapsed:  # its class from the start: Textual's mount adds it, restyling the subtree (~1 ms)
            classes = f"{classes} -collapsed".strip()
        super().__init__(title=title_content(title), collapsed=collapsed, classes=classes)  # type: ignore[arg-type]

    def _watch_collapsed(self, collapsed: bool) -> None:
        super()._watch_collapsed(collapsed)
        if not collapsed and self.is_mounted:
            self._build_contents()

    def on_mount(self) -> None:
        if not self.collapsed:
            self._build_contents()

    def _build_contents(self) -> None:
        build = getattr(self, "_build", None)
        if build is not None:
            self._build = None
            self.query_one(Collapsible.Contents).mount(build())


#: A message's CSS class in the chat, by its role (other kinds: ``kind_info(...).chat_class``).
_ROLE_CLASSES = {"user": "user", "assistant": "assistant", "toolResult": "tool", "bashExecution": "tool"}


class ChatEntry(Vertical):
    """The widgets of one entry; ``status`` is its status in the model's view, if not plain kept."""

    DEFAULT_CSS = """
    ChatEntry { height: auto; margin: 0 0 1 0; }
    ChatEntry.user { border-left: thick $primary; padding: 0 1; background: $boost; }
    ChatEntry.assistant { padding: 0 1; }
    ChatEntry.note { color: $text-muted; padding: 0 1; margin: 0; }
    ChatEntry.summary { border-left: thick $accent; padding: 0 1; }
    ChatEntry.tool { padding: 0 1; margin: 0; }
    ChatEntry.hidden { opacity: 60%; }
    ChatEntry .status { color: $warning; text-style: italic; }
    ChatEntry .error { color: $error; }
    ChatEntry Collapsible { margin: 0; padding: 0; border: none; background: transparent; }
    ChatEntry Collapsible > Contents { padding: 0 0 0 2; }
    ChatEntry .tool-error CollapsibleTitle { color: $error; }
    ChatEntry CollapsibleTitle { max-width: 100%; padding: 0 0 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(
        self,
        entry: Entry,
        status: str | None = None,
        original: str | None = None,
        images: ImageRule = anthropic_tokens,
    ) -> None:
        super().__init__()
        self.entry = entry
        self.images = images  # how an attached image's tokens are counted (the chat's rule)
        self.status = status
        self.original = original  # for context_edit replacements: the target's original text
        self._height: tuple[tuple[int, int], int] | None = None  # (width, children's version), height
        #: a failed attempt: the run of them this entry shows (the chat folds a run into its first)
        self.attempts: list[Entry] = [entry]
        kind = entry_type(entry.type)
        if kind == "message":
            css = _ROLE_CLASSES.get(entry.role or "", "note")
        else:
            css = kind_info(kind).chat_class if kind is not None else "note"
        self.add_class(css)
        self.set_class(status == "hidden", "hidden")

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The height for ``width``, kept until a child changes. Textual arranges a container whose
        children all have an auto height at its container's height too, so every change of the
        chat's height (the composer grows a line) re-arranged every entry in the chat's window:
        4-7 ms of a frame at 160x50. Nothing in an entry depends on that height."""
        key = (width, self._nodes._updates)
        if self._height is not None and self._height[0] == key:
            return self._height[1]
        height = super().get_content_height(container, viewport, width)
        self._height = (key, height)
        return height

    def _clear_arrangement_cache(self) -> None:
        super()._clear_arrangement_cache()  # a child's layout changed (Textual clears ancestors')
        self._height = None

    async def set_status(self, status: str | None, original: str | None = None) -> None:
        """Show a new status in the model's view (hidden, replaced...)."""
        self.status = status
        self.original = original
        self.set_class(status == "hidden", "hidden")
        await self.recompose()

    def compose(self) -> ComposeResult:
        entry = self.entry
        if self.status and self.status not in ("kept", "after_compaction", "summary"):
            yield Static(f"[{self.status}]", classes="status", markup=False)
        kind = entry_type(entry.type)
        match kind:
            case "message":
                yield from self._message(entry.message or {})
            case "compaction" | "branch_summary":
                title = "compaction summary" if kind == "compaction" else "branch summary"
                tokens = entry.data.get("tokensBefore")
                if isinstance(tokens, int):
                    title += f" ({plural(tokens, 'token')} before)"
                summary = str(entry.data.get("summary") or "")
                yield LazyCollapsible(lambda: markdown_widget(summary), title=title)
            case "custom_message":
                yield text_widget(content_text(entry.data.get("content"), "\n", image="[image]"))
            case "context_edit":
                yield from self._context_edit(entry)
            case _:  # the one-line kinds, and types we do not know
                yield Static(plain(_note(entry)))

    def _message(self, message: dict[str, Any]) -> ComposeResult:
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            text, attached = split_attachments(content, self.images)
            yield text_widget(text)
            if attached:
                yield Static(plain(attached), classes="attachments")
        elif role == "assistant" and message.get("stopReason") == "error":
            # failed attempts (the loop retries, or the turn ends with an error line): one folded
            # line for the run of them (the chat folds the later ones into the first), their
            # partial text and whole errors inside
            attempts = [a.message or {} for a in self.attempts]
            bodies = [_failed_attempt_body(a) for a in attempts]
            head = _failed_attempt_reason(attempts[-1])
            head = next((ln.strip() for ln in head.splitlines() if ln.strip()), head)[:90]
            if len(attempts) == 1:
                title = f"✗ failed attempt: {head}"
            else:
                title = f"✗ {len(attempts)} failed attempts, the last: {head}"
            yield LazyCollapsible(
                lambda: text_widget("\n\n".join(bodies)), title=lead(title), classes="failed-attempt"
            )
        elif role == "assistant":
            blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "thinking":
                    text = str(block.get("thinking", ""))
                    if text.strip():
                        yield LazyCollapsible(
                            lambda text=text: text_widget(text, "italic"),  # type: ignore[misc]
                            title="thinking",
                            classes="thinking",
                        )
                elif kind == "text":
                    text = str(block.get("text", ""))
                    if text.strip():
                        yield from markdown_widgets(text)
                elif kind == "toolCall":
                    yield tool_call_widget(block)
            if message.get("stopReason") == "aborted":
                reason = message.get("errorMessage") or "aborted"
                yield Static(plain(lead(f"✗ {reason}")), classes="error")
        elif role == "toolResult":
            text = content_text(content, "\n", image="[image]")
            name = message.get("toolName", "tool")
            mark = "✗" if message.get("isError") else "↳"
            head = next((ln.strip() for ln in text[:4000].splitlines() if ln.strip()), "(no output)")
            title = lead(f"{mark} {visible_line(f'{name}: {head[:70]}', strict=True)}")
            classes = "tool-output tool-error" if message.get("isError") else "tool-output"
            yield LazyCollapsible(lambda: text_widget(text), title=title, classes=classes)
        elif role == "bashExecution":
            title = f"$ {visible_line(str(message.get('command', ''))[:200], strict=True)}"
            if message.get("cancelled"):
                title += "  (cancelled)"
            elif message.get("exitCode") not in (None, 0):
                title += f"  (exit {message.get('exitCode')})"
            if message.get("excludeFromContext"):
                title += "  · not sent to the model"
            output = str(message.get("output") or "")
            yield LazyCollapsible(lambda: text_widget(output), title=title, classes="tool-output")
        elif role == "system":
            prompt = system_message_text(message)
            yield LazyCollapsible(
                lambda: text_widget(prompt), title=f"system prompt · {len(prompt):,} characters"
            )
        else:
            said = content_text(content, "\n", image="[image]")
            yield text_widget(f"{role}: {said}")

    def _context_edit(self, entry: Entry) -> ComposeResult:
        data = entry.data
        target = data.get("targetId")
        replacement = data.get("replacement")
        if replacement is None:
            yield Static(plain(lead(f"✎ hid {target} from the model")))
            return
        action = "restored" if data.get("restore") else "replaced"
        new = (
            content_text(replacement.get("content"), "\n", image="[image]")
            if isinstance(replacement, dict)
            else ""
        )
        if action == "restored" or self.original is None:
            yield Static(plain(lead(f"✎ {action} {target}")))
            return
        with Collapsible(title=title_content(lead(f"✎ replaced {target}")), collapsed=False):  # type: ignore[arg-type]
            diff = visible(text_diff(self.original, new, str(target)))
            yield Static(Syntax(diff, "diff", theme="ansi_dark"))


def tool_call_widget(block: dict[str, Any]) -> Widget:
    name = str(block.get("name", "tool"))
    args = block.get("arguments")
    title = f"→ {visible_line(name, strict=True)}({args_summary(args)})"
    if shown_facts(name).diff == "edits" and (diff := edit_diff(args)) is not None:
        diff = visible(diff)
        return Collapsible(
            Static(Syntax(diff, "diff", theme="ansi_dark", word_wrap=True)),
            title=title_content(title),  # type: ignore[arg-type]
            collapsed=False,
            classes="tool-output",
        )

    def build() -> Widget:
        try:
            pretty = json.dumps(args, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            pretty = str(args)
        return Static(Text(clip(pretty, MAX_ARG_CHARS)))

    return LazyCollapsible(build, title=title, classes="tool-output")


def is_failed_attempt(entry: Entry) -> bool:
    """A model call that failed (its partial reply and error), recorded as an assistant message."""
    return (
        entry.type == "message"
        and entry.role == "assistant"
        and (entry.message or {}).get("stopReason") == "error"
    )


def _failed_attempt_reason(message: dict[str, Any]) -> str:
    return str(message.get("errorMessage") or "the model call failed")


def _failed_attempt_body(message: dict[str, Any]) -> str:
    reason = _failed_attempt_reason(message)
    partial = content_text(message.get("content"), "\n", image="[image]")
    return f"{partial}\n\n✗ {reason}" if partial.strip() else f"✗ {reason}"


def _note(entry: Entry) -> str:
    if entry.type == "custom" and entry.data.get("customType") == BRANCH_MARKER:
        data = entry.data.get("data")
        origin = data.get("fromId") if isinstance(data, dict) else None
        return lead(f"↪ continued from {entry.parent_id} (the previous leaf was {origin})")
    if is_permission(entry):
        return lead(f"⚿ {visible_line(first_line(entry, 200), strict=True)}")
    kind = entry_type(entry.type)
    label = kind_info(kind).symbol if kind is not None else entry.type
    return f"{lead(label)}: {first_line(entry, 100)}"

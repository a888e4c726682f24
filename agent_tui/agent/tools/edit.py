"""edit{path, edits:[{oldText, newText}]}: exact, unique text replacements, as pi's edit tool.

Every oldText is matched against the original file (not incrementally) and must
occur exactly once; edits must not overlap. Matching is exact first, then
tolerant of trailing whitespace, smart quotes, Unicode dashes and spaces (only
the touched lines are rewritten then). A byte order mark and CRLF line endings
are kept.
"""

from __future__ import annotations

import difflib
import itertools
import json
import os
import re
import unicodedata
from dataclasses import dataclass

from agent_tui.agent.tools.base import (
    JSONObject,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    in_thread,
    resolve_path,
)
from agent_tui.agent.tools.locks import file_lock
from agent_tui.agent.tools.safe_open import open_checked, read_all, write_all


@dataclass(slots=True)
class Replacement:
    index: int
    length: int
    new_text: str
    edit_index: int = 0


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")


def normalize_for_fuzzy_match(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


def _find(content: str, old: str) -> tuple[int, int, bool]:
    """(index, length, fuzzy) of ``old`` in ``content``; index -1 when absent."""
    index = content.find(old)
    if index != -1:
        return index, len(old), False
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old)
    index = fuzzy_content.find(fuzzy_old)
    return index, len(fuzzy_old), index != -1


def _count(content: str, old: str) -> int:
    return normalize_for_fuzzy_match(content).count(normalize_for_fuzzy_match(old))


def _line_spans(content: str) -> list[tuple[int, int]]:
    spans = []
    offset = 0
    for line in re.findall(r"[^\n]*\n|[^\n]+", content):
        spans.append((offset, offset + len(line)))
        offset += len(line)
    return spans


def _apply(content: str, replacements: list[Replacement], offset: int = 0) -> str:
    for r in sorted(replacements, key=lambda r: r.index, reverse=True):
        start = r.index - offset
        content = content[:start] + r.new_text + content[start + r.length :]
    return content


def _widen_to_lines(original: str, base: str, replacements: list[Replacement]) -> list[Replacement]:
    """Replacements found in the fuzzy-normalized ``base``, moved onto ``original`` line by line."""
    original_lines = _line_spans(original)
    base_lines = _line_spans(base)
    if len(original_lines) != len(base_lines):
        raise ToolError(
            "Cannot preserve unchanged lines because the base content has a different line count."
        )
    groups: list[tuple[int, int, list[Replacement]]] = []
    for r in sorted(replacements, key=lambda r: r.index):
        start_line = next((i for i, (s, e) in enumerate(base_lines) if s <= r.index < e), -1)
        if start_line == -1:
            raise ToolError("Replacement range is outside the base content.")
        end_line = start_line
        while end_line < len(base_lines) and base_lines[end_line][1] < r.index + r.length:
            end_line += 1
        if end_line >= len(base_lines):
            raise ToolError("Replacement range is outside the base content.")
        if groups and start_line < groups[-1][1]:
            first, last, members = groups[-1]
            groups[-1] = (first, max(last, end_line + 1), [*members, r])
        else:
            groups.append((start_line, end_line + 1, [r]))
    out = []
    for first, last, members in groups:
        group_start, group_end = base_lines[first][0], base_lines[last - 1][1]
        original_start = original_lines[first][0]
        out.append(
            Replacement(
                original_start,
                original_lines[last - 1][1] - original_start,
                _apply(base[group_start:group_end], members, group_start),
            )
        )
    return out


def apply_edits(content: str, edits: list[JSONObject], path: str) -> tuple[str, list[Replacement]]:
    """pi's applyEditsToNormalizedContent: the new LF-normalized content and the replacements made."""
    normalized = [
        (normalize_to_lf(str(e.get("oldText", ""))), normalize_to_lf(str(e.get("newText", ""))))
        for e in edits
    ]
    many = len(normalized) > 1
    for i, (old, _) in enumerate(normalized):
        if not old:
            raise ToolError(
                f"edits[{i}].oldText must not be empty in {path}."
                if many
                else f"oldText must not be empty in {path}."
            )
    fuzzy = any(_find(content, old)[2] for old, _ in normalized)
    base = normalize_for_fuzzy_match(content) if fuzzy else content
    matched: list[Replacement] = []
    for i, (old, new) in enumerate(normalized):
        index, length, _ = _find(base, old)
        if index == -1:
            raise ToolError(
                f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines."
                if many
                else f"Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
            )
        occurrences = _count(base, old)
        if occurrences > 1:
            raise ToolError(
                f"Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
                if many
                else f"Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
            )
        matched.append(Replacement(index, length, new, i))
    matched.sort(key=lambda r: r.index)
    for previous, current in itertools.pairwise(matched):
        if previous.index + previous.length > current.index:
            raise ToolError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )
    replacements = _widen_to_lines(content, base, matched) if fuzzy else matched
    new_content = _apply(content, replacements)
    if new_content == content:
        raise ToolError(
            f"No changes made to {path}. The replacements produced identical content."
            if many
            else f"No changes made to {path}. The replacement produced identical content. This might indicate an "
            "issue with special characters or the text not existing as expected."
        )
    return new_content, replacements


def unified_diff(path: str, old: str, new: str) -> tuple[str, int | None]:
    """A unified diff for display, and the first changed line of the new file."""
    diff = list(
        difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), path, path, n=4)
    )
    first = None
    for line in diff:
        if line.startswith("@@"):
            m = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)", line)
            if m:
                first = int(m.group(1))
            break
    return "".join(diff), first


class EditTool(Tool):
    name = "edit"
    snippet = (
        "Make precise file edits with exact text replacement, including multiple disjoint edits in one call"
    )
    guidelines = (
        "Use edit for targeted changes. Batch changes to one file in a single call.",
        "Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and non-overlapping; merge nearby changes without including large unchanged regions.",
    )
    description = (
        "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, "
        "non-overlapping region of the original file. If two changes affect the same block or nearby lines, "
        "merge them into one edit instead of emitting overlapping edits. Do not include large unchanged "
        "regions just to connect distant changes."
    )
    parameters: JSONObject = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
            "edits": {
                "type": "array",
                "description": (
                    "One or more targeted replacements. Each edit is matched against the original file, not "
                    "incrementally. Do not include overlapping or nested edits. If two changes touch the same "
                    "block or nearby lines, merge them into one edit instead."
                ),
                "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": (
                                "Exact text for one targeted replacement. It must be unique in the original file "
                                "and must not overlap with any other edits[].oldText in the same call."
                            ),
                        },
                        "newText": {
                            "type": "string",
                            "description": "Replacement text for this targeted edit.",
                        },
                    },
                    "required": ["oldText", "newText"],
                },
            },
        },
        "required": ["path", "edits"],
    }

    def prepare_arguments(self, args: JSONObject) -> JSONObject:
        """pi's prepareEditArguments: edits sent as a JSON string, a single object, or legacy oldText/newText."""
        args = dict(args)
        edits = args.get("edits")
        if isinstance(edits, str):
            try:
                parsed = json.loads(edits)
            except (ValueError, RecursionError):  # the model's: nested too deeply is no edit
                parsed = None
            if isinstance(parsed, list):
                args["edits"] = parsed
            elif _is_edit(parsed):
                args["edits"] = [parsed]
        elif _is_edit(edits):
            args["edits"] = [edits]
        if isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str):
            existing = args.get("edits")
            listed = list(existing) if isinstance(existing, list) else []
            listed.append({"oldText": args.pop("oldText"), "newText": args.pop("newText")})
            args["edits"] = listed
        return args

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        path = str(args["path"])
        edits = args.get("edits")
        if not isinstance(edits, list) or not edits:
            raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
        absolute = resolve_path(path, ctx.cwd)
        async with file_lock(absolute):
            ctx.check()
            if not absolute.is_file():
                raise ToolError(f"Could not edit file: {path}. Error code: ENOENT.")
            # One descriptor, checked once, for the read and the write (see safe_open).
            fd = await in_thread(open_checked, absolute, path, create=False, guard=ctx.write_guard)
            try:
                return await self._edit(fd, path, edits, ctx)
            finally:
                os.close(fd)

    async def _edit(self, fd: int, path: str, edits: list[JSONObject], ctx: ToolContext) -> ToolResult:
        raw = await in_thread(read_all, fd)
        text = raw.decode("utf-8", "replace")
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        content = text[len(bom) :]
        normalized = normalize_to_lf(content)
        new_content, _ = apply_edits(normalized, edits, path)
        diff, first_line = unified_diff(path, normalized, new_content)
        ctx.check()
        final = new_content
        if content != normalized and "\r\n" in content:
            final = new_content.replace("\n", "\r\n")  # the file's line endings
        data = (bom + final).encode("utf-8")
        await in_thread(write_all, fd, data)
        return ToolResult.text(
            f"Successfully replaced {len(edits)} block(s) in {path}.",
            {"diff": diff, "firstChangedLine": first_line},
        )


def _is_edit(value: object) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("oldText"), str)
        and isinstance(value.get("newText"), str)
    )

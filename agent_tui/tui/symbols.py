"""The symbols the app draws, with an ASCII set for fonts that lack them (``ascii_symbols = true``).

``⑂`` and a few other marks render as tofu (an empty box) in many terminal fonts;
the config file's ``ascii_symbols = true`` swaps every symbol for plain ASCII. The
app calls :func:`use_ascii` once at start; widgets read :data:`SYMBOLS` when they draw, and
the chat's lines and the notices pass their leading mark through :func:`lead`.
"""

from __future__ import annotations

UNICODE = {
    "fork": "⑂",
    "leaf": "◀",
    "earlier": "⋯",
    "cycle": "⚠",
    "marker": "↪",
    "other": "·",
    "user": "❯",
    "assistant": "●",
    "toolResult": "↳",
    "system": "⚙",
    "bashExecution": "$",
    "compaction": "⊞",
    "branch_summary": "⑂",
    "context_edit": "✎",
    "label": "#",
    "model_change": "⚙",
    "thinking_level_change": "⚙",
    "session_info": "✦",
    "pin": "⚲",
    "custom_message": "◇",
    "custom:agent-tui.permission": "⚿",
}

ASCII = {
    "fork": "Y",
    "leaf": "<",
    "earlier": "...",
    "cycle": "!",
    "marker": ">",
    "other": ".",
    "user": ">",
    "assistant": "*",
    "toolResult": "-",
    "system": "%",
    "bashExecution": "$",
    "compaction": "=",
    "branch_summary": "Y",
    "context_edit": "~",
    "label": "#",
    "model_change": "%",
    "thinking_level_change": "%",
    "session_info": "+",
    "pin": "^",
    "custom_message": "o",
    "custom:agent-tui.permission": "?",
}

#: The set in use (the app switches it from the config file).
SYMBOLS: dict[str, str] = dict(UNICODE)


def use_ascii(on: bool) -> None:
    SYMBOLS.clear()
    SYMBOLS.update(ASCII if on else UNICODE)


def ascii_on() -> bool:
    return SYMBOLS["fork"] == ASCII["fork"]


#: The marks that lead a line of the chat or a notice (tool results, failed attempts, the code
#: copy line, notes), each with the ASCII mark it becomes.
_LEADS: dict[str, str] = {
    **{UNICODE[k]: ASCII[k] for k in UNICODE if len(UNICODE[k]) == 1 and not UNICODE[k].isascii()},
    "⧉": "[]",
    "✗": "x",
    "✓": "+",
}


def lead(text: str) -> str:
    """``text`` with its leading mark (``⚙ model: ...``, ``⑂``, ``✗ failed attempt``) in the set in
    use: the ASCII one when ``ascii_symbols`` is on. Only the first character is looked at, so
    the text after the mark (a message's, a file's) is shown as it is."""
    if text and text[0] in _LEADS and ascii_on():
        return _LEADS[text[0]] + text[1:]
    return text

"""Context-overflow errors: recognised by type and message, and the window read out of them.

Every server family says "the prompt is too long" in its own words, and most say how long the
window really is: a local server often runs with a context far smaller than the model's nominal
one (llama.cpp ``-c 4096``, Ollama's ``num_ctx``, vLLM ``--max-model-len``), so the figure in the
error is the only reliable one. :func:`parse_overflow` returns None for any other error, else
what the error told (each figure None when it did not say):

- Anthropic: ``prompt is too long: 9456 tokens > 9000 maximum``; ``input length and `max_tokens`
  exceed context limit: 188240 + 21333 > 200000``.
- OpenAI (code ``context_length_exceeded``): ``This model's maximum context length is 8192 tokens.
  However, your messages resulted in 9000 tokens`` / ``... you requested 9000 tokens (8000 in the
  messages, 1000 in the completion)``; the Responses API's ``Your input exceeds the context window``.
- llama.cpp (type ``exceed_context_size_error``, both APIs): ``request (1531 tokens) exceeds the
  available context size (1024 tokens)`` with ``n_prompt_tokens`` and ``n_ctx`` in the body.
- vLLM: ``This model's maximum context length is 4096 tokens. However, you requested 5000 tokens
  (4500 in the messages, 500 in the completion)`` / ``... your request has 4500 input tokens``.
- Ollama: ``prompt too long; exceeded max context length by 120 tokens`` (only the excess) or
  ``the input length exceeds the context length`` (nothing).
- LM Studio: ``Trying to keep the first 5000 tokens when context the overflows. However, the model
  is loaded with context length of only 4096 tokens`` / ``... greater than the context length``.
- Gemini (status ``INVALID_ARGUMENT``): ``The input token count (1196265) exceeds the maximum number
  of tokens allowed (1048575).``
- OpenRouter: ``This endpoint's maximum context length is 163840 tokens. However, you requested
  about 200000 tokens (190000 of text input, 10000 in the output)``.

Real bodies of each are fixtures under ``tests/fixtures/overflow``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Overflow:
    """What an overflow error said about the window (each None when not said)."""

    window: int | None = None  # the context the server has, in tokens
    prompt_tokens: int | None = None  # what the refused prompt counted (input only), by the server
    excess: int | None = None  # tokens over the window (Ollama says only this)


#: Error types and codes that are overflows whatever the message.
_OVERFLOW_TYPES = frozenset({"exceed_context_size_error", "context_length_exceeded", "request_too_large"})

#: Messages of an overflow (pi's list, for the families agent-tui talks to).
_OVERFLOW = re.compile(
    r"prompt (?:is )?too long"
    r"|exceeds? (?:the )?context limit|exceed context limit"
    r"|exceeds the context window"
    r"|exceeds (?:the )?(?:model'?s )?maximum context length"
    r"|context window exceeded"
    r"|input token count.*exceeds the maximum"
    r"|maximum context length is \d+"
    r"|exceeds the available context size"
    r"|greater than the context length"
    r"|context length of only \d+"
    r"|input length exceeds the context length"
    r"|exceeded (?:max )?context length"
    r"|context[_ ]length[_ ]exceeded"
    r"|too many tokens"
    r"|token limit exceeded",
    re.I,
)
#: Errors that mention tokens but are not overflows (a rate limit counted in tokens).
_NOT_OVERFLOW = re.compile(r"rate limit|too many requests|tokens per min|TPM", re.I)

_N = r"(\d[\d,]*)"
#: (pattern, group of the window, group of the prompt tokens); the first that matches wins.
_FIGURES: tuple[tuple[re.Pattern[str], int | None, int | None], ...] = (
    (re.compile(rf"prompt is too long:\s*{_N} tokens?\s*>\s*{_N}", re.I), 2, 1),
    (re.compile(rf"exceed context limit:\s*{_N}\s*\+\s*{_N}\s*>\s*{_N}", re.I), 3, 1),
    (
        re.compile(rf"request \({_N} tokens?\) exceeds the available context size \({_N} tokens?\)", re.I),
        2,
        1,
    ),
    (re.compile(rf"maximum context length is {_N} tokens?.*?{_N} in the messages", re.I | re.S), 1, 2),
    (re.compile(rf"maximum context length is {_N} tokens?.*?{_N} of text input", re.I | re.S), 1, 2),
    (re.compile(rf"maximum context length is {_N} tokens?.*?{_N} input tokens", re.I | re.S), 1, 2),
    (
        re.compile(
            rf"maximum context length is {_N} tokens?.*?messages resulted in {_N} tokens", re.I | re.S
        ),
        1,
        2,
    ),
    (re.compile(rf"keep the first {_N} tokens.*?context length of only {_N} tokens", re.I | re.S), 2, 1),
    (re.compile(rf"context length of only {_N} tokens", re.I), 1, None),
    (
        re.compile(
            rf"input token count \({_N}\) exceeds the maximum number of tokens allowed \({_N}\)", re.I
        ),
        2,
        1,
    ),
    (re.compile(rf"maximum context length is {_N} tokens?", re.I), 1, None),
    (re.compile(rf"maximum context length of {_N} tokens?", re.I), 1, None),
    (
        re.compile(rf"input length \({_N}\) exceeds (?:the )?model'?s maximum context length \({_N}\)", re.I),
        2,
        1,
    ),
)
_EXCESS = re.compile(rf"exceeded (?:max )?context length by {_N} tokens?", re.I)


def _number(text: str | None) -> int | None:
    if not text:
        return None
    try:
        value = int(text.replace(",", ""))
    except ValueError:
        return None
    return value if value > 0 else None


def _field(body: object, name: str) -> int | None:
    """A positive integer field of the error object (llama.cpp's ``n_ctx``, ``n_prompt_tokens``)."""
    if isinstance(body, Mapping):
        inner = body.get("error")
        for source in (inner, body) if isinstance(inner, Mapping) else (body,):
            value = source.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def is_overflow(etype: str | None, code: str | None, message: str) -> bool:
    """The error says the prompt does not fit the context (by its type or code, else its message)."""
    if (etype or "") in _OVERFLOW_TYPES or (code or "") in _OVERFLOW_TYPES:
        return True
    return bool(_OVERFLOW.search(message)) and not _NOT_OVERFLOW.search(message)


def parse_overflow(etype: str | None, code: str | None, message: str, body: object = None) -> Overflow | None:
    """The overflow an error reports, or None when it is not one."""
    if not is_overflow(etype, code, message):
        return None
    window = _field(body, "n_ctx")
    prompt = _field(body, "n_prompt_tokens")
    for pattern, window_group, prompt_group in _FIGURES:
        match = pattern.search(message)
        if match is None:
            continue
        if window is None and window_group is not None:
            window = _number(match.group(window_group))
        if prompt is None and prompt_group is not None:
            prompt = _number(match.group(prompt_group))
        break
    excess_match = _EXCESS.search(message)
    excess = _number(excess_match.group(1)) if excess_match else None
    return Overflow(window, prompt, excess)


def error_code(body: object) -> str | None:
    """The ``code`` of an error object when it is a word (OpenAI's ``context_length_exceeded``)."""
    if isinstance(body, Mapping):
        inner = body.get("error")
        source = inner if isinstance(inner, Mapping) else body
        code = source.get("code")
        if isinstance(code, str) and code:
            return code
    return None


__all__ = ["Overflow", "error_code", "is_overflow", "parse_overflow"]

"""The models one can pick: the registry's tables, the config file's ``[models]`` and what the
configured servers list, each marked by provider and whether a key is configured (pure).

:func:`search` is the picker's and ``--list-models SEARCH``'s fuzzy search; :func:`choose` turns
what ``--model`` / ``/model`` was given (``provider/id``, an exact or unambiguous fuzzy id, each
with an optional ``:level`` thinking suffix, pi's syntax) into one model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from agent_tui.projection import registry
from agent_tui.projection.models import MODELS, THINKING_LEVEL_ORDER, ModelInfo


@dataclass(frozen=True, slots=True)
class CatalogModel:
    provider: str
    id: str
    context_window: int | None
    source: str  # "built-in", "config" or "server"
    key: bool  # the provider has a key configured (or, at a base URL of one's own, needs none)

    @property
    def spec(self) -> str:
        return f"{self.provider}/{self.id}"

    def label(self) -> str:
        window = f"{self.context_window:,} tokens" if self.context_window else "window unknown"
        key = "" if self.key else " · no key"
        return f"{self.spec}  ({window}, {self.source}{key})"


def table_models(keyed: Callable[[str], bool], configured: Iterable[str] = ()) -> list[CatalogModel]:
    """The model table (built-in entries, then ``configured``: ids from the config's ``[models]``)."""
    builtin = {m.id for m in registry.builtin_models()}
    extra = set(configured)
    return [
        CatalogModel(
            m.provider,
            m.id,
            m.context_window,
            "config" if m.id in extra or m.id not in builtin else "built-in",
            keyed(m.provider),
        )
        for m in MODELS.values()
    ]


def merge(*groups: Iterable[CatalogModel]) -> list[CatalogModel]:
    """Every model once per provider (the first group naming it wins: the table before a server)."""
    seen: set[str] = set()
    out: list[CatalogModel] = []
    for group in groups:
        for m in group:
            if m.spec not in seen:
                seen.add(m.spec)
                out.append(m)
    return out


def _score(query: str, text: str) -> float | None:
    """A fuzzy match score (higher is better), None when ``query``'s characters are not in ``text``
    in order. A substring beats a scattered match; an earlier, tighter match beats a later one."""
    q, t = query.lower(), text.lower()
    if not q:
        return 0.0
    at = t.find(q)
    if at >= 0:
        return 1000.0 - at - (len(t) - len(q)) * 0.01
    position, gaps, start = 0, 0, -1
    for ch in q:
        found = t.find(ch, position)
        if found < 0:
            return None
        if start < 0:
            start = found
        gaps += found - position if position else 0
        position = found + 1
    return 500.0 - gaps - start * 0.1


def search(models: Sequence[CatalogModel], query: str) -> list[CatalogModel]:
    """The models matching ``query`` (every word, in ``provider/id``), best first; all for an empty one."""
    words = query.split()
    if not words:
        return list(models)
    scored: list[tuple[float, int, CatalogModel]] = []
    for order, m in enumerate(models):
        total = 0.0
        for word in words:
            score = _score(word, m.spec)
            if score is None:
                break
            total += score
        else:
            scored.append((-total, order, m))
    return [m for _, _, m in sorted(scored, key=lambda s: (s[0], s[1]))]


def split_level(text: str) -> tuple[str, str | None]:
    """``"sonnet:high"`` -> ``("sonnet", "high")``; a suffix that is not a thinking level is part of
    the id (Ollama's ``qwen2.5-coder:14b``)."""
    head, sep, tail = text.rpartition(":")
    if sep and head and tail in THINKING_LEVEL_ORDER:
        return head, tail
    return text, None


class ModelChoiceError(ValueError):
    """What ``--model`` named is not one model: the message says why (and the candidates)."""


def choose(
    models: Sequence[CatalogModel], text: str, provider: str | None = None
) -> tuple[CatalogModel | None, str | None]:
    """The model ``text`` names, and its thinking level suffix. ``provider/id`` and an exact id are
    taken as given (a model no list knows: None, for a local server to serve); otherwise a fuzzy
    match must be unambiguous, preferring models with a key (pi's rule)."""
    name, level = split_level(text.strip())
    prov, slash, rest = name.partition("/")
    if slash and prov in registry.PROVIDERS:
        provider, name = prov, rest
    pool = [m for m in models if provider is None or m.provider == provider]
    exact = [m for m in pool if m.id == name]
    if exact:
        keyed = [m for m in exact if m.key] or exact
        return keyed[0], level
    if slash and prov in registry.PROVIDERS:
        return None, level  # provider/id: taken as given
    found = search(pool, name)
    if not found:
        return None, level
    # Unambiguous: one model's id ends with the text (at a word's start), else one holds it as
    # typed, else one holds its letters in order; among several, the one whose provider has a key.
    lowered = name.lower()
    ending = [m for m in found if _ends_with_word(m.id.lower(), lowered)]
    best = ending or [m for m in found if lowered in m.id.lower()] or found
    keyed = [m for m in best if m.key]
    if len(keyed) == 1 or (not keyed and len(best) == 1):
        return (keyed or best)[0], level
    names = ", ".join(m.spec for m in (keyed or best)[:8])
    raise ModelChoiceError(f"{name!r} matches several models: {names}; name one as provider/id")


def _ends_with_word(model_id: str, text: str) -> bool:
    return model_id.endswith(text) and (len(model_id) == len(text) or not model_id[-len(text) - 1].isalnum())


def info_of(m: CatalogModel) -> ModelInfo:
    known = MODELS.get(m.id)
    return known or ModelInfo(m.provider, m.id, m.context_window or 128_000, 8_192, images=False)


__all__ = [
    "CatalogModel",
    "ModelChoiceError",
    "choose",
    "info_of",
    "merge",
    "search",
    "split_level",
    "table_models",
]

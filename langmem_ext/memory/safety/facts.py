"""Safety facts in text: which profile field a memory states, and what a question asks.

One owner for the bilingual (Chinese / English) vocabulary of the profile's
safety-critical fields:

- ``allergies``: allergic / allergy / allergies / 过敏;
- ``medications``: medication / medicine / meds / take … pills / prescribed / 药 /
  服用 (and drug names known by their form: ``-cillin``, ``-statin``, ``-pril``,
  二甲双胍, 阿司匹林 …);
- ``medical_conditions``: diagnosed with / suffer from / have asthma / 患有 / 确诊 /
  …病 / …症 / …炎;
- ``dietary_restrictions``: vegetarian / vegan / halal / don't eat … / 素食 / 吃素 /
  不吃 …;
- ``surgeries``: surgery / operation / had … removed / …ectomy / 手术 / 开刀 / 切除.

:func:`safety_facts` finds the statements of a memory (field, items, whom it is
about, negated or not); :func:`safety_topic` finds the fields a question (or any
message) is about and whom it asks about. Both are pure and cheap: a text without
any cue word costs one regex search.

**Whom a fact is about.** A statement counts as the user's when its subject is the
user: first person (I / I'm / my allergy / 我 / 我们 / we), "the user" / 主人 / 用户,
one of the profile's names (``Lin Wei is allergic to peanuts`` when the profile's
name is Lin Wei), or no subject at all (a note such as ``Allergic to penicillin`` /
``对青霉素过敏`` in the user's memory). The subject nearest before the cue wins, so
"I think my sister is allergic to shellfish" is the sister's, and "My doctor says I
have asthma" the user's; "prescribed me" / "给我开了" make the user the patient. A
transcript line (``Melanie: I'm allergic to cats``) speaks for its speaker. Anyone
else (my sister, 我妈妈, he, 她, Tom, 李雷) is another person, keyed by the relation
(the same key in both languages: ``sister`` for sister / 姐姐 / 妹妹) or the name.
Only the user's statements may propose a change of the user's profile; a question
about someone else ranks that person's statements first, not the user's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from langmem_ext.language import safety_vocab as v
from langmem_ext.language.relations import NOT_PERSONS
from langmem_ext.language.text import speaker_of

USER = "user"
"""The subject key of the user (the profile's subject)."""

DETECTED_FIELDS: tuple[str, ...] = (
    "allergies",
    "dietary_restrictions",
    "medical_conditions",
    "medications",
    "surgeries",
)
"""The safety fields whose statements are recognised in memories (profile order)."""

TOPIC_FIELDS: tuple[str, ...] = (*DETECTED_FIELDS, "accessibility_needs", "emergency_contact")
"""The safety fields a question can be about."""


@dataclass(frozen=True)
class SafetyFact:
    """One statement of a safety field.

    Attributes:
        field: The profile field (``allergies``, ``medications`` …).
        items: What it states (``("peanuts", "penicillin")``); empty when the
            statement names none ("I have food allergies", "我没有过敏").
        subject: :data:`USER`, or the key of another person (``sister``, ``tom``,
            ``李雷``, ``he``).
        negated: "not allergic to" / "stopped taking" / "不再对…过敏".
    """

    field: str
    items: tuple[str, ...]
    subject: str
    negated: bool = False


@dataclass(frozen=True)
class SafetyTopic:
    """What a question asks about.

    Attributes:
        fields: The safety fields it names, in profile order.
        subject: :data:`USER` or another person's key (see :class:`SafetyFact`).
    """

    fields: tuple[str, ...]
    subject: str


# --- subjects ----------------------------------------------------------------------


def _relation_key(phrase: str) -> str:
    words = re.findall(r"[a-zA-Z'-]+|[\u4e00-\u9fff]+", phrase)
    for w in reversed(words):
        key = v.RELATIONS.get(w.casefold().removesuffix("'s"))
        if key:
            return key
    if words and not words[-1].isascii():  # 我妹妹: the relation is a suffix of the run
        run = words[-1]
        for n in range(min(4, len(run)), 0, -1):
            key = v.RELATIONS.get(run[-n:])
            if key:
                return key
    return words[-1].casefold() if words else "other"


def _norm_name(name: str) -> str:
    return " ".join(name.casefold().split())


_MAX_NAME_CHARS = 4
_HANZI = re.compile(r"[\u4e00-\u9fff]+")


@lru_cache(maxsize=1 << 14)
def _char_readings(ch: str) -> frozenset[str]:
    """The toneless pinyin readings of one Chinese character (empty when unknown;
    the reading table is loaded on first use)."""
    from pypinyin.contrib.tone_convert import to_normal
    from pypinyin.pinyin_dict import pinyin_dict

    raw = pinyin_dict.get(ord(ch))
    return frozenset(to_normal(r) for r in raw.split(",")) if raw else frozenset()


def _readings(name: str) -> tuple[frozenset[str], ...] | None:
    """The readings of each character of a Chinese name; ``None`` for anything else."""
    if not name or len(name) > _MAX_NAME_CHARS or not _HANZI.fullmatch(name):
        return None
    out = tuple(_char_readings(ch) for ch in name)
    return None if not all(out) else out


def same_person(a: str, b: str) -> bool:
    """Whether two person keys name one person: equal, or a Chinese name and its
    pinyin ("林伟" and "lin wei" / "linwei"; "小雨" and "xiaoyu"), which is how a name
    is written in the other language.

    Example:
        >>> same_person("林伟", "lin wei"), same_person("xiaoyu", "小雨"), same_person("林伟", "li wei")
        (True, True, False)
    """
    if a == b:
        return True
    for cjk, latin in ((a, b), (b, a)):
        if not latin.isascii():
            continue
        readings = _readings(cjk)
        if readings is None:
            continue
        parts = re.split(r"[\s\-']+", latin.casefold().strip())
        if len(parts) == len(readings):
            return all(p in r for p, r in zip(parts, readings, strict=True))
        joined = "".join(parts)
        spelled = {""}
        for r in readings:
            spelled = {x + y for x in spelled for y in r if joined.startswith(x + y)}
            if not spelled:
                return False
        return joined in spelled
    return False


def is_relation(key: str) -> bool:
    """Whether a person key is a relation to another person (``wife``, ``mother``,
    ``colleague``), not a name; the user's pet and doctor do not count (a pet is
    the user's own, "医生说我…" states the user's fact)."""
    return key in _RELATION_KEYS


_RELATION_KEYS = frozenset(v.RELATIONS.values()) - NOT_PERSONS


def _is_named(key: str, names: frozenset[str]) -> bool:
    """Whether ``key`` is one of the profile's ``names`` (in either language)."""
    return key in names or any(same_person(key, n) for n in names)


def _subject(
    before: str, names: frozenset[str], speaker: str | None, rest_of_sentence: str = ""
) -> str:
    """Whom a clause is about, from the text before its cue (see the module docstring)."""
    span = before
    best: tuple[int, str] | None = None

    def note(pos: int, who: str) -> None:
        nonlocal best
        if best is None or pos >= best[0]:
            best = (pos, who)

    for name in names:  # the profile's names
        if name:
            at = span.casefold().rfind(name)
            if at >= 0:
                note(at + len(name), USER)
    for m in v.MARKERS_EN.finditer(span):
        kind = m.lastgroup or ""
        if kind in ("rel", "relpos"):
            note(m.end(), _relation_key(m.group(kind)))
        elif kind in ("user", "mine"):
            note(m.end(), USER)
        else:
            note(m.end(), m.group(kind).casefold().split("'")[0])
    for m in v.MARKERS_ZH.finditer(span):
        kind = m.lastgroup or ""
        if kind == "rel":
            note(m.end(), _relation_key(m.group(kind)))
        elif kind == "user":
            note(m.end(), USER)
        else:
            note(m.end(), m.group(kind))
    for m in v.NAME_EN.finditer(span):  # a capitalised name that is no sentence word
        words = [w for w in re.split(r"[ -]", m.group(0)) if w.casefold() not in v.NOT_NAME]
        # A capitalised first word is a name only when a verb follows it ("Tom has
        # asthma"), not in "Peanut allergy, …" / "Unfortunately, …".
        first = span[: m.start()].strip() == "" and len(words) == 1
        tail = span[m.end() :] + rest_of_sentence
        if words and not (first and (_sentence_word(words[0]) or not v.VERB.match(tail))):
            key = _norm_name(" ".join(words))
            owned = v.POSSESSED.match(span[m.end() :])
            if owned is not None:  # "Wu Lei's wife is allergic…": the wife's fact
                note(m.end() + owned.end(), _relation_key(owned.group(1)))
            else:
                note(m.end(), USER if _is_named(key, names) else key)
    rest = v.FILLER_ZH.sub("", v.MARKERS_ZH.sub("", re.sub(r"[A-Za-z'\-\s\d.,]+", "", span)))
    if best is None and rest and len(rest) <= 6:  # a Chinese name: 李雷对花生过敏
        best = (len(span), USER if _is_named(rest, names) else rest)
    who = USER if best is None else best[1]
    if who == USER and speaker is not None:  # a transcript line speaks for its speaker
        return USER if speaker in names or speaker in v.USER_SPEAKERS else speaker
    return who


_NAME_ANYWHERE = re.compile(r"(?<![A-Za-z])[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*(?![A-Za-z])")
"""A capitalised name, also right after Chinese text ("我丈夫Mark")."""
_APPOSITION = 3
"""Characters between two markers of one noun phrase at most: "my wife Claire", "我丈夫Mark"."""


def persons(text: str, names: Iterable[str | None] = ()) -> tuple[str, ...]:
    """Whom a memory (or a question) is mainly about: the person keys of its first
    subject phrase, in the keys of :class:`SafetyFact` (:data:`USER`, a relation such
    as ``wife``, a name such as ``mark``).

    The first person marker of the text opens the phrase; markers right after it name
    the same person ("my wife Claire" → ``wife``, ``claire``; "我丈夫Mark" →
    ``husband``, ``mark``), and a relation owned by the one before replaces it ("Wu
    Lei's wife" → ``wife``). The profile's names are the user. Pronouns alone name
    nobody; a transcript line (``Name: text``) and a text without a marker give
    ``()``: whom it is about is unknown.

    Args:
        text: A memory or a question (any language).
        names: The profile's name and preferred name.

    Returns:
        The keys, the main one first; ``()`` when unknown.

    Example:
        >>> persons("My wife Xu Ting loves shrimp dumplings")
        ('wife', 'xu ting')
        >>> persons("我妈妈住在杭州"), persons("I live in Dublin with my wife Claire")
        (('mother',), ('user',))
        >>> persons("What does Wu Lei's wife do?"), persons("林伟对花生过敏", ["林伟"])
        (('wife',), ('user',))
    """
    if not isinstance(text, str):
        return ()
    return _persons(text[:_SUBJECT_PHRASE], _names(names))[0]


def owner(text: str, names: Iterable[str | None] = ()) -> str | None:
    """Whose relation the subject of ``text`` is, when a person is named as its owner:
    ``wu lei`` for "Wu Lei's wife is allergic to shrimp" (the wife is not Wu Lei);
    ``None`` otherwise.

    Example:
        >>> owner("Wu Lei's business partner Xiao Ma is allergic to peanuts")
        'wu lei'
        >>> owner("Wu Lei is allergic to celery"), owner("My wife is allergic to latex")
        (None, None)
    """
    if not isinstance(text, str):
        return None
    return _persons(text[:_SUBJECT_PHRASE], _names(names))[3]


def subject_phrase(text: str, names: Iterable[str | None] = ()) -> str:
    """The words of ``text`` that say whom it is about: the span of its first subject
    phrase, as :func:`persons` reads it ("my wife Xu Ting", "我男朋友", "Wu Lei's
    wife", "Lin Wei"); ``""`` when it names nobody.

    Args:
        text: A question or a memory.
        names: The profile's name and preferred name.

    Returns:
        The phrase, as written.

    Example:
        >>> subject_phrase("What does my wife Xu Ting do?"), subject_phrase("我男朋友喜欢吃什么？")
        ('my wife Xu Ting', '我男朋友')
        >>> subject_phrase("What is Wu Lei's signature dish?"), subject_phrase("Prefers tea")
        ('Wu Lei', '')
    """
    if not isinstance(text, str):
        return ""
    head = text[:_SUBJECT_PHRASE]
    _keys, start, end, _owner = _persons(head, _names(names))
    return head[start:end]


_SUBJECT_PHRASE = 48
"""Characters of a text :func:`persons` reads: its subject opens it (within
:data:`_SUBJECT_WITHIN` characters), a name may stand next to it."""


@lru_cache(maxsize=1 << 14)
def _persons(text: str, known: frozenset[str]) -> tuple[tuple[str, ...], int, int, str | None]:
    """The keys of the first subject phrase of ``text``, where the phrase is, and the
    key of the person whose relation it is ("Wu Lei's wife": ``wu lei``; else ``None``)."""
    if speaker_of(text) is not None:
        return (), 0, 0, None
    found: list[tuple[int, int, str]] = []
    low = text.casefold()
    for name in known:
        at = low.find(name)
        if name and at >= 0:
            found.append((at, at + len(name), USER))
        elif name.isascii() and _HANZI.match(text):  # "林伟对…" for "Lin Wei"
            for size in range(2, _MAX_NAME_CHARS + 1):
                if same_person(text[:size], name):
                    found.append((0, size, USER))
                    break
    for m in v.MARKERS_EN.finditer(text):
        kind = m.lastgroup or ""
        if kind in ("rel", "relpos"):
            found.append((m.start(), m.end(), _relation_key(m.group(kind))))
        elif kind in ("user", "mine"):
            found.append((m.start(), m.end(), USER))
    for m in v.MARKERS_ZH.finditer(text):
        kind = m.lastgroup or ""
        if kind == "rel":
            found.append((m.start(), m.end(), _relation_key(m.group(kind))))
        elif kind == "user":
            found.append((m.start(), m.end(), USER))
    for m in _NAME_ANYWHERE.finditer(text):
        words = [w for w in re.split(r"[ -]", m.group(0)) if w.casefold() not in v.NOT_NAME]
        if not words or (m.start() == 0 and len(words) == 1 and not _names_a_subject(text, m)):
            continue
        key = _norm_name(" ".join(words))
        found.append(
            (m.end() - len(" ".join(words)), m.end(), USER if _is_named(key, known) else key)
        )
    if not found:
        return (), 0, 0, None
    found.sort()
    start, end, key = found[0]
    if start > _SUBJECT_WITHIN:
        return (), 0, 0, None  # the first person named is deep in the sentence: not its subject
    keys = [key]
    owner: str | None = None
    for at, to, k in found[1:]:
        if at < end:  # overlapping markers of one phrase ("my wife" and "my")
            if k != USER and keys[-1] == USER and at == start:
                keys[-1] = k
            end = max(end, to)
            continue
        owned = v.POSSESSED.match(text[end:])
        if owned is not None:  # "Wu Lei's wife": the wife
            owner = keys[0]
            keys = [_relation_key(owned.group(1))]
            end += owned.end()
            if at < end:
                continue
        if at - end > _APPOSITION or k == USER or k in v.RELATIONS.values():
            break  # only a name stands next to the person it names
        keys.append(k)
        end = to
    owned = v.POSSESSED.match(text[end:])
    if owned is not None:
        owner = keys[0]
        keys = [_relation_key(owned.group(1))]
        end += owned.end()
    return tuple(dict.fromkeys(keys)), start, end, owner


_SUBJECT_WITHIN = 12
"""A memory's subject is named in its first characters ("My wife…", "我妈妈…",
"Wu Lei's wife…"); a name further in ("Dentist appointment with Dr. Weber") is not."""
_THIRD_PERSON = re.compile(r"^\s+(?:\w+(?:s|ed)\b|'s\b)")


def _names_a_subject(text: str, m: re.Match[str]) -> bool:
    """Whether one capitalised word opening ``text`` is a name: a verb follows it
    ("Tom works…", "Mark started…", "Claire is…"), not an object ("Prefers oolong
    tea", "Wants to learn Rust")."""
    word = m.group(0)
    if _sentence_word(word):
        return False
    tail = text[m.end() :]
    return bool(v.VERB.match(tail) or _THIRD_PERSON.match(tail))


def _sentence_word(word: str) -> bool:
    """Whether a capitalised first word is an ordinary word rather than a name."""
    return word.casefold() in v.NOT_NAME or len(word) <= 2


# --- items -------------------------------------------------------------------------


def _items(obj: str, lang: str) -> tuple[str, ...]:
    out: list[str] = []
    for raw in v.ITEM_SPLIT.split(obj):
        item = raw.strip(" \t'\"“”‘’「」『』()（）.。!！?？:：")
        if lang == "en":
            item = v.TRAIL_EN.sub("", v.LEAD_EN.sub("", item)).strip()
            if item and not item.isupper():
                item = item.lower()
        else:
            item = v.TRAIL_ZH.sub("", v.LEAD_ZH.sub("", item)).strip()
        if item and len(item) <= 60 and item.casefold() not in v.GENERIC:
            out.append(item)
    return tuple(dict.fromkeys(out))


def item_key(item: str) -> str:
    """How two items are compared: case, spaces, hyphens and an English plural ignored.

    Example:
        >>> item_key("Peanuts") == item_key("peanut"), item_key("花生") == item_key(" 花生 ")
        (True, True)
    """
    key = re.sub(r"[\s\-_'’]+", "", item.casefold())
    if key.isascii() and len(key) > 3:
        key = re.sub(r"(?:ies)$", "y", key)
        key = re.sub(r"(?<=[^s])s$", "", key)
    return key


def _open_fields(text: str) -> set[str]:
    """The fields whose gate ``text`` (case-folded) opens: set look-ups decide for most
    texts that no field can match."""
    words = frozenset(text.translate(v.PUNCT).split())
    tails = frozenset(w[-4:] for w in words)
    heads = frozenset(w[:4] for w in words)
    cjk = v.CJK.search(text) is not None
    if (
        v.ALL_WORDS.isdisjoint(words)
        and not any(
            not g.words.isdisjoint(words) and not g.needs.isdisjoint(words) for g in v.PAIRED
        )
        and v.TAILS.isdisjoint(tails)
        and v.HEADS.isdisjoint(heads)
        and not (cjk and v.ZH_CUES.search(text))
    ):
        return set()
    return {
        f
        for f, gates in v.GATES.items()
        if any(g.opens(words, tails, heads, text, cjk) for g in gates)
    }


def _with_evidence(field: str, lang: str, items: tuple[str, ...]) -> tuple[str, ...]:
    """The items of a generic verb (take X / have X / 吃X / 有X) that name a drug or a
    condition, each at most six words."""
    if field == "medications":
        pattern = v.DRUG_EN if lang == "en" else v.DRUG_ZH
    else:
        pattern = v.CONDITION_EN if lang == "en" else v.CONDITION_ZH
    return tuple(i for i in items if pattern.search(i) and len(i.split()) <= 6)


def _fact_of(
    rule: v.Rule, m: re.Match[str], sentence: str, names: frozenset[str], speaker: str | None
) -> SafetyFact | None:
    field, lang = rule.field, rule.lang
    groups = m.groupdict()
    obj = (groups.get("o") or "").strip()
    negated = bool(groups.get("n"))
    before = sentence[: m.start()]
    if lang == "zh" and obj:  # 我花生过敏 / 我的胆囊切除了: the subject leads the object
        lead = v.ZH_LEAD.match(obj)
        if lead is not None and lead.end() > 0:
            before, obj = before + obj[: lead.end()], obj[lead.end() :]
            negated = negated or bool(v.NEGATION_ZH.search(lead.group(0)))
    items: tuple[str, ...]
    if groups.get("d"):
        d = groups["d"]
        if field == "medical_conditions":
            items = (v.ADJ_CONDITIONS.get(d.casefold(), d.casefold()),)
        else:
            items = (v.DIETS_ZH.get(d, d),) if lang == "zh" else (d.casefold(),)
    elif field == "dietary_restrictions" and groups.get("x"):
        base = [i for i in _items(obj, lang) if not v.MEALS & ({i} | set(i.casefold().split()))]
        if not base:
            return None
        items = tuple(("no " + i) if lang == "en" else ("不吃" + i) for i in base)
    elif field == "dietary_restrictions" and lang == "en" and obj:
        items = (f"{obj.casefold()} diet",)
    elif field == "surgeries":
        items = _surgery_items(lang, obj, groups)
    else:
        items = _items(obj, lang) if obj else ()
    if field == "medications" and lang == "en":
        items = tuple(
            re.sub(r"^(\d+\s?\w+) of (.+)$", r"\2 \1", re.sub(r"\s+for\s+.*$", "", i))
            for i in items
        )
    if not rule.strong:
        items = _with_evidence(field, lang, items)
        if not items:
            return None
    if not items and not negated and (field != "allergies" or not v.STATES_SOME.search(before)):
        return None  # "Allergies can be tough" / "people suffer from it": nobody's fact
    rest = sentence[m.start() :]
    subject = USER if groups.get("me") else _subject(before, names, speaker, rest)
    return SafetyFact(field=field, items=items, subject=subject, negated=negated)


def _surgery_items(lang: str, obj: str, groups: dict[str, str | None]) -> tuple[str, ...]:
    s = (groups.get("s") or "").casefold()
    on = (groups.get("on") or "").strip().lower()
    if lang == "zh":
        if s in v.OPERATED_ZH:
            return ("开刀",)
        core = v.SURGERY_LEAD_ZH.sub("", obj.strip())
        return (core + s,) if core or s != "手术" else ()
    if s in v.SURGERY_DONE:
        return _items(f"{obj} {s}", lang)
    if s:
        what = on or v.LEAD_EN.sub("", obj).strip().lower()
        kind = re.sub(r"operations$", "operation", re.sub(r"surgeries$", "surgery", s))
        if not what or what.split()[0] in v.NO_SURGERY_OBJECT_EN:
            return ()
        return (f"{what} {kind}",)
    if on:
        return (f"{on} surgery",)
    return _items(obj, lang)


@lru_cache(maxsize=1 << 16)  # room for a large scope's memories, read search after search
def _facts_cached(text: str, names: frozenset[str]) -> tuple[SafetyFact, ...]:
    if not _open_fields(text.casefold()):
        return ()
    speaker = speaker_of(text)
    if speaker is not None and (_open_fields(speaker) or speaker in v.LABELS):
        speaker = None  # "Allergies: peanuts" / "Note: …": a label, not a person
    body = re.split(r"[:：]", text, maxsplit=1)[1] if speaker else text
    out: dict[tuple[str, str, bool], list[str]] = {}
    for sentence in v.SENTENCES.split(body.replace("’", "'")):
        if not sentence.strip() or _is_question(sentence):
            continue
        langs = {"zh"} if v.CJK.search(sentence) else set()
        if v.LATIN.search(sentence):
            langs.add("en")
        fields = _open_fields(sentence.casefold())
        if not fields:
            continue
        taken: list[tuple[str, int, int]] = []
        for rule in v.RULES:
            if rule.field not in fields or rule.lang not in langs:
                continue
            for m in rule.pattern.finditer(sentence):
                if any(f == rule.field and m.start() < e and b < m.end() for f, b, e in taken):
                    continue  # an earlier (more specific) rule of the field read this part
                fact = _fact_of(rule, m, sentence, names, speaker)
                if fact is None:
                    continue
                taken.append((rule.field, m.start(), m.end()))
                bucket = out.setdefault((fact.field, fact.subject, fact.negated), [])
                bucket += [i for i in fact.items if i not in bucket]
    return tuple(
        SafetyFact(field, _dedup_items(items), subject, negated)
        for (field, subject, negated), items in sorted(
            out.items(), key=lambda kv: (DETECTED_FIELDS.index(kv[0][0]), kv[0][1], kv[0][2])
        )
    )


def _dedup_items(items: Sequence[str]) -> tuple[str, ...]:
    """Items once each; an item contained in a longer one of the same statement goes."""
    keys = {item_key(i): i for i in items}
    out = [i for k, i in keys.items() if not any(k != o and k in o and k.isascii() for o in keys)]
    return tuple(out)


def _is_question(sentence: str) -> bool:
    return bool(v.QUESTION.search(sentence.strip()))


def _names(names: Iterable[str | None]) -> frozenset[str]:
    return frozenset(_norm_name(n) for n in names if n and n.strip())


def safety_facts(text: str, names: Iterable[str | None] = ()) -> list[SafetyFact]:
    """The safety statements of a memory text, one per field, subject and negation.

    Questions and texts without a cue word give none.

    Args:
        text: A memory (any language; a transcript line speaks for its speaker).
        names: The profile's name and preferred name: a statement about them is
            the user's.

    Returns:
        The facts, in profile field order.

    Example:
        >>> [(f.field, f.items, f.subject) for f in safety_facts("I'm allergic to peanuts and penicillin")]
        [('allergies', ('peanuts', 'penicillin'), 'user')]
        >>> [(f.field, f.subject) for f in safety_facts("我妹妹对虾过敏")]
        [('allergies', 'sister')]
    """
    if not isinstance(text, str) or not text.strip():
        return []
    return list(_facts_cached(text.strip(), _names(names)))


def user_facts(text: str, names: Iterable[str | None] = ()) -> list[SafetyFact]:
    """The statements of :func:`safety_facts` about the user."""
    return [f for f in safety_facts(text, names) if f.subject == USER]


def safety_topic(query: str, names: Iterable[str | None] = ()) -> SafetyTopic | None:
    """The safety fields a question (or message) is about, and whom it asks about.

    Example:
        >>> safety_topic("Does Lin Wei have any food allergies?", ["Lin Wei"])
        SafetyTopic(fields=('allergies',), subject='user')
        >>> safety_topic("我做过什么手术"), safety_topic("What's the weather?")
        (SafetyTopic(fields=('surgeries',), subject='user'), None)
    """
    if not isinstance(query, str) or not query.strip():
        return None
    text = query.replace("’", "'")
    hits = [(f, m) for f, p in v.TOPIC_CUES.items() if (m := p.search(text)) is not None]
    if not hits:
        return None
    fields = tuple(f for f in TOPIC_FIELDS if f in {f for f, _ in hits})
    cue = min(m.start() for _, m in hits)
    known = _names(names)
    subject = _subject(text[:cue], known, None, text[cue:])
    if subject == USER:  # the subject may follow the cue: "what medications is my dad on?"
        after = _subject(text[cue:], known, None)
        subject = after if after != USER and v.MARKERS_OTHER.search(text[cue:]) else USER
    return SafetyTopic(fields=fields, subject=subject)


__all__ = [
    "DETECTED_FIELDS",
    "TOPIC_FIELDS",
    "USER",
    "SafetyFact",
    "SafetyTopic",
    "is_relation",
    "item_key",
    "persons",
    "safety_facts",
    "safety_topic",
    "same_person",
    "user_facts",
]

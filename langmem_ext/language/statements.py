"""Explicit first-person statements, found without a model, with their slot.

The deterministic fallback of the background extractor: a user sentence such as
``我住在上海`` / ``I moved to Berlin last month`` /
``我对花生过敏`` / ``my favourite colour is green`` becomes a :class:`Statement`
(subject, predicate, object, negation). Its :attr:`Statement.slot` says what a
later statement replaces: one value per slot for single-valued predicates (where
one lives, one's name, job, employer, partner, a favourite), one slot per object
for the others (liking or being allergic to one thing), so "I no longer like
coffee" replaces "I like coffee" but "I like tea" does not.

Only explicit statements count: questions, hypotheticals ("if I lived in…") and
reported speech are skipped; a sentence with no pattern gives nothing. Pure: no
I/O, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from langmem_ext.language import moves
from langmem_ext.language.sentences import is_question, normalize_quotes, split_sentences

USER = "user"
"""The subject of every first-person statement (the scope's user)."""

SINGLE_VALUED = frozenset(
    {"name", "lives_in", "from", "works_as", "works_at", "partner", "age", "favourite"}
)
"""Predicates with one current value: a new statement supersedes the old one."""


@dataclass(frozen=True)
class Statement:
    """One explicit statement of the user about themself.

    Attributes:
        text: The sentence, as said (trimmed).
        subject: Always :data:`USER` for first-person statements.
        predicate: ``name``, ``lives_in``, ``from``, ``works_as``, ``works_at``,
            ``partner``, ``age``, ``favourite``, ``likes``, ``allergic_to``.
        object: The value (``上海``, ``Berlin``, ``peanuts``).
        negated: ``True`` for "I don't like…" / "我不再对…过敏".
        qualifier: Refines the predicate: the kind of favourite (``colour``,
            ``颜色``) or of partner (``wife``, ``女朋友``); empty otherwise.
        lang: ``"zh"`` or ``"en"``.
    """

    text: str
    subject: str
    predicate: str
    object: str
    negated: bool = False
    qualifier: str = ""
    lang: str = "en"

    @property
    def slot(self) -> str:
        """What this statement replaces when it changes.

        ``user|lives_in`` for single-valued predicates (``user|favourite|colour``
        with a qualifier), ``user|likes|coffee`` for the others: the object is part
        of the slot, the negation is not.
        """
        parts = [self.subject, self.predicate]
        if self.qualifier:
            parts.append(_norm_key(self.qualifier))
        if self.predicate not in SINGLE_VALUED:
            parts.append(_norm_key(self.object))
        return "|".join(parts)


def single_valued(slot: str) -> bool:
    """Whether a slot holds one current value (``user|lives_in``): a newer statement
    of it replaces the older ones.

    Example:
        >>> single_valued("user|lives_in"), single_valued("user|likes|coffee")
        (True, False)
    """
    parts = slot.split("|")
    return len(parts) >= 2 and parts[1] in SINGLE_VALUED


def _norm_key(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip()


_ZH_OBJ = r"(?P<o>[^，,。！!？?；;：:\s]{1,20}?)"
_ZH_END = r"(?:了|啦|呢|哦|喔|呀|的)?(?=$|[，,。！!？?；;\s])"
_ZH_WHEN = (
    r"(?:现在|目前|如今|已经|刚刚|刚|最近|上个月|上周|上星期|这个月|本月|这周|去年|今年|前几天|昨天"
    r"|(?:去年|今年)?(?:\d{1,2}|[一二三四五六七八九十]{1,3})月(?:份)?(?:初|中|底)?)?"
)
_EN_OBJ = r"(?P<o>[^,.;:!?]{1,40}?)"
_EN_END = (
    r"(?:\s+(?:now|these days|since \w+|last (?:week|month|year)|this (?:week|month|year)"
    r"|recently|anymore|any more|a while ago|from now on|\w+ (?:days|weeks|months|years) ago))?"
    r"\s*(?=$|[,.;:!?])"
)
_EN_WHEN = r"(?:(?:now|currently|recently|just|actually|finally|also)\s+)?"
_ART = r"(?:(?:a|an|the)\s+)?"


def _alt(words: tuple[str, ...]) -> str:
    """A regex alternation of ``words``, the longest first."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


# (pattern, predicate, negated); named groups: o (object), q (qualifier), n (negation)
_ZH_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), pred)
    for p, pred in (
        (rf"我{_ZH_WHEN}(?:的名字)?(?:叫|名叫|的名字是){_ZH_OBJ}{_ZH_END}", "name"),
        (rf"我{_ZH_WHEN}(?:住在|住|定居在|定居于){_ZH_OBJ}{_ZH_END}", "lives_in"),
        (rf"{moves.MOVE_SUBJECTS_ZH}{_ZH_WHEN}(?:已经|也|就|终于)?(?:{_alt(moves.MOVE_VERBS_ZH)})了?"
         rf"{_ZH_OBJ}(?:住|居住|生活|工作)?{_ZH_END}", "lives_in"),
        (rf"我{_ZH_WHEN}(?:来自|來自|老家在|是){_ZH_OBJ}人{_ZH_END}", "from"),
        (rf"我{_ZH_WHEN}(?:来自|來自|老家在){_ZH_OBJ}{_ZH_END}", "from"),
        (rf"我{_ZH_WHEN}(?:的工作|的职业)是{_ZH_OBJ}{_ZH_END}", "works_as"),
        (rf"我{_ZH_WHEN}(?:是|当|做)(?:了)?(?:一名|一个|一位|名){_ZH_OBJ}{_ZH_END}", "works_as"),
        (rf"我{_ZH_WHEN}(?:换工作)?(?:在|去|到){_ZH_OBJ}(?:工作|上班|任职){_ZH_END}", "works_at"),
        (rf"我{_ZH_WHEN}(?:跳槽|换工作)(?:到|去)了?{_ZH_OBJ}{_ZH_END}", "works_at"),
        (rf"我{_ZH_WHEN}(?:的)?(?P<q>女朋友|男朋友|女友|男友|老婆|老公|妻子|丈夫|太太|先生|对象)"
         rf"{_ZH_WHEN}(?:是|叫){_ZH_OBJ}{_ZH_END}", "partner"),
        (rf"我{_ZH_WHEN}(?P<o>\d{{1,3}})岁{_ZH_END}", "age"),
        (rf"我{_ZH_WHEN}最(?:喜欢|爱)的(?P<q>[^，,。！？\s]{{1,6}}?)(?:是|叫){_ZH_OBJ}{_ZH_END}",
         "favourite"),
        (rf"我{_ZH_WHEN}(?P<n>不再|已经不|不|没有|没)?对{_ZH_OBJ}过敏{_ZH_END}", "allergic_to"),
        (rf"我{_ZH_WHEN}(?P<n>不再|已经不|不太|不|讨厌|討厭)?(?:很|非常|特别|超级|超|挺|真的|也)?"
         rf"(?:喜欢|喜歡|爱|愛|讨厌|討厭)(?:吃|喝|看|玩|听|聽)?{_ZH_OBJ}{_ZH_END}", "likes"),
    )
)  # fmt: skip

_EN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), pred)
    for p, pred in (
        (rf"\bmy name is (?:now )?{_EN_OBJ}{_EN_END}", "name"),
        (rf"\b(?:please )?call me {_EN_OBJ}{_EN_END}", "name"),
        (rf"\bi(?:'m| am) called {_EN_OBJ}{_EN_END}", "name"),
        (rf"\bi {_EN_WHEN}live in {_EN_OBJ}{_EN_END}", "lives_in"),
        (rf"\bi(?:'m| am) {_EN_WHEN}living in {_EN_OBJ}{_EN_END}", "lives_in"),
        (rf"\b{moves.MOVE_SUBJECTS_EN}(?:'ve| have| had)? {_EN_WHEN}(?:[a-z]+ (?:and|then) )?"
         rf"(?:{_alt(moves.MOVE_VERBS_EN)}) {_EN_OBJ}"
         rf"(?:\s+(?:in|for|to|with|after|because|last|this|when)\b[^,.;:!?]*)?{_EN_END}",
         "lives_in"),
        (rf"\bi(?:'m| am) (?:originally )?from {_EN_OBJ}{_EN_END}", "from"),
        (rf"\bi {_EN_WHEN}work as {_ART}{_EN_OBJ}{_EN_END}", "works_as"),
        (rf"\bi(?:'m| am) {_EN_WHEN}working as {_ART}{_EN_OBJ}{_EN_END}", "works_as"),
        (rf"\bmy (?:job|profession|occupation) is {_ART}{_EN_OBJ}{_EN_END}", "works_as"),
        (rf"\bi(?:'ve| have)? {_EN_WHEN}became {_ART}{_EN_OBJ}{_EN_END}", "works_as"),
        (rf"\bi {_EN_WHEN}work (?:at|for) {_EN_OBJ}{_EN_END}", "works_at"),
        (rf"\bi(?:'m| am) {_EN_WHEN}working (?:at|for) {_EN_OBJ}{_EN_END}", "works_at"),
        (rf"\bi(?:'ve| have)? {_EN_WHEN}(?:joined|started (?:working )?at|started a (?:new )?job at"
         rf"|got a (?:new )?job at) {_EN_OBJ}{_EN_END}", "works_at"),
        (rf"\bmy (?P<q>girlfriend|boyfriend|wife|husband|partner|fiancée?)(?:'s name)? is "
         rf"(?:now )?{_EN_OBJ}{_EN_END}", "partner"),
        (rf"\bi(?:'m| am) {_EN_WHEN}(?P<o>\d{{1,3}})(?: years old)?{_EN_END}", "age"),
        (rf"\bmy (?:new )?favou?rite (?P<q>[a-z ]{{1,20}}?) is (?:now )?{_EN_OBJ}{_EN_END}",
         "favourite"),
        (rf"\bi(?:'m| am) (?P<n>not |no longer )?{_EN_WHEN}allergic to {_EN_OBJ}{_EN_END}",
         "allergic_to"),
        (rf"\bi (?P<n>don't |do not |no longer |never )?{_EN_WHEN}(?:really )?"
         rf"(?:like|love|enjoy|hate|dislike) {_EN_OBJ}{_EN_END}", "likes"),
    )
)  # fmt: skip

_POSTED = (
    re.compile(rf"(?:把我|我被|我)(?:{_alt(moves.POSTING_VERBS_ZH)})了?{_ZH_OBJ}{_ZH_END}"),
    re.compile(
        rf"\bi (?:{_alt(moves.POSTING_VERBS_EN)}) (?P<o>[^,.;:!?]{{1,40}}?)"
        r"(?=\s+(?:and|in|for|last|this|so)\b|\s*(?:$|[,.;:!?]))",
        re.IGNORECASE,
    ),
)
"""An employer's posting of the user to a place (the place is group ``o``)."""
_MOVED_THERE = (
    re.compile(rf"{moves.MOVE_SUBJECTS_ZH}{_ZH_WHEN}(?:就|也|已经|都)?{moves.ELIDED_MOVE_ZH}"),
    re.compile(
        rf"\b{moves.MOVE_SUBJECTS_EN}(?:'ve| have)? {_EN_WHEN}{moves.ELIDED_MOVE_EN}", re.IGNORECASE
    ),
)
"""A move whose place is left out: the place the posting before it named."""


def _posted_move(sentence: str, lang: str) -> Statement | None:
    """``lives_in`` for a posting followed by a move without a place in one sentence
    ("公司把我调到了成都基地，我三月搬过去了"; "I was transferred to Leeds and we moved
    there"); ``None`` otherwise (a posting alone may be to a department)."""
    i = 0 if lang == "zh" else 1
    posted = _POSTED[i].search(sentence)
    if posted is None:
        return None
    moved = _MOVED_THERE[i].search(sentence, posted.end())
    place = _clean_object(posted.group("o"), lang)
    if moved is None or not place:
        return None
    return Statement(
        text=sentence.strip(), subject=USER, predicate="lives_in", object=place, lang=lang
    )


_NEGATIVE_VERBS = re.compile(r"\b(?:hate|dislike)\b|讨厌|討厭", re.IGNORECASE)
_SKIP_ZH = re.compile(
    r"如果|假如|要是|假设|假設|他说|她说|他們|他们|她们|朋友说|是不是|吗|嗎|哪|什么|什麼|谁|誰|几|幾|多少|怎么|怎麼|为什么|為什麼"
)
_SKIP_EN = re.compile(
    r"^\s*(?:if|when|suppose|maybe|perhaps)\b|\b(?:he|she|they) (?:said|says|told)\b"
    r"|\bwould\b|\bcould\b|\bused to\b|\bwish\b",
    re.IGNORECASE,
)
_TRAIL_EN = re.compile(
    r"\s+(?:too|as well|a lot|very much|so much|now|originally|anymore)$", re.IGNORECASE
)
_CLAUSES = re.compile(r"[，,；;]\s*|\s+(?:and|but|so)\s+(?=(?:i|my)\b)", re.IGNORECASE)
_MAX_OBJECT_WORDS = 6
ITEMS_SPLIT_RE = re.compile(r"\s*(?:和|与|及|、|,|，|\band\b)\s*")
"""What joins the items of one object (花生和青霉素 / peanuts and penicillin)."""


def _clean_object(text: str, lang: str) -> str:
    text = text.strip(" \t'\"“”‘’「」『』")
    if lang == "en":
        text = _TRAIL_EN.sub("", text).strip()
    else:
        text = re.sub(r"(?:了|啦|呢|哦|的)$", "", text)
    return text


def _match(sentence: str, lang: str) -> Statement | None:
    patterns = _ZH_PATTERNS if lang == "zh" else _EN_PATTERNS
    for pattern, predicate in patterns:
        m = pattern.search(sentence)
        if m is None:
            continue
        groups = m.groupdict()
        obj = _clean_object(groups.get("o") or "", lang)
        if not obj or (lang == "en" and len(obj.split()) > _MAX_OBJECT_WORDS):
            continue
        negated = bool(groups.get("n")) or (
            predicate == "likes" and bool(_NEGATIVE_VERBS.search(m.group(0)))
        )
        return Statement(
            text=sentence.strip(),
            subject=USER,
            predicate=predicate,
            object=obj,
            negated=negated,
            qualifier=(groups.get("q") or "").strip(),
            lang=lang,
        )
    return None


def _lang(sentence: str) -> str:
    return "zh" if re.search(r"[\u4e00-\u9fff]", sentence) else "en"


def extract_statements(text: str) -> list[Statement]:
    """Explicit first-person statements in ``text``, in order.

    Args:
        text: What the user said (Chinese, English or both).

    Returns:
        One :class:`Statement` per sentence (or clause) that states a fact about
        the user; questions and hypotheticals give none.

    Example:
        .. code-block:: python

            [s.slot for s in extract_statements("我叫李雷，我上个月搬到深圳了。")]
            # ['user|name', 'user|lives_in']
    """
    out: list[Statement] = []
    for sentence in split_sentences(normalize_quotes(text)):
        if is_question(sentence):
            continue
        for clause in _CLAUSES.split(sentence):
            lang = _lang(clause)
            if not clause.strip() or (_SKIP_ZH if lang == "zh" else _SKIP_EN).search(clause):
                continue
            found = _match(clause, lang)
            if found is not None:
                out.append(found)
        if not any(st.predicate == "lives_in" and st.text in sentence for st in out):
            posted = _posted_move(sentence, _lang(sentence))
            if posted is not None:
                out.append(posted)
    return out


def slot_of(text: str) -> str | None:
    """The slot of a memory that states one fact about the user (``None`` when it
    states none or several)."""
    found = {st.slot for st in extract_statements(text)}
    return found.pop() if len(found) == 1 else None


# A question about one of the user's own attributes -> the slot it asks for.
# ``{q}`` in a slot is the matched qualifier (a favourite's kind, a partner's role).
_QUESTION_SLOTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), slot)
    for p, slot in (
        (r"我(?:现在|目前)?(?:住在?|家在|居住在|生活在)[^，,。？?]{0,6}?(?:哪|什么地方|什么城市)"
         r"|我(?:现在|目前)?(?:在|住在)哪(?:个|座)(?:城市|区)(?:生活|居住)?", "lives_in"),
        (r"\bwhere (?:do|did) i (?:now |currently )?live\b"
         r"|\bwhere am i (?:now |currently )?(?:living|based|staying)\b"
         r"|\bwhere(?:'s| is) my home\b"
         r"|\bwhich (?:city|town|district|neighbou?rhood|area) (?:do i live in|am i (?:now |currently )?"
         r"(?:living|based|staying) in)\b", "lives_in"),
        (r"我(?:是|来自|來自)(?:哪里|哪儿|哪個|哪个地方)|我老家在哪", "from"),
        (r"\bwhere am i from\b|\bwhere do i come from\b", "from"),
        (r"我(?:现在)?(?:是)?(?:做|干)什么(?:工作)?的|我的(?:工作|职业)是什么|我(?:现在)?是干什么的",
         "works_as"),
        (r"\bwhat(?:'s| is) my (?:job|profession|occupation)\b"
         r"|\bwhat do i do(?: for (?:a living|work))?\b|\bwhat is my line of work\b", "works_as"),
        (r"我(?:现在)?在(?:哪|哪家|什么)(?:家)?(?:公司|单位)?(?:工作|上班)", "works_at"),
        (r"\b(?:where|which company|what company|who) do i (?:now )?work(?: for| at)?\b"
         r"|\bwho is my employer\b", "works_at"),
        (r"我(?:的)?(?P<q>女朋友|男朋友|女友|男友|老婆|老公|妻子|丈夫|太太|先生|对象)(?:现在)?(?:叫|是)(?:谁|什么)",
         "partner|{q}"),
        (r"\bwho(?:'s| is) my (?P<q>girlfriend|boyfriend|wife|husband|partner|fiancée?)\b"
         r"|\bwhat(?:'s| is) my (?P<q2>girlfriend|boyfriend|wife|husband|partner)'s name\b",
         "partner|{q}"),
        (r"我(?:现在)?叫什么(?:名字)?|我的名字(?:是|叫)什么", "name"),
        (r"\bwhat(?:'s| is) my name\b|\bwho am i\b", "name"),
        (r"我(?:今年)?(?:几|多少)岁|我多大", "age"),
        (r"\bhow old am i\b", "age"),
        (r"我(?:现在)?最(?:喜欢|爱)(?:的)?(?:什么|哪(?:个|种))(?P<q>[^？?，。\s]{1,6}?)(?:[？?。]|$)"
         r"|我最(?:喜欢|爱)的(?P<q2>[^？?，。\s]{1,6}?)是(?:什么|哪)", "favourite|{q}"),
        (r"\bwhat(?:'s| is) my (?:current )?favou?rite (?P<q>[a-z ]{1,20}?)\b(?:\?|$| now)",
         "favourite|{q}"),
        (r"我对什么过敏|我有(?:什么)?过敏", "allergic_to"),
        (r"\bwhat am i allergic to\b|\bdo i have (?:any )?(?:food )?allergies\b|\bmy allergies\b",
         "allergic_to"),
    )
)  # fmt: skip


def question_slots(text: str) -> list[str]:
    """The slots a question about the user asks for (``user|lives_in``; for
    multi-valued predicates such as ``user|allergic_to`` a prefix of their slots).

    Example:
        >>> question_slots("我现在住在哪里？"), question_slots("What is my favourite colour?")
        (['user|lives_in'], ['user|favourite|colour'])
    """
    out: list[str] = []
    clean = normalize_quotes(text).strip()
    for pattern, slot in _QUESTION_SLOTS:
        m = pattern.search(clean)
        if m is None:
            continue
        groups = m.groupdict()
        q = (groups.get("q") or groups.get("q2") or "").strip()
        if "{q}" in slot:
            if not q:
                continue
            slot = slot.format(q=_norm_key(q))
        full = f"{USER}|{slot}"
        if full not in out:
            out.append(full)
    return out


__all__ = [
    "ITEMS_SPLIT_RE",
    "SINGLE_VALUED",
    "USER",
    "Statement",
    "extract_statements",
    "question_slots",
    "single_valued",
    "slot_of",
]

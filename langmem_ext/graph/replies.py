"""Whether a user's reply answers the assistant's proposal to save memories, and how.

The assistant proposed one or more pending saves (numbered as it showed them); the
user's next message in the same conversation may answer the proposal: all of them
(``"好的，记住吧"``, ``"yes please"``, ``"不用了"``, ``"no, don't"``), some of them by
number or by words (``"第二个"``, ``"1 and 3"``, ``"save the ramen one"``), or some
yes and others no (``"第一个保存，第二个不要"``). Anything else (a greeting, a
question, a new topic, a sentence that merely contains 好 / 不 / ok / no) answers
nothing: the proposal stays pending and the conversation goes on.

Without a model the decision is deterministic: the whole reply (or its first
sentences, when a clear answer is followed by a new sentence) must be made of
answer words (yes / no / save / don't, numbers, all / both / the others, politeness,
fillers) and of words naming a proposed item (or its pending id); one unknown word
and it answers nothing (the words are in :mod:`langmem_ext.language.replies_vocab`).
With a model, one structured-output call decides; when it fails, the deterministic
classifier does.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from langmem_ext.language import replies_vocab as vocab

logger = logging.getLogger(__name__)

ReplyKind = Literal["affirm", "deny", "mixed", "unrelated"]


class ProposedSave(Protocol):
    """A proposed save as the user saw it (a :class:`~langmem_ext.PendingItem` is one)."""

    @property
    def id(self) -> str:
        """The pending id."""
        ...

    @property
    def text(self) -> str:
        """What would be remembered."""
        ...


@dataclass(frozen=True)
class ReplyDecision:
    """What a reply decides about the proposals it answers.

    Attributes:
        kind: ``affirm`` (only confirms), ``deny`` (only rejects), ``mixed`` (both) or
            ``unrelated`` (answers nothing: every proposal stays pending).
        confirm: Pending ids to confirm, in proposal order.
        reject: Pending ids to reject, in proposal order.
        by: ``"rules"`` (the deterministic classifier) or ``"model"``.
    """

    kind: ReplyKind
    confirm: tuple[str, ...] = ()
    reject: tuple[str, ...] = ()
    by: Literal["rules", "model"] = "rules"

    @property
    def resolves(self) -> bool:
        """Whether the reply confirms or rejects anything."""
        return bool(self.confirm or self.reject)


UNRELATED = ReplyDecision("unrelated")


def decision_of(
    proposals: Sequence[ProposedSave],
    confirm: Sequence[int],
    reject: Sequence[int],
    by: Literal["rules", "model"] = "rules",
) -> ReplyDecision:
    """The decision confirming and rejecting proposals by 0-based index.

    An index on both sides, or outside the proposals, makes the reply unrelated:
    a contradictory answer resolves nothing.
    """
    yes, no = set(confirm), set(reject)
    n = len(proposals)
    if yes & no or any(not 0 <= i < n for i in yes | no):
        return UNRELATED
    c = tuple(proposals[i].id for i in sorted(yes))
    r = tuple(proposals[i].id for i in sorted(no))
    kind: ReplyKind = "mixed" if c and r else "affirm" if c else "deny" if r else "unrelated"
    return ReplyDecision(kind, c, r, by)


# -- normalising ---------------------------------------------------------------------


def normalise(text: str) -> str:
    """Full-width to ASCII (NFKC), lower case, traditional to simplified for the
    answer words, emoji answers as words, whitespace collapsed."""
    t = (
        unicodedata.normalize("NFKC", text)
        .translate(vocab.QUOTES)
        .lower()
        .translate(vocab.TRADITIONAL)
    )
    for emoji, word in vocab.EMOJI.items():
        t = t.replace(emoji, word)
    t = "".join(ch for ch in t if unicodedata.category(ch) not in ("So", "Sk", "Cf", "Mn"))
    return re.sub(r"\s+", " ", t).strip()


_REASON_MAX_CHARS = 6
_REASON_MAX_WORDS = 5
_ZH_MAX = max(len(w) for w in vocab.ZH)
_EN_MAX = max(len(p) for p in vocab.EN)
_SENTENCE = re.compile(r"[.!?;。！？；…\n]+")
_WORD = re.compile(r"#?\d+(?:st|nd|rd|th)?|[a-z]+(?:'[a-z]+)?|&")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff、\d]+")


@dataclass
class _Tok:
    kind: str
    text: str
    ords: tuple[int, ...] = ()


def _cjk_tokens(run: str) -> Iterator[_Tok]:
    """Longest-match tokens of a run of Chinese text; unknown characters are
    gathered into ``WORD`` chunks."""
    i, chunk = 0, ""
    while i < len(run):
        best: _Tok | None = None
        for n in range(min(_ZH_MAX, len(run) - i), 0, -1):
            kind = vocab.ZH.get(run[i : i + n])
            if kind is not None:
                best = _Tok(kind, run[i : i + n])
                break
        m = vocab.ZH_ORD.match(run, i)
        if m is not None and (best is None or len(m.group(0)) > len(best.text)):
            best = _Tok("ORD", m.group(0), _zh_ords(m))
        if best is None:
            chunk += run[i]
            i += 1
            continue
        if chunk:
            yield _Tok("WORD", chunk)
            chunk = ""
        yield best
        i += len(best.text)
    if chunk:
        yield _Tok("WORD", chunk)


def _zh_number(s: str) -> int:
    return int(s) if s.isdigit() else vocab.ZH_NUM[s]


def _zh_ords(m: re.Match[str]) -> tuple[int, ...]:
    text = m.group(0)
    if text.startswith("前"):
        return tuple(range(1, _zh_number(m.group(3)) + 1))
    if text.startswith("最后"):
        return (-1,)
    if text.startswith("后"):
        n = _zh_number(m.group(4))
        return tuple(range(-n, 0))
    if m.group(1):
        return (_zh_number(m.group(1)),)
    if m.group(2):
        return (_zh_number(m.group(2)),)
    return (int(text),)


def _en_tokens(words: list[str]) -> Iterator[_Tok]:
    """Longest-phrase tokens of a run of English words; others are ``WORD``."""
    i = 0
    while i < len(words):
        for n in range(min(_EN_MAX, len(words) - i), 0, -1):
            kind = vocab.EN.get(tuple(words[i : i + n]))
            if kind is not None:
                yield _Tok(kind, " ".join(words[i : i + n]))
                i += n
                break
        else:
            w = words[i]
            if w == "number" and i + 1 < len(words) and words[i + 1].lstrip("#").isdigit():
                yield _Tok("ORD", f"{w} {words[i + 1]}", (int(words[i + 1].lstrip("#")),))
                i += 2
                continue
            ordinal = vocab.EN_ORD.get(w)
            digits = re.fullmatch(r"#?(\d+)(?:st|nd|rd|th)?", w)
            if ordinal is not None:
                yield _Tok("ORD", w, (ordinal,))
            elif digits:
                yield _Tok("ORD", w, (int(digits.group(1)),))
            else:
                yield _Tok("WORD", w)
            i += 1


def _tokens(clause: str) -> list[_Tok]:
    """Tokens of one clause (Chinese and English may mix: ``"ok的"``)."""
    out: list[_Tok] = []
    words: list[str] = []
    i = 0

    def flush_words() -> None:
        if words:
            out.extend(_en_tokens(words))
            words.clear()

    while i < len(clause):
        run = _CJK_RUN.match(clause, i)  # Chinese, with the digits inside it ("第1个", "1和3")
        if run is not None and _CJK.search(run.group(0)):
            flush_words()
            out.extend(_cjk_tokens(run.group(0)))
            i = run.end()
            continue
        m = _WORD.match(clause, i)
        if m is not None:
            words.append(m.group(0))
            i = m.end()
            continue
        i += 1  # spaces and symbols separate words
    flush_words()
    return _combine(out)


def _combine(toks: list[_Tok]) -> list[_Tok]:
    """Negations applied: "不要" + "记" and "don't" + "save" are one DONT, "not" +
    "ok" one NO; "no" + "thanks" stays NO + POLITE."""
    out: list[_Tok] = []
    for t in toks:
        prev = out[-1] if out else None
        if prev is not None and prev.kind in ("NO", "DONT") and t.kind == "SAVE":
            out[-1] = _Tok("DONT", f"{prev.text} {t.text}")
        elif prev is not None and prev.kind in ("NO", "DONT") and t.kind in ("YES", "YES!"):
            out[-1] = _Tok("NO", f"{prev.text} {t.text}")
        else:
            out.append(t)
    return out


# -- clauses ---------------------------------------------------------------------------


@dataclass
class _Clause:
    polarity: int = 0  # +1 confirm, -1 reject, 0 not said
    picks: set[int] = field(default_factory=set)  # 0-based items named
    all: bool = False
    others: bool = False
    only: bool = False
    excepted: set[int] = field(default_factory=set)
    strong: bool = False  # says more than a bare yes / no

    @property
    def selects(self) -> bool:
        return bool(self.picks or self.all or self.others or self.excepted)


class _NotAnAnswer(Exception):
    """The text is no answer form (an unknown word, a question, a contradiction)."""


def _stem(word: str) -> str:
    w = word[:-1] if len(word) > 3 and word.endswith("s") else word
    return w[:5]


def _item_words(text: str) -> tuple[str, set[str]]:
    t = normalise(text)
    return t, {_stem(w) for w in re.findall(r"[a-z]+", t) if w not in vocab.STOP}


def _word_pick(words: Sequence[str], items: Sequence[tuple[str, set[str]]]) -> int:
    """The one item every word of a clause names (Chinese: a substring of its text of
    two characters or more; English: a content word of it)."""
    found: set[int] | None = None
    for w in words:
        if _CJK.match(w):
            hits = {i for i, (t, _) in enumerate(items) if len(w) >= 2 and w in t}
        elif w in vocab.STOP:
            continue
        else:
            hits = {i for i, (_, ws) in enumerate(items) if _stem(w) in ws}
        found = hits if found is None else found & hits
        if not found:
            raise _NotAnAnswer(w)
    if found is None or len(found) != 1:
        raise _NotAnAnswer(" ".join(words))
    return next(iter(found))


def _index(n: int, count: int) -> int:
    i = n - 1 if n > 0 else count + n
    if not 0 <= i < count:
        raise _NotAnAnswer(f"no item {n}")
    return i


def _clauses(sentence: str, items: Sequence[tuple[str, set[str]]]) -> list[_Clause]:
    """The answer clauses of a sentence; raises :class:`_NotAnAnswer` when any part
    of it is not an answer (a reason clause after an answer is allowed)."""
    out: list[_Clause] = []
    parts = [p.strip() for p in vocab.CLAUSE.split(sentence) if p.strip()]
    for k, part in enumerate(parts):
        try:
            out.extend(_parse_clause(part, items))
        except _NotAnAnswer:
            if k == 0 or k < len(parts) - 1 or not _is_reason(part):
                raise
    if not out:
        raise _NotAnAnswer(sentence)
    return out


def _is_reason(part: str) -> bool:
    """A short last clause about the item after the answer ("这个很重要", "it's not true
    anymore"), which the answer may carry."""
    if vocab.ZH_REF.match(part):
        return len(_CJK.findall(part)) <= _REASON_MAX_CHARS
    return bool(vocab.EN_REF.match(part)) and len(part.split()) <= _REASON_MAX_WORDS


def _parse_clause(text: str, items: Sequence[tuple[str, set[str]]]) -> list[_Clause]:
    """One or more clauses ("1 yes 2 no" is two) of a comma-free part."""
    if vocab.QUESTION_ZH.search(text):
        raise _NotAnAnswer("a question")
    toks = _tokens(text)
    count = len(items)
    out = [_Clause()]
    words: list[str] = []
    excepted_words: list[str] = []
    excepting = False
    prev = ""
    for t in toks:
        c = out[-1]
        k = t.kind
        if k in ("UNSURE", "SHIFT"):
            raise _NotAnAnswer(t.text)
        if k in ("ORD", "WORD") and c.polarity and c.selects and prev != "JOIN" and not excepting:
            c = _Clause()
            out.append(c)
        if k in ("YES", "YES!", "SAVE"):
            if c.polarity < 0:
                raise _NotAnAnswer("yes and no")
            c.polarity = 1
            c.strong = c.strong or k != "YES"
        elif k in ("NO", "DONT", "NONE"):
            if c.polarity > 0:
                raise _NotAnAnswer("yes and no")
            c.polarity = -1
            c.strong = c.strong or k != "NO"
            c.all = c.all or k == "NONE"
        elif k == "ORD":
            picked = {_index(n, count) for n in t.ords}
            (c.excepted if excepting else c.picks).update(picked)
            c.strong = True
        elif k == "WORD":
            (excepted_words if excepting else words).append(t.text)
        elif k == "ALL":
            if t.text.startswith(("两", "both", "all two")) and count != 2:
                raise _NotAnAnswer("both, of more than two")
            if t.text.startswith(("三", "all three")) and count != 3:
                raise _NotAnAnswer("all three, of another number")
            c.all, c.strong, excepting = True, True, False
        elif k == "OTHERS":
            c.others = c.strong = True
        elif k == "ONLY":
            c.only = c.strong = True
        elif k == "EXCEPT":
            excepting = c.strong = True
        elif k == "POLITE":
            c.strong = True
        if k not in ("ORD", "WORD", "JOIN", "FILL"):
            excepting = excepting and k == "EXCEPT"
        if k != "FILL":
            prev = k
    if words:
        target = next((c for c in out if not c.picks and not c.all), out[-1])
        target.picks.add(_word_pick(words, items))
        target.strong = True
    if excepted_words:
        out[-1].excepted.add(_word_pick(excepted_words, items))
    return [c for c in out if c.polarity or c.selects or c.strong]  # "吧", "the": nothing


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _question(text: str) -> bool:
    return "?" in text or "吗" in text


def _answer_clauses(text: str, items: Sequence[tuple[str, set[str]]]) -> list[_Clause]:
    """The clauses of the sentences that answer; a sentence after a clear answer
    (or starting with "also" / "另外") may talk about something else."""
    norm = normalise(text)
    pieces = re.split(r"(?<=[.!?;。！？；…\n])", norm)
    clauses: list[_Clause] = []
    for piece in (p.strip() for p in pieces):
        body = _SENTENCE.sub(" ", piece).strip()
        if not body:
            continue
        try:
            if _question(piece):
                raise _NotAnAnswer("a question")
            clauses += _clauses(body, items)
        except _NotAnAnswer:
            if clauses and (any(c.strong for c in clauses) or _starts_new_topic(body)):
                break  # the answer is made; the rest is a new message
            raise
    if not any(c.polarity or c.selects for c in clauses):
        raise _NotAnAnswer(text)  # "thanks" alone answers nothing
    return clauses


def _starts_new_topic(sentence: str) -> bool:
    first = _tokens(vocab.CLAUSE.split(sentence)[0])
    return bool(first) and first[0].kind == "SHIFT"


def _resolve(clauses: Sequence[_Clause], count: int) -> tuple[set[int], set[int]]:
    """Confirmed and rejected 0-based indexes of the answer's clauses."""
    named = set().union(*(c.picks | c.excepted for c in clauses))
    any_selection = any(c.selects for c in clauses)
    everyone = set(range(count))
    yes: set[int] = set()
    no: set[int] = set()
    last_plain = 0  # polarity of the latest clause that only said yes / no
    for c in clauses:
        pol = c.polarity or last_plain or 1
        if not c.selects:
            if c.only:
                raise _NotAnAnswer("only what?")
            if not c.polarity:
                continue  # "thanks", "please": says nothing about the items
            last_plain = c.polarity
            if not any_selection:
                (yes if pol > 0 else no).update(everyone)
            continue
        if c.others and not named:
            raise _NotAnAnswer("the others of what?")
        if c.all or c.others:
            targets = everyone - c.excepted - (named if c.others else set())
        else:
            targets = set(c.picks)
        (yes if pol > 0 else no).update(targets)
        if c.excepted:
            (no if pol > 0 else yes).update(c.excepted)
        if c.only:
            if pol < 0:
                raise _NotAnAnswer("only ... not")
            no.update(everyone - targets - named)
    return yes, no


def classify_by_rules(text: str, proposals: Sequence[ProposedSave]) -> ReplyDecision:
    """The deterministic classifier (see the module docstring).

    Args:
        text: The user's reply.
        proposals: The proposals the assistant's last message asked about, in the
            order (and numbering) it showed them.

    Returns:
        The decision; :data:`UNRELATED` unless the reply is an answer form.
    """
    if not proposals or not text.strip():
        return UNRELATED
    items = [_item_words(p.text) for p in proposals]
    for n, p in enumerate(proposals, 1):  # "确认 p-3f9a1c02d4": the id names the item
        text = re.sub(rf"(?<![\w-]){re.escape(p.id)}(?![\w-])", f" #{n} ", text)
    try:
        yes, no = _resolve(_answer_clauses(text, items), len(proposals))
    except _NotAnAnswer as why:
        logger.debug("reply %r answers no proposal (%s)", text[:80], why)
        return UNRELATED
    return decision_of(proposals, sorted(yes), sorted(no))


# -- with a model ----------------------------------------------------------------------

REPLY_PROMPT = """\
The assistant asked the user whether to remember the numbered items below. Decide
what the user's reply answers.

- If the reply answers the question, list the numbers to SAVE in `confirm` and the
  numbers NOT to save in `reject`. A plain yes or no ("好的，记住吧", "yes please",
  "不用了", "no, don't") answers for every item; "the first one", "第二个", "1 and 3",
  "the coffee one" name items; "only X" also rejects the others.
- Leave an item out of both lists when the reply says nothing about it.
- If the reply does not answer the question (a greeting, a new topic or request, a
  question, "maybe" or "later", a sentence that merely contains 好, 不, ok or no such
  as "你好", "不错", "ok so what's the weather"), answer kind "unrelated" with empty
  lists. When in doubt, it is unrelated: nothing is saved or discarded without a
  clear answer."""


class ReplyPlan(BaseModel):
    """The model's reading of the user's reply to a save proposal."""

    kind: Literal["affirm", "deny", "mixed", "unrelated"] = Field(
        description="affirm: only saves; deny: only discards; mixed: both; unrelated: no answer"
    )
    confirm: list[int] = Field(default_factory=list, description="item numbers to save")
    reject: list[int] = Field(default_factory=list, description="item numbers not to save")


def classify_by_model(
    text: str, proposals: Sequence[ProposedSave], model: BaseChatModel
) -> ReplyDecision | None:
    """One structured-output call; ``None`` when the model fails or answers nonsense
    (numbers outside the list, one number on both sides, a kind its lists contradict)."""
    listed = "\n".join(f"{i}. {p.text}" for i, p in enumerate(proposals, 1))
    prompt = [
        SystemMessage(REPLY_PROMPT),
        HumanMessage(f"Items:\n{listed}\n\nThe user's reply:\n{text}"),
    ]
    try:
        out = model.with_structured_output(ReplyPlan, include_raw=True).invoke(prompt)
    except Exception as e:  # the model failed: the rules decide
        logger.warning("reply classifier model failed (%s); using the rules", e)
        return None
    plan = out.get("parsed") if isinstance(out, dict) else out
    if not isinstance(plan, ReplyPlan):
        logger.warning("reply classifier answer invalid; using the rules")
        return None
    n = len(proposals)
    numbers = [*plan.confirm, *plan.reject]
    if any(not 1 <= k <= n for k in numbers) or set(plan.confirm) & set(plan.reject):
        logger.warning("reply classifier answered items it was not shown; using the rules")
        return None
    if plan.kind == "unrelated":
        return ReplyDecision("unrelated", by="model")
    decision = decision_of(
        proposals, [k - 1 for k in plan.confirm], [k - 1 for k in plan.reject], "model"
    )
    if decision.kind != plan.kind:
        logger.warning("reply classifier's kind contradicts its lists; using the rules")
        return None
    return decision


def classify_reply(
    text: str, proposals: Sequence[ProposedSave], *, model: BaseChatModel | None = None
) -> ReplyDecision:
    """What a reply to a save proposal confirms and rejects.

    Only call it when the assistant's previous message in this conversation asked
    about ``proposals``; a reply to anything else must not resolve pending saves.

    Args:
        text: The user's reply.
        proposals: The proposed saves, in the order (and numbering) the user saw.
        model: A chat model supporting ``with_structured_output`` for one call
            deciding it; ``None`` (or a failing call): the deterministic rules.

    Returns:
        The ids to confirm and to reject, and the kind of reply.

    Example:
        .. code-block:: python

            from langmem_ext.graph import classify_reply

            items = memory.list_pending(scope="main")  # two proposals
            classify_reply("第一个保存，第二个不要", items).kind  # 'mixed'
            classify_reply("你好", items).resolves  # False
    """
    if not proposals or not text.strip():
        return UNRELATED
    if model is not None:
        decided = classify_by_model(text, proposals, model)
        if decided is not None:
            return decided
    return classify_by_rules(text, proposals)


__all__ = [
    "REPLY_PROMPT",
    "UNRELATED",
    "ProposedSave",
    "ReplyDecision",
    "ReplyKind",
    "ReplyPlan",
    "classify_by_model",
    "classify_by_rules",
    "classify_reply",
    "decision_of",
    "normalise",
]

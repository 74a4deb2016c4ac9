"""Compiled pattern tables of the deterministic triple extractor (Chinese + English).

Data only (regexes, verb tables, word sets); :mod:`langmem_ext.memory.knowledge.extract`
applies them. Everything is compiled once at import: the extractor runs on every
memory in the background.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# --- lines and sentences ---

IMAGE = re.compile(r"\[image:[^\]]*\]")
"""An image caption appended to a turn: not something the speaker said."""
END = re.compile(r"[\s。！？!?.;；…~～]+$")
"""Sentence-final punctuation (the clause patterns are anchored at the end)."""
MY_EN = re.compile(r"\b(?:my|My|our|Our)\s+")

# --- English -------------------------------------------------------------------

FREQ_EN = (
    "always",
    "often",
    "usually",
    "sometimes",
    "occasionally",
    "frequently",
    "rarely",
    "regularly",
    "every day",
    "every week",
    "every weekend",
    "every morning",
    "every night",
    "every month",
    "every year",
    "daily",
    "weekly",
)
"""Frequency adverbs kept as metadata (``never`` is a negation)."""

_ADV_EN = (
    "really",
    "also",
    "just",
    "recently",
    "finally",
    "actually",
    "still",
    "even",
    "now",
    "totally",
    "absolutely",
    "truly",
    "currently",
    "already",
    "definitely",
    "kind of",
    "sort of",
    "first",
    "once",
)


def _past(lemma: str) -> str:
    if lemma.endswith("e"):
        return lemma + "d"
    if re.search(r"[^aeiou]y$", lemma):
        return lemma[:-1] + "ied"
    return lemma + "ed"


def _third(lemma: str) -> str:
    if re.search(r"(?:s|sh|ch|x|o)$", lemma):
        return lemma + "es"
    if re.search(r"[^aeiou]y$", lemma):
        return lemma[:-1] + "ies"
    return lemma + "s"


def _ing(lemma: str) -> str:
    if lemma.endswith("ie"):
        return lemma[:-2] + "ying"
    if lemma.endswith("e") and not lemma.endswith("ee"):
        return lemma[:-1] + "ing"
    return lemma + "ing"


# lemma | particles | predicate (empty: lemma_particle) | irregular "past/pp/ing" forms
_VERBS_EN = """
like |  | likes |
love |  | likes |
enjoy |  | likes |
adore |  | likes |
prefer |  | likes | preferred//preferring
hate |  | likes |
dislike |  | likes |
live | in | lives_in |
move | to | lives_in |
relocate | to | lives_in |
come | from | from | came/come/coming
work | at,for | works_at |
work | as | works_as |
have |  | has | had/had/having
own |  | has |
got |  | has | got/got/got
go | to | go_to | went/gone/going
go |  | go | went/gone/going
visit |  |  |
join |  |  |
start |  |  |
buy |  |  | bought/bought/buying
read |  |  | read/read/reading
paint |  |  |
draw |  |  | drew/drawn/drawing
adopt |  |  |
run |  |  | ran/run/running
volunteer | at,for | volunteer_at |
sign up | for |  | signed up/signed up/signing up
attend |  |  |
play |  |  |
watch |  |  |
learn |  |  | learned;learnt/learned;learnt/learning
study |  |  |
write |  |  | wrote/written/writing
bake |  |  |
cook |  |  |
make |  |  | made/made/making
meet |  |  | met/met/meeting
travel | to |  | traveled;travelled/traveled;travelled/traveling;travelling
apply | to,for | apply_to |
take |  |  | took/taken/taking
try |  |  |
finish |  |  |
build |  |  | built/built/building
win |  |  | won/won/winning
see |  |  | saw/seen/seeing
teach |  |  | taught/taught/teaching
sing |  |  | sang/sung/singing
hike |  |  |
climb |  |  |
collect |  |  |
grow |  |  | grew/grown/growing
plant |  |  |
practice |  |  |
practise |  | practice |
speak |  |  | spoke/spoken/speaking
drive |  |  | drove/driven/driving
participate | in |  |
compete | in |  |
graduate | from |  |
plan |  |  | planned/planned/planning
shop | at,for | shop_at | shopped/shopped/shopping
swim |  |  | swam/swum/swimming
research |  |  |
eat |  |  | ate/eaten/eating
drink |  |  | drank/drunk/drinking
stay | at,in | stay_at |
pick up |  |  | picked up/picked up/picking up
take up |  |  | took up/taken up/taking up
"""

# Copula complements: "I'm allergic to", "Anna is from", "I'm a teacher", "I'm into".
_COPULA_EN: dict[str, str] = {
    "allergic to": "allergic_to",
    "from": "from",
    "originally from": "from",
    "a fan of": "likes",
    "a big fan of": "likes",
    "into": "likes",
    "fond of": "likes",
    "living in": "lives_in",
    "based in": "lives_in",
    "working at": "works_at",
    "employed at": "works_at",
    "working as": "works_as",
    "a": "is_a",
    "an": "is_a",
}
NEGATIVE_VERBS_EN = frozenset(
    {"hate", "hates", "hated", "hating", "dislike", "dislikes", "disliked"}
)


def _verb_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for row in _VERBS_EN.strip().splitlines():
        lemma, parts, predicate, irregular = (cell.strip() for cell in f"{row}|||".split("|")[:4])
        particles = parts.split(",") if parts else [""]
        past, pp, ing = [*irregular.split("/"), "", "", ""][:3] if irregular else ("", "", "")
        words = lemma.split(" ", 1)
        tail = f" {words[1]}" if len(words) > 1 else ""
        head = words[0]
        forms = {lemma, _third(head) + tail}
        forms.update((past or _past(head) + tail).split(";"))
        forms.update((pp or _past(head) + tail).split(";"))
        forms.update((ing or _ing(head) + tail).split(";"))
        for particle in particles:
            name = predicate or "_".join([*lemma.split(), *([particle] if particle else [])])
            for form in forms:
                table[f"{form} {particle}".strip()] = name
    return table


VERBS_EN = _verb_table()
"""Every verb form (with its particle) -> canonical predicate."""


def _alternation(words: Iterable[str]) -> str:
    ordered = sorted(set(words), key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)


_NAME = r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?"
_SUBJ_EN = (
    rf"(?P<s>I|[Ww]e|(?:[Mm]y|[Oo]ur)\s+(?:best\s+|older\s+|younger\s+|little\s+|big\s+|new\s+)?[a-z]+"
    rf"|{_NAME}(?:'s\s+(?:best\s+|older\s+|younger\s+|little\s+)?[a-z]+)?)"
)
_AUX_EN = (
    r"(?P<aux>'(?:m|ve|s|re|d)\b|\s+(?:am|is|are|was|were|have|has|had|do|does|did)"
    r"(?:n't)?\b|\s+(?:ca|wo)n't\b)?"
)
_NEG_EN = r"(?P<neg>\s+(?:not|never|no\s+longer))?"
_ADVS_EN = rf"(?P<adv>(?:\s+(?:{_alternation((*FREQ_EN, *_ADV_EN, 'never'))})){{0,4}})"
CLAUSE_EN = re.compile(
    rf"(?<![\w'])(?P<head>{_SUBJ_EN}{_AUX_EN}{_NEG_EN}{_ADVS_EN}(?:\s+been)?{_ADVS_EN.replace('adv', 'adv2')}"
    rf"\s+(?P<v>{_alternation([*VERBS_EN, *_COPULA_EN])}))(?![\w'])(?P<rest>.*)$",
    re.DOTALL,
)
"""``subject [aux] [not] [adverbs] verb rest``: one English statement's head."""
COPULA_EN = _COPULA_EN
COPULA_AUX = frozenset({"'m", "'s", "'re", "am", "is", "are", "was", "were"})

NOT_SUBJECTS_EN = frozenset(
    _words(
        """it this that there they he she we you what who where when why how which these those
    thanks thank hey hi hello yes yeah no oh wow well so but and or also then just maybe
    glad good great cool nice sure okay ok lol haha sounds looks let here the a an
    congrats congratulations awesome lately sorry anyway plus please by gotta wanna gonna been
    even got lost made had have has did do does went still really actually definitely totally
    absolutely honestly then today yesterday tomorrow recently sometimes usually always often
    never last next every each both all any many most much more such very too quite almost
    already again once first finally instead however though although because since while
    until after before during for from with without about into over like love hope guess
    happy sad excited proud wow yay aw aww omg anyways btw keep take make check see look
    i'm i've i'd i'll it's that's what's"""
    )
)
"""Capitalised words that are never a subject name (sentence openers, pronouns)."""

QUESTION_START_EN = re.compile(
    r"^\s*(?:what|where|who|whom|whose|why|how|which|do|does|did|is|are|am|was|were|can|"
    r"could|would|should|will|shall|have|has|had|may|might)\b(?!\s*,)",
    re.IGNORECASE,
)
SKIP_EN = re.compile(
    r"\b(?:would|could|might|should|wish|wonder|suppose|maybe|perhaps|"
    r"(?:said|says|told\s+\w+|thinks?|heard)\s+(?:that\b)?)",
    re.IGNORECASE,
)
"""Hypotheticals and reported speech: no triples (as in the statements fallback)."""
COND_LEAD_EN = re.compile(r"^\s*(?P<c>(?:if|when|whenever|once)\b.+)$", re.IGNORECASE | re.DOTALL)
COND_TAIL_EN = re.compile(r"\s+(?P<c>(?:if|when|whenever)\s+.+)$", re.IGNORECASE | re.DOTALL)
FREQ_TAIL_EN = re.compile(
    rf"\s+(?P<f>{_alternation(FREQ_EN)}|every\s+\w+|once\s+a\s+\w+|twice\s+a\s+\w+)\b",
    re.IGNORECASE,
)
OBJECT_CUT_EN = re.compile(
    r"\s+(?:but|so|because|'?cause|cuz|cos|since|while|until|though|although|which|who|whom|that|where|"
    r"with|without|for|in|on|at|from|by|about|after|before|during|through|over|under|last|"
    r"yesterday|today|tonight|tomorrow|this|next|ago|too|again|lately|recently|now|anymore|"
    r"a\s+lot|so\s+much|very\s+much|as\s+well|together|right|than|like|to\s+\w+\s+\w+)\b.*$",
    re.IGNORECASE | re.DOTALL,
)
PHRASE_END_EN = re.compile(r"[-–—]\s|\s[-–—]|[()\"\[\]“”]")
AND_EN = re.compile(r"\s+(?:and|or|as\s+well\s+as)\s+", re.IGNORECASE)
DETERMINERS_EN = re.compile(
    r"^(?:(?:the|a|an|some|any|this|that|these|those|lots\s+of|a\s+lot\s+of|a\s+few|"
    r"many|several|two|three|both|all|to)\s+)+",
    re.IGNORECASE,
)
PRONOUN_OBJECTS = frozenset(
    _words(
        """it that this them him her you me us one something anything everything nothing
    there here what which so too been to no not got much more was were is are be am"""
    )
)
CLAUSE_SPLIT_EN = re.compile(
    r"\s*[,;:]\s*|\s+[-–—]+\s+|\s+(?:and|but|so|because)\s+(?=(?:I|my|[A-Z][a-z]+)\b)"
)
ITEM_SPLIT = re.compile(r"\s*(?:,|、|，|\band\b|\bor\b|和|与|及|跟|以及|还有)\s*")

# --- Chinese -------------------------------------------------------------------

FREQ_ZH = _words("经常 总是 偶尔 每天 常常 有时候 有时 每周 平时 一直 很 老是")
_ADV_ZH = _words("也 都 还 就 已经 现在 最近 真的 特别 非常 超级 挺 比较 一般 又 才")
_NEG_ZH = _words("从来没有 从来没 从来不 从不 不再 不太 并不 并没有 没有 没 不")
_REL_ZH = _words(
    "妹妹 姐姐 哥哥 弟弟 妈妈 爸爸 母亲 父亲 老婆 老公 妻子 丈夫 女朋友 男朋友 女友 男友 儿子 女儿 孩子"
    " 朋友 好朋友 同事 上司 老板 领导 室友 同学 表弟 表妹 表哥 表姐 堂哥 堂姐 堂弟 堂妹 爷爷 奶奶 外公 外婆"
    " 姥姥 姥爷 舅舅 姑姑 阿姨 叔叔 邻居 老师 猫 狗 家人 宝宝 闺蜜 同桌 对象"
)
# verb -> predicate (verb then object)
VERBS_ZH: dict[str, str] = {
    "喜欢": "likes",
    "喜歡": "likes",
    "热爱": "likes",
    "爱": "likes",
    "愛": "likes",
    "讨厌": "likes",
    "討厭": "likes",
    "住在": "lives_in",
    "定居在": "lives_in",
    "搬到了": "lives_in",
    "搬到": "lives_in",
    "搬去了": "lives_in",
    "搬去": "lives_in",
    "来自": "from",
    "來自": "from",
    "老家在": "from",
    "老家是": "from",
    "是": "is_a",
    "有": "has",
    "养了": "has",
    "养": "has",
    "去了": "go_to",
    "去过": "go_to",
    "去": "go_to",
    "参加了": "attend",
    "参加": "attend",
    "买了": "buy",
    "买": "buy",
    "学习": "learn",
    "在学": "learn",
    "学": "learn",
    "叫": "name",
    "名叫": "name",
    "读了": "read",
    "读": "read",
    "看了": "watch",
    "看": "watch",
    "吃": "eat",
    "喝": "drink",
    "玩": "play",
}
NEGATIVE_VERBS_ZH = frozenset({"讨厌", "討厭"})
_TIME_ZH = "今天|昨天|前天|明天|最近|现在|目前|如今|去年|今年|上周|上个月|上星期|这周|这个月|周末|小时候|以前|后来|平时"
_NAME_ZH = (
    r"[^\W\d_a-zA-Z我你他她它们的了是在不没很也都就还和与跟对去有喜爱住来养买学参说想要会能]{2,4}?"
)
_SUBJ_ZH = (
    rf"(?P<s>主人|我(?:的)?(?:{'|'.join(sorted(_REL_ZH, key=len, reverse=True))})"
    rf"|我的[\u4e00-\u9fff]{{1,4}}?|我(?!们)|{_NAME_ZH})"
)
_ADVS_ZH = rf"(?:{'|'.join((*FREQ_ZH, *_ADV_ZH))}){{0,4}}"
_OBJ_ZH = r"[^，,。！!？?；;：:\s]{1,40}?"
CLAUSE_ZH = re.compile(
    rf"^(?:(?:{_TIME_ZH})[，,]?)*{_SUBJ_ZH}(?:他|她)?(?:(?:{_TIME_ZH}))*(?P<adv>{_ADVS_ZH})"
    rf"(?P<neg>{'|'.join(_NEG_ZH)})?(?P<adv2>{_ADVS_ZH})"
    rf"(?:在(?P<o_at>{_OBJ_ZH})(?:工作|上班|任职)|对(?P<o_al>{_OBJ_ZH})过敏"
    rf"|(?P<v>{'|'.join(sorted(VERBS_ZH, key=len, reverse=True))})(?<!学(?=[历校生期]))(?P<o>{_OBJ_ZH}))"
    r"(?:了|啦|呢|哦|呀)?$"
)
"""``[time] subject [adverbs] [negation] [adverbs] verb object``: one Chinese clause."""
FREQ_ZH_RE = re.compile("|".join(FREQ_ZH))
"""A frequency adverb among a clause's adverbs."""
COND_LEAD_ZH = re.compile(r"^(?P<c>(?:如果|假如|要是|只要|一旦|每当|当).+?(?:的话|时候|时)?)$")
COND_PREFIX_ZH = re.compile(r"^(?P<c>.{1,20}?(?:的时候|的话|时候))[，,]?(?P<rest>.+)$")
"""A clause that is only a condition (如果下雨) / starts with one (下雨的时候…)."""
SKIP_ZH = re.compile(
    r"[他她]说|听说|觉得|以为|希望|想要|打算|可能|也许|是不是|吗|嗎|什么|什麼|谁|誰|哪|几|多少|怎么|为什么"
)
"""Reported speech, wishes, plans and questions: no triples."""
CLAUSE_SPLIT_ZH = re.compile(r"[，,；;：:]\s*|\s*(?:但是|但|而且|所以|因为|然后)\s*")
OBJECT_CUT_ZH = re.compile(r"(?:的时候|因为|所以|但是|而且|然后|一起|的话).*$")
OBJECT_VERB_ZH = re.compile(r"^(?:吃|喝|看|玩|听|聽|去|做)(?=.)")
OBJECT_MEASURE_ZH = re.compile(r"^(?:一|两|几|这|那)?(?:个|只|条|名|位|本|家|辆|件|套|台|种|些)")
TRAILING_ZH = re.compile(r"(?:了|啦|呢|哦|呀|的|人)+$")

ATTRIBUTE_ZH = re.compile(
    r"^(?P<s>(?:我的)?[^的，,。！？\s]{1,12}?)(?:他|她)?的(?P<a>[^的，,。！？是叫为\s]{1,6})(?:是|叫|为)(?P<o>.{1,40}?)"
    r"(?:了|啦|呢|哦|呀)?$"
)
"""``X的Y是Z`` (我上司的邮箱是… / 研讨会的地点是上海): ``(X, Y, Z)``."""
ATTRIBUTE_SUBJECT_SKIP_ZH = re.compile(r"^我.*[参观用买去看做吃喝玩说想要住选喜爱最]|^[这那哪]")
ATTRIBUTES_ZH: dict[str, str] = {
    "名字": "name",
    "姓名": "name",
    "年龄": "age",
    "生日": "birthday",
    "家乡": "from",
    "老家": "from",
    "籍贯": "from",
    "工作地": "works_in",
    "工作地点": "works_in",
    "单位": "works_at",
    "公司": "works_at",
    "职业": "works_as",
    "工作": "works_as",
    "学历": "education",
    "身高": "height",
    "邮箱": "email",
    "邮箱地址": "email",
    "电子邮箱": "email",
    "电话": "phone",
    "联系电话": "phone",
    "手机号": "phone",
    "电话号码": "phone",
    "地点": "location",
    "时间": "time",
}
"""Common attribute words -> canonical predicates (others stay as written)."""
PRONOUN_SUBJECT_ZH = re.compile(r"^(?:其|他|她|它)(?=的|[^们])")

# --- entities and objects ---------------------------------------------------------

FIRST_PERSON = frozenset(
    {"i", "me", "my", "mine", "myself", "我", "我的", "主人", "我自己", "本人"}
)
"""Words that name the speaker (the scope's user) as an entity."""
LEAD_EN = re.compile(r"^(?:(?:the|a|an|this|that|these|those|some|our|your)\s+)+")
"""Articles and determiners an entity key drops (English)."""
LEAD_ZH = re.compile(r"^(?:一个|一只|一名|一位|一条|一家|这个|那个|这位|那位)")
"""Measure words and demonstratives an entity key drops (Chinese)."""
FIRST_PERSON_Q = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd"})
"""Words of a question about the asker (English)."""
IS_A_MEASURE_ZH = re.compile(r"^(?:一名|一个|一位|个|名)")
"""The measure word of an ``is_a`` object (我是一名医生)."""
PARTICLES_ZH = re.compile(r"(?:了|啦|呢|哦|呀)+$")
"""Sentence-final particles an object drops."""
PRONOUNS_ZH = frozenset({"我", "你", "他", "她", "它"})
"""Pronouns: never an object (Chinese)."""
NOT_SPEAKERS = frozenset({"note", "example", "update", "todo", "re", "ps"})
"""Words before a colon that do not name a speaker (``Note: …``)."""

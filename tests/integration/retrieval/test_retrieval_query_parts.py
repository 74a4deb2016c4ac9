"""What part of a message to search for: self-repairs and compound questions."""

from __future__ import annotations

import pytest
from _retrieval_helpers import retrieval_overrides

from langmem_ext import Memory
from langmem_ext.core.errors import EmptyTextError, InvalidInputError
from langmem_ext.retrieval.compound import MAX_PARTS, split_compound
from langmem_ext.retrieval.repair import focus_of


@pytest.mark.parametrize(
    ("message", "focus"),
    [
        (
            "最近好忙啊，听说那个活动挺有意思的。不好意思，我真正想问的是：那个规模是三千人的活动，地点是什么？",
            "那个规模是三千人的活动，地点是什么？",
        ),
        ("哦豁，我其实是想搞清楚，我妹妹叫什么名字？", "我妹妹叫什么名字？"),
        ("话说回来。我本来想说的是，那个活动的规模是什么？", "那个活动的规模是什么？"),
        ("额，实际上我那个问题是这个，我住在哪个小区？", "我住在哪个小区？"),
        ("今天天气不错。等等，诶，等等，我用的手机是什么牌子？", "我用的手机是什么牌子？"),
        ("對了，我想問，我養的貓叫什麼？", "我養的貓叫什麼？"),
        (
            "Nice weather today. Scratch that, where does my sister live?",
            "where does my sister live?",
        ),
        (
            "I had a long day. What I really want to know is: when is my dentist appointment?",
            "when is my dentist appointment?",
        ),
        ("my actual question is which gym I joined", "which gym I joined"),
    ],
)
def test_focus_is_the_part_after_the_last_repair_marker(message: str, focus: str) -> None:
    assert focus_of(message) == focus


@pytest.mark.parametrize(
    "message",
    [
        "我用的手机是啥牌子来着？",
        "你真的知道我是谁吗？",  # 真的 … 知道 is not a repair
        "我真正想问的是你",  # too little left after the marker
        "What did I mean to ask you?",
        "I really want to know what my dog is called",
        "",
    ],
)
def test_messages_without_a_usable_repair_stay_whole(message: str) -> None:
    assert focus_of(message) == message


def test_last_marker_wins() -> None:
    text = "我想问的是我的车。不对，我真正想问的是：我的自行车是什么牌子？"
    assert focus_of(text) == "我的自行车是什么牌子？"


@pytest.mark.parametrize(
    ("message", "parts"),
    [
        (
            "上司的邮箱地址是多少来着？另外，编程光影盛宴的主要内容是什么？",
            ["上司的邮箱地址是多少来着？", "编程光影盛宴的主要内容是什么？"],
        ),
        (
            "Where do I work? And what is my sister called?",
            ["Where do I work?", "what is my sister called?"],
        ),
        (
            "我另外一个朋友叫什么？还有，他住在哪里？",  # 另外 inside a sentence is kept
            ["我另外一个朋友叫什么？", "他住在哪里？"],
        ),
    ],
)
def test_compound_questions_split_into_their_questions(message: str, parts: list[str]) -> None:
    assert split_compound(message) == parts


@pytest.mark.parametrize(
    "message",
    [
        "我用的手机是啥牌子来着？",
        "I moved last year. Where do I work now?",  # one question, one statement
        "好吗？好？",  # too short to be questions of their own
        "Andrew works where",
        "",
    ],
)
def test_simple_messages_are_not_split(message: str) -> None:
    assert split_compound(message) == []


def test_at_most_max_parts_are_searched() -> None:
    message = "".join(f"我的第{i}个朋友叫什么？" for i in range(MAX_PARTS + 3))
    assert len(split_compound(message)) == MAX_PARTS


# -- through Memory.search, real store and embedder ---------------------------------

_EMAILS = [
    "我舅妈的邮箱地址是wanglijuan@jsnu.edu.cn",
    "我舅舅的邮箱地址是zhangwei@westlake.com",
    "我同事的邮箱地址是zhaoyu@hospital.com",
    "我妈妈的邮箱地址是zhanglj@huaxing.com",
    "我上司的邮箱地址是liming@corp.cn",
    "My uncle's email address is tom@example.com",
    "My boss's email address is ann@example.com",
]
_OTHERS = [
    "编程光影盛宴在浙江杭州举办",
    "我妹妹叫李雪，在上海读大学",
    "I parked the car on level 3 of the airport garage",
    "My sister's dog is called Biscuit",
]


@pytest.fixture
def filled(memory: Memory) -> tuple[Memory, dict[str, str]]:
    ids = memory.add_many(_EMAILS + _OTHERS)
    return memory, dict(zip(_EMAILS + _OTHERS, ids, strict=True))


def _texts(memory: Memory, query: str, k: int, *, parts: bool = True) -> list[str]:
    with retrieval_overrides(memory, question_parts=parts):
        return [h.text for h in memory.search(query, k=k)]


@pytest.mark.parametrize(
    ("query", "k", "wanted"),
    [
        (
            "我舅妈的邮箱地址是多少？另外，编程光影盛宴在哪里举办？",
            3,
            {"我舅妈的邮箱地址是wanglijuan@jsnu.edu.cn", "编程光影盛宴在浙江杭州举办"},
        ),
        (
            "What is my uncle's email address? And where did I park the car?",
            2,
            {
                "My uncle's email address is tom@example.com",
                "I parked the car on level 3 of the airport garage",
            },
        ),
    ],
)
def test_each_question_of_a_compound_message_gets_its_hits(
    filled: tuple[Memory, dict[str, str]], query: str, k: int, wanted: set[str]
) -> None:
    memory, _ = filled
    assert not wanted <= set(_texts(memory, query, k, parts=False))  # one question wins
    assert wanted <= set(_texts(memory, query, k))
    hits = memory.search(query, k=k)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(hits) == k and {h.debug["question"] for h in hits} <= {0.0, 1.0, 2.0}


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        (
            "最近邮箱老是收到垃圾邮件，好烦，邮箱地址都不想用了。不好意思，我真正想问的是：我妹妹叫什么名字？",
            "我妹妹叫李雪，在上海读大学",
        ),
        (
            "Email is such a mess lately, my boss keeps writing. Scratch that, where did I park the car?",
            "I parked the car on level 3 of the airport garage",
        ),
    ],
)
def test_a_self_repair_searches_what_was_really_asked(
    filled: tuple[Memory, dict[str, str]], query: str, answer: str
) -> None:
    memory, _ = filled
    whole = _texts(memory, query, 2, parts=False)
    assert any(t in _EMAILS for t in whole)  # the chit-chat pulls in email addresses
    focused = _texts(memory, query, 2)
    assert focused[0] == answer and not any(t in _EMAILS for t in focused)


def test_time_words_in_chit_chat_do_not_set_the_recall_window(memory: Memory) -> None:
    day = 86_400.0
    now = 1_700_000_000.0
    memory.add("我妹妹叫李雪", created_at=now - 30 * day)
    memory.add("我昨天买了一把新雨伞", created_at=now - day)
    query = "昨天下雨了，好烦。不对，我真正想问的是：我妹妹叫什么名字？"
    hits = memory.search(query, k=2, now=now)
    assert hits[0].text == "我妹妹叫李雪"
    assert not any("time_window" in h.debug for h in hits)  # 昨天 was chit-chat


def test_bad_queries_still_fail_clearly_with_question_parts(memory: Memory) -> None:

    with pytest.raises(EmptyTextError):
        memory.search("   ")
    with pytest.raises(InvalidInputError):
        memory.search("我的邮箱是什么？另外，我妹妹叫什么？", k=0)


def test_a_huge_message_is_cut_before_it_is_split(memory: Memory) -> None:
    memory.add("我妹妹叫李雪")
    huge = "今天天气不错。" * 50_000 + "不对，我真正想问的是：我妹妹叫什么？另外，我住哪？"
    hits = memory.search(huge, k=2)  # the marker lies past max_query_chars: plain search
    assert all("question" not in h.debug for h in hits)


@pytest.mark.parametrize("k", [1, 4, 7, 20])
def test_the_texts_of_a_compound_message_share_the_pool_of_k(
    filled: tuple[Memory, dict[str, str]], monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    memory, _ = filled
    fetched: list[tuple[str, int]] = []
    engine = memory.engine
    inner = engine._keyword

    def spy(query: str, scope: str, pool: int, *, fts: bool) -> list[object]:
        fetched.append((query, pool))
        return inner(query, scope, pool, fts=fts)  # type: ignore[return-value]

    monkeypatch.setattr(engine, "_keyword", spy)
    query = "我舅妈的邮箱地址是多少？另外，编程光影盛宴在哪里举办？"
    hits = memory.search(query, k=k)
    multiplier = memory.settings.retrieval.candidate_multiplier
    assert sorted(q for q, _ in fetched) == sorted(engine.query_texts(query))
    assert len(fetched) == 3 and {p for _, p in fetched} == {max(-(-k // 3) * multiplier, 20)}
    assert 0 < len(hits) <= k and len({h.id for h in hits}) == len(hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

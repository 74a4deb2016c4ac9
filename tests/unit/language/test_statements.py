"""Deterministic first-person statements with slots (the extractor's fallback)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_ext.language.statements import extract_statements
from langmem_ext.memory.extraction.extractor import statements_in


@pytest.mark.parametrize(
    ("text", "predicate", "obj", "negated", "slot"),
    [
        ("我住在上海", "lives_in", "上海", False, "user|lives_in"),
        ("我上个月搬到深圳了", "lives_in", "深圳", False, "user|lives_in"),
        ("我叫李雷", "name", "李雷", False, "user|name"),
        ("我对花生过敏", "allergic_to", "花生", False, "user|allergic_to|花生"),
        ("我不再对青霉素过敏了", "allergic_to", "青霉素", True, "user|allergic_to|青霉素"),
        ("我最喜欢的颜色是蓝色", "favourite", "蓝色", False, "user|favourite|颜色"),
        ("我现在在腾讯工作", "works_at", "腾讯", False, "user|works_at"),
        ("我是一名护士", "works_as", "护士", False, "user|works_as"),
        ("我女朋友叫小美", "partner", "小美", False, "user|partner|女朋友"),
        ("我不喜欢咖啡", "likes", "咖啡", True, "user|likes|咖啡"),
        ("我是北京人", "from", "北京", False, "user|from"),
        ("I live in Berlin", "lives_in", "Berlin", False, "user|lives_in"),
        ("I moved to Munich last month.", "lives_in", "Munich", False, "user|lives_in"),
        ("My name is Anna", "name", "Anna", False, "user|name"),
        ("I'm not allergic to shellfish anymore", "allergic_to", "shellfish", True,
         "user|allergic_to|shellfish"),
        ("My favourite colour is green", "favourite", "green", False, "user|favourite|colour"),
        ("I work as a nurse", "works_as", "nurse", False, "user|works_as"),
        ("I’ve joined Stripe", "works_at", "Stripe", False, "user|works_at"),
        ("My wife is Maria", "partner", "Maria", False, "user|partner|wife"),
        ("I hate cilantro", "likes", "cilantro", True, "user|likes|cilantro"),
        ("I'm from Lyon originally", "from", "Lyon", False, "user|from"),
    ],
)  # fmt: skip
def test_one_statement(text: str, predicate: str, obj: str, negated: bool, slot: str) -> None:
    (st,) = extract_statements(text)
    assert (st.predicate, st.object, st.negated, st.slot) == (predicate, obj, negated, slot)
    assert st.lang == ("zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en")


@pytest.mark.parametrize(
    "text",
    [
        "Where do I live?",
        "我住在哪",
        "你住在哪里？",
        "If I lived in Paris I would be happy",
        "He said I live in Rome",
        "如果我住在北京就好了",
        "The weather is nice today.",
        "",
    ],
)
def test_no_statement(text: str) -> None:
    assert extract_statements(text) == []


def test_several_clauses_in_one_sentence() -> None:
    got = extract_statements("我叫李雷，我住在杭州。I'm 34 years old and I live in Oslo.")
    assert [(s.predicate, s.object) for s in got] == [
        ("name", "李雷"),
        ("lives_in", "杭州"),
        ("age", "34"),
        ("lives_in", "Oslo"),
    ]


def test_slots_decide_what_a_later_statement_replaces() -> None:
    msgs = [
        HumanMessage("I live in Berlin and I like coffee."),
        AIMessage("I live in Paris"),  # the assistant's words are not the user's facts
        HumanMessage("I like tea."),
        HumanMessage("I moved to Munich. I don't like coffee anymore."),
    ]
    got = {s.slot: (s.object, s.negated) for s in statements_in(msgs)}
    assert got == {
        "user|lives_in": ("Munich", False),
        "user|likes|coffee": ("coffee", True),
        "user|likes|tea": ("tea", False),
    }


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("We relocated to Toronto in January for Claire's job", "Toronto"),
        ("I graduated and moved to Hangzhou to work at Alibaba", "Hangzhou"),
        ("My wife and I emigrated to New Zealand last year", "New Zealand"),
        ("We settled in Leeds", "Leeds"),
        ("我们一家去年移居到了温哥华", "温哥华"),
        ("我和老婆三月份迁居到大理", "大理"),
        ("我去年定居在成都", "成都"),
        ("公司把我调到了成都基地，我三月搬过去了", "成都基地"),
        ("我被派到深圳分公司，我们全家都搬过去了", "深圳分公司"),
        ("I was transferred to Leeds and we moved there in March", "Leeds"),
    ],
)
def test_a_move_in_any_wording_states_where_the_user_lives(text: str, place: str) -> None:
    """Whatever the verb of moving, whoever moves with the user, and a move whose
    place is the posting named just before it: the place is where the user lives."""
    [st] = extract_statements(text)
    assert (st.slot, st.object) == ("user|lives_in", place)


@pytest.mark.parametrize(
    "text",
    [
        "公司把我调到了市场部",
        "I was transferred to the sales team",
        "I moved in with my girlfriend",
    ],
)
def test_a_posting_without_a_move_states_no_home(text: str) -> None:
    assert [st.slot for st in extract_statements(text)] == []

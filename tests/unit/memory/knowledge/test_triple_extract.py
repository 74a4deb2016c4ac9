"""Triples from memories and entities in questions (item 4)."""

from __future__ import annotations

import logging

import pytest
from langchain_core.messages import AIMessage

from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.memory.knowledge.extract import (
    USER,
    TripleDraft,
    extract_triples,
    extract_triples_with_model,
    match_entities,
    normalise_entity,
)

T = TripleDraft

EXTRACT_CASES: list[tuple[str, list[TripleDraft]]] = [
    # English: the named patterns
    ("I like coffee.", [T(USER, "likes", "coffee")]),
    ("I love hiking.", [T(USER, "likes", "hiking")]),
    ("I hate mornings.", [T(USER, "likes", "mornings", negated=True)]),
    ("I live in Berlin.", [T(USER, "lives_in", "Berlin")]),
    ("I moved to Munich last month.", [T(USER, "lives_in", "Munich")]),
    ("Anna is from Spain.", [T("Anna", "from", "Spain")]),
    ("I work at Google in Berlin.", [T(USER, "works_at", "Google")]),
    ("I work as a nurse.", [T(USER, "works_as", "nurse")]),
    ("I'm allergic to peanuts.", [T(USER, "allergic_to", "peanuts")]),
    ("I'm a teacher.", [T(USER, "is_a", "teacher")]),
    ("I have two cats and a dog.", [T(USER, "has", "cats"), T(USER, "has", "dog")]),
    ("Tom owns a bakery.", [T("Tom", "has", "bakery")]),
    # English: generic verbs in any tense
    ("I went to the beach with my kids last week.", [T(USER, "go_to", "beach")]),
    ("I went camping with my kids last weekend.", [T(USER, "go", "camping")]),
    ("We go hiking every Sunday.", [T(USER, "go", "hiking", frequency="every sunday")]),
    ("Jon started a dance studio.", [T("Jon", "start", "dance studio")]),
    ("I signed up for a pottery class yesterday.", [T(USER, "sign_up_for", "pottery class")]),
    ("We visited Rome. I visited the Colosseum.",
     [T(USER, "visit", "Rome"), T(USER, "visit", "Colosseum")]),
    ("Melanie: We've got a pup and a kitty.",
     [T("Melanie", "has", "pup"), T("Melanie", "has", "kitty")]),
    ("Melanie: Our kids love hiking.", [T("Melanie's kids", "likes", "hiking")]),
    ("Sam has bought a new bike.", [T("Sam", "buy", "new bike")]),
    ("I'm reading a book about whales.", [T(USER, "read", "book")]),
    # English: negation, frequency, conditions
    ("I don't like tea, but I love green tea.",
     [T(USER, "likes", "tea", negated=True), T(USER, "likes", "green tea")]),
    ("I never eat meat.", [T(USER, "eat", "meat", negated=True)]),
    ("I'm not allergic to cats.", [T(USER, "allergic_to", "cats", negated=True)]),
    ("I always go to the gym when I feel stressed.",
     [T(USER, "go_to", "gym", frequency="always", condition="when I feel stressed")]),
    ("I visit my parents every week.", [T(USER, "visit", "my parents", frequency="every week")]),
    ("If it rains, I read books.", [T(USER, "read", "books", condition="If it rains")]),
    # English: relations and possessives stay distinct from the user
    ("My sister lives in Berlin.", [T("My sister", "lives_in", "Berlin")]),
    ("Melanie's kids love hiking every day.",
     [T("Melanie", "has", "Melanie's kids"),
      T("Melanie's kids", "likes", "hiking", frequency="every day")]),
    # transcript lines: the speaker is "I"
    ("Melanie: I painted a sunset last year.", [T("Melanie", "paint", "sunset")]),
    ("Melanie: I love my kids.", [T("Melanie", "likes", "Melanie's kids")]),
    ("Caroline: I volunteered at the LGBTQ center.", [T(USER, "volunteer_at", "LGBTQ center")]),
    # Chinese
    ("我喜欢猫和狗。", [T(USER, "likes", "猫"), T(USER, "likes", "狗")]),
    ("我不喜欢香菜。", [T(USER, "likes", "香菜", negated=True)]),
    ("我讨厌下雨天。", [T(USER, "likes", "下雨天", negated=True)]),
    ("我经常去健身房。", [T(USER, "go_to", "健身房", frequency="经常")]),
    ("我住在上海。", [T(USER, "lives_in", "上海")]),
    ("我来自四川。", [T(USER, "from", "四川")]),
    ("我对花生过敏。", [T(USER, "allergic_to", "花生")]),
    ("我没有对海鲜过敏。", [T(USER, "allergic_to", "海鲜", negated=True)]),
    ("我妹妹在北京工作。", [T("我妹妹", "works_at", "北京")]),
    ("我的上司在深圳上班呢，就是广东的那个深圳。", [T("我的上司", "works_at", "深圳")]),
    ("小明喜欢足球。", [T("小明", "likes", "足球")]),
    ("主人很喜欢吃火锅。", [T(USER, "likes", "火锅", frequency="很")]),
    ("我是一名医生。", [T(USER, "is_a", "医生")]),
    ("我养了一只猫。", [T(USER, "has", "猫")]),
    ("我没去过日本。", [T(USER, "go_to", "日本", negated=True)]),
    ("我从不喝咖啡。", [T(USER, "drink", "咖啡", negated=True)]),
    ("今天我去了公园。", [T(USER, "go_to", "公园")]),
    ("我去年参加了马拉松比赛。", [T(USER, "attend", "马拉松比赛")]),
    ("如果下雨，我就看电影。", [T(USER, "watch", "电影", condition="如果下雨")]),
    ("下雨的时候我喜欢看书。", [T(USER, "likes", "书", condition="下雨的时候")]),
    ("张伟住在北京，也喜欢打篮球。",
     [T("张伟", "lives_in", "北京"), T("张伟", "likes", "打篮球")]),
    ("小红：我喜欢跳舞。", [T("小红", "likes", "跳舞")]),
    # Chinese: attributes (X的Y是Z) and a pronoun taking the previous subject
    ("我的上司的邮箱地址是boss@example.com。", [T("我的上司", "email", "boss@example.com")]),
    ("研讨会的地点是上海。", [T("研讨会", "location", "上海")]),
    ("杜静怡是我的同事，其身高是160cm。",
     [T("杜静怡", "is_a", "我的同事"), T("杜静怡", "height", "160cm")]),
    ("我表哥他在杭州上班呢。", [T("我表哥", "works_at", "杭州")]),
    ("小明喜欢足球，他也喜欢篮球。", [T("小明", "likes", "足球"), T("小明", "likes", "篮球")]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), EXTRACT_CASES)
def test_extract_fixed_sentences(text: str, expected: list[TripleDraft]) -> None:
    assert extract_triples(text, user_names=["Caroline"]) == expected


NOTHING = [
    "Do you like coffee?",
    "Where does Melanie live?",
    "Did you go to the beach",
    "He said that I like cats.",
    "If I lived in Paris, I would love it.",
    "Maybe I should buy a car.",
    "你喜欢什么？",
    "我住在哪里？",
    "他说我喜欢猫。",
    "他喜欢篮球。",
    "我参观的景区是世界之窗。",
    "Thanks, Mel! Glad you like it.",
    "It's been a wild ride.",
    "",
    "   \n\n  ",
    "!!!???...",
    "\ud800\udfff\ud800",
    "🙂🙂🙂",
]


def test_questions_hypotheticals_and_garbage_give_nothing() -> None:
    given = {text: extract_triples(text) for text in NOTHING}
    assert given == {text: [] for text in NOTHING}


def test_odd_input_never_raises() -> None:
    huge = "I like tea. " * 20_000 + "我喜欢猫。" * 5_000
    found = extract_triples(huge)
    assert found and all(isinstance(t, TripleDraft) for t in found)
    assert extract_triples("I like \ud800tea.") == [T(USER, "likes", "tea")]
    assert extract_triples("x" * 200_000) == []
    assert extract_triples(None) == []  # type: ignore[arg-type]
    assert extract_triples("I like " + "very " * 500 + "long things.") == []


def test_transcript_speaker_is_the_user_only_when_named() -> None:
    line = "Caroline: I moved to Sweden."
    assert extract_triples(line) == [T("Caroline", "lives_in", "Sweden")]
    assert extract_triples(line, user_names=["caroline"]) == [T(USER, "lives_in", "Sweden")]
    two = "Jon: I started a dance studio.\nGina: I lost my job, so I opened a store."
    assert [t.subject for t in extract_triples(two)] == ["Jon"]


def test_objects_are_short_noun_phrases() -> None:
    for t in extract_triples(
        "Jon: I'm starting a dance studio 'cause I'm passionate about dancing. "
        "I love running my own studio, and I am an assistant manager- it's great."
    ):
        assert len(t.object.split()) <= 6
        assert "'cause" not in t.object and "-" not in t.object


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("  The  ＣＯＦＦＥＥ ", "coffee"),
        ("Ｂｅｒｌｉｎ！", "berlin"),
        ("a   Dance   Studio.", "dance studio"),
        ("I", USER),
        ("me", USER),
        ("我", USER),
        ("主人", USER),
        ("我的", USER),
        ("我们的猫", "我们的猫"),
        ("Caroline", USER),
        ("my sister", "user's sister"),
        ("我妹妹", "user's 妹妹"),
        ("我的上司", "user's 上司"),
        ("Caroline's mom", "user's mom"),
        ("Melanie's kids", "melanie's kids"),
        ("我们", "我们"),
        ("一只猫", "猫"),
        ("\ud800x", "x"),
        ("...", ""),
    ],
)
def test_normalise_entity(name: str, key: str) -> None:
    assert normalise_entity(name, user_names=["Caroline"]) == key


def test_extracted_entities_normalise_to_question_keys() -> None:
    keys = {
        normalise_entity(e, user_names=["Caroline"])
        for t in extract_triples(
            "My sister lives in Berlin. Melanie's kids love hiking. 我的上司在深圳上班。",
            user_names=["Caroline"],
        )
        for e in (t.subject, t.object)
    }
    assert {"user's sister", "melanie's kids", "user's 上司", "深圳", "berlin"} <= keys


KNOWN = {
    "melanie's kids": 2,
    "melanie": 5,
    USER: 9,
    "user's sister": 1,
    "user's 上司": 2,
    "深圳": 1,
    "pottery class": 1,
    "dog": 2,
    "猫": 1,
    "new york city": 1,
    "new york": 1,
    "york": 1,
}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What do Melanie's kids like?", ["melanie's kids"]),
        ("What did Melanie paint?", ["melanie"]),
        ("Where does my sister live?", ["user's sister", USER]),
        ("那我的上司是哪个学校毕业的呢？", ["user's 上司", USER]),
        ("我的上司在深圳吗", ["user's 上司", USER, "深圳"]),
        ("Did Melanie adopt dogs?", ["melanie", "dog"]),
        ("What pottery class did I sign up for?", ["pottery class", USER]),
        ("Is Caroline from New York City?", ["new york city", USER]),
        ("我养的猫叫什么", [USER, "猫"]),
        ("Where is Berlin?", []),
        ("", []),
    ],
)
def test_match_entities(question: str, expected: list[str]) -> None:
    assert match_entities(question, KNOWN, user_names=["Caroline"]) == expected


def test_match_entities_accepts_any_collection_and_needs_user_known() -> None:
    assert match_entities("Where do I live? Melanie knows.", ["melanie"]) == ["melanie"]
    assert match_entities("Where do I live?", {USER}) == [USER]
    assert match_entities("\ud800 melanie", frozenset({"melanie"})) == ["melanie"]


def _triple_model(*items: dict[str, object]) -> ScriptedChatModel:
    return ScriptedChatModel(
        policy=lambda _m: AIMessage("", tool_calls=[tool_call("TriplePlan", items=list(items))])
    )


def test_model_path_one_list_per_text() -> None:
    model = _triple_model(
        {"index": 0, "triples": [{"subject": "I", "predicate": "Lives In", "object": "Berlin"}]},
        {
            "index": 1,
            "triples": [
                {"subject": "主人", "predicate": "likes", "object": "香菜", "negated": True},
                {"subject": "Caroline", "predicate": "go_to", "object": "gym",
                 "frequency": "always", "condition": "when stressed"},
                {"subject": "", "predicate": "x", "object": "y"},
            ],
        },
        {"index": 7, "triples": [{"subject": "a", "predicate": "b", "object": "c"}]},
    )  # fmt: skip
    out = extract_triples_with_model(
        model, ["I live in Berlin.", "我不喜欢香菜", "nothing"], user_names=["Caroline"]
    )
    assert out == [
        [T(USER, "lives_in", "Berlin")],
        [
            T(USER, "likes", "香菜", negated=True),
            T(USER, "go_to", "gym", frequency="always", condition="when stressed"),
        ],
        [],
    ]
    assert extract_triples_with_model(model, []) == []


def test_model_path_failure_and_invalid_answer_give_none(caplog: pytest.LogCaptureFixture) -> None:
    def boom(_m: object) -> AIMessage:
        raise RuntimeError("down")

    with caplog.at_level(logging.WARNING):
        assert extract_triples_with_model(ScriptedChatModel(policy=boom), ["I like tea."]) is None
        invalid = ScriptedChatModel(
            policy=lambda _m: AIMessage(
                "", tool_calls=[tool_call("TriplePlan", items=[{"index": "zero"}])]
            )
        )
        assert extract_triples_with_model(invalid, ["I like tea."]) is None
        plain = ScriptedChatModel(policy=lambda _m: AIMessage("no tool call"))
        assert extract_triples_with_model(plain, ["I like tea."]) is None
    assert "triple extraction" in caplog.text

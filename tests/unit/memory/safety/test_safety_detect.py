"""Safety facts in memories and safety questions, in Chinese and English (pure)."""

from __future__ import annotations

import pytest

from langmem_ext.memory.safety.facts import (
    USER,
    SafetyTopic,
    item_key,
    safety_facts,
    safety_topic,
    user_facts,
)


def _facts(text: str, names: tuple[str, ...] = ()) -> list[tuple[str, tuple[str, ...], str, bool]]:
    return [(f.field, f.items, f.subject, f.negated) for f in safety_facts(text, names)]


@pytest.mark.parametrize(
    ("text", "field", "items"),
    [
        ("I'm allergic to peanuts and penicillin.", "allergies", ("peanuts", "penicillin")),
        ("I've been allergic to bee stings since I was a kid", "allergies", ("bee stings",)),
        ("Penicillin allergy, severe.", "allergies", ("penicillin",)),
        ("I have a mild latex allergy", "allergies", ("latex",)),
        ("My allergies: dust, pollen and cats", "allergies", ("dust", "pollen", "cats")),
        ("Allergic to sulfa drugs since 2010", "allergies", ("sulfa drugs",)),
        ("我对芒果有点过敏", "allergies", ("芒果",)),
        ("我对青霉素和花生过敏", "allergies", ("青霉素", "花生")),
        ("我海鲜过敏", "allergies", ("海鲜",)),
        ("我的过敏原是尘螨、花粉", "allergies", ("尘螨", "花粉")),
        ("I take metformin every morning", "medications", ("metformin",)),
        ("I'm currently taking atorvastatin for my cholesterol", "medications", ("atorvastatin",)),
        ("I take 20mg of lisinopril daily", "medications", ("lisinopril 20mg",)),
        ("I'm on blood thinners", "medications", ("blood thinners",)),
        ("The doctor prescribed me amoxicillin", "medications", ("amoxicillin",)),
        ("I use an inhaler when I run", "medications", ("inhaler",)),
        ("我一直在吃阿司匹林", "medications", ("阿司匹林",)),
        ("我在吃过敏药", "medications", ("过敏药",)),
        ("我每天服用二甲双胍", "medications", ("二甲双胍",)),
        ("医生给我开了头孢", "medications", ("头孢",)),
        (
            "I was diagnosed with type 2 diabetes in 2019",
            "medical_conditions",
            ("type 2 diabetes",),
        ),
        (
            "I have asthma and high blood pressure",
            "medical_conditions",
            ("asthma", "high blood pressure"),
        ),
        ("I suffer from migraines", "medical_conditions", ("migraines",)),
        ("I'm diabetic", "medical_conditions", ("diabetes",)),
        ("我有高血压", "medical_conditions", ("高血压",)),
        ("我患有慢性胃炎", "medical_conditions", ("慢性胃炎",)),
        ("去年确诊了甲状腺结节", "medical_conditions", ("甲状腺结节",)),
        ("I'm vegetarian", "dietary_restrictions", ("vegetarian",)),
        ("I've been vegan for three years", "dietary_restrictions", ("vegan",)),
        ("I don't eat pork or beef", "dietary_restrictions", ("no pork", "no beef")),
        ("I'm lactose intolerant", "dietary_restrictions", ("lactose intolerant",)),
        ("我吃素", "dietary_restrictions", ("素食",)),
        ("我不吃猪肉", "dietary_restrictions", ("不吃猪肉",)),
        ("I had knee surgery in 2019", "surgeries", ("knee surgery",)),
        ("I had my appendix removed when I was 12", "surgeries", ("appendix removed",)),
        ("Had a tonsillectomy as a child", "surgeries", ("tonsillectomy",)),
        ("I underwent heart bypass surgery last spring", "surgeries", ("heart bypass surgery",)),
        ("我做过阑尾炎手术", "surgeries", ("阑尾炎手术",)),
        ("我前年动过一次心脏手术", "surgeries", ("心脏手术",)),
        ("我的胆囊切除了", "surgeries", ("胆囊切除",)),
    ],
)
def test_a_statement_of_the_user_names_its_field_and_items(
    text: str, field: str, items: tuple[str, ...]
) -> None:
    assert _facts(text) == [(field, items, USER, False)]


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("My sister is allergic to shellfish", "sister"),
        ("I think my sister is allergic to shellfish", "sister"),
        ("My dad takes insulin", "father"),
        ("Tom has asthma", "tom"),
        ("She had knee surgery", "she"),
        ("我妹妹对虾过敏", "sister"),
        ("我妈妈做过心脏搭桥手术", "mother"),
        ("李雷对芒果过敏", "李雷"),
        ("Anna's allergic to cats", "anna"),
        ("Melanie: I'm allergic to cats", "melanie"),
    ],
)
def test_someone_elses_fact_is_theirs(text: str, subject: str) -> None:
    [fact] = safety_facts(text)
    assert fact.subject == subject
    assert user_facts(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "My doctor says I have asthma",
        "Lin Wei is allergic to peanuts",
        "The user takes warfarin",
        "主人对海鲜过敏",
        "User: I take aspirin daily",
        "My sister is vegan but I'm allergic to nuts",
        "Peanut allergy, carries an EpiPen",
    ],
)
def test_the_user_is_the_subject(text: str) -> None:
    assert [f.subject for f in user_facts(text, ("Lin Wei",))] and all(
        f.subject == USER for f in user_facts(text, ("Lin Wei",))
    )


def test_one_sentence_can_state_two_peoples_facts() -> None:
    facts = _facts("I think my sister is allergic to shellfish, but I'm allergic to cats")
    assert facts == [
        ("allergies", ("shellfish",), "sister", False),
        ("allergies", ("cats",), USER, False),
    ]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("I'm not allergic to peanuts anymore", "allergies"),
        ("I have no allergies", "allergies"),
        ("我不再对花生过敏了", "allergies"),
        ("我没有任何过敏", "allergies"),
        ("I stopped taking aspirin", "medications"),
        ("I've never had surgery", "surgeries"),
        ("我没做过手术", "surgeries"),
    ],
)
def test_negations_are_marked(text: str, field: str) -> None:
    [fact] = safety_facts(text)
    assert fact.field == field and fact.negated and fact.subject == USER


@pytest.mark.parametrize(
    "text",
    [
        "I take the bus to work",
        "I have a cat",
        "I don't eat breakfast",
        "我吃苹果",
        "我有一只猫",
        "我不吃早饭",
        "Allergies can be tough.",
        "It's unfortunate how many people suffer from it.",
        "I'm gonna take a shot at starting my own business",
        "我用的是雅漾舒护活泉水喷雾。",
        "What are you allergic to?",
        "我对什么过敏？",
        "Caroline went to a LGBTQ support group yesterday",
        "主人喜欢吃拉面",
    ],
)
def test_no_safety_fact_where_none_is_stated(text: str) -> None:
    assert safety_facts(text) == []


@pytest.mark.parametrize(
    ("question", "fields", "subject"),
    [
        ("Does Lin Wei have any food allergies?", ("allergies",), USER),
        ("我对什么过敏？", ("allergies",), USER),
        ("what medications am I on?", ("medications",), USER),
        ("我做过什么手术", ("surgeries",), USER),
        ("Have I ever had an operation?", ("surgeries",), USER),
        ("我在吃什么药？", ("medications",), USER),
        ("Any dietary restrictions I should know about?", ("dietary_restrictions",), USER),
        ("我有什么慢性病吗", ("medical_conditions",), USER),
        ("Who is my emergency contact?", ("emergency_contact",), USER),
        ("What is my sister allergic to?", ("allergies",), "sister"),
        ("what medications is my dad on?", ("medications",), "father"),
        ("我妈妈对什么过敏", ("allergies",), "mother"),
        ("Does Tom have allergies?", ("allergies",), "tom"),
    ],
)
def test_safety_questions(question: str, fields: tuple[str, ...], subject: str) -> None:
    assert safety_topic(question, ["Lin Wei"]) == SafetyTopic(fields, subject)


@pytest.mark.parametrize(
    "question",
    [
        "Do I take the bus today?",
        "What's the weather tomorrow?",
        "What did Melanie paint?",
        'What is the type of game "Xenoblade Chronicles" that Nate is playing?',
        "杜邦火药厂的名称是什么?",
        "How long was the Summer Theatre in operation?",
        "Who was the medical report written for?",
    ],
)
def test_other_questions_are_no_safety_topic(question: str) -> None:
    assert safety_topic(question) is None


def test_without_the_profile_name_a_named_person_is_someone_else() -> None:
    assert safety_facts("Lin Wei is allergic to peanuts")[0].subject == "lin wei"
    assert safety_topic("Does Lin Wei have any food allergies?") == SafetyTopic(
        ("allergies",), "lin wei"
    )


def test_items_compare_without_case_plural_or_spacing() -> None:
    assert item_key("Peanuts") == item_key("peanut")
    assert item_key("blood thinners") == item_key("Blood-thinner")
    assert item_key("花生") == item_key(" 花生")
    assert item_key("花生") != item_key("芒果")

"""Whom a text is about, for every relation of the kinship vocabulary."""

from __future__ import annotations

import pytest

from langmem_ext.language.relations import RELATION_WORDS, relation_index
from langmem_ext.memory.safety.facts import is_relation, persons, safety_topic


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("What is my mother-in-law allergic to?", "mother-in-law"),
        ("我婆婆对鸡蛋过敏", "mother-in-law"),
        ("我岳母有高血压", "mother-in-law"),
        ("My father-in-law takes warfarin", "father-in-law"),
        ("我老丈人每天吃降压药", "father-in-law"),
        ("My in-laws live in Cork", "parents-in-law"),
        ("我嫂子在银行上班", "sister-in-law"),
        ("My brother-in-law is a pilot", "brother-in-law"),
        ("我女婿对青霉素过敏", "son-in-law"),
        ("Where do my grandparents live?", "grandparents"),
        ("我爷爷奶奶住在乐山", "grandparents"),
        ("我孙子对什么过敏？", "grandson"),
        ("My granddaughter loves ballet", "granddaughter"),
        ("我外甥女在学钢琴", "niece"),
        ("My nephew plays football", "nephew"),
        ("My stepmom is diabetic", "stepmother"),
    ],
)
def test_a_relative_by_marriage_or_generation_is_one_other_person(text: str, who: str) -> None:
    """Each relation word is one person, not the user ("我婆婆" is not "我" and "婆")."""
    assert persons(text)[0] == who
    assert is_relation(who)


def test_a_question_about_a_grandchild_is_not_the_users_own_safety_question() -> None:
    topic = safety_topic("我孙子对什么过敏？")
    assert topic is not None and topic.subject == "grandson"
    topic = safety_topic("What is my mother-in-law allergic to?")
    assert topic is not None and topic.subject == "mother-in-law"


def test_every_relation_key_has_words_in_both_languages() -> None:
    for key, words in RELATION_WORDS.items():
        split = words.split()
        assert any(w.isascii() for w in split), key
        assert any(not w.isascii() for w in split), key
    index = relation_index()
    assert index["外婆"] == index["grandma"] == "grandmother"


def test_a_job_title_is_no_relation() -> None:
    """A word that names one's own job ("我是小学老师") does not make the text about
    someone else."""
    assert persons("我是小学老师，对花生过敏") == ("user",)
    assert persons("我是产品经理") == ("user",)


def test_a_named_persons_relation_is_not_that_person() -> None:
    from langmem_ext.memory.safety.facts import owner

    assert owner("Wu Lei's wife is allergic to shrimp") == "wu lei"
    assert owner("Wu Lei is allergic to celery") is None
    assert owner("我妈妈对花粉过敏") is None


@pytest.mark.parametrize(
    ("query", "tokens"),
    [
        ("What is Wu Lei's signature dish?", ["wu", "lei", "signatur", "dish"]),
        ("What’s my mom’s name?", ["mom", "name"]),
        ("吴磊's 爱好", ["吴磊", "爱好"]),
    ],
)
def test_the_clitic_of_a_possessive_is_no_word_of_a_query(query: str, tokens: list[str]) -> None:
    from langmem_ext.language.text import query_tokens

    assert query_tokens(query) == tokens

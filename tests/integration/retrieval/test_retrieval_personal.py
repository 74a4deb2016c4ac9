"""A user's own facts, asked in either language: whom a fact is about, word forms,
the other script, the newer statement, and why each hit ranked (real embedder, real
Chroma, real SQLite)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from langmem_ext import Memory, Settings
from langmem_ext.cli.demo import run_demo
from langmem_ext.language.text import TOKENIZER_VERSION, query_tokens, stem
from langmem_ext.memory.recall.neighbours import IndexNeighbours, doc_candidate
from langmem_ext.memory.safety.facts import persons, same_person, subject_phrase

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
LIN_WEI = [
    "林伟对花生过敏（安全相关，务必记住）",
    "Lin Wei's cat Doudou eats fish-flavoured food",
    "林伟喜欢吃豚骨拉面",
    "Lin Wei's sister Mei is vegetarian",
    "Lin Wei is training for the Berlin half marathon",
    "林伟在柏林做软件工程师",
    "林伟的妈妈喜欢喝绿茶",
    "Lin Wei drinks coffee every morning",
]


def _fill(memory: Memory, texts: list[str], *, days_apart: float = 0.0) -> dict[str, str]:
    when = [T0 + timedelta(days=i * days_apart, hours=i) for i in range(len(texts))]
    ids = memory.add_many(texts, created_at=when, category=["fact"] * len(texts))
    return dict(zip(texts, ids, strict=True))


@pytest.mark.parametrize("profile_name", [None, "Lin Wei", "林伟"])
def test_lin_weis_allergy_comes_first_among_bilingual_distractors(
    memory: Memory, profile_name: str | None
) -> None:
    """The cat's fish-flavoured food shares "Lin", "Wei" and "food" with the question;
    the allergy is in Chinese. Whether the profile names the user in either script
    or not at all, 林伟 is Lin Wei and the allergy is first."""
    if profile_name:
        memory.upsert_facts({"name": profile_name})
    _fill(memory, LIN_WEI)
    hits = memory.search("Does Lin Wei have any food allergies?", k=5, now=T0 + timedelta(days=2))
    assert hits[0].text == LIN_WEI[0], [h.text for h in hits]
    assert hits[0].debug["safety_first"] == 1.0


def test_the_demos_allergy_question_finds_the_peanut_allergy_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_demo(str(tmp_path / "ws"), as_json=True, scripted=True) == 0
    report = json.loads(capsys.readouterr().out)
    [search] = [s for s in report["searches"] if s["query"].startswith("Does Lin Wei")]
    assert "花生" in search["top"], search


def test_alices_allergy_is_found_over_her_name_in_the_other_language(memory: Memory) -> None:
    """ "allergies" meets "allergic" in the keyword index, and a same-language memory
    without a matching word no longer loses to any memory in the other script."""
    _fill(
        memory,
        [
            "我叫爱丽丝",
            "I am allergic to peanuts",
            "我喜欢喝咖啡",
            "My brother works at Google",
            "I live in Boston",
            "我每周去两次健身房",
        ],
    )
    hits = memory.search("Does Alice have any allergies?", k=3, now=T0 + timedelta(days=2))
    assert hits[0].text == "I am allergic to peanuts", [h.text for h in hits]
    reasons = {s.key: s.reason for s in hits[0].reasons("Does Alice have any allergies?")}
    assert "allergies" in reasons["bm25"]


def test_the_newer_statement_of_where_the_user_lives_comes_first_in_any_language(
    memory: Memory,
) -> None:
    ids = _fill(
        memory,
        ["I live in Portland, Oregon", "My sister lives in Austin", "我上个月搬到了西雅图"],
        days_apart=200,
    )
    for question in ("Which city do I live in now?", "我现在住哪儿？", "Where am I based?"):
        hits = memory.search(question, k=3, now=T0 + timedelta(days=500))
        assert hits[0].id == ids["我上个月搬到了西雅图"], (question, [h.text for h in hits])
        older = [h for h in hits if h.id == ids["I live in Portland, Oregon"]]
        assert all(h.debug.get("older_statement") == 1.0 for h in older)
        assert all("slot" not in h.debug for h in older)
    [older] = [
        h
        for h in memory.search("Which city do I live in now?", k=3, now=T0 + timedelta(days=500))
        if h.id == ids["I live in Portland, Oregon"]
    ]
    assert next(s.name for s in older.reasons()) == "Older version"


def test_whom_a_fact_is_about_separates_the_users_allergy_from_the_wifes(memory: Memory) -> None:
    ids = _fill(
        memory,
        ["My wife is allergic to latex", "I'm allergic to bee stings", "我老婆喜欢吃海鲜"],
        days_apart=30,
    )
    wife = memory.search("What is my wife allergic to?", k=3, now=T0 + timedelta(days=100))
    assert wife[0].id == ids["My wife is allergic to latex"], [h.text for h in wife]
    [mine] = [h for h in wife if h.id == ids["I'm allergic to bee stings"]]
    assert mine.debug["other_person"] < 1.0
    assert "Someone else" in [s.name for s in mine.reasons()]
    me = memory.search("What am I allergic to?", k=3, now=T0 + timedelta(days=100))
    assert me[0].id == ids["I'm allergic to bee stings"], [h.text for h in me]
    zh = memory.search("我老婆对什么过敏？", k=3, now=T0 + timedelta(days=100))
    assert zh[0].id == ids["My wife is allergic to latex"], [h.text for h in zh]


def test_persons_reads_whom_a_text_is_about() -> None:
    assert persons("My husband Zhou Jie is allergic to pollen") == ("husband", "zhou jie")
    assert persons("我丈夫Mark对猫毛过敏") == ("husband", "mark")
    assert persons("Wu Lei's wife is allergic to shrimp") == ("wife",)
    assert persons("I live in Dublin with my wife Claire") == ("user",)
    assert persons("林伟对花生过敏", ["Lin Wei"]) == ("user",)
    # an opening verb is no name, nor is a name deep in the sentence
    assert persons("Prefers oolong tea over green tea") == ()
    assert persons("Dentist appointment with Dr. Weber on March 14") == ()
    assert persons("Melanie: my sister is allergic to cats") == ()  # a transcript line
    assert same_person("吴磊", "Wu Lei") and same_person("小雨", "Xiaoyu")
    assert not same_person("吴磊", "Wu Li")


def test_word_forms_meet_in_the_keyword_index(fake_memory: Memory) -> None:
    assert stem("allergic") == stem("allergies") == stem("allergy")
    assert stem("lived") == stem("lives") == stem("living")
    assert query_tokens("Does he have allergies?") == [stem("allergies")]  # "does" dropped
    fake_memory.add("I am allergic to peanuts", scope="s")
    fake_memory.add("I live in Boston", scope="s")
    hits = fake_memory.search("allergies", scope="s", mode="fts")
    assert [h.text for h in hits] == ["I am allergic to peanuts"]


def test_an_index_written_with_the_old_tokens_is_tokenized_again(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    mem = Memory(settings=s)
    mem.add("I am allergic to peanuts", scope="s")
    path = mem.workspace.layout.index_dir / "index.db"
    mem.close()
    with sqlite3.connect(path) as conn:  # as an index of the old tokenizer holds it
        conn.execute("UPDATE fts SET tokens = 'i am allergic to peanut'")
        conn.execute("DELETE FROM meta WHERE key = 'tokenizer'")
    mem = Memory(settings=s)
    try:
        assert [h.text for h in mem.search("allergies", scope="s", mode="fts")] == [
            "I am allergic to peanuts"
        ]
        assert mem.workspace.keyword.get_meta("tokenizer") == TOKENIZER_VERSION
    finally:
        mem.close()


def test_facts_noted_weeks_apart_are_not_each_others_context(fake_memory: Memory) -> None:
    texts = ["I play the cello", "I like green tea", "I drink it every morning"]
    when = [T0, T0 + timedelta(days=60), T0 + timedelta(days=60, hours=1)]
    ids = fake_memory.add_many(texts, scope="s", created_at=when)
    kw = fake_memory.workspace.keyword
    docs = kw.docs(ids)
    cello, tea = doc_candidate(docs[ids[0]]), doc_candidate(docs[ids[1]])
    week = IndexNeighbours(kw, "s", max_gap=7 * 86_400.0)
    layout = week.neighbours([cello, tea], 2)
    assert [n for _, n in layout[cello.id]] == []  # the next fact came two months later
    assert [n for _, n in layout[tea.id]] == [ids[2]]  # noted the same day
    anyone = IndexNeighbours(kw, "s").neighbours([cello], 2)
    assert ids[1] in [n for _, n in anyone[cello.id]]


def test_each_hit_says_why_it_ranked_on_one_scale(memory: Memory) -> None:
    _fill(memory, ["I have a peanut allergy", "我对花生过敏", "I walk my dog every day"])
    q = "Am I allergic to peanuts?"
    hits = memory.search(q, k=3, now=T0 + timedelta(minutes=5))
    assert all(0.0 <= h.score < 1.0 for h in hits)
    for h in hits:  # the returned score is the ranking score on the scale 0..1
        ranking = h.debug["ranking"]
        assert h.score == pytest.approx(ranking / (ranking + 0.25), abs=1e-6)
    by_text = {h.text: {s.key: s for s in h.reasons(q)} for h in hits}
    english = by_text["I have a peanut allergy"]
    assert english["bm25"].reason.startswith("matched the words allergic, peanuts")
    assert english["importance"].reason.startswith("importance 1.00 of 3")
    assert "recency" not in english  # a fact minutes old does not age
    assert english["final"].name == "Score"
    chinese = by_text["我对花生过敏"]
    assert chinese["keyword_readable"].name == "Other language"
    assert "profile" in chinese and "allergies" in chinese["profile"].reason


def test_a_relative_by_marriage_is_someone_else(memory: Memory) -> None:
    """婆婆 is the mother-in-law, not the user: her allergy answers the question about
    her, in either language, above the user's own allergy."""
    ids = _fill(
        memory,
        ["I'm allergic to dust mites", "我婆婆对鸡蛋过敏", "我孙子喜欢踢足球"],
        days_apart=30,
    )
    for question in ("What is my mother-in-law allergic to?", "我婆婆对什么过敏？"):
        hits = memory.search(question, k=3, now=T0 + timedelta(days=100))
        assert hits[0].id == ids["我婆婆对鸡蛋过敏"], (question, [h.text for h in hits])
        [mine] = [h for h in hits if h.id == ids["I'm allergic to dust mites"]]
        assert mine.debug["other_person"] < 1.0


def test_a_relocation_with_the_family_replaces_where_the_user_lived(memory: Memory) -> None:
    ids = _fill(
        memory,
        [
            "I live in Dublin with my wife Claire",
            "We relocated to Toronto in January for Claire's job",
        ],
        days_apart=200,
    )
    for question in ("Where do I live?", "我现在住在哪里？"):
        hits = memory.search(question, k=2, now=T0 + timedelta(days=500))
        assert hits[0].id == ids["We relocated to Toronto in January for Claire's job"], (
            question,
            [h.text for h in hits],
        )


def test_words_naming_whom_a_question_asks_about_are_no_match_of_what_it_asks(
    memory: Memory,
) -> None:
    """A memory in the question's language sharing only "my wife Anna" with it matched
    whom, not what: the answer in the other language comes first."""
    answer = "我老婆Anna喜欢看侦探小说"
    ids = _fill(
        memory,
        [
            "My wife Anna is allergic to latex",
            answer,
            "I like to read history books",
            "My dad likes to read the news",
            "I live in Leeds",
        ],
        days_apart=10,
    )
    hits = memory.search("What does my wife Anna like to read?", k=3, now=T0 + timedelta(days=100))
    assert hits[0].id == ids[answer], [h.text for h in hits]


def test_subject_phrase_is_the_span_persons_reads() -> None:
    assert subject_phrase("What does my wife Xu Ting do?") == "my wife Xu Ting"
    assert subject_phrase("我男朋友喜欢吃什么？") == "我男朋友"
    assert subject_phrase("What does Wu Lei's wife do?") == "Wu Lei's wife"
    assert subject_phrase("Prefers oolong tea") == ""

"""A safety question ranks the memories stating the asked fields first, in both
languages and across them (real embedder, real Chroma, real SQLite)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, build_memory_graph
from langmem_ext.chat_models.scripted import ScriptedChatModel, offline_policy

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

DISTRACTORS = [
    "Lin Wei likes peanut butter cookies",
    "Lin Wei went to the allergy clinic with a friend last week",
    "My sister is allergic to shellfish",
    "林伟周末喜欢去医院附近的公园跑步",
    "Lin Wei's favourite dish is kung pao chicken with peanuts",
    "The pharmacy near Lin Wei's office closes at 9 pm",
    "林伟的妈妈做过心脏手术",
    "Lin Wei takes the subway to work every morning",
    "Lin Wei read an article about new medicines for diabetes",
    "林伟最近在学做菜，喜欢川菜",
]


def _fill(memory: Memory, facts: list[str]) -> dict[str, str]:
    texts = [*DISTRACTORS, *facts]
    when = [T0 + timedelta(hours=i) for i in range(len(texts))]
    ids = memory.add_many(texts, created_at=when)
    return dict(zip(texts, ids, strict=True))


@pytest.fixture
def lin_wei(memory: Memory) -> tuple[Memory, dict[str, str]]:
    memory.upsert_facts({"name": "Lin Wei", "allergies": ["shellfish"]})
    ids = _fill(
        memory,
        [
            "我对花生过敏",
            "I'm allergic to penicillin",
            "我每天服用二甲双胍",
            "I take 10mg of lisinopril every morning",
            "I had my appendix removed in 2015",
            "我去年做了膝盖手术",
        ],
    )
    return memory, ids


@pytest.mark.parametrize(
    ("question", "stating"),
    [
        ("Does Lin Wei have any food allergies?", ["我对花生过敏", "I'm allergic to penicillin"]),
        ("我对什么过敏？", ["我对花生过敏", "I'm allergic to penicillin"]),
        (
            "what medications am I on?",
            ["我每天服用二甲双胍", "I take 10mg of lisinopril every morning"],
        ),
        ("我在吃什么药？", ["我每天服用二甲双胍", "I take 10mg of lisinopril every morning"]),
        ("我做过什么手术", ["I had my appendix removed in 2015", "我去年做了膝盖手术"]),
        ("Have I ever had surgery?", ["I had my appendix removed in 2015", "我去年做了膝盖手术"]),
    ],
)
def test_a_safety_question_ranks_every_memory_stating_it_first(
    lin_wei: tuple[Memory, dict[str, str]], question: str, stating: list[str]
) -> None:
    memory, _ = lin_wei
    hits = memory.search(question, k=5, now=T0 + timedelta(days=2))
    top = [h.text for h in hits[: len(stating)]]
    assert sorted(top) == sorted(stating), [h.text for h in hits]
    for h in hits[: len(stating)]:
        assert h.debug["safety"] == 1.0 and h.debug["safety_first"] == 1.0
    assert all("safety_first" not in h.debug for h in hits[len(stating) :])


def test_the_memory_knows_the_profile_field_it_states(
    lin_wei: tuple[Memory, dict[str, str]],
) -> None:
    memory, ids = lin_wei
    [hit] = [h for h in memory.search("花生", k=5, now=T0) if h.id == ids["我对花生过敏"]]
    assert hit.debug["profile.allergies"] == 1.0
    profile = memory.profile()
    assert profile.stated_by["allergies"] == [
        ids["我对花生过敏"],
        ids["I'm allergic to penicillin"],
    ]
    assert profile.stated_by["surgeries"] == [
        ids["I had my appendix removed in 2015"],
        ids["我去年做了膝盖手术"],
    ]


def test_a_hand_written_memory_is_read_by_the_stage(memory: Memory) -> None:
    _fill(memory, [])
    path = memory.root / "MEMORY.md"
    path.write_text(
        path.read_text(encoding="utf-8")
        + "- I carry an EpiPen because of a severe bee sting allergy\n",
        encoding="utf-8",
    )
    memory.sync()
    hits = memory.search("What am I allergic to?", k=3, now=T0 + timedelta(days=1))
    assert hits[0].text.startswith("I carry an EpiPen") and hits[0].debug["safety_first"] == 1.0


def test_a_question_about_someone_else_ranks_their_facts_not_the_users(
    lin_wei: tuple[Memory, dict[str, str]],
) -> None:
    memory, _ = lin_wei
    hits = memory.search("What is my sister allergic to?", k=5, now=T0 + timedelta(days=2))
    assert hits[0].text == "My sister is allergic to shellfish"
    assert [h.text for h in hits if "safety_first" in h.debug] == [hits[0].text]
    surgery = memory.search("林伟的妈妈做过什么手术？", k=3, now=T0 + timedelta(days=2))
    assert surgery[0].text == "林伟的妈妈做过心脏手术"


def test_other_questions_rank_as_before(lin_wei: tuple[Memory, dict[str, str]]) -> None:
    memory, _ = lin_wei
    on = memory.search("What does Lin Wei like to eat?", k=5, now=T0 + timedelta(days=2))
    memory.settings.retrieval.safety_stage = False
    off = memory.search("What does Lin Wei like to eat?", k=5, now=T0 + timedelta(days=2))
    assert [h.id for h in on] == [h.id for h in off]
    assert not any("safety" in h.debug for h in on)


def test_the_stage_can_be_switched_off(lin_wei: tuple[Memory, dict[str, str]]) -> None:
    memory, _ = lin_wei
    memory.settings.retrieval.safety_stage = False
    hits = memory.search("Does Lin Wei have any food allergies?", k=5, now=T0 + timedelta(days=2))
    assert not any("safety_first" in h.debug for h in hits)


def _block(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))


def test_through_the_graph_a_confirmed_allergy_reaches_the_profile_and_the_block(
    memory: Memory,
) -> None:
    model = ScriptedChatModel(policy=offline_policy)
    graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1", "user_id": "lin"}}
    scope = "user_lin"
    memory.upsert_facts({"name": "Lin Wei", "allergies": ["shellfish"]}, scope=scope)
    memory.add_many(DISTRACTORS, scope=scope, created_at=T0)

    def say(text: str, thread: str = "t1") -> dict[str, Any]:
        conf = {"configurable": {**config["configurable"], "thread_id": thread}}
        return dict(graph.invoke({"messages": [HumanMessage(text)]}, conf))

    say("我对花生和青霉素过敏，请记住")
    out = say("确认")  # the memory is stored; it proposes the profile change
    # the profile change is proposed: named to the model, or (when the proposal lands
    # after the reply was written) asked by the graph's numbered question
    said = str(out["messages"][-1].content)
    assert "proposed for the profile" in said or "个人资料的 allergies" in said, said
    assert memory.profile(scope=scope).allergies == ["shellfish"]  # waits for the user
    say("好")  # confirms the proposal
    profile = memory.profile(scope=scope)
    assert profile.allergies == ["shellfish", "花生", "青霉素"]
    [entry] = [e for e in memory.list(scope=scope) if "过敏" in e.text]
    assert profile.stated_by == {"allergies": [entry.id]}
    # Later, in English, in another thread: the block starts with the safety facts.
    say("Does Lin Wei have any food allergies?", thread="t2")
    block = _block(model.calls[-1])
    memory_part = block[block.index("<memory_context>") :].splitlines()
    assert memory_part[2] == (
        '- safety, allergies (the user\'s profile): ["shellfish", "花生", "青霉素"]'
    )
    assert memory_part[3].startswith(f"- safety memory, allergies ({entry.anchor} (line")
    assert entry.text in memory_part[3]
    assert sum(entry.text in line for line in memory_part) == 1  # not repeated below
    assert f"(memories: {entry.id})" in block  # the safety block names the memory too


def test_a_scope_with_many_statements_of_one_fact_joins_a_bounded_few(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hundreds of statements of one allergy cost a safety question no more than a few:
    the stage joins at most what can reach the top k, the newest statement of each
    distinct item first, so the one old statement of another allergen still joins."""
    from langmem_ext.retrieval.stages import marks

    texts = [
        "I'm allergic to penicillin",
        *(f"I am allergic to peanuts, the clinic noted on visit {i}" for i in range(80)),
        *(f"Lin Wei walked {i} km along the river today" for i in range(40)),
    ]
    ids = fake_memory.add_many(
        texts, created_at=[T0 + timedelta(hours=i) for i in range(len(texts))]
    )
    asked: list[list[str]] = []
    join = marks._joined

    def spy(pool: Any, ctx: Any, wanted: list[str], qunit: Any) -> Any:
        asked.append(list(wanted))
        return join(pool, ctx, wanted, qunit)

    monkeypatch.setattr(marks, "_joined", spy)
    hits = fake_memory.search("What am I allergic to?", k=5, now=T0 + timedelta(days=9))
    assert asked, "no linked memory joined"
    assert all(len(w) <= max(2 * 5, marks.PERSON_DEPTH) for w in asked)
    joined_or_found = {i for w in asked for i in w} | {h.id for h in hits}
    assert ids[0] in joined_or_found  # the one penicillin statement, oldest of all
    assert all(h.debug.get("safety") == 1.0 for h in hits)


def test_a_search_reads_the_profile_once_and_the_next_one_sees_a_change(
    lin_wei: tuple[Memory, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question, whom each memory is about and the profile's fields share one
    read of the profile; a rename between searches shows in the next one."""
    memory, _ids = lin_wei
    read = memory.profiles.read
    names: list[str | None] = []

    searching = threading.get_ident()

    def spy(scope: str, *, wait: bool = True) -> Any:
        profile = read(scope, wait=wait)
        if threading.get_ident() == searching:  # not the background writers' reads
            names.append(profile.name)
        return profile

    monkeypatch.setattr(memory.profiles, "read", spy)
    memory.search("Does Lin Wei have any food allergies?", k=5)
    assert names == ["Lin Wei"]
    memory.upsert_facts({"name": "Wang Fang"})
    memory.background.wait()
    names.clear()
    memory.search("Does Lin Wei have any food allergies?", k=5)
    assert names == ["Wang Fang"]

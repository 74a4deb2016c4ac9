"""The reviewer: scripted chat models (PROMOTE / KEEP / DELETE, searches), real stores."""

from __future__ import annotations

import math
import time
from datetime import date, datetime, timedelta

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.memory.lifecycle.reviewer import DECISION_TOOL, SEARCH_TOOL, review_kind
from langmem_ext.workspace.markdown import parse_entries


def boost_to(memory: Memory, entry_id: str, target: float, *, days: int) -> None:
    """Boost ``entry_id`` (+0.3 each) to ``target``, the boosts spread in time order
    over ``days`` distinct past days (3 h apart within a day)."""
    st = memory.workspace.ledger.entries.get(entry_id)
    assert st is not None
    n = math.ceil((target - st.importance) / 0.3 - 1e-9)
    counts = [n // days + (1 if d < n % days else 0) for d in range(days)]
    start = datetime.combine(date.today() - timedelta(days=days), datetime.min.time())
    for d, count in enumerate(counts):
        for h in range(count):
            at = start + timedelta(days=d, hours=8 + 3 * h)
            assert memory.boost(entry_id, scope="main", now=at.timestamp()) > 0
    st = memory.workspace.ledger.entries.get(entry_id)
    assert st is not None and st.importance >= target - 1e-9


def decide(decision: str, reason: str = "") -> AIMessage:
    return AIMessage("", tool_calls=[tool_call(DECISION_TOOL, decision=decision, reason=reason)])


def section_of(memory: Memory, entry_id: str) -> str:
    path = memory.root / memory.get_entry(entry_id, scope="main").path
    [entry] = [e for e in parse_entries(path.read_text()) if e.id == entry_id]
    return entry.category


def test_a_memory_boosted_to_25_is_promoted_by_a_scripted_promote_and_moved_to_core(
    fake_memory: Memory,
) -> None:
    fact = fake_memory.add("主人的生日是三月五日", scope="main")
    fake_memory.add_many(["主人喜欢吃拉面", "主人住在上海"], scope="main")
    boost_to(fake_memory, fact, 2.5, days=2)
    st = fake_memory.workspace.ledger.entries.get(fact)
    assert st is not None and st.importance >= 2.5 and review_kind(fake_memory, st) == "promotion"
    model = ScriptedChatModel(policy=lambda messages: decide("PROMOTE", "a birthday is stable"))
    report = fake_memory.maintain(model=model)
    [review] = report.reviews
    assert (review.entry_id, review.decision, review.action) == (fact, "PROMOTE", "promoted")
    assert not review.used_fallback and review.reason == "a birthday is stable"
    entry = fake_memory.get_entry(fact, scope="main")
    assert entry.category == "core" and entry.importance >= 3.0
    assert section_of(fake_memory, fact) == "core"
    text = (fake_memory.root / "MEMORY.md").read_text()
    assert text.index("## Core") < text.index("主人的生日是三月五日")
    assert [e.id for e in fake_memory.list(scope="main", category="core")] == [fact]
    assert fake_memory.history(fact, scope="main")[-1]["op"] == "promote"
    # the prompt showed the memory and its related memories
    prompt = "\n".join(str(m.content) for m in model.calls[0])
    assert f"[{fact}]" in prompt and "主人喜欢吃拉面" in prompt
    # promoted once: nothing is due any more
    assert fake_memory.maintain(model=model).reviews == []


def test_a_scripted_search_round_then_keep(fake_memory: Memory) -> None:
    fact = fake_memory.add("Likes hiking in the Alps", scope="main")
    fake_memory.add("Broke a leg skiing last winter", scope="main")
    boost_to(fake_memory, fact, 2.5, days=2)

    def policy(messages: list[BaseMessage]) -> AIMessage:
        if not any(isinstance(m, ToolMessage) for m in messages):
            return AIMessage("", tool_calls=[tool_call(SEARCH_TOOL, query="leg skiing")])
        return decide("KEEP", "a hobby, but the leg may change it")

    model = ScriptedChatModel(policy=policy)
    result = fake_memory.review(fact, scope="main", model=model)
    assert (result.decision, result.action, result.searches) == ("KEEP", "kept", ["leg skiing"])
    assert "Broke a leg skiing" in str(model.calls[1][-1].content)  # the search's result
    assert fake_memory.get_entry(fact, scope="main").category == "fact"
    # kept at this importance: not reviewed again until boosts raise it
    st = fake_memory.workspace.ledger.entries.get(fact)
    assert st is not None and review_kind(fake_memory, st) is None
    fake_memory.boost(fact, scope="main", now=time.time())
    st = fake_memory.workspace.ledger.entries.get(fact)
    assert st is not None and review_kind(fake_memory, st) == "promotion"


@pytest.mark.parametrize(
    "reply",
    [
        AIMessage("[PROMOTE]"),  # the seed's text protocol is not structured output
        decide("MAYBE"),  # not one of PROMOTE / KEEP / DELETE
        AIMessage("", tool_calls=[tool_call(SEARCH_TOOL, query="again")]),  # a 4th search
    ],
    ids=["text", "invalid-decision", "too-many-searches"],
)
def test_an_invalid_answer_falls_back_to_the_boost_days_rule(
    fake_memory: Memory, reply: AIMessage
) -> None:
    two = fake_memory.add("Plays the piano", scope="main")
    three = fake_memory.add("Birthday on March 5", scope="main")
    boost_to(fake_memory, two, 2.5, days=2)
    boost_to(fake_memory, three, 2.5, days=3)
    model = ScriptedChatModel(policy=lambda messages: reply)
    report = fake_memory.maintain(model=model)
    by_id = {r.entry_id: r for r in report.reviews}
    assert all(r.used_fallback and r.error for r in report.reviews)
    assert (by_id[two].decision, by_id[two].action) == ("KEEP", "kept")
    assert (by_id[three].decision, by_id[three].action) == ("PROMOTE", "promoted")
    assert section_of(fake_memory, three) == "core" and section_of(fake_memory, two) == "fact"
    if reply.tool_calls and reply.tool_calls[0]["name"] == SEARCH_TOOL:
        assert by_id[two].searches == ["again"] * 3  # capped at 3 rounds


def test_model_error_falls_back(fake_memory: Memory) -> None:
    fact = fake_memory.add("Likes ramen", scope="main")

    def broken(messages: list[BaseMessage]) -> AIMessage:
        raise RuntimeError("model down")

    fake_memory.workspace.ledger.entries.set_importances([(fact, 0.1)])
    result = fake_memory.review(fact, scope="main", model=ScriptedChatModel(policy=broken))
    assert result.kind == "decay" and result.used_fallback and "model down" in (result.error or "")
    assert (result.decision, result.action, result.importance_after) == ("KEEP", "reset", 0.5)


def test_fallback_does_not_promote_a_changed_memory(fake_memory: Memory) -> None:
    fact = fake_memory.add("Lives in Lyon", scope="main")
    boost_to(fake_memory, fact, 2.5, days=3)
    new = fake_memory.update(fact, "Lives in Paris", scope="main").id  # a new version
    result = fake_memory.review(new, scope="main")
    assert (result.decision, result.action) == ("KEEP", "kept") and "changed" in result.reason


def test_decay_review_delete_deletes_with_history(fake_memory: Memory) -> None:
    fact = fake_memory.add("Had a cold last week", scope="main")
    keep = fake_memory.add("Is allergic to peanuts", scope="main", category="core")
    fake_memory.workspace.ledger.entries.set_importances([(fact, 0.1)])
    model = ScriptedChatModel(policy=lambda messages: decide("DELETE", "a passing state"))
    report = fake_memory.maintain(model=model)
    assert [(c.action, c.id) for c in report.changes] == [("review-deleted", fact)]
    assert fake_memory.history(fact, scope="main")[-1]["op"] == "delete"
    assert "Had a cold" not in (fake_memory.root / "MEMORY.md").read_text()
    # a core memory is never deleted by a review, even when asked to
    result = fake_memory.review(keep, scope="main", kind="decay", model=model)
    assert result.decision == "DELETE" and result.action == "none"
    assert fake_memory.get_entry(keep, scope="main").category == "core"


def test_review_of_a_memory_due_for_nothing_is_a_typed_error(fake_memory: Memory) -> None:
    fact = fake_memory.add("Likes ramen", scope="main")
    with pytest.raises(InvalidInputError, match="due for no review"):
        fake_memory.review(fact, scope="main")


def test_reviewer_sees_the_memory_and_the_decision_tools(fake_memory: Memory) -> None:
    fact = fake_memory.add("Likes ramen", scope="main")
    model = ScriptedChatModel(policy=lambda messages: decide("KEEP"))
    fake_memory.review(fact, scope="main", kind="decay", model=model)
    assert [t.rsplit(".", 1)[-1].strip("'>") for t in model.bound_tools] == [
        "SearchMemories",
        "ReviewDecision",
    ]
    first = model.calls[0]
    assert isinstance(first[-1], HumanMessage) and "Likes ramen" in str(first[-1].content)


def test_model_reviews_per_run_are_capped_and_the_rest_wait(fake_memory: Memory) -> None:
    facts = fake_memory.add_many(["Had a cold", "Was tired", "Missed the bus"], scope="main")
    fake_memory.workspace.ledger.entries.set_importances([(f, 0.1) for f in facts])
    fake_memory.settings.lifecycle.max_model_reviews = 2
    model = ScriptedChatModel(policy=lambda messages: decide("DELETE", "a passing state"))
    first = fake_memory.maintain(model=model)
    assert len(first.reviews) == 2 and first.reviews_deferred == 1
    second = fake_memory.maintain(model=model)
    assert len(second.reviews) == 1 and second.reviews_deferred == 0
    assert fake_memory.list(scope="main") == []

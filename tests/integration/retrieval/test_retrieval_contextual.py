"""Contextual vectors: an entry scored together with the entry before it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _retrieval_helpers import retrieval_overrides

from langmem_ext import Memory
from langmem_ext.retrieval.contextual import (
    contextual_cosines,
    contextual_units,
    is_reply,
    unit_query,
)


def test_weight_zero_or_no_previous_gives_the_plain_cosine() -> None:
    q = [1.0, 0.0]
    vecs = [[1.0, 1.0], [0.0, 2.0]]
    plain = [math.sqrt(0.5), 0.0]
    assert contextual_cosines(q, vecs, [[1.0, 0.0], None], 0.0) == pytest.approx(plain)
    assert contextual_cosines(q, vecs, [None, None], 1.0) == pytest.approx(plain)


def test_a_matching_predecessor_lifts_an_entry() -> None:
    q = [1.0, 0.0, 0.0]
    answer = [0.0, 1.0, 0.0]  # "Yes, Biscuit!": nothing of the question in it
    question_before = [1.0, 0.0, 0.0]  # "Have you named the puppy?"
    unrelated_before = [0.0, 0.0, 1.0]
    got = contextual_cosines(q, [answer, answer], [question_before, unrelated_before], 1.0)
    assert got[0] == pytest.approx(math.sqrt(0.5))
    assert got[1] == pytest.approx(0.0)
    # the scale of the vectors does not matter, only their directions
    scaled = contextual_cosines(q, [np.array(answer) * 7], [np.array(question_before) * 0.1], 1.0)
    assert scaled[0] == pytest.approx(got[0])


def test_contextual_units_serve_several_queries_like_one_at_a_time() -> None:
    # A compound message's texts share one computation of the contextual vectors.
    rng = np.random.default_rng(7)
    own = list(rng.normal(size=(6, 8)))
    before: list[np.ndarray | None] = [rng.normal(size=8) for _ in range(5)] + [None]
    units = contextual_units(own, before, 0.5)
    assert units.shape == (6, 8)
    assert np.linalg.norm(units, axis=1) == pytest.approx(np.ones(6))
    for query in rng.normal(size=(3, 8)):
        one_at_a_time = contextual_cosines(query, own, before, 0.5)
        assert units @ unit_query(query) == pytest.approx(one_at_a_time)
    # no predecessor: the entry's own direction
    assert units[5] == pytest.approx(own[5] / np.linalg.norm(own[5]))
    assert contextual_units([[0.0, 0.0]], [None], 1.0) == pytest.approx(np.zeros((1, 2)))


def test_mismatched_inputs_are_rejected() -> None:
    with pytest.raises(ValueError, match="previous"):
        contextual_cosines([1.0], [[1.0]], [], 1.0)
    assert contextual_cosines([1.0], [], [], 1.0).shape == (0,)


_TURNS = [
    "Melanie: Have you named the puppy yet?",
    "Caroline: Yes, Biscuit!",
    "Caroline: I went hiking last weekend.",
    "Melanie: The weather was great for it.",
    "Caroline: My sister lives in Boston.",
]


def _vector_hits(memory: Memory, query: str, weight: float) -> dict[str, dict[str, float]]:
    with retrieval_overrides(memory, context_vector_weight=weight):
        return {h.text: h.debug for h in memory.search(query, k=5, mode="vector")}


def test_an_answer_is_found_through_the_question_before_it(memory: Memory) -> None:
    memory.add_many(_TURNS)
    query = "What is the name of Caroline's dog?"
    plain = _vector_hits(memory, query, 0.0)
    ctx = _vector_hits(memory, query, 0.5)
    answer = "Caroline: Yes, Biscuit!"
    assert "own_vector" not in plain[answer]
    assert ctx[answer]["own_vector"] == pytest.approx(plain[answer]["vector"])
    assert ctx[answer]["vector"] > plain[answer]["vector"] + 0.05
    # the first entry of the section has no context: its own vector only
    assert "own_vector" not in ctx["Melanie: Have you named the puppy yet?"]


def test_editing_the_entry_before_changes_the_context_at_once(memory: Memory) -> None:
    ids = memory.add_many(_TURNS)
    query = "What is the name of Caroline's dog?"
    answer = "Caroline: Yes, Biscuit!"
    before = _vector_hits(memory, query, 0.5)[answer]["vector"]
    memory.update(ids[0], "Melanie: Did you finish the tax forms?", supersede=False)
    after = _vector_hits(memory, query, 0.5)[answer]["vector"]
    assert after < before - 0.05  # no stale context kept anywhere
    memory.update(ids[0], _TURNS[0], supersede=False)
    assert _vector_hits(memory, query, 0.5)[answer]["vector"] == pytest.approx(before, abs=1e-4)


def test_chinese_answers_take_context_too(memory: Memory) -> None:
    memory.add_many(["小明：你家的猫叫什么名字？", "小红：叫咪咪。", "小红：我明天去北京出差。"])
    query = "小红的猫叫什么？"
    plain = _vector_hits(memory, query, 0.0)["小红：叫咪咪。"]["vector"]
    assert _vector_hits(memory, query, 0.5)["小红：叫咪咪。"]["vector"] > plain


def test_only_a_reply_to_another_speaker_is_read_with_the_line_before() -> None:
    assert is_reply("Caroline: Yes, Biscuit!", "Melanie: Have you named the puppy yet?")
    assert is_reply("小红：叫咪咪。", "小明：你家的猫叫什么名字？")
    assert not is_reply("Caroline: I went hiking.", "Caroline: Yes, Biscuit!")  # same speaker
    assert not is_reply("My dog is called Biscuit", "I got a puppy last week")  # facts
    assert not is_reply("Caroline: Yes, Biscuit!", "I got a puppy last week")
    assert not is_reply("Caroline: Yes, Biscuit!", None)  # the first of its section


def test_a_line_that_is_no_turn_of_a_conversation_keeps_its_own_cosine(memory: Memory) -> None:
    """The same exchange stored as plain facts is not a conversation: no line is read
    with the one before it (a fact list would lift every neighbour of a match)."""
    facts = ["Have you named the puppy yet?", "Yes, Biscuit!", "I went hiking last weekend."]
    memory.add_many(facts, scope="facts")
    memory.add_many(_TURNS[:3], scope="chat")
    query = "What is the name of the dog?"

    def hits(scope: str) -> dict[str, dict[str, float]]:
        with retrieval_overrides(
            memory, context_vector_weight=0.5, min_score=0.0, hard_min_score=0.0
        ):
            return {h.text: h.debug for h in memory.search(query, k=5, mode="vector", scope=scope)}

    plain = hits("facts")
    assert set(plain) == set(facts)
    assert not any("own_vector" in debug for debug in plain.values())
    reply = hits("chat")["Caroline: Yes, Biscuit!"]
    assert reply["vector"] > reply["own_vector"] + 0.05

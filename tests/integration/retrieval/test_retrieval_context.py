"""Conversation context: an answer is found through the question it answers.

Pure tests of :func:`context_boost` with a list-backed neighbour source, then the
real thing: the keyword index's neighbours, the real USE embedder, English and
Chinese conversations.
"""

from __future__ import annotations

import pytest
from _retrieval_helpers import NOW, ListNeighbours, _crowd, _fused, cand, ids, retrieval_overrides

from langmem_ext import Memory
from langmem_ext.core.config import RetrievalSettings
from langmem_ext.retrieval.context import combine_lifts, context_boost
from langmem_ext.retrieval.pipeline import PipelineOptions, rank

RS = RetrievalSettings()


def test_neighbours_receive_decaying_shares_of_what_a_hit_scores_above_the_crowd() -> None:
    src = ListNeighbours(["a", "b", "q", "c", "d"])
    cands = [_fused("q", 1.0), *_crowd(3)]
    mean = (1.0 + 3 * 0.2) / 4
    out = {c.id: c for c in context_boost(cands, src, RS, k=10)}
    assert out["q"].debug["context"] == 0.0
    assert out["c"].debug["context"] == pytest.approx(RS.context_prev_weight * (1.0 - mean))
    assert out["b"].debug["context"] == pytest.approx(RS.context_next_weight * (1.0 - mean))
    assert out["d"].debug["context"] == pytest.approx(
        RS.context_prev_weight * RS.context_decay * (1.0 - mean)
    )
    assert out["c"].debug["fused"] == 0.0  # no engine returned it


def test_equal_matches_gain_nothing_from_each_other() -> None:
    # "memory 7" among "memory 1..9": all match alike, the exact match stays first
    order = [f"m{i}" for i in range(10)]
    cands = [_fused(i, 0.5) for i in order if i != "m7"] + [_fused("m7", 0.6)]
    out = context_boost(cands, ListNeighbours(order), RS, k=5)
    assert ids(out)[0] == "m7"
    assert all(c.score <= 0.6 for c in out)


def test_a_hit_with_a_matching_neighbour_outranks_an_isolated_equal_hit() -> None:
    src = ListNeighbours(["lonely", *(f"x{i}" for i in range(6)), "q", "answer", "x9"])
    cands = [_fused("q", 0.9), _fused("answer", 0.3), _fused("lonely", 0.3), *_crowd(3)]
    mean = (0.9 + 0.3 + 0.3 + 3 * 0.2) / 6
    out = context_boost(cands, src, RS, k=3)
    assert ids(out)[:2] == ["q", "answer"]
    assert out[1].score == pytest.approx(0.3 + RS.context_prev_weight * (0.9 - mean))


def test_lifts_combine_as_independent_evidence_never_past_the_cap() -> None:
    assert combine_lifts([], 0.2) == 0.0
    assert combine_lifts([0.05], 0.2) == pytest.approx(0.05)  # one neighbour: its whole lift
    assert combine_lifts([0.1, 0.1], 0.2) == pytest.approx(0.15)  # not 0.2: each closes half
    assert combine_lifts([0.1, 0.1, 0.1, 0.1], 0.2) == pytest.approx(0.2 * (1 - 0.5**4))
    assert combine_lifts([0.5, 0.01], 0.2) == pytest.approx(0.2)
    assert combine_lifts([0.1], 0.0) == 0.0


def test_a_run_of_on_topic_neighbours_does_not_lift_one_past_the_better_match() -> None:
    """A paragraph: every sentence matches a little, the gold one best after the top
    hit. Summed, the lifts of four neighbours carried a weaker sentence past the gold
    one (XQuAD); combined, each neighbour closes only its share of the gap."""
    order = ["s1", "s2", "gold", "s4", "top", "s6"]
    cands = [
        _fused("top", 0.48),
        _fused("gold", 0.36),
        _fused("s4", 0.32),
        _fused("s6", 0.30),
        _fused("s2", 0.27),
        _fused("s1", 0.27),
        *_crowd(6, 0.1),
    ]
    out = context_boost(cands, ListNeighbours(order), RS, k=5)
    assert ids(out)[:2] == ["top", "gold"]


def test_only_the_best_k_outside_entries_join() -> None:
    order = [f"e{i}" for i in range(30)]
    src = ListNeighbours(order)
    out = context_boost([_fused("e15", 1.0), *_crowd(2)], src, RS, k=2)
    joined = [c.id for c in out if c.id.startswith("e") and c.id != "e15"]
    assert set(joined) == {"e14", "e16"}


def test_relevance_of_an_answer_comes_from_its_question() -> None:
    src = ListNeighbours(["q", "answer", "x"])
    out = {c.id: c for c in context_boost([_fused("q", 1.0, 1.0), *_crowd(2)], src, RS, k=5)}
    assert out["answer"].debug["relevance"] == pytest.approx(RS.context_prev_weight)
    assert out["x"].debug["relevance"] == pytest.approx(RS.context_prev_weight * RS.context_decay)
    assert out["answer"].debug["relevance"] >= RS.hard_min_score


def test_window_zero_switches_the_stage_off() -> None:
    off = RS.model_copy(update={"context_window": 0})
    src = ListNeighbours(["q", "answer"])
    out = context_boost([_fused("q", 1.0), *_crowd(2)], src, off, k=5)
    assert "answer" not in ids(out) and "context" not in out[0].debug


def test_inputs_are_not_changed() -> None:
    q = _fused("q", 1.0)
    context_boost([q, *_crowd(2)], ListNeighbours(["q", "a"]), RS, k=5)
    assert q.score == 1.0 and "context" not in q.debug


def test_rank_runs_the_stage_only_with_a_source_and_the_option_on() -> None:
    vector = [cand("q", cos=0.6), cand("far", cos=0.1)]
    src = ListNeighbours(["q", "answer"])
    assert ids(rank(vector, [], k=5, settings=RS, now=NOW, context=src)) == ["q", "answer"]
    assert ids(rank(vector, [], k=5, settings=RS, now=NOW)) == ["q"]
    off = PipelineOptions(context=False)
    assert ids(rank(vector, [], k=5, settings=RS, now=NOW, context=src, options=off)) == ["q"]


# -- on the real store ---------------------------------------------------------

EN_TURNS = [
    "Caroline: I went to a pottery class on Saturday, it was so relaxing.",
    "Melanie: That sounds lovely! We had a busy weekend as well.",
    "Caroline: Have you picked a name for the new puppy yet?",
    "Melanie: Yes, we call her Biscuit because of her colour.",
    "Caroline: So cute. How are the kids doing at school these days?",
    "Melanie: They love their new teacher, she is very patient with them.",
    "Caroline: I started reading a novel about the ocean and sailors.",
    "Melanie: I should read more, maybe during our vacation in July.",
]
ZH_TURNS = [
    "朋友：周末你去哪里玩了？听说天气特别好。",
    "我：去郊外爬山了，山顶的风景非常漂亮。",
    "朋友：你家新来的小狗起好名字了吗？",
    "我：起好了，我们叫它豆豆，因为它圆滚滚的。",
    "朋友：你最近工作忙不忙？项目进展怎么样？",
    "我：挺忙的，下个月要交一个大项目。",
]


def _search(memory: Memory, query: str, scope: str, context: bool) -> list[str]:
    """Search with or without both kinds of context (neighbours, contextual vectors)."""
    weight = memory.settings.retrieval.context_vector_weight if context else 0.0
    with retrieval_overrides(memory, context_vector_weight=weight):
        options = PipelineOptions(context=context)
        hits = memory.engine.search(query, scope=scope, k=3, options=options)
    return [h.text for h in hits]


def test_an_answer_without_the_questions_words_is_found_through_context(
    memory: Memory,
) -> None:
    memory.add_many(ZH_TURNS, scope="chat")
    query, answer = "我家小狗叫什么名字？", ZH_TURNS[3]
    assert answer not in _search(memory, query, "chat", context=False)
    assert _search(memory, query, "chat", context=True)[:2] == [ZH_TURNS[2], answer]


def test_an_answer_is_lifted_to_just_after_its_question(memory: Memory) -> None:
    memory.add_many(EN_TURNS, scope="chat")
    query = "What is the name of Melanie's puppy?"

    def answer_hit(context: bool) -> tuple[int, float, float]:
        hits = memory.engine.search(
            query, scope="chat", k=5, options=PipelineOptions(context=context)
        )
        texts = [h.text for h in hits]
        hit = hits[texts.index(EN_TURNS[3])]
        return texts.index(EN_TURNS[3]), hit.score, hit.debug.get("context", 0.0)

    rank_on, score_on, gained = answer_hit(True)
    _, score_off, _ = answer_hit(False)
    assert rank_on == 1 and gained > 0.0 and score_on > score_off


def test_context_stays_in_the_section_and_the_scope(memory: Memory) -> None:
    memory.add_many(EN_TURNS[:3], scope="chat")
    # the answer lives in another scope and in another section of this one
    memory.add_many([EN_TURNS[3]], scope="other")
    memory.add("Melanie: Yes, we call her Biscuit because of her colour.", scope="chat",
               category="core")  # fmt: skip
    hits = memory.engine.search("Have you picked a name for the new puppy?", scope="chat", k=5)
    by_text = {h.text: h for h in hits}
    assert EN_TURNS[2] in by_text
    biscuit = by_text.get(EN_TURNS[3])
    # found on its own merits (core section), never through the fact section's context
    assert biscuit is None or biscuit.debug.get("context", 0.0) == 0.0
    other_ids = {e.id for e in memory.list(scope="other")}
    assert not other_ids & {h.id for h in hits}

"""Fusion of vector and keyword candidates: weighted sum and RRF."""

from __future__ import annotations

import math

import pytest
from _retrieval_helpers import cand, ids

from langmem_ext.core.config import RetrievalSettings
from langmem_ext.language.text import query_tokens
from langmem_ext.retrieval.fusion import fuse_rrf, fuse_weighted

RS = RetrievalSettings()
WV, WB = (
    RS.vector_weight / (RS.vector_weight + RS.bm25_weight),
    RS.bm25_weight / (RS.vector_weight + RS.bm25_weight),
)


def test_keyword_hit_outranks_equally_similar_vector_only_hit() -> None:
    vector = [cand("plain", cos=0.5), cand("both", cos=0.5)]
    keyword = [cand("both", bm25=8.0)]
    fused = fuse_weighted(vector, keyword, RS)
    assert ids(fused) == ["both", "plain"]
    both = fused[0]
    assert both.score == pytest.approx((WV * 0.5 + WB * 1.0) * 1.15)
    assert fused[1].score == pytest.approx(WV * 0.5)
    assert both.debug["fused"] == pytest.approx(both.score)


def test_bm25_is_normalised_by_the_pool_maximum() -> None:
    keyword = [cand("a", bm25=10.0), cand("b", bm25=5.0)]
    fused = {c.id: c for c in fuse_weighted([], keyword, RS)}
    assert fused["a"].debug["bm25"] == pytest.approx(1.0)
    assert fused["b"].debug["bm25"] == pytest.approx(0.5)


def test_keyword_only_candidate_has_no_vector_part_unless_it_has_a_score() -> None:
    keyword = [cand("bare", bm25=4.0), cand("scored", bm25=4.0, cos=0.4)]
    fused = {c.id: c for c in fuse_weighted([], keyword, RS)}
    assert fused["bare"].score == pytest.approx(WB * 1.0 * 1.15)
    assert fused["scored"].score == pytest.approx((WV * 0.4 + WB) * 1.15)


def test_merge_by_id_keeps_both_engines_evidence() -> None:
    v = cand("x", cos=0.6)
    k = cand("x", bm25=3.0, embedding=[1.0, 0.0])
    k.metadata["path"] = "MEMORY.md"
    (only,) = fuse_weighted([v], [k], RS)
    assert only.vector_score == 0.6 and only.bm25_score == 3.0
    assert only.vector_rank == 0 and only.bm25_rank == 0
    assert only.embedding == [1.0, 0.0]
    assert only.metadata["path"] == "MEMORY.md"


def test_relevance_lets_a_use_level_cosine_pass_the_thresholds() -> None:
    # USE multilingual: "What food do I like?" vs "主人喜欢拉面" is cos ~0.30;
    # unrelated texts score ~0.1. Only relevance decides membership.
    fused = {c.id: c for c in fuse_weighted([cand("rel", cos=0.30), cand("un", cos=0.10)], [], RS)}
    assert fused["rel"].debug["relevance"] == pytest.approx(0.5)
    assert fused["rel"].debug["relevance"] >= RS.hard_min_score
    assert fused["un"].debug["relevance"] < RS.min_score


def test_vector_only_search_scores_the_plain_cosine() -> None:
    fused = fuse_weighted([cand("a", cos=0.42)], None, RS)
    assert fused[0].score == pytest.approx(0.42)


def test_keyword_only_search_gets_no_bonus_and_full_weight() -> None:
    fused = fuse_weighted(None, [cand("a", bm25=2.0), cand("b", bm25=1.0)], RS)
    assert [c.score for c in fused] == pytest.approx([1.0, 0.5])
    assert fused[0].debug["relevance"] == pytest.approx(1.0)


def test_no_engine_gives_nothing() -> None:
    assert fuse_weighted(None, None, RS) == []
    assert fuse_rrf([], [], RS) == []


def test_rrf_is_scaled_to_one_for_a_hit_first_in_both_lists() -> None:
    vector = [cand("top", cos=0.9), cand("second", cos=0.8), cand("vonly", cos=0.7)]
    keyword = [cand("top", bm25=5.0), cand("second", bm25=4.0)]
    fused = {c.id: c for c in fuse_rrf(vector, keyword, RS)}
    assert fused["top"].score == pytest.approx(1.0)
    k = RS.rrf_k
    assert fused["second"].score == pytest.approx((1 / (k + 2)) / (1 / (k + 1)))
    assert fused["vonly"].score == pytest.approx(WV * (k + 1) / (k + 3))
    # relevance still comes from the engines' scores, not from ranks
    assert fused["vonly"].debug["relevance"] == pytest.approx(1.0)


def test_rrf_prefers_agreement_over_one_engines_first_place() -> None:
    vector = [cand("v1", cos=0.9), cand("both", cos=0.8)]
    keyword = [cand("k1", bm25=9.0), cand("both", bm25=8.0)]
    fused = fuse_rrf(vector, keyword, RS)
    assert fused[0].id == "both"


def test_fusion_does_not_change_its_inputs() -> None:
    v = cand("a", cos=0.5)
    k = cand("a", bm25=1.0)
    fuse_weighted([v], [k], RS)
    fuse_rrf([v], [k], RS)
    assert v.score == 0.0 and v.debug == {} and v.bm25_score is None
    assert k.vector_rank is None and k.debug == {}


def test_weights_are_normalised_when_they_do_not_sum_to_one() -> None:
    s = RetrievalSettings(vector_weight=2.0, bm25_weight=2.0)
    (c,) = fuse_weighted([cand("a", cos=0.6)], [cand("a", bm25=1.0)], s)
    assert c.score == pytest.approx((0.5 * 0.6 + 0.5 * 1.0) * 1.15)
    assert math.isfinite(c.debug["relevance"])


def test_one_shared_word_of_a_question_counts_as_its_share_of_the_words() -> None:
    question = "Where does my mom live?"
    one_word = cand("friend", "My best friend Chen Hao lives in Shanghai", cos=0.19, bm25=3.0)
    both_words = cand("mom", "My mom lives in Hangzhou", cos=0.2, bm25=3.0)
    keyword = [one_word.copy(), both_words.copy()]
    fused = {c.id: c for c in fuse_weighted([one_word, both_words], keyword, RS, query=question)}
    assert fused["friend"].debug["bm25"] == pytest.approx(0.5)  # "live" of {mom, live}
    assert fused["mom"].debug["bm25"] == pytest.approx(1.0)


def test_a_one_word_question_keeps_its_full_match() -> None:
    hit = cand("a", "I live in Berlin", cos=0.3, bm25=3.0)
    fused = fuse_weighted([hit], [hit.copy()], RS, query="live")
    assert fused[0].debug["bm25"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("question", "subject", "whom", "what"),
    [
        (
            "What does my sister Anna like to eat?",
            "my sister Anna",
            "My sister Anna is allergic to cats",
            "My sister Anna likes to eat dumplings",
        ),
        ("我姐姐喜欢吃什么？", "我姐姐", "我姐姐对猫过敏", "我姐姐喜欢吃饺子"),
    ],
)
def test_a_memory_matching_only_whom_the_question_asks_about_has_only_that_share(
    question: str, subject: str, whom: str, what: str
) -> None:
    """The words naming whom a question asks about say whom, not what: a memory that
    matches only them has their share of the question's words as keyword evidence,
    however high it scores in the pool; one that matches what is asked keeps its own."""
    words = frozenset(query_tokens(question))
    subject_words = frozenset(query_tokens(subject, drop_stopwords=False))
    share = len(words & subject_words) / len(words)
    assert 0.0 < share < 1.0
    a = cand("whom", whom, cos=0.3, bm25=3.0)
    b = cand("what", what, cos=0.3, bm25=3.0)
    fused = {
        c.id: c
        for c in fuse_weighted(
            [a, b], [a.copy(), b.copy()], RS, query=question, subject_words=subject_words
        )
    }
    assert fused["whom"].debug["bm25"] == pytest.approx(share)
    assert fused["what"].debug["bm25"] == pytest.approx(1.0)
    plain = {c.id: c for c in fuse_weighted([a, b], [a.copy(), b.copy()], RS, query=question)}
    assert plain["whom"].debug["bm25"] == pytest.approx(1.0)  # without the person stage


def test_a_question_that_names_only_whom_keeps_its_full_match() -> None:
    hit = cand("a", "Wu Lei moved to Chengdu", cos=0.3, bm25=3.0)
    fused = fuse_weighted(
        [hit], [hit.copy()], RS, query="Wu Lei?", subject_words=frozenset({"wu", "lei"})
    )
    assert fused[0].debug["bm25"] == pytest.approx(1.0)

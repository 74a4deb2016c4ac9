"""One ranking for a compound message: merging the texts' candidates, covering each question."""

from __future__ import annotations

from _retrieval_helpers import cand

from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.compound import cover_questions, union_candidates


def _hit(i: str, question: float, score: float) -> Candidate:
    """A ranked candidate answering ``question``."""
    c = cand(i)
    c.score = score
    c.debug["question"] = question
    return c


def test_union_keeps_each_memorys_best_evidence_and_says_which_question() -> None:
    whole = [cand("email-uncle", cos=0.70), cand("email-boss", cos=0.66), cand("car", cos=0.30)]
    q1 = [cand("email-uncle", cos=0.80), cand("email-boss", cos=0.72)]
    q2 = [cand("car", cos=0.75), cand("email-boss", cos=0.20)]
    bm_whole = [cand("email-boss", bm25=8.0), cand("only-whole", bm25=4.0)]
    bm_q2 = [cand("car", bm25=2.0), cand("garage", bm25=1.0)]
    vector, keyword = union_candidates([whole, q1, q2], [bm_whole, [], bm_q2])
    assert vector is not None and keyword is not None
    assert [(c.id, c.vector_score, c.vector_rank) for c in vector] == [
        ("email-uncle", 0.80, 0),
        ("car", 0.75, 1),
        ("email-boss", 0.72, 2),
    ]
    # BM25 is divided by each text's top score: the question's 2.0 counts as much as the whole's 8.0
    assert [(c.id, c.bm25_score) for c in keyword] == [
        ("email-boss", 1.0),
        ("car", 1.0),
        ("only-whole", 0.5),
        ("garage", 0.5),
    ]
    question = {c.id: c.debug["question"] for c in [*vector, *keyword]}
    assert question == {
        "email-uncle": 1.0,
        "email-boss": 1.0,
        "car": 2.0,
        "only-whole": 0.0,
        "garage": 2.0,
    }
    assert whole[0].vector_score == 0.70 and "question" not in whole[0].debug  # inputs untouched
    assert bm_whole[0].bm25_score == 8.0


def test_union_of_an_engine_that_did_not_run_is_none() -> None:
    vector, keyword = union_candidates(None, [[cand("a", bm25=1.0)], [cand("b", bm25=3.0)]])
    assert vector is None and keyword is not None and {c.bm25_score for c in keyword} == {1.0}


def test_a_question_without_a_hit_takes_its_best_from_further_down() -> None:
    ranked = [
        _hit("u", 1.0, 0.9),
        _hit("b", 1.0, 0.8),
        _hit("m", 1.0, 0.7),
        _hit("w", 0.0, 0.6),
        _hit("car", 2.0, 0.5),
        _hit("garage", 2.0, 0.4),
    ]
    got = cover_questions(ranked, 3, 2)
    assert [c.id for c in got] == ["u", "b", "car"]  # "m": question 1 keeps "u" and "b"
    assert [c.score for c in got] == sorted((c.score for c in got), reverse=True)
    assert [c.id for c in cover_questions(ranked, 4, 2)] == [
        "u",
        "b",
        "m",
        "car",
    ]  # "w" answers none
    assert [c.id for c in cover_questions(ranked, 2, 2)] == ["u", "car"]


def test_covering_never_drops_the_only_hit_of_another_question() -> None:
    ranked = [_hit("u", 1.0, 0.9), _hit("car", 2.0, 0.8), _hit("x", 3.0, 0.1)]
    assert [c.id for c in cover_questions(ranked, 2, 3)] == ["u", "car"]
    assert [c.id for c in cover_questions(ranked[:1], 3, 2)] == ["u"]  # nothing further down

"""rank(): fusion and every stage together, as the memory service calls it."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from _retrieval_helpers import DAY, NOW, cand, ids

from langmem_ext.core.config import RetrievalSettings
from langmem_ext.retrieval import scoring
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.explain import final_score
from langmem_ext.retrieval.fusion import fuse_weighted
from langmem_ext.retrieval.intent import RecallIntent, detect_recall_intent
from langmem_ext.retrieval.pipeline import WORKING_SET, PipelineOptions, rank

RS = RetrievalSettings()
# The age stages apply to episodes by default; these tests exercise their
# mechanics on facts too.
AGED = RetrievalSettings(age_categories=["episode", "fact"])


def test_newer_memory_beats_equally_similar_older_one() -> None:
    vector = [cand("old", cos=0.5, age_days=120), cand("new", cos=0.5, age_days=1)]
    assert ids(rank(vector, [], k=5, settings=AGED, now=NOW)) == ["new", "old"]


def test_relevant_use_level_hits_survive_the_default_pipeline() -> None:
    # Cosines as USE multilingual v3 gives them for relevant short texts (0.2-0.6),
    # old memories of default importance, no keyword overlap (cross-lingual).
    vector = [
        cand("dog", "My dog is named Biscuit", cos=0.56, age_days=200),
        cand("ramen", "主人喜欢拉面", cos=0.30, age_days=150),
        cand("food", "User likes ramen", cos=0.22, age_days=90),
        cand("berlin", "My sister lives in Berlin", cos=0.14, age_days=1),
        cand("meeting", "The meeting with Bob moved to Friday", cos=0.02),
    ]
    out = rank(vector, [], k=5, settings=RS, now=NOW)
    assert ids(out) == ["dog", "ramen", "food"]


def test_ranking_score_may_fall_below_the_thresholds_without_dropping_the_hit() -> None:
    out = rank([cand("old", cos=0.45, age_days=120)], [], k=3, settings=RS, now=NOW)
    assert ids(out) == ["old"]
    assert out[0].debug["ranking"] < RS.min_score
    assert out[0].debug["final"] == out[0].score == final_score(out[0].debug["ranking"])


def test_noisy_refusal_is_never_returned_even_as_the_best_match() -> None:
    vector = [
        cand("refusal", "I'm sorry, I don't have any information about your dog.", cos=0.9),
        cand("meta", "你还记得我的狗叫什么吗？", cos=0.85),
        cand("dog", "我家狗狗叫饼干", cos=0.6),
    ]
    assert ids(rank(vector, [], k=5, settings=RS, now=NOW)) == ["dog"]
    no_noise = PipelineOptions(noise=False)
    assert "refusal" in ids(rank(vector, [], k=5, settings=RS, now=NOW, options=no_noise))


def test_near_duplicate_is_demoted_below_a_different_memory() -> None:
    vector = [
        cand("a", "主人喜欢拉面", cos=0.6, embedding=[1.0, 0.0, 0.0]),
        cand("a2", "主人很喜欢吃拉面", cos=0.59, embedding=[0.98, 0.1, 0.0]),
        cand("b", "主人每周五吃寿司", cos=0.5, embedding=[0.3, 0.9, 0.1]),
    ]
    close = [*vector[:2], cand("b", "主人每周五吃寿司", cos=0.57, embedding=[0.3, 0.9, 0.1])]
    # default: the duplicate falls behind a different memory that scored close to it ...
    assert ids(rank(close, [], k=3, settings=RS, now=NOW)) == ["a", "b", "a2"]
    assert ids(rank(close, [], k=2, settings=RS, now=NOW)) == ["a", "b"]
    # ... but not behind a much weaker one: it is demoted, not deleted
    got = rank(vector, [], k=3, settings=RS, now=NOW)
    assert ids(got) == ["a", "a2", "b"] and "mmr_demoted" in got[1].debug
    seed = RS.model_copy(update={"mmr_demotion": 0.0})  # to the end
    assert ids(rank(vector, [], k=3, settings=seed, now=NOW)) == ["a", "b", "a2"]
    assert ids(rank(vector, [], k=2, settings=seed, now=NOW)) == ["a", "b"]
    off = PipelineOptions(mmr=False)
    got = rank(close, [], k=3, settings=RS, now=NOW, options=off)
    assert ids(got) == ["a", "a2", "b"] and "mmr_demoted" not in got[1].debug


def test_keyword_only_search() -> None:
    keyword = [
        cand("k1", "主人喜欢拉面", bm25=6.0),
        cand("k2", "拉面店在车站旁边", bm25=3.0),
        cand("k3", "喜欢看电影的朋友很多", bm25=0.5),  # weak: 8% of the best match
    ]
    out = rank(None, keyword, k=5, settings=RS, now=NOW)
    assert ids(out) == ["k1", "k2"]


def test_vector_only_search() -> None:
    out = rank([cand("v", cos=0.4)], None, k=5, settings=RS, now=NOW)
    assert ids(out) == ["v"] and out[0].debug["fused"] == pytest.approx(0.4)


def test_rrf_fusion_mode() -> None:
    s = RetrievalSettings(fusion="rrf")
    vector = [cand("v1", cos=0.5), cand("both", cos=0.45)]
    keyword = [cand("k1", bm25=9.0), cand("both", bm25=8.0)]
    out = rank(vector, keyword, k=5, settings=s, now=NOW)
    assert out[0].id == "both" and "rrf" in out[0].debug


def test_k_is_clamped_and_zero_returns_nothing() -> None:
    vector = [cand(str(i), f"distinct memory text number {i}", cos=0.6) for i in range(10)]
    s = RetrievalSettings(max_k=3)
    assert len(rank(vector, [], k=50, settings=s, now=NOW)) == 3
    assert rank(vector, [], k=0, settings=RS, now=NOW) == []


def test_options_switch_stages_off() -> None:
    vector = [cand("old", cos=0.55, age_days=200), cand("new", cos=0.5)]
    assert ids(rank(vector, [], k=2, settings=AGED, now=NOW)) == ["new", "old"]
    no_age = PipelineOptions(recency=False, time_decay=False)
    assert ids(rank(vector, [], k=2, settings=AGED, now=NOW, options=no_age)) == ["old", "new"]
    weak = [cand("weak", cos=0.05)]
    assert rank(weak, [], k=2, settings=RS, now=NOW) == []
    keep = PipelineOptions(thresholds=False)
    assert ids(rank(weak, [], k=2, settings=RS, now=NOW, options=keep)) == ["weak"]


def test_debug_records_every_stage() -> None:
    (c,) = rank([cand("a", cos=0.5)], [cand("a", bm25=2.0)], k=1, settings=RS, now=NOW)
    for key in ("vector", "bm25", "fused", "relevance", "importance",
                "length_norm", "time_decay", "ranking", "final"):  # fmt: skip
        assert key in c.debug, key
    # a fact does not age: no recency entry (a fact minutes old showed "recency 0")
    assert "recency" not in c.debug
    (e,) = rank([cand("e", cos=0.5, category="episode")], [], k=1, settings=RS, now=NOW)
    assert e.debug["recency"] == pytest.approx(RS.recency_weight)


def test_scores_are_on_one_scale_in_the_ranking_order() -> None:
    vector = [cand("a", cos=0.6), cand("b", cos=0.5), cand("c", cos=0.35)]
    keyword = [cand("a", bm25=9.0), cand("b", bm25=4.0)]
    graphed = [c.copy() for c in vector]
    graphed[0].graph_score = 1.0  # a full graph link lifts the ranking score past 1
    for out in (rank(vector, keyword, k=3, settings=RS, now=NOW),
                rank(graphed, keyword, k=3, settings=RS, now=NOW)):  # fmt: skip
        assert [c.id for c in out] == ["a", "b", "c"]
        assert all(0.0 < c.score < 1.0 for c in out)
        assert [c.score for c in out] == sorted((c.score for c in out), reverse=True)
        for c in out:
            assert c.score == c.debug["final"] == pytest.approx(final_score(c.debug["ranking"]))
    assert rank(graphed, keyword, k=3, settings=RS, now=NOW)[0].debug["ranking"] > 1.0


def test_yesterday_intent_puts_yesterdays_memory_first() -> None:
    now_dt = datetime.fromtimestamp(NOW, UTC)
    intent = detect_recall_intent("what did we talk about yesterday?", now_dt)
    assert intent is not None and intent.has_window
    start = intent.window_start
    assert start is not None
    vector = [cand("today", cos=0.5, age_days=60 / DAY), cand("yday", cos=0.5)]
    vector[1].created_at = start + 3600  # yesterday, 01:00
    plain = rank(vector, [], k=2, settings=RS, now=NOW)
    assert ids(plain) == ["today", "yday"]
    with_intent = rank(vector, [], k=2, settings=RS, now=NOW, intent=intent)
    assert ids(with_intent) == ["yday", "today"]
    assert with_intent[0].debug["time_window"] > 1.0


def test_last_month_window_beats_recency_of_an_equally_relevant_new_memory() -> None:
    intent = RecallIntent(NOW - 60 * DAY, NOW - 30 * DAY, "last_month", True)
    vector = [cand("new", cos=0.4), cand("lastmonth", cos=0.4, age_days=45)]
    out = rank(vector, [], k=2, settings=RS, now=NOW, intent=intent)
    assert ids(out) == ["lastmonth", "new"]


def test_in_window_hit_is_not_dropped_by_thresholds() -> None:
    intent = RecallIntent(NOW - 2 * DAY, NOW - DAY, "yesterday", True)
    vector = [cand("yday", "We planned the Kyoto trip itinerary", cos=0.08, age_days=1.5)]
    assert rank(vector, [], k=3, settings=RS, now=NOW) == []
    assert ids(rank(vector, [], k=3, settings=RS, now=NOW, intent=intent)) == ["yday"]


def test_intent_without_window_changes_nothing() -> None:
    intent = RecallIntent(None, None, "last_time", True)
    vector = [cand("a", cos=0.5, age_days=3), cand("b", cos=0.45)]
    assert ids(rank(vector, [], k=2, settings=RS, now=NOW, intent=intent)) == ids(
        rank(vector, [], k=2, settings=RS, now=NOW)
    )


def test_rank_does_not_change_its_inputs() -> None:
    v = cand("a", cos=0.5)
    rank([v], [cand("a", bm25=1.0)], k=1, settings=RS, now=NOW)
    assert v.score == 0.0 and v.debug == {}


def _eager_rank(
    vector: list[Candidate], keyword: list[Candidate], k: int, intent: RecallIntent | None
) -> list[Candidate]:
    """rank() as documented, every stage on every candidate (the noise filter first)."""
    cands = fuse_weighted(vector, keyword, RS)[: max(WORKING_SET * k, 40)]
    window = intent if intent is not None and intent.has_window else None
    inside = None if window is None else (lambda c: window.contains(c.created_at))
    cands = scoring.noise_filter(cands, RS)
    cands = scoring.min_score_filter(cands, RS, exempt=inside)
    cands = scoring.recency_boost(cands, RS, NOW)
    cands = scoring.importance_weight(cands, RS)
    cands = scoring.length_norm(cands, RS)
    cands = scoring.time_decay(cands, RS, NOW)
    if window is not None:
        cands = scoring.time_window_boost(cands, window.window_start, window.window_end)
    cands = scoring.hard_min_filter(cands, RS, exempt=inside)
    out = scoring.mmr_demote(cands, RS, k=k)[:k]
    for c in out:  # the returned score: the ranking score on the scale 0..1
        c.debug["ranking"] = c.score
        c.score = final_score(c.score)
    return out


_NOISE = ["I'm sorry, I can't help with that.", "hi there!", "你还记得吗？", "ok", "我不知道"]


def _random_engines(rng: random.Random) -> tuple[list[Candidate], list[Candidate]]:
    """Overlapping engine lists with noise, near-duplicates and mixed ages."""
    base = [rng.gauss(0, 1) for _ in range(4)]
    vector, keyword = [], []
    for i in range(rng.randint(1, 60)):
        text = rng.choice(_NOISE) if rng.random() < 0.25 else f"memory {i} about topic {i % 7}"
        near = rng.random() < 0.4  # near-duplicates of each other (MMR demotes them)
        emb = [b + rng.gauss(0, 0.05 if near else 3) for b in base]
        c = cand(f"m{i}", text, cos=rng.uniform(0.0, 0.7), age_days=rng.uniform(0, 200),
                 category=rng.choice(["fact", "episode", "core"]), embedding=emb)  # fmt: skip
        if rng.random() < 0.7:
            vector.append(c)
        if rng.random() < 0.5:
            kw = c.copy()
            kw.vector_score, kw.embedding, kw.bm25_score = None, None, rng.uniform(0.1, 9.0)
            keyword.append(kw)
    vector.sort(key=lambda c: -(c.vector_score or 0.0))
    keyword.sort(key=lambda c: -(c.bm25_score or 0.0))
    return vector, keyword


@pytest.mark.parametrize("seed", range(400))
def test_lazy_noise_check_gives_the_eager_pipelines_result(seed: int) -> None:
    rng = random.Random(seed)
    vector, keyword = _random_engines(rng)
    k = rng.choice([1, 2, 3, 5, 10])
    intent = None
    if rng.random() < 0.3:
        intent = RecallIntent(NOW - 60 * DAY, NOW - 20 * DAY, "window", True)
    expected = _eager_rank(vector, keyword, k, intent)
    got = rank(vector, keyword, k=k, settings=RS, now=NOW, intent=intent)
    assert [(c.id, c.score) for c in got] == [(c.id, c.score) for c in expected]
    assert [{**c.debug, "final": c.score} for c in expected] == [c.debug for c in got]


def test_rank_may_change_inputs_it_is_given_to_keep() -> None:
    vector, keyword = [cand("a", cos=0.5)], [cand("a", bm25=1.0), cand("b", bm25=0.5)]
    copied = rank(vector, keyword, k=2, settings=RS, now=NOW)
    in_place = rank(vector, keyword, k=2, settings=RS, now=NOW, copy_inputs=False)
    assert [(c.id, c.score, c.debug) for c in in_place] == [
        (c.id, c.score, c.debug) for c in copied
    ]

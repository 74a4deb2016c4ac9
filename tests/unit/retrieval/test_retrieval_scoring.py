"""Each scoring stage changes the ranking the way a user would notice."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from _retrieval_helpers import DAY, NOW, cand, ids

from langmem_ext.core.config import RetrievalSettings
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.scoring import (
    age_days as age_in_days,
)
from langmem_ext.retrieval.scoring import (
    hard_min_filter,
    importance_weight,
    length_norm,
    min_score_filter,
    mmr_demote,
    noise_filter,
    per_candidate_stages,
    recency_boost,
    time_decay,
    time_window_boost,
)

RS = RetrievalSettings()
# The age stages apply to episodes by default; these tests exercise their
# mechanics on facts too.
AGED = RetrievalSettings(age_categories=["episode", "fact"])
SEED_MMR = RetrievalSettings(mmr_demotion=0.0)  # a near-duplicate goes to the end


def scored(
    id: str,
    score: float,
    *,
    text: str | None = None,
    age_days: float = 0.0,
    importance: float = 1.0,
    category: str = "fact",
    embedding: Sequence[float] | None = None,
) -> Candidate:
    """A candidate as fusion leaves it: ``score`` and ``relevance`` both ``score``."""
    c = cand(
        id, text, age_days=age_days, importance=importance, category=category, embedding=embedding
    )
    c.score = score
    c.debug["relevance"] = score
    return c


def test_recency_newer_memory_beats_equally_similar_older_one() -> None:
    old, new = scored("old", 0.5, age_days=90), scored("new", 0.5, age_days=1)
    out = recency_boost([old, new], AGED, NOW)
    assert ids(out) == ["new", "old"]
    assert out[0].debug["recency"] == pytest.approx(0.10 * math.exp(-1 / 14))
    assert out[0].score == pytest.approx(0.5 + 0.10 * math.exp(-1 / 14))


def test_recency_does_not_overturn_a_clearly_better_match() -> None:
    out = recency_boost([scored("old", 0.8, age_days=365), scored("new", 0.5)], AGED, NOW)
    assert ids(out) == ["old", "new"]


def test_importance_core_memory_beats_default_one() -> None:
    out = importance_weight([scored("fact", 0.5), scored("core", 0.5, importance=3.0)], RS)
    assert ids(out) == ["core", "fact"]
    by_id = {c.id: c for c in out}
    assert by_id["core"].debug["importance"] == pytest.approx(1.0)
    assert by_id["fact"].debug["importance"] == pytest.approx(0.8)  # 0.7 + 0.3 * 1/3
    assert importance_weight([scored("x", 1.0, importance=-2)], RS)[0].score == pytest.approx(0.7)


def test_length_norm_long_chunk_loses_to_short_precise_memory() -> None:
    long_text = "word " * 400  # 2000 chars: factor 1 / (1 + 0.5 * log2(4)) = 0.5
    out = length_norm([scored("long", 0.6, text=long_text), scored("short", 0.45)], RS)
    assert ids(out) == ["short", "long"]
    assert out[1].debug["length_norm"] == pytest.approx(0.5)
    assert out[0].debug["length_norm"] == 1.0


def test_time_decay_older_fact_ranks_lower_core_never_decays() -> None:
    out = time_decay([scored("old", 0.5, age_days=60), scored("new", 0.5)], AGED, NOW)
    assert ids(out) == ["new", "old"]
    assert out[1].debug["time_decay"] == pytest.approx(0.5 + 0.5 * math.exp(-1))
    core = time_decay([scored("c", 0.5, age_days=400, category="core")], AGED, NOW)[0]
    assert core.score == 0.5 and core.debug["time_decay"] == 1.0
    floor = time_decay([scored("f", 1.0, age_days=10_000)], AGED, NOW)[0]
    assert floor.score == pytest.approx(0.5)


def test_age_is_never_negative() -> None:
    assert age_in_days(cand("future", age_days=-3), NOW) == 0.0
    assert age_in_days(cand("week", age_days=7), NOW) == pytest.approx(7.0)


def test_min_score_drops_weak_matches_and_keeps_exempt_ones() -> None:
    weak, good = scored("weak", 0.2), scored("good", 0.31)
    assert ids(min_score_filter([weak, good], RS)) == ["good"]
    assert ids(min_score_filter([weak, good], RS, exempt=lambda c: c.id == "weak")) == [
        "weak",
        "good",
    ]


def test_hard_min_keeps_a_borderline_match_only_while_it_is_fresh() -> None:
    fresh = recency_boost([scored("fresh", 0.32, age_days=2)], AGED, NOW)
    stale = recency_boost([scored("stale", 0.32, age_days=40)], AGED, NOW)
    assert ids(hard_min_filter(fresh, RS)) == ["fresh"]
    assert hard_min_filter(stale, RS) == []


def test_hard_min_ignores_age_and_importance_penalties_of_a_clear_match() -> None:
    c = scored("old", 0.5, age_days=300)
    out = time_decay(importance_weight(recency_boost([c], AGED, NOW), AGED), AGED, NOW)
    assert out[0].score < RS.hard_min_score  # the ranking score fell below 0.35 ...
    assert ids(hard_min_filter(out, RS)) == ["old"]  # ... the memory is still returned


def test_threshold_without_relevance_uses_the_score() -> None:
    c = cand("x")
    c.score = 0.1
    assert min_score_filter([c], RS) == []


def test_noise_filter_never_returns_a_refusal() -> None:
    refusal = scored("r", 0.99, text="I'm sorry, I don't have any information about that.")
    greeting = scored("g", 0.9, text="你好！")
    memory = scored("m", 0.4, text="主人喜欢拉面")
    assert ids(noise_filter([refusal, greeting, memory], RS)) == ["m"]


def test_seed_mmr_moves_a_near_duplicate_to_the_end_without_deleting_it() -> None:
    a = scored("a", 0.9, embedding=[1.0, 0.0, 0.0])
    dup = scored("dup", 0.8, embedding=[0.99, 0.05, 0.0])  # cos ~0.999 with a
    other = scored("other", 0.7, embedding=[0.0, 1.0, 0.0])
    out = mmr_demote([a, dup, other], SEED_MMR)
    assert ids(out) == ["a", "other", "dup"]
    assert out[2].debug["mmr_demoted"] > RS.mmr_threshold
    assert "mmr_demoted" not in out[1].debug


def test_mmr_compares_only_with_kept_hits() -> None:
    # b duplicates a, c duplicates b but not a: only b is demoted.
    a = scored("a", 0.9, embedding=[1.0, 0.0])
    b = scored("b", 0.8, embedding=[math.cos(0.5), math.sin(0.5)])  # cos(a,b)=0.88
    c = scored("c", 0.7, embedding=[math.cos(1.0), math.sin(1.0)])  # cos(a,c)=0.54
    assert ids(mmr_demote([a, b, c], SEED_MMR)) == ["a", "c", "b"]


def test_mmr_without_embeddings_keeps_the_order() -> None:
    cs = [scored("a", 0.9), scored("b", 0.8, embedding=[1.0, 0.0]), scored("c", 0.7)]
    assert ids(mmr_demote(cs, SEED_MMR)) == ["a", "b", "c"]


def test_mmr_skips_embeddings_of_another_dimension() -> None:
    a = scored("a", 0.9, embedding=[1.0, 0.0])
    dup = scored("dup", 0.8, embedding=[1.0, 0.01])
    odd = scored("odd", 0.7, embedding=[1.0, 0.0, 0.0])
    out = mmr_demote([a, dup, odd], SEED_MMR)
    assert ids(out) == ["a", "odd", "dup"]
    assert "mmr_demoted" in out[2].debug


def test_default_mmr_lowers_a_near_duplicate_behind_close_hits_only() -> None:
    a = scored("a", 0.9, embedding=[1.0, 0.0, 0.0])
    dup = scored("dup", 0.8, embedding=[0.99, 0.05, 0.0])  # cos ~0.999 with a
    close = scored("close", 0.75, embedding=[0.0, 1.0, 0.0])  # above 0.8 * 0.9 = 0.72
    far = scored("far", 0.5, embedding=[0.0, 0.0, 1.0])
    out = mmr_demote([far, dup, a, close], RS)
    assert ids(out) == ["a", "close", "dup", "far"]  # demoted, still above a weak hit
    assert out[2].score == pytest.approx(0.8 * RS.mmr_demotion)
    assert out[2].debug["mmr_demoted"] > RS.mmr_threshold
    assert ids(mmr_demote([a, dup, close], RS.model_copy(update={"mmr_demotion": 1.0}))) == [
        "a",
        "dup",
        "close",
    ]


def test_time_window_boosts_only_hits_inside_the_window() -> None:
    inside, outside = scored("in", 0.3, age_days=1.5), scored("out", 0.5)
    out = time_window_boost([outside, inside], NOW - 2 * DAY, NOW - DAY)
    assert ids(out) == ["in", "out"]
    assert out[0].debug["time_window"] == 2.0 and "time_window" not in out[1].debug
    assert ids(time_window_boost([outside, inside], None, None)) == ["out", "in"]


def test_stages_do_not_change_their_input() -> None:
    c = scored("a", 0.5, age_days=3)
    for out in (
        recency_boost([c], AGED, NOW),
        importance_weight([c], RS),
        time_decay([c], AGED, NOW),
        mmr_demote([c], RS),
    ):
        assert out[0] is not c
    assert c.score == 0.5 and c.debug == {"relevance": 0.5}


def test_by_default_only_episodes_age() -> None:
    """A months-old fact is as true as a new one; an old episode fades."""
    facts = time_decay(
        recency_boost([scored("old", 0.5, age_days=300), scored("new", 0.5)], RS, NOW), RS, NOW
    )
    assert [round(c.score, 9) for c in facts] == [0.5, 0.5]
    eps = [
        scored("old", 0.5, age_days=300, category="episode"),
        scored("new", 0.5, category="episode"),
    ]
    assert ids(time_decay(recency_boost(eps, RS, NOW), RS, NOW)) == ["new", "old"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("with_window", [False, True])
def test_one_pass_stages_equal_the_stages_one_after_the_other(seed: int, with_window: bool) -> None:
    import random

    rng = random.Random(seed)
    cands = [
        scored(
            f"c{i}",
            rng.uniform(0.2, 1.0),
            text="x" * rng.choice([10, 400, 900, 3000]),
            age_days=rng.uniform(0, 400),
            importance=rng.choice([0.5, 1.0, 2.0, 3.0]),
            category=rng.choice(["fact", "episode", "core"]),
        )
        for i in range(30)
    ]
    window = (NOW - 30 * DAY, NOW - 5 * DAY) if with_window else None
    step = recency_boost(cands, AGED, NOW)
    step = importance_weight(step, AGED)
    step = length_norm(step, AGED)
    step = time_decay(step, AGED, NOW)
    if window is not None:
        step = time_window_boost(step, *window)
    one = per_candidate_stages(cands, AGED, NOW, window=window)
    assert [(c.id, c.score, c.debug) for c in one] == [(c.id, c.score, c.debug) for c in step]
    assert all(c.debug == {"relevance": c.score} for c in cands)  # inputs untouched
    partial = per_candidate_stages(cands, AGED, NOW, recency=False, length=False)
    ref = time_decay(importance_weight(cands, AGED), AGED, NOW)
    assert [(c.id, c.score) for c in partial] == [(c.id, c.score) for c in ref]

"""The scoring stages that run after fusion, one pure function each.

Every stage takes candidates and returns *new* candidates (the input is not
modified), sorted best first, with the stage's contribution in ``debug``:

===================  ==================================================  ==============
stage                effect on ``score``                                 ``debug`` key
===================  ==================================================  ==============
recency_boost        ``+ exp(-age_days / 14) * 0.10``                    ``recency``
importance_weight    ``* (0.7 + 0.3 * min(1, importance / 3))``          ``importance``
length_norm          ``* 1 / (1 + 0.5 * log2(len / 500))`` if len > 500  ``length_norm``
time_decay           ``* (0.5 + 0.5 * exp(-age_days / 60))``            ``time_decay``
time_window_boost    ``* 2`` inside a recall window                      ``time_window``
min_score_filter     drops ``relevance < 0.3``                           —
hard_min_filter      drops ``relevance + recency < 0.35``                —
noise_filter         drops refusals, greetings, meta questions, …        —
mmr_demote           ``* 0.9`` for a near-duplicate (cos > 0.85)          ``mmr_demoted``
===================  ==================================================  ==============

Where the thresholds apply
--------------------------
Cutting the *final* score at 0.35, after the multiplicative stages, would mix ranking
and relevance. Here the
thresholds look at ``debug["relevance"]``, the query-match evidence set by fusion
(see :mod:`langmem_ext.retrieval.fusion`), never at the ranking score:

* Importance, length and age say how much a memory is worth *given* that it
  matches; they order the hits. Applied before a fixed cut they would make an
  old or default-importance memory vanish: a USE hit at cos 0.45 fuses to about
  0.32, times 0.8 (importance 1.0) times 0.57 (four months old) is 0.14, far below
  0.35, although it is the right answer. Multiplicative stages therefore never
  remove anything.
* ``min_score_filter`` (soft, 0.3) drops candidates with too little evidence of a
  match, before the stages run.
* ``hard_min_filter`` (0.35) runs after them on ``relevance + recency``: a
  borderline match (0.30-0.35) survives only while it is fresh (for 0.30, about
  ten days), a clear match (>= 0.35) at any age. Candidates without a relevance
  (not from fusion) are judged on ``score``.

Core and system memories do not lose score with age in ``time_decay``: they are
exempt from decay in the lifecycle too.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from langmem_ext.core.config import RetrievalSettings
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.retrieval.candidate import Candidate, best_first
from langmem_ext.retrieval.noise import is_noise

logger = logging.getLogger(__name__)

SECONDS_PER_DAY = 86_400.0
IMPORTANCE_SCALE = 3.0
"""Importance that counts as 1.0 in ``importance_weight``: a core memory's importance
(``LifecycleSettings.core_threshold``)."""
TIME_WINDOW_FACTOR = 2.0
"""Score multiplier inside a recall window. Time decay alone can halve a score, so
an in-window hit beats an equally relevant recent one for windows up to months old."""
NO_DECAY_CATEGORIES = frozenset({"system", "core"})
"""Categories ``time_decay`` leaves alone."""

Exempt = Callable[[Candidate], bool]


def age_days(candidate: Candidate, now: float) -> float:
    """Age of ``candidate`` in days at ``now`` (0 for future timestamps).

    Args:
        candidate: A candidate.
        now: Epoch seconds.

    Returns:
        Days since ``candidate.created_at``, never negative.
    """
    return max(0.0, (now - candidate.created_at) / SECONDS_PER_DAY)


def _ranked(candidates: Iterable[Candidate]) -> list[Candidate]:
    return sorted(candidates, key=best_first)


Adjust = Callable[[Candidate], None]
"""A per-candidate stage applied in place: changes ``score`` and writes ``debug``."""


def _recency_adjust(settings: RetrievalSettings, now: float) -> Adjust:
    half_life = settings.recency_half_life_days
    weight = settings.recency_weight
    aged = frozenset(settings.age_categories)

    def adjust(c: Candidate) -> None:
        if half_life > 0 and c.category in aged:  # others do not age: no entry
            boost = math.exp(-age_days(c, now) / half_life) * weight
            c.score += boost
            c.debug["recency"] = boost

    return adjust


def _multiply(key: str, factor: Callable[[Candidate], float]) -> Adjust:
    def adjust(c: Candidate) -> None:
        f = factor(c)
        c.score *= f
        c.debug[key] = f

    return adjust


def _importance_factor(settings: RetrievalSettings, scale: float) -> Callable[[Candidate], float]:
    base = settings.importance_base

    def factor(c: Candidate) -> float:
        norm = min(1.0, max(0.0, c.importance / scale))
        return base + (1.0 - base) * norm

    return factor


def _length_factor(settings: RetrievalSettings) -> Callable[[Candidate], float]:
    anchor = settings.length_norm_anchor

    def factor(c: Candidate) -> float:
        n = len(c.text)
        return 1.0 / (1.0 + 0.5 * math.log2(n / anchor)) if 0 < anchor < n else 1.0

    return factor


def _decay_factor(settings: RetrievalSettings, now: float) -> Callable[[Candidate], float]:
    days = settings.time_decay_days
    aged = frozenset(settings.age_categories) - NO_DECAY_CATEGORIES

    def factor(c: Candidate) -> float:
        if days <= 0 or c.category not in aged:
            return 1.0
        return 0.5 + 0.5 * math.exp(-age_days(c, now) / days)

    return factor


def _window_adjust(start: float, end: float, factor: float) -> Adjust:
    def adjust(c: Candidate) -> None:
        if start <= c.created_at < end:
            c.score *= factor
            c.debug["time_window"] = factor

    return adjust


def recency_boost(
    candidates: Sequence[Candidate], settings: RetrievalSettings, now: float
) -> list[Candidate]:
    """Add ``exp(-age_days / recency_half_life_days) * recency_weight``.

    Only categories in ``settings.age_categories`` get it (episodes by default).

    Args:
        candidates: Scored candidates.
        settings: ``recency_half_life_days`` and ``recency_weight``.
        now: Epoch seconds.

    Returns:
        New candidates, re-sorted; ``debug["recency"]`` is the amount added, for the
        categories that age only (a fact minutes old shows no recency of 0). No-op
        when the half-life is not positive.
    """
    return _adjusted(candidates, [_recency_adjust(settings, now)])


def importance_weight(
    candidates: Sequence[Candidate],
    settings: RetrievalSettings,
    *,
    importance_scale: float = IMPORTANCE_SCALE,
) -> list[Candidate]:
    """Multiply by ``base + (1 - base) * min(1, importance / importance_scale)``.

    Args:
        candidates: Scored candidates.
        settings: ``importance_base`` (0.7).
        importance_scale: Importance that counts as 1.0 (core: 3.0).

    Returns:
        New candidates, re-sorted; ``debug["importance"]`` is the factor (0.8 for a
        default memory of importance 1.0, 1.0 for a core memory).
    """
    return _adjusted(
        candidates, [_multiply("importance", _importance_factor(settings, importance_scale))]
    )


def length_norm(candidates: Sequence[Candidate], settings: RetrievalSettings) -> list[Candidate]:
    """Multiply texts longer than the anchor by ``1 / (1 + 0.5 * log2(len / anchor))``.

    Long chunks match many words by sheer size; this keeps them from crowding out
    short, precise memories. Length is counted in characters (an ideograph is one).

    Args:
        candidates: Scored candidates.
        settings: ``length_norm_anchor`` (500); not positive disables the stage.

    Returns:
        New candidates, re-sorted; ``debug["length_norm"]`` is the factor.
    """
    return _adjusted(candidates, [_multiply("length_norm", _length_factor(settings))])


def time_decay(
    candidates: Sequence[Candidate], settings: RetrievalSettings, now: float
) -> list[Candidate]:
    """Multiply by ``0.5 + 0.5 * exp(-age_days / time_decay_days)``; floor 0.5.

    Only categories in ``settings.age_categories`` decay (episodes by default);
    core and system memories never do.

    Args:
        candidates: Scored candidates.
        settings: ``time_decay_days`` (60); not positive disables the stage.
        now: Epoch seconds.

    Returns:
        New candidates, re-sorted; ``debug["time_decay"]`` is the factor.
    """
    return _adjusted(candidates, [_multiply("time_decay", _decay_factor(settings, now))])


def time_window_boost(
    candidates: Sequence[Candidate],
    window_start: float | None,
    window_end: float | None,
    *,
    factor: float = TIME_WINDOW_FACTOR,
) -> list[Candidate]:
    """Multiply candidates created inside ``[window_start, window_end)`` by ``factor``.

    Args:
        candidates: Scored candidates.
        window_start: Window start, epoch seconds; ``None`` disables the stage.
        window_end: Window end (exclusive), epoch seconds; ``None`` disables it.
        factor: The multiplier for in-window candidates.

    Returns:
        New candidates, re-sorted; in-window ones have ``debug["time_window"]``.
    """
    if window_start is None or window_end is None:
        return [c.copy() for c in candidates]
    return _adjusted(candidates, [_window_adjust(window_start, window_end, factor)])


def per_candidate_stages(
    candidates: Sequence[Candidate],
    settings: RetrievalSettings,
    now: float,
    *,
    recency: bool = True,
    importance: bool = True,
    length: bool = True,
    decay: bool = True,
    window: tuple[float, float] | None = None,
) -> list[Candidate]:
    """:func:`recency_boost`, :func:`importance_weight`, :func:`length_norm`,
    :func:`time_decay` and :func:`time_window_boost`, in that order, in one pass.

    The same result as calling them one after the other (each changes a candidate
    on its own, so the sorts in between change nothing), copying each candidate
    once and sorting once.

    Args:
        candidates: Scored candidates.
        settings: The stages' settings.
        now: Epoch seconds.
        recency: Run :func:`recency_boost`.
        importance: Run :func:`importance_weight`.
        length: Run :func:`length_norm`.
        decay: Run :func:`time_decay`.
        window: ``(start, end)`` of a recall window for :func:`time_window_boost`.

    Returns:
        New candidates, re-sorted, with each stage's ``debug`` entry.
    """
    steps: list[Adjust] = []
    if recency:
        steps.append(_recency_adjust(settings, now))
    if importance:
        steps.append(_multiply("importance", _importance_factor(settings, IMPORTANCE_SCALE)))
    if length:
        steps.append(_multiply("length_norm", _length_factor(settings)))
    if decay:
        steps.append(_multiply("time_decay", _decay_factor(settings, now)))
    if window is not None:
        steps.append(_window_adjust(window[0], window[1], TIME_WINDOW_FACTOR))
    return _adjusted(candidates, steps)


def adjustment(
    stage: str, settings: RetrievalSettings, now: float, window: tuple[float, float] | None = None
) -> Adjust:
    """One per-candidate stage as an in-place step (what :func:`per_candidate_stages`
    applies to each candidate).

    Args:
        stage: ``recency``, ``importance``, ``length_norm``, ``time_decay`` or
            ``time_window`` (which needs ``window``).
        settings: The stages' settings.
        now: Epoch seconds.
        window: ``(start, end)`` of a recall window.

    Returns:
        A function changing one candidate's ``score`` and ``debug`` in place.

    Raises:
        InvalidInputError: An unknown stage, or ``time_window`` without a window.
    """
    if stage == "recency":
        return _recency_adjust(settings, now)
    if stage == "importance":
        return _multiply("importance", _importance_factor(settings, IMPORTANCE_SCALE))
    if stage == "length_norm":
        return _multiply("length_norm", _length_factor(settings))
    if stage == "time_decay":
        return _multiply("time_decay", _decay_factor(settings, now))
    if stage == "time_window" and window is not None:
        return _window_adjust(window[0], window[1], TIME_WINDOW_FACTOR)
    raise InvalidInputError(f"No per-candidate stage {stage!r} (or no window given).")


def _adjusted(candidates: Sequence[Candidate], steps: Sequence[Adjust]) -> list[Candidate]:
    out: list[Candidate] = []
    for c in candidates:
        m = c.copy()
        for step in steps:
            step(m)
        out.append(m)
    return _ranked(out)


def _relevance(c: Candidate) -> float:
    return c.debug.get("relevance", c.score)


def _kept(
    candidates: Sequence[Candidate], passes: Exempt, exempt: Exempt | None, stage: str
) -> list[Candidate]:
    # A filter changes no candidate: the kept ones are shared, not copied (every
    # stage that changes a candidate copies it first).
    out = [c for c in candidates if passes(c) or (exempt is not None and exempt(c))]
    if len(out) < len(candidates):
        logger.debug("%s dropped %d of %d", stage, len(candidates) - len(out), len(candidates))
    return out


def min_score_filter(
    candidates: Sequence[Candidate],
    settings: RetrievalSettings,
    *,
    exempt: Exempt | None = None,
) -> list[Candidate]:
    """Drop candidates whose relevance is below ``min_score`` (soft threshold).

    Args:
        candidates: Candidates from fusion.
        settings: ``min_score`` (0.3).
        exempt: Candidates for which this returns True are kept regardless (e.g.
            those inside a recall window: the date is their evidence).

    Returns:
        The kept candidates (copies), order unchanged.
    """
    return _kept(candidates, lambda c: _relevance(c) >= settings.min_score, exempt, "min_score")


def hard_min_filter(
    candidates: Sequence[Candidate],
    settings: RetrievalSettings,
    *,
    exempt: Exempt | None = None,
) -> list[Candidate]:
    """Drop candidates whose relevance plus recency boost is below ``hard_min_score``.

    Args:
        candidates: Candidates after the scoring stages.
        settings: ``hard_min_score`` (0.35).
        exempt: Candidates for which this returns True are kept regardless.

    Returns:
        The kept candidates (copies), order unchanged.
    """

    def passes(c: Candidate) -> bool:
        return _relevance(c) + c.debug.get("recency", 0.0) >= settings.hard_min_score

    return _kept(candidates, passes, exempt, "hard_min_score")


def noise_filter(
    candidates: Sequence[Candidate],
    settings: RetrievalSettings,
    *,
    exempt: Exempt | None = None,
) -> list[Candidate]:
    """Drop candidates whose text is noise (:func:`~langmem_ext.retrieval.noise.is_noise`).

    Args:
        candidates: Candidates.
        settings: ``noise_min_chars`` (5).
        exempt: Candidates for which this returns True are kept regardless.

    Returns:
        The kept candidates (copies), order unchanged.
    """
    return _kept(
        candidates,
        lambda c: not is_noise(c.text, min_chars=settings.noise_min_chars),
        exempt,
        "noise",
    )


def _unit(vec: Sequence[float]) -> NDArray[np.float64]:
    v = np.asarray(vec, dtype=np.float64)
    norm = float(np.sqrt(v @ v))
    return v / norm if norm > 0.0 else v


def mmr_demote(
    candidates: Sequence[Candidate],
    settings: RetrievalSettings,
    *,
    cosine_baseline: float = 0.0,
    k: int | None = None,
    copy_inputs: bool = True,
) -> list[Candidate]:
    """Demote near-duplicates of better hits (MMR-style diversity).

    Walking the candidates best first, one whose embedding has a cosine above
    ``mmr_threshold`` with an already kept (better-ranked, not demoted) candidate is
    demoted: its score is multiplied by ``mmr_demotion`` (0.9), so it falls behind
    the hits that scored close to it but still shows when little else matches. With
    ``mmr_demotion = 0`` it goes after every kept candidate instead, in
    its original order. Nothing is deleted. Candidates without an embedding (or of
    another dimension than the first one) are kept in place and compared with
    nothing.

    A near-duplicate is often a *different* memory: "我用的手机是华为Mate60" said
    by two users, or the same plan stated in two sessions. Pushing it to the end
    removes it from any top k; the gentle factor only reorders. On pooled MemDaily
    that is 2 points of recall@10 (BENCHMARKS.md, the demotion rows).

    Args:
        candidates: Scored candidates.
        settings: ``mmr_threshold`` (0.85), on the rescaled cosine
            ``(cos - cosine_baseline) / (1 - cosine_baseline)``; ``mmr_demotion``.
        cosine_baseline: Cosine of unrelated texts for the embedder in use.
        k: Stop once ``k`` candidates are kept: the rest follow in score order,
            unexamined (the caller keeps only the first ``k``; those unexamined
            score below every kept one, so they never reach it). ``None`` examines
            all.
        copy_inputs: ``False`` when the caller does not use the given candidates
            again: demoted ones are then changed in place instead of copied.

    Returns:
        New candidates, best first; ``debug["mmr_demoted"]`` is the cosine that
        demoted a candidate.
    """
    ranked = [c.copy() for c in _ranked(candidates)] if copy_inputs else _ranked(candidates)
    limit = cosine_baseline + (1.0 - cosine_baseline) * settings.mmr_threshold
    dim: int | None = None
    kept: list[Candidate] = []
    demoted: list[Candidate] = []
    units: NDArray[np.float64] | None = None  # rows: unit vectors of the kept ones
    n_units = 0
    factor = settings.mmr_demotion
    stop = len(ranked) if k is None else k
    walked = 0
    for c in ranked:
        if len(kept) >= stop:
            break
        walked += 1
        emb = c.embedding
        if emb is None or len(emb) == 0 or (dim is not None and len(emb) != dim):
            kept.append(c)  # nothing to compare it with
            continue
        dim = len(emb)
        unit = _unit(emb)
        if units is None:
            units = np.empty((stop, dim))
        elif n_units:
            best = float((units[:n_units] @ unit).max())
            if best > limit:
                c.debug["mmr_demoted"] = best
                c.score *= factor
                demoted.append(c)
                continue
        units[n_units] = unit
        n_units += 1
        kept.append(c)
    if demoted:
        logger.debug("MMR demoted %d near-duplicates", len(demoted))
    if factor == 0.0:
        return kept + ranked[walked:] + demoted
    return _ranked(kept + ranked[walked:] + demoted)


__all__ = [
    "IMPORTANCE_SCALE",
    "NO_DECAY_CATEGORIES",
    "TIME_WINDOW_FACTOR",
    "Adjust",
    "adjustment",
    "age_days",
    "hard_min_filter",
    "importance_weight",
    "length_norm",
    "min_score_filter",
    "mmr_demote",
    "noise_filter",
    "per_candidate_stages",
    "recency_boost",
    "time_decay",
    "time_window_boost",
]

"""The decay table, day by day (pure; ``maintain`` applies it)."""

from __future__ import annotations

from datetime import UTC, date, timedelta

import pytest

from langmem_ext.core.config import LifecycleSettings
from langmem_ext.memory.lifecycle.decay import decay_outcome

DAY = 86400.0
START = date(2026, 1, 1)
T0 = 1767225600.0  # 2026-01-01T00:00:00Z


def _run_daily(category: str, days: int, *, importance: float = 1.0) -> list[tuple[float, str]]:
    """Maintenance every day for ``days`` days after creation (never accessed)."""
    s = LifecycleSettings()
    out, last_run = [], None
    for d in range(1, days + 1):
        today = START + timedelta(days=d)
        o = decay_outcome(category=category, importance=importance, created_at=T0,
                          last_active=T0, last_run=last_run, today=today, settings=s, tz=UTC)  # fmt: skip
        importance, last_run = o.importance, today
        out.append((round(importance, 6), o.action))
    return out


def test_fact_decays_by_085_from_day_5_and_is_reviewed_below_02() -> None:
    got = _run_daily("fact", 14)
    assert [a for _, a in got[:4]] == ["keep"] * 4
    expected = [round(0.85**n, 6) for n in range(1, 11)]
    assert [i for i, _ in got[4:]] == expected
    assert [a for _, a in got[4:13]] == ["decayed"] * 9
    assert got[13] == (round(0.85**10, 6), "review")  # 0.197 < 0.2 on day 14


def test_episode_decays_by_06_from_day_3_and_is_deleted_on_day_7_not_6() -> None:
    got = _run_daily("episode", 7)
    assert [a for _, a in got[:2]] == ["keep", "keep"]
    assert [i for i, _ in got[2:6]] == [0.6, 0.36, 0.216, 0.1296]
    assert got[5][1] == "decayed"  # day 6: still there
    assert got[6][1] == "delete"  # day 7


@pytest.mark.parametrize("category", ["core", "system"])
def test_core_and_system_never_decay(category: str) -> None:
    assert _run_daily(category, 60) == [(1.0, "keep")] * 60


def test_high_importance_fact_counts_as_core() -> None:
    assert _run_daily("fact", 30, importance=3.0) == [(3.0, "keep")] * 30


def test_one_late_run_equals_daily_runs() -> None:
    s = LifecycleSettings()
    daily = _run_daily("fact", 9)[-1][0]
    once = decay_outcome(category="fact", importance=1.0, created_at=T0, last_active=T0,
                         last_run=None, today=START + timedelta(days=9), settings=s, tz=UTC)  # fmt: skip
    assert round(once.importance, 6) == daily and once.steps == 5
    twice = decay_outcome(category="fact", importance=once.importance, created_at=T0,
                          last_active=T0, last_run=START + timedelta(days=9),
                          today=START + timedelta(days=9), settings=s, tz=UTC)  # fmt: skip
    assert twice.steps == 0 and twice.importance == once.importance  # same day twice = once


def test_access_resets_idle_time() -> None:
    s = LifecycleSettings()
    o = decay_outcome(category="fact", importance=1.0, created_at=T0, last_active=T0 + 8 * DAY,
                      last_run=START + timedelta(days=8), today=START + timedelta(days=12),
                      settings=s, tz=UTC)  # fmt: skip
    assert o.action == "keep"  # idle 4 days on day 12
    o = decay_outcome(category="fact", importance=1.0, created_at=T0, last_active=T0 + 8 * DAY,
                      last_run=START + timedelta(days=12), today=START + timedelta(days=13),
                      settings=s, tz=UTC)  # fmt: skip
    assert (o.steps, round(o.importance, 4)) == (1, 0.85)

"""The decay table as a pure function of an entry's dates and the day.

| category | idle days before decay | factor | then                      |
| -------- | ---------------------- | ------ | ------------------------- |
| system   | never                  | -      | never deleted             |
| core     | never                  | -      | never deleted             |
| fact     | 5                      | ×0.85  | reviewed below 0.2        |
| episode  | 3                      | ×0.6   | deleted at 7 days of age  |

Decay is applied once per elapsed day: on each day ``D`` after the last run up to
today on which the entry has been idle for at least the threshold (``D`` minus the
day of its last access, edit or creation), its importance is multiplied by the
factor. The result does not depend on how often maintenance ran: one run after ten
days gives what ten daily runs give. An entry's first run catches up from the day
it became idle. Days are calendar days in the given timezone. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Literal

from langmem_ext.core.config import LifecycleSettings

NEVER_DECAY = frozenset({"system", "core"})
"""Categories no job ever decays or deletes."""

Action = Literal["keep", "decayed", "review", "delete"]


@dataclass(frozen=True)
class DecayOutcome:
    """What one maintenance day does to one entry.

    Attributes:
        importance: The importance after decay (unchanged when nothing applies).
        steps: How many daily decays applied.
        action: ``keep`` (nothing), ``decayed``, ``review`` (a fact fell below the
            review threshold), ``delete`` (an episode reached its age limit).
    """

    importance: float
    steps: int
    action: Action


def day_of(ts: float, tz: tzinfo | None = None) -> date:
    """The calendar day of epoch seconds ``ts`` in ``tz`` (local time when ``None``)."""
    return datetime.fromtimestamp(ts, tz=tz).date()


def decay_steps(idle_since: date, *, after_days: float, last_run: date | None, today: date) -> int:
    """Days in ``(last_run, today]`` on which the entry was idle ``after_days`` or more.

    Args:
        idle_since: Day of the entry's last access, edit or creation.
        after_days: Idle days before decay starts.
        last_run: Last day decay was applied (``None``: never, catch up fully).
        today: The day being processed.
    """
    first_due = idle_since + timedelta(days=int(after_days))
    start = first_due if last_run is None else max(first_due, last_run + timedelta(days=1))
    return max(0, (today - start).days + 1)


def decay_outcome(
    *,
    category: str,
    importance: float,
    created_at: float,
    last_active: float,
    last_run: date | None,
    today: date,
    settings: LifecycleSettings,
    tz: tzinfo | None = None,
) -> DecayOutcome:
    """Apply the table to one entry for the days since the last run.

    Args:
        category: system, core, fact or episode.
        importance: The entry's importance now.
        created_at: Creation time (epoch seconds): an episode's age.
        last_active: Last access, edit or creation (epoch seconds): idle time.
        last_run: Last day decay was applied to the scope (``None``: never).
        today: The day being processed.
        settings: The factors, thresholds and ages (``lifecycle``).
        tz: Timezone of calendar days (local when ``None``).

    Returns:
        The new importance, how many decays applied and what follows.

    Example:
        >>> from datetime import date
        >>> from langmem_ext.core.config import LifecycleSettings
        >>> day = 86400.0
        >>> o = decay_outcome(category="fact", importance=1.0, created_at=0.0,
        ...     last_active=0.0, last_run=None, today=date(1970, 1, 7),
        ...     settings=LifecycleSettings(), tz=__import__("datetime").timezone.utc)
        >>> (round(o.importance, 4), o.steps, o.action)
        (0.7225, 2, 'decayed')
    """
    if category in NEVER_DECAY or importance >= settings.core_threshold:
        return DecayOutcome(importance, 0, "keep")
    if category == "episode":
        if (today - day_of(created_at, tz)).days >= settings.episode_delete_after_days:
            return DecayOutcome(importance, 0, "delete")
        after, factor = settings.episode_decay_after_days, settings.episode_decay_factor
    else:
        after, factor = settings.fact_decay_after_days, settings.fact_decay_factor
    steps = decay_steps(day_of(last_active, tz), after_days=after, last_run=last_run, today=today)
    if not steps:
        return DecayOutcome(importance, 0, "keep")
    new = importance * factor**steps
    review = category != "episode" and new < settings.fact_review_below
    return DecayOutcome(new, steps, "review" if review else "decayed")


def caught_up(
    *,
    category: str,
    importance: float,
    created_at: float,
    last_run: date | None,
    settings: LifecycleSettings,
    tz: tzinfo | None = None,
) -> float:
    """The importance of an entry written now but said at ``created_at``, as if it had
    been there since: the decay of the days the scope's decay already processed (up
    to ``last_run``), so later runs, which start after ``last_run``, need not know.

    Args:
        category: Its category.
        importance: The importance it is written with.
        created_at: When it was said (epoch seconds): its idle time starts then.
        last_run: Last day decay was applied to the scope (``None``: never; later
            runs then catch up fully).
        settings: The decay table (``lifecycle``).
        tz: Timezone of calendar days (local when ``None``).

    Returns:
        The importance to write.
    """
    if last_run is None:
        return importance
    o = decay_outcome(
        category=category,
        importance=importance,
        created_at=created_at,
        last_active=created_at,
        last_run=None,
        today=last_run,
        settings=settings,
        tz=tz,
    )
    return o.importance


__all__ = ["NEVER_DECAY", "DecayOutcome", "caught_up", "day_of", "decay_outcome", "decay_steps"]

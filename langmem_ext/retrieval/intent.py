"""Recall intent: does a query ask about a time, and which?

"昨天我们聊了什么？" should search and prefer what was said yesterday. The detector
turns such phrases into a time window, as local-day boundaries in the time zone of
the ``now`` passed in (a naive ``now`` is taken as the machine's local time), and
returns epoch seconds, half-open: ``window_start <= created_at < window_end``.

Recognised, first match wins, in this order (window; forced?):

- explicit dates — 2024-03-05, 2024/03/05, 2024年3月5日, 3月5日 / 号 / 號, May 8,
  8 May, May 8th, 2023 (that day; yes)
- N days ago — 3 days ago, 三天前, 3天以前, 大前天 (that day; yes)
- the day before yesterday, 前天 (that day; yes)
- yesterday, last night, 昨天, 昨日, 昨晚 (yesterday; yes)
- today, tonight, this morning, 今天, 今日, 今晚, 今早 (today; no)
- last week, 上周, 上週, 上星期, 上礼拜 (Monday to Monday before this week; yes)
- this week, 这周, 這週, 本周, 这个星期 (this Monday to next Monday; no)
- last month, 上个月, 上個月, 上月 (the previous calendar month; yes)
- this month, 这个月, 這個月, 本月 (this calendar month; no)
- last time, 上次, 上回 (no window; yes)
- previously, earlier, do you remember, did I tell you, 之前, 以前, 还记得, 還記得,
  问过, 聊过 ... (no window; yes)

``forced`` says whether the phrase alone should force a search: asking about the
past does, "today" or "this week" does not ("what should I cook today?").
A date without a year takes ``now``'s year, or the year before when that date would
lie in the future (in January, "Dec 20" means last December).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from langmem_ext.language import intent_vocab as vocab

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecallIntent:
    """A recall question's time window.

    Attributes:
        window_start: Start of the window, epoch seconds (inclusive), or ``None``.
        window_end: End of the window, epoch seconds (exclusive), or ``None``.
        label: What matched: ``yesterday``, ``last_week``, ``3_days_ago``,
            ``date:2024-03-05``, ``last_time``, ``recall``, ...
        forced: The query refers to the past, so a search should run.
    """

    window_start: float | None
    window_end: float | None
    label: str
    forced: bool

    @property
    def has_window(self) -> bool:
        """Whether this intent names a time window."""
        return self.window_start is not None and self.window_end is not None

    def contains(self, timestamp: float) -> bool:
        """Whether ``timestamp`` (epoch seconds) falls inside the window.

        Args:
            timestamp: Epoch seconds.

        Returns:
            False when there is no window.
        """
        if self.window_start is None or self.window_end is None:
            return False
        return self.window_start <= timestamp < self.window_end


# (pattern, label, day-offset window or named window, forced)
_DAY_RES: tuple[tuple[re.Pattern[str], str, int, bool], ...] = (
    (vocab.THREE_DAYS_AGO_RE, "3_days_ago", -3, True),
    (vocab.DAY_BEFORE_YESTERDAY_RE, "day_before_yesterday", -2, True),
    (vocab.YESTERDAY_RE, "yesterday", -1, True),
    (vocab.TODAY_RE, "today", 0, False),
)


def _last_week(today: date) -> tuple[date, date]:
    monday = today - timedelta(days=today.weekday())
    return monday - timedelta(days=7), monday


def _this_week(today: date) -> tuple[date, date]:
    monday = today - timedelta(days=today.weekday())
    return monday, monday + timedelta(days=7)


def _last_month(today: date) -> tuple[date, date]:
    first = today.replace(day=1)
    return (first - timedelta(days=1)).replace(day=1), first


def _this_month(today: date) -> tuple[date, date]:
    first = today.replace(day=1)
    return first, (first + timedelta(days=32)).replace(day=1)


_Period = Callable[[date], tuple[date, date]]
"""The window of a named period from today: its first day and the day after its last."""

# (pattern, label, window, forced)
_PERIOD_RES: tuple[tuple[re.Pattern[str], str, _Period, bool], ...] = (
    (
        vocab.LAST_WEEK_RE,
        "last_week",
        _last_week,
        True,
    ),
    (
        vocab.THIS_WEEK_RE,
        "this_week",
        _this_week,
        False,
    ),
    (vocab.LAST_MONTH_RE, "last_month", _last_month, True),
    (vocab.THIS_MONTH_RE, "this_month", _this_month, False),
)


def _cn_number(s: str) -> int:
    if s.isdigit():
        return int(s)
    if "十" in s:
        tens, _, ones = s.partition("十")
        return vocab.CN_DIGITS.get(tens, 1) * 10 + vocab.CN_DIGITS.get(ones, 0)
    return vocab.CN_DIGITS[s]


def _midnight(d: date, tz: tzinfo | None) -> float:
    return datetime.combine(d, time(0), tzinfo=tz).timestamp()


def _window(start: date, end: date, tz: tzinfo | None, label: str, forced: bool) -> RecallIntent:
    return RecallIntent(_midnight(start, tz), _midnight(end, tz), label, forced)


def _day(d: date, tz: tzinfo | None, label: str, forced: bool = True) -> RecallIntent:
    return _window(d, d + timedelta(days=1), tz, label, forced)


def _explicit_date(text: str, today: date) -> date | None:
    """The first valid explicit date in ``text`` (ISO, Chinese, English)."""
    found: list[tuple[int, str | None, int, int]] = []  # (pos, year, month, day)
    for m in vocab.ISO_RE.finditer(text):
        found.append((m.start(), m.group(1), int(m.group(2)), int(m.group(3))))
    for m in vocab.ZH_DATE_RE.finditer(text):
        found.append((m.start(), m.group(1), int(m.group(2)), int(m.group(3))))
    for m in vocab.EN_MONTH_DAY_RE.finditer(text):
        found.append((m.start(), m.group(3), vocab.MONTHS[m.group(1)[:3]], int(m.group(2))))
    for m in vocab.EN_DAY_MONTH_RE.finditer(text):
        found.append((m.start(), m.group(3), vocab.MONTHS[m.group(2)[:3]], int(m.group(1))))
    for _, year, month, day in sorted(found, key=lambda f: f[0]):
        try:
            if year is not None:
                return date(int(year), month, day)
            d = date(today.year, month, day)
            return d if d <= today else date(today.year - 1, month, day)
        except ValueError:  # 2月30日, month 13, Feb 29 of a non-leap year, ...
            continue
    return None


def _days_ago(text: str) -> int | None:
    m = vocab.EN_AGO_RE.search(text)
    if m:
        word = m.group(1)
        return int(word) if word.isdigit() else vocab.EN_NUMBERS[word]
    m = vocab.ZH_AGO_RE.search(text)
    return _cn_number(m.group(1)) if m else None


def detect_recall_intent(query: str, now: datetime) -> RecallIntent | None:
    """Find a recall intent and its time window in ``query``.

    Args:
        query: The user's message (English or Chinese).
        now: The current time; its tzinfo defines the local days. A naive value is
            taken as the machine's local time.

    Returns:
        A :class:`RecallIntent`, or ``None`` when the query names no time and no
        recall phrase.

    Example:
        >>> from datetime import datetime, timezone
        >>> i = detect_recall_intent("昨天我们聊了什么？", datetime(2024, 3, 6, 15, tzinfo=timezone.utc))
        >>> i.label, datetime.fromtimestamp(i.window_start, timezone.utc).date().isoformat()
        ('yesterday', '2024-03-05')
    """
    if now.tzinfo is None:
        now = now.astimezone()
    tz = now.tzinfo
    today = now.date()
    text = unicodedata.normalize("NFKC", query).lower()
    intent = _detect(text, today, tz)
    if intent is not None:
        logger.debug("recall intent %s in %r", intent.label, query[:60])
    return intent


def _detect(text: str, today: date, tz: tzinfo | None) -> RecallIntent | None:
    d = _explicit_date(text, today)
    if d is not None:
        return _day(d, tz, f"date:{d.isoformat()}")
    n = _days_ago(text)
    if n is not None and 0 < n <= 3650:
        return _day(today - timedelta(days=n), tz, f"{n}_days_ago")
    for pattern, label, offset, forced in _DAY_RES:
        if pattern.search(text):
            return _day(today + timedelta(days=offset), tz, label, forced)
    for pattern, label, period, forced in _PERIOD_RES:
        if pattern.search(text):
            return _window(*period(today), tz, label, forced)
    if vocab.LAST_TIME_RE.search(text):
        return RecallIntent(None, None, "last_time", True)
    if vocab.RECALL_RE.search(text):
        return RecallIntent(None, None, "recall", True)
    return None


__all__ = ["RecallIntent", "detect_recall_intent"]

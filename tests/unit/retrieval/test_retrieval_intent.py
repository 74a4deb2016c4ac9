"""Recall intent windows for a fixed `now`."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from langmem_ext.retrieval.intent import RecallIntent, detect_recall_intent

SHANGHAI = ZoneInfo("Asia/Shanghai")
NOW = datetime(2024, 3, 6, 15, 30, tzinfo=SHANGHAI)  # a Wednesday


def window(intent: RecallIntent | None) -> tuple[date, date]:
    """The window as local dates [start, end)."""
    assert intent is not None and intent.window_start is not None
    assert intent.window_end is not None
    start = datetime.fromtimestamp(intent.window_start, SHANGHAI)
    end = datetime.fromtimestamp(intent.window_end, SHANGHAI)
    assert (start.hour, start.minute, end.hour, end.minute) == (0, 0, 0, 0)
    return start.date(), end.date()


D = date


@pytest.mark.parametrize(
    ("query", "label", "start", "end", "forced"),
    [
        ("今天我做了什么", "today", D(2024, 3, 6), D(2024, 3, 7), False),
        ("what should I cook today", "today", D(2024, 3, 6), D(2024, 3, 7), False),
        ("昨天我们聊了什么？", "yesterday", D(2024, 3, 5), D(2024, 3, 6), True),
        ("What did I say yesterday?", "yesterday", D(2024, 3, 5), D(2024, 3, 6), True),
        ("前天的会议", "day_before_yesterday", D(2024, 3, 4), D(2024, 3, 5), True),
        ("the day before yesterday", "day_before_yesterday", D(2024, 3, 4), D(2024, 3, 5), True),
        ("大前天去哪了", "3_days_ago", D(2024, 3, 3), D(2024, 3, 4), True),
        ("3天前说的", "3_days_ago", D(2024, 3, 3), D(2024, 3, 4), True),
        ("三天前说的", "3_days_ago", D(2024, 3, 3), D(2024, 3, 4), True),
        ("十二天以前", "12_days_ago", D(2024, 2, 23), D(2024, 2, 24), True),
        ("5 days ago", "5_days_ago", D(2024, 3, 1), D(2024, 3, 2), True),
        ("two days ago I told you", "2_days_ago", D(2024, 3, 4), D(2024, 3, 5), True),
        ("上周的计划", "last_week", D(2024, 2, 26), D(2024, 3, 4), True),
        ("上週的計畫", "last_week", D(2024, 2, 26), D(2024, 3, 4), True),
        ("last week", "last_week", D(2024, 2, 26), D(2024, 3, 4), True),
        ("这周有什么安排", "this_week", D(2024, 3, 4), D(2024, 3, 11), False),
        ("this week", "this_week", D(2024, 3, 4), D(2024, 3, 11), False),
        ("上个月花了多少钱", "last_month", D(2024, 2, 1), D(2024, 3, 1), True),
        ("上個月", "last_month", D(2024, 2, 1), D(2024, 3, 1), True),
        ("last month", "last_month", D(2024, 2, 1), D(2024, 3, 1), True),
        ("本月", "this_month", D(2024, 3, 1), D(2024, 4, 1), False),
        ("what happened on 2024-03-05", "date:2024-03-05", D(2024, 3, 5), D(2024, 3, 6), True),
        ("2023/12/31 的聚会", "date:2023-12-31", D(2023, 12, 31), D(2024, 1, 1), True),
        ("3月5日那天", "date:2024-03-05", D(2024, 3, 5), D(2024, 3, 6), True),
        ("3月5号那天", "date:2024-03-05", D(2024, 3, 5), D(2024, 3, 6), True),
        ("2023年8月15號", "date:2023-08-15", D(2023, 8, 15), D(2023, 8, 16), True),
        ("what did we do on Mar 5?", "date:2024-03-05", D(2024, 3, 5), D(2024, 3, 6), True),
        ("March 1st", "date:2024-03-01", D(2024, 3, 1), D(2024, 3, 2), True),
        ("8 May, 2023", "date:2023-05-08", D(2023, 5, 8), D(2023, 5, 9), True),
        # no year and in the future this year: the most recent past one is meant
        ("May 8", "date:2023-05-08", D(2023, 5, 8), D(2023, 5, 9), True),
        ("12月20日", "date:2023-12-20", D(2023, 12, 20), D(2023, 12, 21), True),
    ],
)
def test_windows(query: str, label: str, start: date, end: date, forced: bool) -> None:
    intent = detect_recall_intent(query, NOW)
    assert intent is not None, query
    assert (intent.label, intent.forced) == (label, forced)
    assert window(intent) == (start, end)


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("上次说的那家店", "last_time"),
        ("上回", "last_time"),
        ("like last time", "last_time"),
        ("你还记得我的狗吗", "recall"),
        ("之前那个方案", "recall"),
        ("previously you said", "recall"),
    ],
)
def test_forced_without_window(query: str, label: str) -> None:
    intent = detect_recall_intent(query, NOW)
    assert intent == RecallIntent(None, None, label, True)
    assert not intent.has_window and not intent.contains(NOW.timestamp())


@pytest.mark.parametrize(
    "query", ["你好", "I like ramen", "May I ask a question?", "2月30日", "what is 3 + 4"]
)
def test_no_intent(query: str) -> None:
    assert detect_recall_intent(query, NOW) is None


def test_windows_follow_nows_time_zone() -> None:
    utc_now = datetime(2024, 3, 6, 2, 0, tzinfo=UTC)  # 10:00 in Shanghai
    intent = detect_recall_intent("yesterday", utc_now)
    assert intent is not None and intent.window_start is not None
    assert intent.window_start == datetime(2024, 3, 5, tzinfo=UTC).timestamp()
    sh = detect_recall_intent("yesterday", utc_now.astimezone(SHANGHAI))
    assert sh is not None and sh.window_start is not None
    assert intent.window_start - sh.window_start == 8 * 3600


def test_window_across_a_dst_change_is_a_local_day() -> None:
    ny = ZoneInfo("America/New_York")
    intent = detect_recall_intent("yesterday", datetime(2024, 3, 11, 12, tzinfo=ny))
    assert intent is not None and intent.window_start is not None
    assert intent.window_end is not None
    assert intent.window_end - intent.window_start == 23 * 3600  # 2024-03-10 had 23 hours
    assert datetime.fromtimestamp(intent.window_start, ny).hour == 0


def test_contains_is_half_open() -> None:
    intent = detect_recall_intent("昨天", NOW)
    assert intent is not None and intent.window_start is not None
    assert intent.window_end is not None
    assert intent.contains(intent.window_start)
    assert intent.contains(intent.window_end - 1)
    assert not intent.contains(intent.window_end)
    assert intent.contains((NOW - timedelta(days=1)).timestamp())

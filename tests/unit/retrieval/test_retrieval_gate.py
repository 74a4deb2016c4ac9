"""Adaptive retrieval gate decisions for English, simplified and traditional Chinese."""

from __future__ import annotations

import pytest

from langmem_ext.core.config import GateSettings
from langmem_ext.retrieval.gate import GateDecision, should_retrieve

FORCED = [
    "你还记得我喜欢什么吗",
    "還記得我的生日嗎",
    "记得吗",
    "上次说的那家店",
    "之前那个方案",
    "昨天",
    "前天吃了什么",
    "上周的会议",
    "上週的會議",
    "以前住哪",
    "remember me?",
    "hi, do you remember me",
    "What did I eat?",
    "did i tell you about Bob",
    "what was it we said last time",
    "Yesterday",
    "as I said earlier",
    "previously",
    "/recall dogs",
]

SKIPPED = [
    ("", "empty"),
    ("   ", "empty"),
    ("HEARTBEAT", "heartbeat"),
    ("/help", "command"),
    ("/start now", "command"),
    ("👍", "emoji only"),
    ("😂😂😂", "emoji only"),
    ("???", "punctuation only"),
    ("……", "punctuation only"),
    ("hi", "greeting"),
    ("Hello there!", "greeting"),
    ("good morning", "greeting"),
    ("你好", "greeting"),
    ("早上好！", "greeting"),
    ("ok", "acknowledgement"),
    ("Okay, thanks!", "acknowledgement"),
    ("thank you so much", "acknowledgement"),
    ("好的", "acknowledgement"),
    ("嗯嗯", "acknowledgement"),
    ("收到", "acknowledgement"),
    ("谢谢", "acknowledgement"),
    ("謝謝！", "acknowledgement"),
    ("好的，谢谢", "acknowledgement"),
    ("why", "too short"),
    ("谁？", "too short"),
    ("拉面好吃", "short without question"),
    ("I like ramen", "short without question"),
    ("fix the bug", "short without question"),
]

RETRIEVED = [
    "他是谁？",
    "我喜欢吃什么？",
    "我的狗叫什么名字",
    "what's my dog's name?",
    "Where should we go for dinner tonight",
    "我應該買哪一款相機比較好",
    "Can you help me plan my Kyoto trip",
]


@pytest.mark.parametrize("query", FORCED)
def test_recall_words_force_retrieval(query: str) -> None:
    d = should_retrieve(query)
    assert d.retrieve and d.forced, (query, d)
    assert d.reason.startswith("recall word")


@pytest.mark.parametrize(("query", "reason"), SKIPPED)
def test_skipped(query: str, reason: str) -> None:
    assert should_retrieve(query) == GateDecision(retrieve=False, forced=False, reason=reason)


@pytest.mark.parametrize("query", RETRIEVED)
def test_retrieved(query: str) -> None:
    assert should_retrieve(query) == GateDecision(retrieve=True, forced=False, reason="default")


def test_full_width_question_mark_counts() -> None:
    assert not should_retrieve("拉面好吃").retrieve
    assert should_retrieve("拉面好吃？").retrieve
    assert should_retrieve("拉面好吃?").retrieve


def test_settings_change_the_thresholds() -> None:
    strict = GateSettings(short_other_chars=40)
    assert should_retrieve("Can you help me plan my Kyoto trip").retrieve
    assert not should_retrieve("Can you help me plan my Kyoto trip", strict).retrieve

"""Noise filter: refusals, meta questions, greetings, HEARTBEAT, too-short texts."""

from __future__ import annotations

import pytest

from langmem_ext.retrieval.noise import is_noise, meaningful_length

NOISE = [
    # refusals
    "I don't have any information about that.",
    "I'm sorry, I can't help with that.",
    "Sorry, but I cannot find any memories about your trip.",
    "Unfortunately I don't have access to your calendar",
    "I couldn't find any notes on that",
    "As an AI, I have no personal preferences.",
    "No relevant memories found.",
    "I don't know.",
    "我不知道",
    "我不知道呢。",
    "抱歉，我无法回答这个问题。",
    "抱歉，我沒有相關的資料。",
    "對不起，我無法找到相關資訊",
    "我没有相关的信息",
    "我沒有關於你狗的記憶",
    "作为一个AI，我没有个人喜好",
    # meta questions about memory
    "Do you remember my trip to Kyoto?",
    "do you still remember what I said",
    "Did I tell you about my sister?",
    "What did I say about the budget?",
    "你还记得吗？",
    "還記得嗎",
    "你记得我喜欢吃什么吗？",
    "你記不記得我的生日",
    "我跟你说过我的生日吗？",
    # greetings / heartbeat
    "hi",
    "Hello there!",
    "Good morning 👋",
    "你好",
    "你好呀～",
    "早上好！",
    "晚安",
    "HEARTBEAT",
    "[heartbeat] ok",
    "heartbeat_ok 2024-03-05",
    # too short / empty
    "",
    "   ",
    "ok",
    "👍👍",
    "拉面",
    "...",
]

NOT_NOISE = [
    "I remember my trip to Kyoto in 2019.",
    "Remember that I like jasmine tea.",
    "我记得去年去了京都",
    "记得带伞",
    "喜欢拉面",
    "爱拉面",
    "User's dog is named Biscuit",
    "主人喜欢拉面",
    "主人喜歡拉麵",
    "I don't have a car, I take the train to work.",
    "I don't have any data plan on my phone",
    "I don't remember names well, so remind me who people are.",
    "我没有时间看这些资料",
    "Sorry is the hardest word - favourite song",
    "Hello Kitty is my niece's favourite toy",
    "The meeting with Bob moved to Friday",
    "Tokyo",
]


@pytest.mark.parametrize("text", NOISE)
def test_noise(text: str) -> None:
    assert is_noise(text), text


@pytest.mark.parametrize("text", NOT_NOISE)
def test_not_noise(text: str) -> None:
    assert not is_noise(text), text


def test_cjk_characters_count_double() -> None:
    assert meaningful_length("喜欢拉面") == 8
    assert meaningful_length("I like it!") == 7
    assert meaningful_length("🍜🍜 ...") == 0


def test_min_chars_is_configurable() -> None:
    assert is_noise("Tokyo", min_chars=6)
    assert not is_noise("拉面", min_chars=4)

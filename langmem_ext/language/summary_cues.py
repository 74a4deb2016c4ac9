"""The bilingual cue words of the model-free summaries and the flush (data only).

Compiled patterns that :mod:`langmem_ext.short_term.extractive`,
:mod:`langmem_ext.short_term.summarizer` and :mod:`langmem_ext.short_term.flush_prompt`
apply to sentences: decision, todo, priority and durable-fact cues, dates, requests,
the summary section headings, the keywords that make a short message worth a
summary and the first-person words of a fact. Chinese (simplified and traditional)
and English. Compiled once at import.
"""

from __future__ import annotations

import re

_MONTHS = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"

DECISION_RE = re.compile(
    r"决定|決定|决策|決策|确定了|確定了|敲定|定下|选定|選定|采用|採用|最终选|最終選"
    r"|\bdecid(?:e|ed|ing)\b|\bdecision\b|\bwe(?: will|'ll| are going to|'re going to)\b"
    r"|\blet'?s go with\b|\bgo(?:ing)? with\b|\bagreed\b|\bsettled on\b|\bchose\b|\bchosen\b"
    r"|\bopted\b|\bfinal answer\b",
    re.IGNORECASE,
)
"""A decision was made."""

TODO_RE = re.compile(
    r"\bTODO\b|\bto-do\b|下一步|待办|待辦|要做|需要|必须|必須|别忘|別忘|记得要|記得要|截止|期限|提醒我"
    r"|\bnext steps?\b|\baction items?\b|\bfollow[- ]up\b|\bneeds? to\b|\bmust\b|\bhave to\b"
    r"|\bhas to\b|\bremind me\b|\bdeadline\b|\bdue (?:on|by|date)\b|\bdon'?t forget\b",
    re.IGNORECASE,
)
"""A task, next step or deadline."""

PRIORITY_RE = re.compile(
    r"优先|優先|紧急|緊急|重要|\bpriorit(?:y|ies|ize|ise)\b|\burgent\b|\basap\b|\bcritical\b"
    r"|\bimportant\b|\bblocker\b",
    re.IGNORECASE,
)
"""Something is a priority."""

DURABLE_RE = re.compile(
    # Chinese: preferences, identity, residence, work, allergies, "remember".
    r"我(?:很|非常|特别|特別|最|也|都|一直|真的)?(?:喜欢|喜歡|不喜欢|不喜歡|讨厌|討厭|爱吃|愛吃|偏好|习惯|習慣)"
    r"|我是(?!说|說|不是)|我叫|我姓|我住在|我住|我来自|我來自|我在.{1,20}?(?:工作|上班|上学|上學|读书|讀書)"
    r"|我的.{1,15}?(?:是|叫|在|为|為)|我们的.{1,15}?(?:是|叫|在|为|為)|我對.{1,15}?過敏|我对.{1,15}?过敏"
    r"|过敏|過敏|我不吃|我不喝|我吃素|记住|記住|请记|請記"
    # Family, friends, colleagues; codes and passwords.
    r"|我(?:的)?(?:女儿|女兒|儿子|兒子|妻子|老婆|丈夫|老公|太太|先生|妈妈|媽媽|爸爸|父亲|父親|母亲|母親"
    r"|哥哥|姐姐|弟弟|妹妹|孩子|朋友|同事|老板|老闆|室友|邻居|鄰居)"
    r"|密码|密碼|门禁|門禁|验证码|驗證碼"
    # English.
    r"|\bI (?:really |also |do |don'?t |do not |absolutely )?(?:like|love|hate|prefer|enjoy|dislike|eat|drink)\b"
    r"|\bmy name is\b|\bcall me\b|\bI live in\b|\bI(?:'m| am) from\b|\ballergic\b"
    r"|\bmy\s+[\w'’ -]{1,40}?\s(?:is|are|was)\b|\bour\s+[\w'’ -]{1,40}?\s(?:is|are)\b"
    r"|\bI work (?:at|for|as|in)\b|\bI(?:'m| am) an? (?!bit\b|little\b|lot\b)\w+"
    r"|\bremember (?:that|this|:|,)|\bplease remember\b|\bkeep in mind\b"
    r"|\bI have (?:a|an|two|three|\d+) (?!question|quick|problem|doubt|idea\b)"
    r"|\bmy (?:wife|husband|partner|son|daughter|mother|mom|mum|father|dad|sister|brother"
    r"|kids?|children|friend|boss|colleague|roommate|neighbou?r)\b"
    r"|\b(?:code|password|passcode|pin)\s+(?:is|=)",
    re.IGNORECASE,
)
"""A durable personal fact or preference."""

DATE_RE = re.compile(
    r"\d{4}\s*[-/.年]\s*\d{1,2}(?:\s*[-/.月]\s*\d{1,2}\s*[日号號]?)?"
    r"|\d{1,2}\s*月\s*\d{1,2}\s*[日号號]"
    rf"|\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\b"
    r"|\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b"
    r"|周[一二三四五六日天]|週[一二三四五六日天]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|禮拜[一二三四五六日天]"
    r"|\b\d{1,2}:\d{2}\b|\d{1,2}\s*[点點]"
    r"|明天|后天|後天|下周|下週|下个月|下個月|今晚|\btomorrow\b|\btonight\b|\bnext (?:week|month|year)\b",
    re.IGNORECASE,
)
"""A date, weekday, time or near-future reference."""

REQUEST_RE = re.compile(
    r"请|請|帮我|幫我|帮忙|幫忙|我想|我要|我需要|能不能|可不可以|如何|怎么|怎麼|为什么|為什麼"
    r"|\bplease\b|\bhelp me\b|\bcan you\b|\bcould you\b|\bwould you\b|\bI want\b|\bI need\b"
    r"|\bI'd like\b|\bhow (?:do|can|to|should)\b|\blet'?s\b",
    re.IGNORECASE,
)
"""The sentence asks for something (a goal candidate)."""

SUMMARY_KEYWORDS_RE = re.compile(
    r"决定|決定|下一步|TODO|优先|優先|\bdecid(?:e|ed|es|ing)\b|\bdecision\b|\bnext steps?\b"
    r"|\bpriorit(?:y|ies)\b",
    re.IGNORECASE,
)
"""Keywords that make even a short message worth a summary."""

FIRST_PERSON_RE = re.compile(r"我|\bI\b|\bI'm\b|\bmy\b|\bme\b|\bwe\b|\bour\b|\bus\b", re.IGNORECASE)
"""The speaker speaks of themself (我 / I / my / we ...): a flush fact candidate."""

NOT_NAMES = frozenset(
    {"I", "I'm", "I’m", "I'd", "I'll", "I've", "OK", "Ok", "AI", "TODO", "Yes", "No", "Hi", "Hey"}
)
"""Capitalised words that are not proper names (:func:`~langmem_ext.short_term.extractive.has_name`)."""

SECTION_NAMES = (
    r"goals?|decisions?|todos?|to-dos?|next steps?|facts?|key facts|"
    r"目标|目標|决定|決定|决策|決策|待办|待辦|待办事项|待辦事項|事实|事實"
)
"""The section headings of a structured summary (English and Chinese), as a regex alternation."""
SUMMARY_HEADING_RE = re.compile(
    r"^\s*(?:#+\s*)?(?:summary|摘要|总结|總結)\s*[:：]?\s*$", re.IGNORECASE
)
"""A bare "Summary" heading line: no item."""


__all__ = [
    "DATE_RE",
    "DECISION_RE",
    "DURABLE_RE",
    "FIRST_PERSON_RE",
    "NOT_NAMES",
    "PRIORITY_RE",
    "REQUEST_RE",
    "SECTION_NAMES",
    "SUMMARY_HEADING_RE",
    "SUMMARY_KEYWORDS_RE",
    "TODO_RE",
]

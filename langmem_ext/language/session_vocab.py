"""The bilingual words of a question about the conversation itself (data only).

What :mod:`langmem_ext.memory.sessions.log` reads a recall question with ("what did I
ask yesterday?", "你上次推荐了什么？"): the phrases that ask about what the user or
the assistant said, the dates to strip, and the time, recall, role and function words
that are no content for keyword overlap (Chinese and English). Compiled once at import.
"""

from __future__ import annotations

import re

from langmem_ext.language.text import STOPWORDS, stem

USER_ROLE_RE = re.compile(
    r"\bwhat did i (?:ask|say|tell|mention|write|send|type|request)"
    r"|\bdid i (?:ask|say|tell|mention|write)\b|\bi (?:asked|said|told|mentioned|wrote)\b"
    r"|\bmy (?:questions?|messages?|requests?)\b"
    r"|我(?:昨天|今天|前天|上次|上回|之前|以前|刚才|刚刚|剛才)?(?:都|又|有)?"
    r"(?:问|問|说|說|提|讲|講|发|發|写|寫|告诉|告訴|要求|请求)"
)
ASSISTANT_ROLE_RE = re.compile(
    r"\bwhat did you (?:say|tell|answer|reply|suggest|recommend|propose|write)"
    r"|\byou (?:said|told|answered|replied|suggested|recommended|proposed)\b"
    r"|\byour (?:answers?|repl(?:y|ies)|suggestions?|advice|recommendations?)\b"
    r"|你(?:昨天|今天|前天|上次|上回|之前|以前|刚才|刚刚|剛才)?(?:都|又|有)?"
    r"(?:说|說|回答|答|建议|建議|推荐|推薦|告诉|告訴|讲|講|提|给|給)"
)
DATE_STRIP_RE = re.compile(
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"
    r"|(?:\d{4}\s*年\s*)?\d{1,2}\s*月\s*\d{1,2}\s*[日号號]"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}"
    r"(?:st|nd|rd|th)?(?:,?\s+\d{4})?\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"[a-z]*\.?(?:,?\s+\d{4})?"
    r"|\b(?:\d+|a|one|two|three|four|five|six|seven|eight|nine|ten)\s+days?\s+ago\b"
    r"|[\d一二两兩三四五六七八九十]+\s*天(?:以)?前",
    re.IGNORECASE,
)
ZH_NOISE_WORDS = """
    还记得 還記得 记不记得 記不記得 记得 記得 大前天 前天 昨天 昨日 昨晚
    昨夜 今天 今日 今晚 今早 上星期 上个星期 上個星期 上礼拜 上禮拜 上周
    上週 这周 這週 本周 本週 这个星期 這個星期 上个月 上個月 上月 本月
    这个月 這個月 上次 上回 之前 以前 刚才 刚刚 剛才 什么时候 什麼時候
    什么 甚麼 什麼 哪些 哪个 哪個 哪里 哪裡 怎么 怎麼 为什么 為什麼 多少
    我们 我們 你们 你們 聊过 聊過 聊了 问过 問過 问了 問了 说过 說過
    说了 說了 提过 提過 提到 讲过 講過 告诉 告訴 回答 建议 建議 推荐
    推薦 请求 要求 关于 關於 一下 一些 聊 问 問 说 說 讲 講 提 过 過
    了 的 吗 嗎 呢 吧 啊 是 我 你 有 在 和 跟 都 又 给 給 对 對
    还 還 哪
"""
"""Chinese time, recall, role and function words removed before keyword overlap."""
ZH_STRIP_RE = re.compile("|".join(sorted(ZH_NOISE_WORDS.split(), key=len, reverse=True)))
EN_NOISE_WORDS = """
    yesterday today tonight morning evening night last time week month previously
    previous earlier before ago day days remember recall ask asked asking say said tell
    told mention mentioned talk talked discuss discussed question message request chat
    conversation again anything something us we answer answered reply replied suggest
    suggested recommend recommended advice
"""
EN_NOISE = frozenset(stem(w) for w in (*EN_NOISE_WORDS.split(), *STOPWORDS))
"""English time, recall and role words (and stopwords) ignored for keyword overlap, in
their keyword form (:func:`~langmem_ext.language.text.stem`)."""

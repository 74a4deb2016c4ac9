"""The bilingual words of recall intent: dates, days, periods and recall phrases (data only).

Compiled patterns and tables that :mod:`langmem_ext.retrieval.intent` applies to a
lower-cased, NFKC-normalised query: explicit dates (ISO, Chinese, English month
names), "3 days ago" / 三天前 with their number words, the named days (yesterday /
昨天, today / 今天, ...), the named weeks and months (last week / 上周, this month /
本月, ...), "last time" / 上次 and the phrases that ask about the past (do you
remember / 还记得 / 聊过 ...). Chinese (simplified and traditional) and English.
Compiled once at import.
"""

from __future__ import annotations

import re

# --- dates -------------------------------------------------------------------------

MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
MONTH = (
    r"(january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
ISO_RE = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
ZH_DATE_RE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]")
EN_MONTH_DAY_RE = re.compile(rf"\b{MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?")
EN_DAY_MONTH_RE = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}(?![a-z])(?:,?\s+(\d{{4}})\b)?"
)

# --- N days ago --------------------------------------------------------------------

CN_DIGITS = {"一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5,
             "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
EN_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
              "seven": 7, "eight": 8, "nine": 9, "ten": 10}  # fmt: skip
EN_AGO_RE = re.compile(
    r"\b(\d{1,4}|a|one|two|three|four|five|six|seven|eight|nine|ten)\s+days?\s+ago\b"
)
ZH_AGO_RE = re.compile(
    r"(\d{1,4}|[一二两兩三四五六七八九]?十[一二三四五六七八九]?|[一二两兩三四五六七八九])\s*天(?:以)?前"
)

# --- named days and periods ---------------------------------------------------------

THREE_DAYS_AGO_RE = re.compile(r"大前天")
DAY_BEFORE_YESTERDAY_RE = re.compile(r"\bthe day before yesterday\b|前天")
YESTERDAY_RE = re.compile(r"\byesterday\b|\blast night\b|昨天|昨日|昨晚|昨夜")
TODAY_RE = re.compile(r"\btoday\b|\btonight\b|\bthis morning\b|今天|今日|今晚|今早")

LAST_WEEK_RE = re.compile(r"\blast week\b|上周|上週|上星期|上个星期|上個星期|上礼拜|上禮拜")
THIS_WEEK_RE = re.compile(r"\bthis week\b|这周|這週|这週|本周|本週|这个星期|這個星期|这礼拜|這禮拜")
LAST_MONTH_RE = re.compile(r"\blast month\b|上个月|上個月|上月")
THIS_MONTH_RE = re.compile(r"\bthis month\b|这个月|這個月|本月")

# --- the past without a date ---------------------------------------------------------

LAST_TIME_RE = re.compile(r"\blast time\b|上次|上回")
RECALL_RE = re.compile(
    r"\b(?:previously|earlier|do you (?:still )?remember|did i (?:ever )?(?:tell|mention|say)"
    r"|what did i|have i (?:told|mentioned))\b"
    r"|之前|以前|还记得|還記得|你记得|你記得|记不记得|記不記得|问过|問過|聊过|聊過"
)

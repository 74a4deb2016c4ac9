"""Recognise texts that are not worth storing or returning as memories.

Noise is: an assistant's refusal ("I don't have any information about that",
"抱歉，我无法…"), a question *about* memory ("Do you remember my trip?",
"你还记得吗？"), a bare greeting ("hi", "你好", "早上好"), a ``HEARTBEAT`` ping, and
text that is too short to mean anything. English and Chinese (simplified and
traditional) are recognised.

Only whole-text patterns count: "I remember my trip to Kyoto" or "我记得去年去了京都"
are memories, not meta questions; "Remember that I like tea" is a request to save.

Length is CJK-aware. A plain rule would drop texts under 5 characters, but four Chinese
characters ("喜欢拉面", "likes ramen") already say as much as a short English phrase.
:func:`meaningful_length` therefore counts letters and digits once and each CJK
character twice (one ideograph carries roughly a word), ignoring spaces,
punctuation and emoji. With the default of 5 a CJK text needs 3 characters
("爱拉面" is kept, "拉面" is not) and a Latin one 5 letters.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from langmem_ext.language.text import is_cjk

_HEARTBEAT_RE = re.compile(r"^\W*heartbeat", re.IGNORECASE)

_GREETING_RE = re.compile(
    r"(?:hi|hii+|hello|hello there|hey|hey there|hiya|howdy|yo|greetings|sup|"
    r"what'?s up|gm|good (?:morning|afternoon|evening|night|day)|morning|evening)"
    r"(?: (?:there|all|everyone|guys|friend|buddy|bot))?"
    r"|(?:你好|您好|大家好|早上好|早安|早|午安|中午好|下午好|晚上好|晚安|嗨|哈喽|哈囉|哈啰|"
    r"嘿|在吗|在嗎|在不在)(?:呀|啊|吖|哇|哦|喔|哈)*"
)

_REFUSAL_RES = (
    # English: the text opens with an assistant-style refusal.
    re.compile(
        r"(?:(?:i'?m |i am |so |very )?sorry |unfortunately |i apologi[sz]e )?(?:but )?"
        r"i (?:don'?t|do not|didn'?t|did not) have (?:any |enough )?(?:specific |relevant |"
        r"personal )?(?:information|info|data|details|records?|memor(?:y|ies)|context|"
        r"knowledge|access)(?: (?:about|on|regarding|of|for|in|to|that|related|yet)\b|$)"
    ),
    re.compile(
        r"(?:(?:i'?m |i am |so |very )?sorry|unfortunately|i apologi[sz]e) (?:but )?i "
        r"(?:can'?t|cannot|can not|am unable|'?m unable|am not able|'?m not able|"
        r"couldn'?t|could not|wasn'?t able|was not able|"
        r"(?:don'?t|do not) (?:know|recall|remember|have))\b"
    ),
    re.compile(
        r"i (?:can'?t|cannot|couldn'?t|could not|wasn'?t able to|was not able to|am unable to|"
        r"'?m unable to) (?:find|locate|recall|access) (?:any|that|this|anything)\b"
    ),
    re.compile(r"as an (?:ai|a\.i\.|language model|assistant)\b"),
    re.compile(
        r"no (?:relevant |matching )?(?:memor(?:y|ies)|results?|information|records?) "
        r"(?:were |was )?found\b"
    ),
    # Whole-text short refusals.
    re.compile(
        r"(?:i (?:don'?t|do not) (?:know|recall|remember)|i'?m not sure|not sure)"
        r"(?: (?:that|this|it|about (?:that|this|it)|anything about (?:that|this|it)))?$"
    ),
    # Chinese (simplified + traditional).
    re.compile(
        r"(?:很抱歉|非常抱歉|抱歉|对不起|對不起|不好意思)\s*(?:但是?\s*)?(?:我|目前|暂时|暫時)?\s*"
        r"(?:无法|無法|不能|没有|沒有|不知道|不清楚|不太清楚|不记得|不記得|找不到|没能|沒能)"
    ),
    re.compile(
        r"我(?:并|並)?(?:没有|沒有)(?:任何|关于|關於|有关|有關|相关|相關|这方面|這方面|你的|您的)"
        r".{0,20}?"
        r"(?:信息|资料|資料|资讯|資訊|记录|記錄|记忆|記憶|数据|數據)"
    ),
    re.compile(
        r"我?(?:不知道|不清楚|不太清楚|不记得了?|不記得了?|不确定|不確定)"
        r"(?:呢|哦|喔|啊|耶|欸|诶|誒)?$"
    ),
    re.compile(r"(?:作为|作為)(?:一个|一個)?\s*(?:ai|人工智能|人工智慧|语言模型|語言模型|助手)"),
    re.compile(
        r"(?:没有|沒有)(?:找到|搜到)(?:任何)?(?:相关|相關)?的?"
        r"(?:记忆|記憶|信息|資訊|资料|資料|结果|結果)"
    ),
)

_META_RES = (
    re.compile(
        r"(?:(?:do|did|can|could|would) you (?:still |even )?(?:remember|recall)|"
        r"(?:have|did) i (?:ever |already )?(?:tell|told|mention(?:ed)?|say|said|share[d]?)"
        r"(?: (?:to )?you)?|what did i (?:tell|say|mention|share)|remember when)\b"
    ),
    # 你还记得…吗？ / 记不记得… / 我跟你说过…吗？ — asked, not told.
    re.compile(r"(?:你|您)?(?:还|還)?(?:记不记得|記不記得)"),
    re.compile(r"(?:你|您)?(?:还|還)?(?:记得|記得).{0,40}?(?:吗|嗎|么|麼|没有|沒有)\W*$"),
    re.compile(
        r"我(?:之前|以前|上次)?(?:有没有|有沒有|是否|有)?(?:跟你|和你|对你|對你|向你)?"
        r"(?:说过|說過|提过|提過|讲过|講過|告诉过你|告訴過你).{0,40}?(?:吗|嗎|么|麼|没有|沒有)\W*$"
    ),
)


def normalize(text: str) -> str:
    """Lower-case ``text`` and keep only words: for whole-text pattern matching.

    Args:
        text: Any text.

    Returns:
        NFKC-normalised, lower-cased text in which every run of characters other
        than letters, digits, CJK and apostrophes became one space, stripped.
    """
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    kept = "".join(ch if ch.isalnum() or ch == "'" else " " for ch in text)
    return " ".join(kept.split())


def meaningful_length(text: str) -> int:
    """Length of ``text`` counting what carries meaning.

    Args:
        text: Any text.

    Returns:
        Letters and digits count 1, CJK characters (ideographs, kana, hangul) 2;
        spaces, punctuation and emoji 0.

    Example:
        >>> meaningful_length("喜欢拉面"), meaningful_length("ok!"), meaningful_length("👍")
        (8, 2, 0)
    """
    return sum(2 if is_cjk(ch) else 1 for ch in text if ch.isalnum())


def is_greeting(text: str) -> bool:
    """Whether ``text`` is only a greeting ("hi there!", "你好呀", "早上好").

    Args:
        text: A message or memory text.

    Returns:
        True when nothing but a greeting (plus punctuation / emoji) is there.
    """
    return _GREETING_RE.fullmatch(normalize(text)) is not None


def is_heartbeat(text: str) -> bool:
    """Whether ``text`` is a ``HEARTBEAT`` ping (``HEARTBEAT``, ``[heartbeat] ok``).

    Args:
        text: A message or memory text.

    Returns:
        True when the text starts with the word heartbeat.
    """
    return _HEARTBEAT_RE.match(text) is not None


def is_refusal(text: str) -> bool:
    """Whether ``text`` is an assistant refusal or "I don't know" answer.

    Args:
        text: A message or memory text.

    Returns:
        True for texts opening with a refusal ("I'm sorry, I can't…",
        "I don't have any information…", "抱歉，我无法…", "我沒有相關的資料") or consisting
        of one ("I don't know.", "我不知道").
    """
    norm = normalize(text)
    return any(p.match(norm) for p in _REFUSAL_RES)


def is_meta_question(text: str) -> bool:
    """Whether ``text`` asks the assistant about its memory instead of stating one.

    Args:
        text: A message or memory text.

    Returns:
        True for "Do you remember…", "Did I tell you…", "你还记得吗？",
        "我跟你说过…吗？"; False for statements such as "I remember my trip to Kyoto".
    """
    norm = normalize(text)
    raw = unicodedata.normalize("NFKC", text).strip()
    return _META_RES[0].match(norm) is not None or any(p.match(raw) for p in _META_RES[1:])


@functools.lru_cache(maxsize=65536)
def is_noise(text: str, *, min_chars: int = 5) -> bool:
    """Whether ``text`` is noise: not worth storing or returning as a memory.

    Args:
        text: A memory text or a search hit.
        min_chars: Texts whose :func:`meaningful_length` is below this are noise
            (CJK characters count double; see the module docstring).

    Returns:
        True for empty or too-short texts, HEARTBEAT pings, bare greetings,
        refusals and questions about memory.

    Example:
        >>> is_noise("I'm sorry, I can't help with that."), is_noise("喜欢拉面")
        (True, False)
    """
    if not text or not text.strip():
        return True
    return (
        is_heartbeat(text)
        or meaningful_length(text) < min_chars
        or is_greeting(text)
        or is_refusal(text)
        or is_meta_question(text)
    )


__all__ = [
    "is_greeting",
    "is_heartbeat",
    "is_meta_question",
    "is_noise",
    "is_refusal",
    "meaningful_length",
    "normalize",
]

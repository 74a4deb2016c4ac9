"""The bilingual answer words of a reply to a save proposal (data only).

What :mod:`langmem_ext.graph.replies` reads a reply with: the normalising tables
(traditional to simplified characters for the answer words, emoji answers, quotes),
the lexicon of answer words and phrases by kind (Chinese words, English phrases),
ordinals and Chinese numbers, the patterns of a reason about an item ("that's…",
"这个很…"), of clauses and of a Chinese question, the English stop words that
name no item, and the words by which an assistant's message asks for an answer
(:mod:`langmem_ext.graph.proposals`). Built once at import.
"""

from __future__ import annotations

import re

# -- normalising -----------------------------------------------------------------------

TRADITIONAL = str.maketrans(
    "記別當確認這個條們沒問題謝對說麼嗎來從給幫請麻煩過敵剩餘兩後筆項號寫儲錄",
    "记别当确认这个条们没问题谢对说么吗来从给帮请麻烦过敌剩余两后笔项号写储录",
)
EMOJI = {
    "👍": " ok ", "👌": " ok ", "✅": " ok ", "🙆": " ok ", "✔": " ok ",
    "👎": " no ", "❌": " no ", "🙅": " no ", "✖": " no ",
}  # fmt: skip
QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'"})
"""Typographic apostrophes and backticks as ``'``."""


# -- lexicon ---------------------------------------------------------------------------
# Kinds: YES (weak yes), YES! (an explicit yes), SAVE (save verb), NO (weak no),
# DONT (an explicit no), NEG (a negation), POLITE, FILL (says nothing), ALL, NONE
# (none of them), OTHERS (the ones not named), ONLY, EXCEPT, JOIN (and), SHIFT (a
# new topic starts: "also", "对了"), REF (a reason about the item: "that's", "这个很"),
# UNSURE (maybe / not sure: answers nothing).

ZH: dict[str, str] = {}
"""Chinese answer word -> its kind (matched longest first inside a run of Chinese)."""
EN: dict[tuple[str, ...], str] = {}
"""English answer phrase (a tuple of words) -> its kind (matched longest first)."""


def _zh(kind: str, words: str) -> None:
    for w in words.split():
        ZH[w] = kind


def _en(kind: str, phrases: str) -> None:
    for p in phrases.split("|"):
        EN[tuple(p.split())] = kind


_zh(
    "YES",
    "好 好的 好啊 好呀 好滴 好哒 好嘞 好吧 好好 嗯 嗯嗯 恩 恩恩 对 对的 对啊 对呀 对对 对对对 "
    "是 是的 是啊 是呀 是滴 可以 可以的 可以啊 行 行啊 行的 行吧 成 要 要的 嗯哼 对头 嗯呐",
)
_zh("YES!", "确认 确定 没问题 没错 没毛病 当然 当然要 同意 需要 就这样 就这么办 必须 必须的")
_zh(
    "SAVE",
    "记住 记下 记下来 记一下 记着 记 保存 保留 存 存下 存下来 存起来 存着 留着 留下 收下 "
    "记录 记录下来 写下来 存好 记上 记好",
)
_zh("NO", "不 不对 不是 没有 否 错了 不行 不可以 不好 不同意 不成")
_zh(
    "DONT",
    "不用 不用了 不要 别 算了 取消 不了 不必 不必了 不需要 没必要 拒绝 放弃 删掉 删了 删除 "
    "删 丢掉 扔掉 千万别 免了 不存 不记 不保存 先不要 先不用 先别 不要了",
)
_zh("UNSURE", "不确定 不一定 不知道 不清楚 不好说 看情况 再说 再想想 考虑 也许 可能 或许")
_zh("POLITE", "谢谢 谢啦 多谢 感谢 麻烦了 麻烦你 麻烦 请 辛苦了 劳驾")
_zh(
    "FILL",
    "吧 啊 呀 了 哦 噢 喔 嘛 的 啦 哈 呗 帮我 给我 一下 起来 下来 这个 这条 那个 那条 这 那 "
    "它 就是 就 一定 务必 把 个 条 些 这些 那些 也 先 还是 呢 唔 哎 诶 欸 一个 这么 这样 嘞",
)
_zh("ALL", "都 全部 全都 所有 统统 全 两个都 两条都 三个都 三条都 都是 全部都")
_zh("OTHERS", "其他 其它 别的 剩下的 剩下 其余 其余的 另一个 另外一个 另一条")
_zh("ONLY", "只要 只 就要 仅 只存 只记")
_zh("EXCEPT", "除了")
_zh("JOIN", "和 跟 与 及 以及 还有 、")
_zh("SHIFT", "另外 对了 顺便 顺便问一下 话说 还有个事")
ZH_REF = re.compile(
    r"^(?:这|那|它|因为)(?:个|条|件事)?(?:很|不|是|太|挺|真|也|蛮|非常|特别|对|可|就|有|没|会|要|重要|都)"
)

_en(
    "YES",
    "yes|y|yeah|yea|yep|yup|ya|yah|yess|yesss|yas|sure|ok|okay|okie|okey|k|kk|alright|"
    "all right|right|righto|correct|good|great|fine|perfect|cool|true|indeed|exactly|totally|aye|"
    "yessir|yes sir|yeah yeah",
)
_en(
    "YES!",
    "confirm|confirmed|absolutely|definitely|certainly|of course|for sure|sure thing|"
    "please do|go ahead|go for it|do it|do that|sounds good|sounds great|that's right|"
    "that is right|that's correct|that is correct|agreed|affirmative|no problem|why not|sounds right|"
    "yes please|you bet|by all means|that works",
)
_en(
    "SAVE",
    "save|keep|remember|store|note|record|add|log|keep it|save it|don't forget|do not forget|"
    "write it down|note it down|hold on to",
)
_en("NO", "no|n|nope|nah|nay|not|wrong|incorrect|never|no way")
_en(
    "DONT",
    "don't|dont|do not|cancel|discard|drop|skip|forget|reject|delete|remove|never mind|"
    "nevermind|no need|don't bother|not now|not necessary|pass|no thanks|no thank you|ditch|"
    "throw away|scrap|leave it|leave it out|not needed|i'm good|i'm fine|i'm ok|i'm okay|"
    "not interested",
)
_en(
    "UNSURE",
    "maybe|perhaps|not sure|i'm not sure|unsure|dunno|idk|i don't know|later|"
    "not yet sure|let me think|hmm maybe",
)
_en("NONE", "neither|none|none of them|neither of them|nothing")
_en("POLITE", "please|pls|plz|thanks|thank you|thx|ty|cheers|thank u")
_en(
    "FILL",
    "it|that|this|them|those|these|one|ones|the|a|an|to|for|me|of|about|with|oh|ah|"
    "um|uh|hmm|well|is|are|be|just that|that one|this one|item|items|entry|option",
)
_en(
    "ALL",
    "all|both|everything|every one|each|all of them|all of it|both of them|all three|"
    "all two|them all|the lot",
)
_en("OTHERS", "others|the others|rest|the rest|other|the other|other one|other ones")
_en("ONLY", "only|just|solely")
_en("EXCEPT", "except|but not|apart from|other than|besides|except for")
_en("JOIN", "and|&|plus|as well as")
_en("SHIFT", "also|btw|by the way|anyway|oh and|and also|another thing")
EN_REF = re.compile(
    r"^(?:that's|that is|that was|it's|it is|it was|it got|this is|because|cause|since)\b"
)

EN_ORD = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
    "4th": 4, "fifth": 5, "5th": 5, "last": -1, "latter": -1, "former": 1,
}  # fmt: skip
ZH_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}  # fmt: skip
ZH_ORD = re.compile(
    r"第([一二两三四五六七八九十]|\d+)(?:个|条|项|件|号)?"
    r"|([一二两三四五六七八九十]|\d+)(?:个|条|项|件|号)(?!都)"
    r"|前([两二三四五]|\d)(?:个|条|项)?"
    r"|最后(?:一)?(?:个|条|项)"
    r"|后([两二三]|\d)(?:个|条|项)"
    r"|\d+"
)
CLAUSE = re.compile(r"[,，:：]+|\bbut\b|但是|但|不过|然后")
QUESTION_ZH = re.compile(
    r"吗|么$|(?<!不)(?:是不是|要不要|好不好|对不对|能不能|可不可以|行不行|会不会)|为什么|什么|哪|几|谁|怎"
)
STOP_WORDS = (
    "a an and are as at be but by for from has have he her his i in is it its me my of on or "
    "our she so that the their them they this to was we were with you your user users that's it's"
)
STOP = frozenset(STOP_WORDS.split())

# -- the proposal ----------------------------------------------------------------------

ASKS_RE = re.compile(r"[?？]|确认|確認|要不要|是否|\bconfirm|\byes\b", re.IGNORECASE)
"""An assistant message that asks the user something (a question mark, confirm / 确认 / 要不要)."""

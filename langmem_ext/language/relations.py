"""The words for a person's relations to someone else, in English and Chinese (data only).

One key per relation, with every common word for it in both languages: the nuclear
family, grandparents and grandchildren, the relatives by marriage (in-laws), step
and extended family, partners, and the people of work, school and home. Chinese
kinship words that say which side of the family a relative is on (奶奶 / 外婆,
婆婆 / 岳母) share the one key of the English word (``grandmother``,
``mother-in-law``): whom a fact is about, not the side, is what search tells apart.
Each key is a person other than the user, except ``pet`` and ``doctor`` (see
:mod:`langmem_ext.memory.safety.facts`).
"""

from __future__ import annotations

RELATION_WORDS: dict[str, str] = {
    # the nuclear family
    "sister": "sister sisters sis 姐姐 妹妹 姐妹 姐 妹 大姐 二姐 小妹",
    "brother": "brother brothers bro 哥哥 弟弟 兄弟 哥 弟 大哥 二哥 小弟",
    "siblings": "sibling siblings 兄弟姐妹 兄妹 姐弟",
    "mother": "mother mom mum mommy mummy mama 妈妈 母亲 妈 老妈",
    "father": "father dad daddy papa 爸爸 父亲 爸 老爸",
    "parents": "parents 父母 爸妈 双亲",
    "wife": "wife 老婆 妻子 太太 媳妇 爱人",
    "husband": "husband 老公 丈夫",
    "partner": "partner spouse boyfriend girlfriend fiance fiancé fiancee fiancée 男朋友 女朋友 "
    "男友 女友 对象 未婚夫 未婚妻 伴侣 配偶",
    "son": "son sons 儿子",
    "daughter": "daughter daughters 女儿 闺女",
    "child": "child children kid kids baby babies toddler 孩子 宝宝 小孩 孩子们 儿女 子女",
    # grandparents and grandchildren
    "grandmother": "grandmother grandma granny nana 奶奶 外婆 姥姥 祖母 外祖母",
    "grandfather": "grandfather grandpa granddad grandad 爷爷 外公 姥爷 祖父 外祖父",
    "grandparents": "grandparents 祖父母 外祖父母 爷爷奶奶 外公外婆 姥姥姥爷",
    "grandson": "grandson grandsons 孙子 外孙",
    "granddaughter": "granddaughter granddaughters 孙女 外孙女",
    "grandchild": "grandchild grandchildren grandkid grandkids 孙辈 孙子孙女",
    # relatives by marriage
    "mother-in-law": "mother-in-law 婆婆 岳母 丈母娘",
    "father-in-law": "father-in-law 公公 岳父 丈人 老丈人",
    "parents-in-law": "in-laws parents-in-law 公婆 岳父母",
    "sister-in-law": "sister-in-law 嫂子 嫂嫂 弟媳 弟妹 小姑子 大姑子 小姨子 大姨子 妯娌",
    "brother-in-law": "brother-in-law 姐夫 妹夫 小叔子 大伯子 小舅子 大舅子 连襟",
    "son-in-law": "son-in-law 女婿",
    "daughter-in-law": "daughter-in-law 儿媳 儿媳妇",
    # step and extended family
    "stepmother": "stepmother stepmom stepmum step-mother 继母 后妈",
    "stepfather": "stepfather stepdad step-father 继父 后爸",
    "stepchild": "stepson stepdaughter stepchild stepchildren 继子 继女",
    "stepsibling": "stepsister stepbrother stepsiblings 继兄 继姐 继妹 继弟",
    "aunt": "aunt auntie aunty 阿姨 姑姑 姨妈 舅妈 婶婶 伯母 姑妈 小姨",
    "uncle": "uncle 叔叔 舅舅 伯伯 伯父 叔父 姑父 姨父 姑丈 姨丈",
    "cousin": "cousin cousins 表哥 表姐 表妹 表弟 堂哥 堂姐 堂妹 堂弟 表兄弟 堂兄弟 表姐妹 堂姐妹",
    "nephew": "nephew nephews 侄子 外甥 侄儿",
    "niece": "niece nieces 侄女 外甥女",
    "relatives": "relative relatives 亲戚 亲人",
    # the people of work, school and home
    "friend": "friend friends buddy bestie 朋友 好友 闺蜜 哥们 好朋友 发小",
    "colleague": "colleague colleagues coworker coworkers co-worker co-workers teammate "
    "teammates 同事",
    "boss": "boss manager supervisor 老板 领导 上司",
    "classmate": "classmate classmates 同学 同桌",
    "roommate": "roommate flatmate housemate 室友 舍友",
    "neighbour": "neighbour neighbor neighbours neighbors 邻居",
    "family": "family 家人 家里人",
    "pet": "pet dog cat puppy kitten 宠物 狗 猫 狗狗 猫咪",
    "doctor": "doctor 医生 大夫",
    "guest": "guest guests 客人",
}
"""Relation key -> its words in both languages (whitespace-separated)."""

NOT_PERSONS = frozenset({"pet", "doctor"})
"""Keys that are not another person whose facts are set apart from the user's: a pet
is the user's own, and "医生说我…" states the user's fact."""


def relation_index() -> dict[str, str]:
    """Each relation word -> its key (:data:`RELATION_WORDS`).

    Example:
        >>> idx = relation_index()
        >>> idx["婆婆"], idx["mother-in-law"], idx["外孙"]
        ('mother-in-law', 'mother-in-law', 'grandson')
    """
    out: dict[str, str] = {}
    for key, words in RELATION_WORDS.items():
        for w in words.split():
            out.setdefault(w, key)
    return out


__all__ = ["NOT_PERSONS", "RELATION_WORDS", "relation_index"]

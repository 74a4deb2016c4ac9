"""The bilingual vocabulary of safety facts and questions (data only).

Word lists, compiled patterns and the gates that :mod:`langmem_ext.memory.safety.facts`
applies: relations (one key per relation in both languages), subject markers, the
words that make a generic verb's object a drug or a condition, the statement rules
per field, the per-field word gates and the question cues. Compiled once at import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from langmem_ext.language.relations import relation_index


def split_words(text: str) -> frozenset[str]:
    """The words of a whitespace-separated list."""
    return frozenset(text.split())


RELATIONS: dict[str, str] = relation_index()
"""Each relation word -> its key (:mod:`langmem_ext.language.relations`)."""

REL_EN = "|".join(sorted((w for w in RELATIONS if w.isascii()), key=len, reverse=True))
REL_ZH = "|".join(sorted((w for w in RELATIONS if not w.isascii()), key=len, reverse=True))
REL_ZH_PERSON = "|".join(
    sorted(
        (w for w, k in RELATIONS.items() if not w.isascii() and k != "pet"), key=len, reverse=True
    )
)
"""Relations that are people (a pet's word is also what one is allergic to: 对猫过敏)."""

# markers of whom a clause is about, found in the text before the cue
MARKERS_EN = re.compile(
    rf"\b(?P<rel>(?:my|our|his|her|their|your)\s+(?:(?:little|older|younger|big|best|elder|"
    rf"twin|step|new|old)\s+)?(?:{REL_EN}))\b(?!')"
    rf"|\b(?P<relpos>(?:my|our|his|her|their)\s+(?:{REL_EN}))'s\b"
    r"|\b(?P<user>the user|user|the owner|myself|me|i|i'm|i've|i'd|i'll|we|we're|we've|us)\b"
    r"|\b(?P<mine>my|our)\b"
    r"|\b(?P<other>he|she|they|him|her|them|his|their|he's|she's|they're)\b",
    re.IGNORECASE,
)
MARKERS_ZH = re.compile(
    rf"(?P<rel>(?:我|我们|他|她|他们|她们)?的?(?:{REL_ZH}))"
    r"|(?P<user>主人|用户|本人|自己|我们|咱们|我)"
    r"|(?P<other>他们|她们|他|她|它)"
)
NAME_EN = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*\b")
NOT_NAME = split_words(
    """a an the i i'm my our we he she they his her their it its this that these those
    also and but so since after before in on at for of to from with by as or if when while
    yes no not never ever always now then today yesterday currently recently still just
    last next every each some any all both many much more most few severe mild serious
    does do did is are was were am be been has have had can could will would should may
    might must what which who whom whose where why how tell list please remind know
    allergic allergy allergies medication medications medicine medicines surgery surgeries
    operation diet vegetarian vegan diagnosed dr mr mrs ms note notes user owner
    monday tuesday wednesday thursday friday saturday sunday january february march april
    june july august september october november december"""
)
FILLER_ZH = re.compile(
    r"现在|目前|一直|从小|小时候|也|还|都|每天|平时|已经|去年|今年|前年|之前|以前|最近|其实|好像|"
    r"有点|有些|比较|特别|非常|很|严重|轻微|据说|听说|医生说|确实|可能|应该|本来|原来|后来|"
    r"那时|当时|同时|另外|而且|并且|但是|但|不过|所以|因为|如果|然后|就|才|又|再|对|有|是|"
    r"得|的|了|会|在|过|什么|哪些|哪|吗|呢|吧|没有|没|任何|不|请问|问一下|记得|知道|"
    r"告诉|一下|一些|些|多少|几|个|种|情况|方面|东西|食物|药物|岁|时|候|年|月|日|号|\d+|"
    r"[，,、。！？?!：:；;\s]"
)


VERB = re.compile(
    r"(?:'s\b|\s+(?:is|was|has|had|have|takes|took|gets|got|needs|uses|does|doesn't|can't|"
    r"cannot|must|should|will|says|said|and|also|still|just|now|suffers|underwent)\b)"
)
LABELS = split_words(
    """note notes summary fact facts reminder update important warning health medical
    history profile info update 备注 注意 提醒 总结 健康 病史 重要"""
)
USER_SPEAKERS = frozenset({"user", "me", "i", "我", "用户", "主人", "human"})


ITEM_SPLIT = re.compile(
    r"\s*(?:,\s*(?:and|or)\s+|,|;|\band\b|\bor\b|\bas well as\b|&|/|、|，|和|与|及|以及|还有|跟|或者|或)\s*",
    re.IGNORECASE,
)
LEAD_EN = re.compile(
    r"^(?:(?:to|my|his|her|their|our|a|an|the|some|any|all|both|severe|mild|serious|bad|"
    r"slight|slightly|very|really|also|still|now|currently|daily|regularly|certain|kinds of|"
    r"kind of|types of|type of|most|several|lots of|a lot of|of)\s+)+",
    re.IGNORECASE,
)
TRAIL_EN = re.compile(
    r"(?:\s+(?:too|as well|also|now|anymore|any more|daily|every (?:day|morning|evening|night|"
    r"week)|each (?:day|morning|evening|night)|once a day|twice a day|(?:once|twice|\w+ times) "
    r"(?:a|per) (?:day|week)|in the (?:morning|evening)|at night|for years|for (?:a|the) "
    r"(?:long )?(?:time|while)|since (?:\d{4}|childhood|i was \w+|birth|\w+ years?)|in \d{4}|"
    r"last (?:year|month|week|spring|summer|autumn|fall|winter)|years? ago|\w+ (?:years|months|"
    r"weeks) ago|as a (?:kid|child)|when i was \w+(?: \w+)?|apparently|though|actually|"
    r"unfortunately|i think|i guess|right now|these days|for now))+$",
    re.IGNORECASE,
)
LEAD_ZH = re.compile(
    r"^(?:一直|每天|每日|早上|晚上|睡前|饭后|饭前|长期|定期|按时|规律|也|还|都|在|正在|有|一点|"
    r"一些|有些|有点|严重|轻微|比较|特别|非常|很|了|各种|一种|一片|两片|一粒|两粒|一颗|一支|"
    r"一次|两次|三次|\d+\s*(?:mg|毫克|片|粒|颗|次))+"
)
TRAIL_ZH = re.compile(
    r"(?:了|啦|呢|哦|啊|呀|的|的药|等|等等|什么的|之类的|一类|过敏|也|都|每天|一次|两次|很久|多年|好几年|"
    r"好多年|\d+年|几年|去年|前年|小时候|以来|手术)+$"
)
MEALS = split_words(
    """breakfast lunch dinner supper brunch meals meal out late much anything after before
    at in fast junk snacks 早饭 早餐 午饭 午餐 晚饭 晚餐 夜宵 宵夜 饭 东西 零食 太多 太晚 快餐"""
)


GENERIC = split_words(
    """food foods things stuff something anything everything it them that this some any
    medication medications medicine medicines meds drugs pills surgery surgeries operation
    operations allergy allergies condition conditions diet 东西 食物 药 药物 手术 什么"""
)


# --- evidence words ----------------------------------------------------------------

DRUG_SUFFIXES = (
    "cillin|mycin|micin|cycline|floxacin|azole|prazole|pril|sartan|olol|dipine|statin|formin|"
    "gliptin|glitazone|oxetine|azepam|zolam|barbital|parin|xaban|triptan|tidine|afil|tinib|"
    "terol|tropium|semide|thiazide|thyroxine|profen|fenac"
)
DRUG_WORDS = (
    "aspirin|ibuprofen|paracetamol|acetaminophen|tylenol|advil|motrin|aleve|naproxen|insulin|"
    "warfarin|coumadin|lithium|morphine|codeine|melatonin|antibiotics?|antidepressants?|"
    "antihistamines?|blood thinners?|birth control|the pill|inhalers?|epipen|steroids?|"
    r"beta[- ]blockers?|vitamins?(?: [a-z]\d*)?|supplements?|chemo(?:therapy)?|eye ?drops|"
    "ozempic|wegovy|xanax|prozac|zoloft|lexapro|adderall|ritalin|lipitor|zyrtec|claritin|"
    "benadryl|allegra|plavix|eliquis|xarelto|synthroid|prednisone|pills?|tablets?|capsules?|"
    "medications?|medicines?|meds|drugs?|prescriptions?|injections?"
)
DRUG_EN = re.compile(
    rf"\w(?:{DRUG_SUFFIXES})\b|\b(?:{DRUG_WORDS}|\d+\s?(?:mg|mcg|µg|ml|iu))\b", re.IGNORECASE
)
DRUG_ZH = re.compile(
    r"药|胶囊|颗粒|口服液|注射液|针剂|滴眼液|胰岛素|抗生素|激素|维生素|霉素|西林|沙星|他汀|"
    r"双胍|普利|洛尔|地平|沙坦|拉唑|匹林|洛芬|西泮|安定|华法林|头孢|褪黑素|钙片|鱼油|化疗"
)
CONDITION_SUFFIXES = (
    "itis|culosis|oliosis|oporosis|ometriosis|rrhosis|fibrosis|thrombosis|sclerosis|stenosis|"
    "psoriasis|kemia|glycemia|lipidemia|anemia|anaemia|opathy|myalgia|neuralgia|melanoma|"
    "lymphoma|carcinoma|myeloma|sarcoma|glaucoma"
)
CONDITION_WORDS = (
    "diabetes|asthma|hypertension|hypotension|high (?:blood pressure|cholesterol)|"
    "low blood pressure|epilepsy|seizures|cancer|depression|anxiety|adhd|autism|migraines?|copd|"
    "lupus|hiv|eczema|dementia|alzheimer'?s|parkinson'?s|celiac|coeliac|gout|insomnia|"
    "cataracts?|ptsd|ocd|bipolar(?: disorder)?|schizophrenia|obesity|arrhythmia|angina|ibs|"
    "crohn'?s|pcos|tinnitus|vertigo|sleep apnea|hypothyroidism|hyperthyroidism|hemophilia|"
    "heart (?:disease|condition|problems?|failure|murmur)|type [12] diabetes|long covid|"
    "disease|disorder|syndrome|deficiency|insufficiency"
)
CONDITION_EN = re.compile(rf"(?:{CONDITION_SUFFIXES})\b|\b(?:{CONDITION_WORDS})\b", re.IGNORECASE)
CONDITION_ZH = re.compile(
    r"(?<!生|毛|疾)病(?!毒)|症|炎|癌|瘤|综合征|综合症|障碍|不全|不齐|结石|硬化|失调|高血压|低血压|"
    r"哮喘|癫痫|抑郁|焦虑|贫血|痛风|偏头痛|湿疹|高血脂|高血糖|低血糖|失眠|甲亢|甲减|中风|艾滋|乙肝|"
    r"青光眼|帕金森|阿尔茨海默|自闭|心衰|房颤|早搏"
)
ADJ_CONDITIONS = {
    "diabetic": "diabetes",
    "asthmatic": "asthma",
    "epileptic": "epilepsy",
    "anemic": "anemia",
    "anaemic": "anemia",
    "hypertensive": "hypertension",
    "celiac": "celiac disease",
    "coeliac": "celiac disease",
    "autistic": "autism",
    "bipolar": "bipolar disorder",
    "hypoglycemic": "hypoglycemia",
}
DIETS_EN = (
    r"vegetarian|vegan|pescatarian|pescetarian|halal|kosher|gluten[- ]free|dairy[- ]free|"
    r"lactose[- ]free|nut[- ]free|sugar[- ]free|keto(?:genic)?|paleo|low[- ](?:sodium|salt|sugar|"
    r"carb|fat|fodmap|purine|protein)|plant[- ]based"
)
DIETS_ZH = {
    "吃素": "素食",
    "素食": "素食",
    "全素": "纯素",
    "纯素": "纯素",
    "吃斋": "素食",
    "清真": "清真",
    "无麸质": "无麸质",
    "低盐": "低盐饮食",
    "低糖": "低糖饮食",
    "低脂": "低脂饮食",
    "乳糖不耐": "乳糖不耐受",
}

# --- statement rules ---------------------------------------------------------------
# Named groups: o (the items), n (negation), d (a fixed item: a diet, an adjective),
# me (the user is the patient: "prescribed me"), s (the surgery word), on (its site).

END_EN = (
    r"(?=\s*(?:$|[.;!?\n]|,?\s+(?:but|because|since|so|although|though|while|which|who|when|"
    r"after|before|until|if|whereas)\b|,\s*(?:and\s+)?(?:i|my|he|she|they|his|her|their|we|our)\b"
    r"|\s+and\s+(?:i|my|he|she|they|his|her|we|our)\b))"
)
O_EN = rf"(?P<o>[^.;!?\n]{{1,80}}?){END_EN}"
O_ZH = r"(?P<o>[^，,。！!？?；;：:\s]{1,24}?)"
O_ZH_END = r"(?P<o>[^，,。！!？?；;\s]{1,30})"
NEG_EN = r"(?P<n>not |no longer |never |never been |n't |not been )?"
NOT_ITEM = (
    r"(?:i|i'm|i've|my|have|has|had|no|not|any|some|a|an|the|severe|mild|serious|bad|"
    r"several|multiple|many|few|with|without|zero|don't|doesn't|do|does|is|are|am|was|got)\b"
)
ZH_LEAD = re.compile(
    rf"^(?:(?:我们|我|他们|她们|他|她|主人|用户|自己|本人)(?:的)?(?:{REL_ZH})?|(?:{REL_ZH_PERSON}))?"
    r"(?:有|是|的|也|还|都|一直|从小|现在|目前|没有|没|不再|不|无|任何|一点|有点)*"
)


@dataclass(frozen=True)
class Rule:
    """One statement pattern of a field, in one language (see the named groups above)."""

    field: str
    lang: str
    pattern: re.Pattern[str]
    strong: bool = True
    """``False``: a generic verb (take / have / 吃 / 有): an item counts only when it
    names a drug or a condition."""


def rule(field: str, lang: str, pattern: str, strong: bool = True) -> Rule:
    """A :class:`Rule` with its pattern compiled (case-insensitive)."""
    return Rule(field, lang, re.compile(pattern, re.IGNORECASE), strong)


RULES: tuple[Rule, ...] = (
    # allergies
    rule("allergies", "en", rf"\b{NEG_EN}(?:\w+ )?allergic (?:to|with) {O_EN}"),
    rule("allergies", "en", rf"\b(?:allergy|allergies|allergic reactions?) (?:to|from) {O_EN}"),
    rule("allergies", "en", rf"\ballergies(?: are| include| list)?\s*(?::|are|include)\s*{O_EN}"),
    rule("allergies", "en", r"(?P<n>\bno\s+|\bnot any\s+|\bzero\s+|\bwithout\s+(?:any\s+)?)?"
          rf"\b(?P<o>(?:(?!{NOT_ITEM})[a-z][\w-]*\s+){{0,2}}?)(?:food\s+|drug\s+|known\s+)?"
          r"(?:allergy|allergies)\b(?!\s+(?:to|from|are|include|:))"),
    rule("allergies", "en", r"\b(?:am|'m|is|are|was|were|be|been|got|get|gets|getting)\s+"
          rf"{NEG_EN}(?:\w+\s+)?allergic\b(?!\s+(?:to|with|reaction))"),
    rule("allergies", "zh", rf"(?P<n>不再|已经不|不|没有|没|从不|并不)?对{O_ZH}(?:有)?(?:一点|"
          r"有点|有些|严重|轻微|轻度|比较|特别|非常|很)?(?:过敏|过敏反应)"),
    rule("allergies", "zh", r"过敏(?:原|源|物)?(?:是|为|有|包括|：|:)\s*" + O_ZH_END),
    rule("allergies", "zh", r"(?P<n>没有|没|不|无)?(?:任何)?(?P<o>[\u4e00-\u9fffA-Za-z]{0,8}?)"
          r"过敏(?!原|源|物|反应|药|性|科|测试|检查)"),
    # medications
    rule("medications", "en", rf"\b(?P<me>prescribed me|put me on|started me on) {O_EN}"),
    rule("medications", "en", rf"\bprescribed {O_EN}"),
    rule("medications", "en", rf"\b(?:medications?|medicines?|meds|prescriptions?)(?: are| is|"
          rf" include)?\s*(?::|are|is|include)\s*{O_EN}"),
    rule("medications", "en", r"\b(?P<n>stopped |quit |no longer |don't |do not |doesn't |"
          r"does not |never |came off |went off |not )?(?:take|takes|taking|took|use|uses|using|"
          r"be on|am on|'m on|is on|are on|been on|was on|were on|still on|carry|carries|"
          rf"inject|injects) {O_EN}", strong=False),
    rule("medications", "zh", r"(?P<me>给我开了?|给我开过)" + O_ZH_END, strong=False),
    rule("medications", "zh", r"(?P<n>停了|停用|不再|已经不|没有|没|不)?(?:在|一直|长期|每天|按时)?"
          r"(?:服用|口服|注射)(?:着)?" + O_ZH_END),
    rule("medications", "zh", r"(?P<n>停了|停用|不再|已经不|没有|没|不)?(?:在|一直|长期|每天|按时)?"
          r"(?:吃|用|打|喷|滴|开了|开过)(?:着)?" + O_ZH_END, strong=False),
    rule("medications", "zh", r"(?:用药|药物|吃的药|服用的药|在吃的药)(?:是|有|包括|：|:)\s*"
          + O_ZH_END),
    # conditions
    rule("medical_conditions", "en", r"\b(?:diagnosed with|suffer from|suffers from|suffering "
          rf"from|battling|treated for|being treated for) {O_EN}"),
    rule("medical_conditions", "en", r"\b(?:am|'m|is|are|was|been|became)\s+(?:a\s+|an\s+)?"
          r"(?P<d>diabetic|asthmatic|epileptic|anemic|anaemic|hypertensive|celiac|coeliac|"
          r"autistic|bipolar|hypoglycemic)\b"),
    rule("medical_conditions", "en", r"\b(?:conditions?|diagnosis|diagnoses)(?: are| is| include)?"
          rf"\s*(?::|are|is|include)\s*{O_EN}"),
    rule("medical_conditions", "en", r"\b(?P<n>don't |do not |doesn't |does not |no longer |"
          r"never )?(?:have|has|had|got|developed|'ve got|'ve had|have had|has had|living with|"
          rf"live with|lives with) {O_EN}", strong=False),
    rule("medical_conditions", "zh", r"(?P<n>没有|没|不再)?(?:患有|患了|患过|确诊(?:了|为|出)?|"
          r"诊断(?:出|为)(?:了)?|查出(?:了|来)?)" + O_ZH_END),
    rule("medical_conditions", "zh", r"(?P<n>没有|没|不再)?(?:有|得了|得过)" + O_ZH_END,
          strong=False),
    # diets
    rule("dietary_restrictions", "en", r"\b(?:am|'m|is|are|was|been|became|become|went|gone|"
          r"turned|stay|stays|eat|eats|keep|keeps|follow|follows|following|on|strictly|strict|"
          rf"only eat|only eats)\s+(?:a\s+|an\s+|strictly\s+|strict\s+|fully\s+)?(?P<d>{DIETS_EN})"
          r"\b(?:\s+diet)?"),
    rule("dietary_restrictions", "en", r"\b(?:am|'m|is|are)\s+(?P<d>lactose intolerant|gluten "
          r"intolerant|(?:\w+ )?intolerant to \w+)"),
    rule("dietary_restrictions", "en", r"\b(?:on|follow|follows|following|keep|keeps)\s+(?:a\s+|"
          r"an\s+|strict\s+)?(?P<o>[\w-]+(?: [\w-]+)?) diet\b"),
    rule("dietary_restrictions", "en", r"\b(?P<x>don't|do not|doesn't|does not|can't|cannot|"
          r"can not|never|mustn't|must not|shouldn't|should not|won't|no longer) (?:eat|eats|"
          rf"drink|drinks|touch|consume)\s+{O_EN}"),
    rule("dietary_restrictions", "en", rf"\bdiet(?:ary restrictions?)?(?: is| are)?\s*(?::|is|are)"
          rf"\s*{O_EN}"),
    rule("dietary_restrictions", "zh", r"(?P<d>吃素|素食|全素|纯素|吃斋|清真|无麸质|低盐|低糖|"
          r"低脂|乳糖不耐)"),
    rule("dietary_restrictions", "zh", r"(?P<x>不能吃|不可以吃|不吃|不喝|不能喝|忌口|戒了|禁食|"
          r"避免吃)" + O_ZH_END),
    # surgeries
    rule("surgeries", "en", r"\b(?P<n>never |not |no |haven't |hasn't |have not |has not )?(?:had|"
          r"have had|'ve had|has had|underwent|undergone|got|went through|go through|getting|"
          r"scheduled for|recovering from|recovered from)\s+(?:a\s+|an\s+|my\s+|his\s+|her\s+|"
          r"the\s+|two\s+|three\s+|several\s+|some\s+|any\s+|major\s+|minor\s+)?"
          r"(?P<o>[\w'-]+(?:\s[\w'-]+){0,3}?)?\s*(?P<s>(?:(?:bypass|transplant|replacement)\s+)?"
          r"(?:surgery|surgeries|operation|operations)|transplant|bypass|replacement)\b(?:\s+on\s+(?:my|his|her|their|the)\s+"
          r"(?P<on>[\w-]+(?:\s[\w-]+)?))?"),
    rule("surgeries", "en", r"\b(?:had|have had|'ve had|has had|got)\s+(?:my|his|her|their|the|a|"
          r"an)\s+(?P<o>[\w-]+(?:\s[\w-]+){0,2}?)\s+(?P<s>removed|replaced|taken out|operated on|"
          r"amputated|repaired|transplanted|fused)\b"),
    rule("surgeries", "en", r"\b(?P<o>\w+(?:ectomy|ectomies|plasty|otomy|ostomy))\b"),
    rule("surgeries", "en", r"\boperated on (?:my|his|her|their|the)?\s*(?P<on>[\w-]+(?:\s[\w-]+)?)"),
    rule("surgeries", "zh", r"(?P<n>没有|没|从没|从来没|不曾)?(?:做过|做了|动过|动了|接受过|接受了|"
          r"做|动)(?:了)?(?:一次|两次|个|场)?(?P<o>[^，,。！!？?；;\s]{0,12}?)(?P<s>手术)"),
    rule("surgeries", "zh", r"(?P<n>没有|没|从没|从来没)?(?P<s>开过刀|开了刀|动过刀|挨过刀)"),
    rule("surgeries", "zh", r"(?P<o>[\u4e00-\u9fff]{1,8}?)(?:被)?(?P<s>切除|摘除|切掉|摘掉|移植|"
          r"置换)(?:了)?"),
    rule("surgeries", "zh", r"(?P<s>切除|摘除|切掉|摘掉)了?(?P<o>[\u4e00-\u9fff]{1,8})"),
)  # fmt: skip


@dataclass(frozen=True)
class Gate:
    """The words without which a field's rules cannot match: checked on a sentence's
    words (set look-ups and prefix / suffix tests) before any rule runs, since most
    memories state no safety fact."""

    words: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    zh: tuple[str, ...] = ()
    needs: frozenset[str] = frozenset()
    """With ``words`` only: a word of these must be there too ("don't" + "eat")."""

    def opens(self, words: frozenset[str], tails: frozenset[str], heads: frozenset[str],
              text: str, cjk: bool) -> bool:  # fmt: skip
        """Whether a sentence (its words, their last and first four letters, its
        case-folded text) may state the field."""
        if cjk and any(cue in text for cue in self.zh):
            return True
        hit = (
            not self.words.isdisjoint(words)
            or (self.suffixes and not tails.isdisjoint(x[-4:] for x in self.suffixes)
                and any(w.endswith(self.suffixes) for w in words))
            or (self.prefixes and not heads.isdisjoint(x[:4] for x in self.prefixes)
                and any(w.startswith(self.prefixes) for w in words))
        )  # fmt: skip
        return bool(hit) and (not self.needs or not self.needs.isdisjoint(words))


GATES: dict[str, tuple[Gate, ...]] = {
    "allergies": (Gate(prefixes=("allerg",), zh=("过敏",)),),
    "medications": (
        Gate(
            words=split_words(
                "meds pill pills tablet tablets capsule capsules insulin inhaler inhalers "
                "aspirin ibuprofen paracetamol acetaminophen tylenol advil motrin aleve naproxen "
                "warfarin coumadin lithium morphine codeine melatonin epipen steroid steroids "
                "thinner thinners birth vitamin vitamins supplement supplements chemo "
                "chemotherapy drops ozempic wegovy xanax prozac zoloft lexapro adderall ritalin "
                "lipitor zyrtec claritin benadryl allegra plavix eliquis xarelto synthroid "
                "prednisone drug drugs injection injections mg mcg ml iu blocker blockers"
            ),
            prefixes=("prescri", "medic", "antibiotic", "antidepress", "antihistamin"),
            suffixes=tuple(DRUG_SUFFIXES.split("|")),
            zh=(*DRUG_ZH.pattern.split("|"), "服用", "口服", "注射"),
        ),
    ),
    "medical_conditions": (
        Gate(
            words=split_words(
                "suffer suffers suffering battling treated condition conditions diabetic "
                "asthmatic epileptic anemic anaemic hypertensive autistic hypoglycemic bipolar "
                "diabetes asthma hypertension hypotension cholesterol epilepsy seizures "
                "cancer depression anxiety adhd autism migraine migraines copd lupus hiv eczema "
                "dementia alzheimer's alzheimers parkinson's parkinsons celiac coeliac gout "
                "insomnia cataract cataracts ptsd ocd schizophrenia obesity arrhythmia angina "
                "ibs crohn's crohns pcos tinnitus vertigo apnea hypothyroidism hyperthyroidism "
                "hemophilia disease disorder syndrome deficiency insufficiency covid"
            ),
            prefixes=("diagnos",),
            suffixes=tuple(CONDITION_SUFFIXES.split("|")),
            zh=(
                *CONDITION_ZH.pattern.replace("(?<!生|毛|疾)", "").replace("(?!毒)", "").split("|"),
                "患",
                "确诊",
                "诊断",
                "查出",
            ),
        ),
        Gate(words=split_words("pressure"), needs=split_words("blood")),
        Gate(
            words=split_words("heart"),
            needs=split_words("condition problem problems failure murmur attack"),
        ),
    ),
    "dietary_restrictions": (
        Gate(
            words=split_words(
                "diet diets dietary vegetarian vegan pescatarian pescetarian halal kosher "
                "gluten-free gluten dairy-free dairy lactose lactose-free nut-free sugar-free "
                "keto ketogenic paleo low-sodium low-salt low-sugar low-carb low-fat low-fodmap "
                "low-purine low-protein plant-based intolerant"
            ),
            zh=(
                "吃素",
                "素食",
                "全素",
                "纯素",
                "吃斋",
                "清真",
                "无麸质",
                "低盐",
                "低糖",
                "低脂",
                "乳糖不耐",
                "不能吃",
                "不可以吃",
                "不吃",
                "不喝",
                "不能喝",
                "忌口",
                "戒了",
                "禁食",
                "避免吃",
            ),
        ),
        Gate(
            words=split_words("eat eats drink drinks touch consume"),
            needs=split_words(
                "don't dont not doesn't can't cannot never mustn't must shouldn't won't longer"
            ),
        ),
        Gate(words=split_words("low"), needs=split_words("diet")),
    ),
    "surgeries": (
        Gate(
            words=split_words(
                "bypass removed replaced amputated repaired transplant transplants transplanted "
                "fused operated"
            ),
            prefixes=("surg", "operation"),
            suffixes=("ectomy", "ectomies", "otomy", "ostomy", "plasty"),
            zh=("手术", "刀", "切除", "摘除", "切掉", "摘掉", "移植", "置换"),
        ),
        Gate(words=split_words("taken"), needs=split_words("out")),
    ),
}
PUNCT = str.maketrans({c: " " for c in '.,;:!?"()[]{}<>/\\|*&^%$#@~`=+，。！？；：、（）“”‘「」'})
ALL_WORDS = frozenset().union(*(g.words for gs in GATES.values() for g in gs if not g.needs))
PAIRED = tuple(g for gs in GATES.values() for g in gs if g.needs)
SUFFIXES = tuple(sorted({x for gs in GATES.values() for g in gs for x in g.suffixes}))
PREFIXES = tuple(sorted({x for gs in GATES.values() for g in gs for x in g.prefixes}))
TAILS = frozenset(x[-4:] for x in SUFFIXES)
HEADS = frozenset(x[:4] for x in PREFIXES)
ZH_CUES = re.compile("|".join(sorted({x for gs in GATES.values() for g in gs for x in g.zh})))

CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")
SENTENCES = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)\s+(?=[A-Z\u4e00-\u9fff])")
SURGERY_DONE = ("removed", "replaced", "taken out", "operated on", "amputated", "repaired",
                 "transplanted", "fused")  # fmt: skip
STATES_SOME = re.compile(
    r"(?:\b(?:have|has|had|got|with|my|his|her|their|our|of|am|'m|is|are|was|were)\s+"
    r"(?:\w+\s+)?|[我他她]|有)$",
    re.IGNORECASE,
)


QUESTION = re.compile(
    r"[?？]\s*$|吗[。？?]?\s*$|^\s*(?:what|which|who|do|does|did|is|are|am|can|could|should|any|"
    r"have|has|how|tell me|list)\b",
    re.IGNORECASE,
)


TOPIC_CUES: dict[str, re.Pattern[str]] = {
    f: re.compile(p, re.IGNORECASE)
    for f, p in {
        "allergies": r"allerg|anaphyla|epipen|过敏",
        "medications": r"\bmedications?\b|\bmedicines?\b|\bmeds\b|\bdrugs?\b|\bpills?\b|tablets?\b|capsules?\b|prescri|"
        r"\bdose\b|dosage|\binject|insulin|\binhaler|(?<![火炸农弹])药(?![店房厂])|服用|胰岛素|处方",
        "medical_conditions": r"diagnos|\bdiseases?\b|disorder|syndrome|\bconditions?\b|illness|"
        r"\bsuffer|\bchronic(?:ally)?\b|health (?:problem|issue)|medical history|病|疾病|患|确诊|诊断|"
        r"健康问题|慢性",
        "dietary_restrictions": r"\bdiet|vegetarian|vegan|halal|kosher|gluten|lactose|"
        r"food restrictions?|\b(?:can't|cannot|can|not|shouldn't|should) (?:i |he |she |they |we )?"
        r"eat\b|忌口|素食|吃素|饮食|不吃|不能吃|能吃|可以吃|清真",
        "surgeries": r"surg|(?<!in )(?<!into )operation(?!s? of\b)|operated on|transplant|"
        r"手术|开刀|动刀|动过刀",
        "accessibility_needs": r"accessib|wheelchair|disabilit|hearing aid|\bblind|\bdeaf|无障碍|"
        r"轮椅|残疾|助听器",
        "emergency_contact": r"emergency contact|in case of (?:an )?emergency|紧急联系人|紧急联络",
    }.items()
}


MARKERS_OTHER = re.compile(
    rf"\b(?:my|our|his|her|their)\s+(?:{REL_EN})\b|\b(?:he|she|they)\b|(?:{REL_ZH})|他|她"
    r"|\b[A-Z][a-z]+\b(?<!\bI)",
)

# --- subjects, negation and surgery objects -------------------------------------------

POSSESSED = re.compile(
    rf"^'s\s+(?:(?:little|older|younger|big|best|elder|new|business)\s+)?({REL_EN})\b", re.I
)
"""``'s`` + a relation after a name (Mei's older sister): the relation is the subject."""
NEGATION_ZH = re.compile(r"没有|没|不再|不|无")
"""A negation in the words that lead a Chinese object (我没有…过敏)."""
OPERATED_ZH = frozenset({"开过刀", "开了刀", "动过刀", "挨过刀"})
"""Had an operation, with no organ named (Chinese): the item 开刀."""
SURGERY_LEAD_ZH = re.compile(r"^(?:过|了|个|次|一次|两次|场)+")
"""Aspect and measure words before the organ of a Chinese surgery."""
NO_SURGERY_OBJECT_EN = frozenset({"any", "no", "some", "many", "several"})
"""Words that make an English surgery's object no organ ("any surgery")."""

"""Knowledge-update benchmark: a fact changes; is the current one first?

Each case is one scope. Some unrelated memories and look-alike distractors (the
same kind of fact about someone else: "My sister lives in Rome") are stored with
``Memory.add``; then the user states the old fact in one turn, talks about other
things, and states the new fact in a later turn ("I moved to Munich last month").
Every turn goes through ``Memory.extract`` (the deterministic fallback, or a model
with ``--model``). Then the question ("Where do I live?") is searched.

Metrics per kind of fact and language:

- **current@1**: the top hit states the new value (floor 90 % with the fallback);
- **old as current**: a default search returned a hit stating the old value (must be 0);
- **old via as_of**: ``search(as_of=<between the two statements>)`` ranks the old
  value first (the history is kept, not lost).

Cases are generated from templates (both languages, six kinds of fact: where one
lives, job, employer, a favourite, partner, name) with a fixed seed, so a run is
reproducible; ``--cases`` sets how many.

Usage::

    python benchmarks/knowledge_update.py --cases 240 [--embedder use] [--out FILE]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from langmem_ext import Memory, Settings

CITIES_EN = ["Berlin", "Munich", "Lisbon", "Toronto", "Osaka", "Seattle", "Madrid", "Vienna",
             "Dublin", "Austin", "Prague", "Oslo", "Melbourne", "Denver", "Zurich", "Boston"]  # fmt: skip
CITIES_ZH = ["上海", "深圳", "杭州", "成都", "北京", "广州", "南京", "武汉", "西安", "厦门",
             "苏州", "重庆", "青岛", "长沙", "昆明", "大连"]  # fmt: skip
JOBS_EN = ["nurse", "teacher", "software engineer", "pharmacist", "architect", "chef",
           "accountant", "photographer", "lawyer", "dentist", "pilot", "librarian"]  # fmt: skip
JOBS_ZH = ["护士", "老师", "程序员", "药剂师", "建筑师", "厨师", "会计", "摄影师", "律师",
           "牙医", "飞行员", "图书管理员"]  # fmt: skip
COMPANIES = ["Siemens", "Stripe", "Spotify", "Shopify", "Airbus", "Philips", "Nokia",
             "Canva", "Atlassian", "Zalando", "Adyen", "Rakuten"]  # fmt: skip
COMPANIES_ZH = ["腾讯", "阿里巴巴", "华为", "字节跳动", "小米", "百度", "京东", "美团", "网易",
                "比亚迪", "大疆", "携程"]  # fmt: skip
COLOURS_EN = ["green", "blue", "purple", "orange", "yellow", "red", "teal", "grey"]
COLOURS_ZH = ["绿色", "蓝色", "紫色", "橙色", "黄色", "红色", "青色", "灰色"]
NAMES_EN = ["Maria", "Sofia", "Emma", "Lena", "Clara", "Nora", "Julia", "Alice", "Hanna",
            "Ines", "Mia", "Eva"]  # fmt: skip
NAMES_ZH = ["小美", "小丽", "晓雯", "佳怡", "思琪", "雨桐", "梦瑶", "欣然", "诗涵", "若曦",
            "紫萱", "可馨"]  # fmt: skip
OWN_NAMES_EN = ["Alex", "Sam", "Jordan", "Robin", "Chris", "Taylor", "Jamie", "Morgan"]
OWN_NAMES_ZH = ["李雷", "王强", "张伟", "刘洋", "陈晨", "杨帆", "赵磊", "周杰"]

# kind -> lang -> (old template, new template, question, distractor templates, values)
KINDS: dict[str, dict[str, tuple[str, str, str, tuple[str, ...], list[str]]]] = {
    "move": {
        "en": ("I live in {a}.", "I moved to {b} last month.", "Where do I live now?",
               ("My sister lives in {c}.", "My best friend just moved to {c}."), CITIES_EN),
        "zh": ("我住在{a}。", "我上个月搬到{b}了。", "我现在住在哪里？",
               ("我姐姐住在{c}。", "我的好朋友刚搬到{c}。"), CITIES_ZH),
    },
    "job": {
        "en": ("I work as a {a}.", "I now work as a {b}.", "What is my job?",
               ("My brother works as a {c}.", "My mother was a {c} for thirty years."), JOBS_EN),
        "zh": ("我是一名{a}。", "我现在是一名{b}了。", "我是做什么工作的？",
               ("我哥哥是一名{c}。", "我妈妈当了三十年{c}。"), JOBS_ZH),
    },
    "employer": {
        "en": ("I work at {a}.", "I've joined {b} this month.", "Which company do I work for?",
               ("My friend works at {c}.", "My cousin had an interview at {c}."), COMPANIES),
        "zh": ("我在{a}工作。", "我这个月跳槽到{b}了。", "我在哪家公司工作？",
               ("我朋友在{c}工作。", "我表弟去{c}面试了。"), COMPANIES_ZH),
    },
    "favourite": {
        "en": ("My favourite colour is {a}.", "My favourite colour is now {b}.",
               "What is my favourite colour?",
               ("My daughter's favourite colour is {c}.", "The living room is painted {c}."),
               COLOURS_EN),
        "zh": ("我最喜欢的颜色是{a}。", "我现在最喜欢的颜色是{b}了。", "我最喜欢什么颜色？",
               ("我女儿最喜欢的颜色是{c}。", "客厅刷成了{c}。"), COLOURS_ZH),
    },
    "partner": {
        "en": ("My girlfriend is {a}.", "My girlfriend is now {b}, we met in spring.",
               "Who is my girlfriend?",
               ("My brother's girlfriend is {c}.", "{c} is my colleague at work."), NAMES_EN),
        "zh": ("我女朋友叫{a}。", "我现在的女朋友叫{b}，我们春天认识的。", "我女朋友叫什么？",
               ("我哥哥的女朋友叫{c}。", "{c}是我的同事。"), NAMES_ZH),
    },
    "name": {
        "en": ("My name is {a}.", "Please call me {b} from now on, my name is {b} now.",
               "What is my name?",
               ("My neighbour's name is {c}.", "{c} is the name of my dog."), OWN_NAMES_EN),
        "zh": ("我叫{a}。", "我改名了，我现在叫{b}。", "我叫什么名字？",
               ("我邻居叫{c}。", "我家的狗叫{c}。"), OWN_NAMES_ZH),
    },
}  # fmt: skip

# Second phrasings (old, new, question), written apart from the first set and from the
# extractor's patterns, to see how far the fallback carries beyond its own wording.
VARIANTS: dict[str, dict[str, tuple[str, str, str]]] = {
    "move": {
        "en": ("I'm living in {a} these days.", "I've relocated to {b}.", "Which city do I live in?"),
        "zh": ("我目前住在{a}。", "我已经搬去{b}住了。", "我住在哪个城市？"),
    },
    "job": {
        "en": ("My job is {a}.", "I'm working as a {b} now.", "What do I do for a living?"),
        "zh": ("我的工作是{a}。", "我现在做{b}了。", "我的职业是什么？"),
    },
    "employer": {
        "en": ("I'm working at {a}.", "I started a new job at {b}.", "Who do I work for?"),
        "zh": ("我目前在{a}上班。", "我换工作去{b}了。", "我现在在哪家公司上班？"),
    },
    "favourite": {
        "en": ("My favorite colour is {a}.", "My new favourite colour is {b}.",
               "What's my favourite colour?"),
        "zh": ("我最爱的颜色是{a}。", "我现在最爱的颜色是{b}。", "我最喜欢的颜色是什么？"),
    },
    "partner": {
        "en": ("My girlfriend's name is {a}.", "My girlfriend's name is {b} now.",
               "What's my girlfriend's name?"),
        "zh": ("我女朋友是{a}。", "我现在的女朋友是{b}。", "我女朋友是谁？"),
    },
    "name": {
        "en": ("I'm called {a}.", "Call me {b} please.", "Who am I?"),
        "zh": ("我的名字是{a}。", "我的名字叫{b}了。", "我的名字是什么？"),
    },
}  # fmt: skip

FILLER_EN = ["I went hiking last weekend.", "The weather has been rainy lately.",
             "I'm reading a book about the history of tea.", "We had pasta for dinner.",
             "I need to renew my passport soon.", "My laptop battery is getting weak."]  # fmt: skip
FILLER_ZH = ["上周末我去爬山了。", "最近总是下雨。", "我在看一本关于茶的历史的书。",
             "我们晚饭吃了面条。", "我得尽快续签护照。", "我的笔记本电池不太行了。"]  # fmt: skip


@dataclass
class Case:
    """One knowledge update: old and new value, the turns, the question."""

    id: str
    kind: str
    lang: str
    old: str
    new: str
    turns: list[str]
    question: str
    distractors: list[str] = field(default_factory=list)


def make_cases(n: int, seed: int = 19) -> list[Case]:
    """``n`` cases spread over kinds and languages (a fixed seed: reproducible)."""
    rng = random.Random(seed)
    cases: list[Case] = []
    combos = [(k, lang) for k in KINDS for lang in ("en", "zh")]
    for i in range(n):
        kind, lang = combos[i % len(combos)]
        old_t, new_t, question, distractor_ts, values = KINDS[kind][lang]
        if (i // len(combos)) % 2:  # every other round: the second phrasings
            old_t, new_t, question = VARIANTS[kind][lang]
        a, b, c, d = rng.sample(values, 4)
        filler = FILLER_EN if lang == "en" else FILLER_ZH
        turns = [old_t.format(a=a), *rng.sample(filler, 2), new_t.format(b=b)]
        distractors = [t.format(c=v) for t, v in zip(distractor_ts, (c, d), strict=True)]
        cases.append(Case(f"ku{i:03d}", kind, lang, a, b, turns, question, distractors))
    return cases


@dataclass
class Outcome:
    """What one case gave."""

    case: Case
    current_first: bool
    old_as_current: bool
    old_via_as_of: bool
    extract_ms: float


def run_case(mem: Memory, case: Case, start: datetime) -> Outcome:
    """Store the distractors, run the turns through ``extract``, ask the question."""
    scope = case.id
    for text in case.distractors:
        mem.add(text, scope=scope)
    t_total = 0.0
    between: datetime | None = None
    for i, turn in enumerate(case.turns):
        at = start + timedelta(days=10 * i)
        if i == len(case.turns) - 1:
            between = at - timedelta(days=1)
        t0 = time.perf_counter()
        mem.extract([HumanMessage(turn), AIMessage("OK.")], scope=scope, at=at)
        t_total += time.perf_counter() - t0
    hits = mem.search(case.question, scope=scope, k=3)
    current_first = bool(hits) and case.new in hits[0].text
    old_as_current = any(case.old in h.text and case.new not in h.text for h in hits)
    past = mem.search(case.question, scope=scope, k=3, as_of=between)
    old_via_as_of = bool(past) and case.old in past[0].text
    return Outcome(case, current_first, old_as_current, old_via_as_of, t_total * 1000)


def _table(outcomes: Sequence[Outcome]) -> str:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[f"{o.case.kind} ({o.case.lang})"].append(o)
        groups["all"].append(o)
    rows = [
        "| kind | cases | current@1 | old as current | old first via as_of | extract ms/turn |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in sorted(groups, key=lambda g: (g == "all", g)):
        os_ = groups[name]
        n = len(os_)
        turns = sum(len(o.case.turns) for o in os_)
        rows.append(
            f"| {name} | {n} | {sum(o.current_first for o in os_) / n:.3f} "
            f"| {sum(o.old_as_current for o in os_)} "
            f"| {sum(o.old_via_as_of for o in os_) / n:.3f} "
            f"| {sum(o.extract_ms for o in os_) / turns:.1f} |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=240)
    p.add_argument("--embedder", default="use", choices=["use", "e5", "fake"])
    p.add_argument("--out", type=Path, default=None, help="also write the table here")
    p.add_argument("--show-misses", action="store_true")
    p.add_argument("--no-slot-stage", action="store_true", help="retrieval.slot_stage off")
    args = p.parse_args(argv)
    cases = make_cases(args.cases)
    root = Path(tempfile.mkdtemp(prefix="ku-bench-"))
    settings = Settings(workspace=root / "ws")
    settings.embeddings.provider = args.embedder
    settings.retrieval.slot_stage = not args.no_slot_stage
    mem = Memory(settings=settings)
    start = datetime(2026, 1, 5, 12, tzinfo=UTC)
    try:
        outcomes = [run_case(mem, c, start) for c in cases]
    finally:
        mem.close()
        shutil.rmtree(root, ignore_errors=True)
    table = _table(outcomes)
    print(table)
    if args.show_misses:
        for o in outcomes:
            if not o.current_first or o.old_as_current:
                print(f"MISS {o.case.id} {o.case.kind}/{o.case.lang}: {o.case.turns[-1]!r}")
    if args.out:
        args.out.write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

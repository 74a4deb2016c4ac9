"""Short-term memory benchmark: tokens sent per turn and needle recall.

A synthetic bilingual (Chinese / English) conversation of ``--turns`` turns, with
tool calls every few turns and facts ("needles") planted in user messages, runs
through the real :class:`~langmem_ext.memory.sessions.manager.SessionManager` on a real
workspace, without a chat model (flush and summaries use their deterministic
fallbacks). At every turn it measures the tokens sent to the model by three
strategies:

- ``FULL_HISTORY``: the whole history (what a naive agent sends);
- ``SUMMARY_N``: :meth:`SessionManager.query_context` with checkpoints (flush,
  summary + last 8 turns) whenever it says ``should_checkpoint`` — the new user
  message is counted in (``system_tokens``), so the floor holds for what the
  model really gets;
- ``hybrid_window`` (``short_term.mode="hybrid_window"``, what the graph sends):
  the running summary, then
  :func:`~langmem_ext.short_term.window.settings_window` (newest 5 verbatim, the
  older ones as ``[Summary]`` / ``[Old]`` lines, per-message summaries made
  extractively), with the graph's checkpoints (past 0.75 × window, or past 25
  messages) on the extractive summarizer;
- bare window: :func:`~langmem_ext.short_term.window.build_hybrid_window`
  (15 messages, 10 condensed, 5 verbatim) with no summary of what left it.

At the end every needle is probed: is its key still in what the model sees
(summary + kept turns / the window / the newest messages that fit the window), or
can the agent retrieve it (pending flush saves, ``memory.search`` of a recall
question, which also searches the session hot log)?

Floors (exit code 1 when broken): ``SUMMARY_N`` context ≤ 0.75 × window at every
turn; needle recall of ``SUMMARY_N`` + memory ≥ 95 % with the extractive fallback.

Usage::

    python benchmarks/short_term.py --turns 500 --embedder use \\
        --write BENCHMARKS-short-term.md
"""

from __future__ import annotations

import argparse
import logging
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langmem_ext import Memory, Settings
from langmem_ext.memory.sessions.manager import SessionManager
from langmem_ext.short_term.accounting import count_message_tokens, message_tokens
from langmem_ext.short_term.checkpoint import make_checkpoint, plan_context, with_summary
from langmem_ext.short_term.content import message_text
from langmem_ext.short_term.summarizer import (
    Summarizer,
    needs_message_summary,
    summarize_message,
)
from langmem_ext.short_term.validity import validate_messages
from langmem_ext.short_term.window import build_hybrid_window, settings_window, window_overflow

logger = logging.getLogger("benchmarks.short_term")

SCOPE = "bench"
THREAD = "long-conversation"
TURN_SECONDS = 240
"""Simulated time between turns (500 turns span about a day and a half)."""


@dataclass(frozen=True)
class Needle:
    """A planted fact.

    Attributes:
        fact: The sentence planted in a user message.
        key: What must still be visible or retrievable (copied verbatim from ``fact``).
        probe: The recall question asked at the end.
    """

    fact: str
    key: str
    probe: str


NEEDLES: tuple[Needle, ...] = (
    Needle("我叫王小明。", "王小明", "你还记得我叫什么名字吗？"),
    Needle("我的护照号码是E48213957。", "E48213957", "之前我说过我的护照号码是多少？"),
    Needle(
        "My daughter's name is Aurelia.",
        "Aurelia",
        "What did I tell you previously about my daughter's name?",
    ),
    Needle("我对芒果过敏。", "芒果", "我之前说过我对什么过敏？"),
    Needle(
        "We decided to use PostgreSQL 16 for the billing service.",
        "PostgreSQL 16",
        "What did we decide previously about the billing service database?",
    ),
    Needle("我住在杭州市西湖区文三路88号。", "文三路88号", "我之前说过我住在哪里？"),
    Needle(
        "I'm allergic to penicillin.",
        "penicillin",
        "Did I mention previously which medicine I'm allergic to?",
    ),
    Needle("记住：我的车牌号是浙A7K3Q9。", "浙A7K3Q9", "我之前告诉过你我的车牌号吗？"),
    Needle(
        "My wifi password is tulip-4471.",
        "tulip-4471",
        "What did I say previously about the wifi password?",
    ),
    Needle("我们决定下周五上线新版本v2.3。", "v2.3", "之前我们决定什么时候上线新版本？"),
    Needle(
        "I work at Contoso Robotics as a firmware engineer.",
        "Contoso Robotics",
        "Where did I say previously that I work?",
    ),
    Needle("我女儿在星河小学读三年级。", "星河小学", "我之前说过我女儿在哪个学校读书？"),
    Needle(
        "My flight to Osaka is JL 0727 on 2026-12-03.",
        "JL 0727",
        "Previously I mentioned my flight to Osaka, what was the flight number?",
    ),
    Needle("我最喜欢的茶是西湖龙井。", "西湖龙井", "你还记得我最喜欢喝什么茶吗？"),
    Needle(
        "Our team standup moved to 9:40 every Tuesday.",
        "9:40",
        "What did I tell you earlier about the standup time?",
    ),
    Needle("我的医生是仁和医院的陈立群主任。", "陈立群", "之前我提过我的医生是谁吗？"),
    Needle(
        "My sister Priya lives in Toronto.",
        "Priya",
        "Did I tell you previously where my sister lives?",
    ),
    Needle("我的预算是每月三千五百元。", "三千五百元", "我之前说过每月预算是多少？"),
    Needle(
        "The garage door code is 8-3-1-9.",
        "8-3-1-9",
        "What did I mention previously about the garage door code?",
    ),
    Needle("我们决定婚礼定在西湖国宾馆。", "西湖国宾馆", "之前我们决定婚礼在哪里办？"),
    Needle(
        "I prefer aisle seats on long flights.",
        "aisle",
        "Do you remember which seats I prefer on long flights?",
    ),
    Needle("我儿子的班主任叫林晓燕。", "林晓燕", "我之前说过我儿子的班主任叫什么？"),
    Needle(
        "My car is a blue 2018 Subaru Outback.",
        "Subaru Outback",
        "What did I say earlier about my car?",
    ),
    Needle("我每周三晚上去游泳。", "游泳", "你还记得我每周几去游泳吗？"),
    Needle(
        "Remember that the API key rotates on the first Monday of each month.",
        "first Monday",
        "What did I tell you previously about the API key rotation?",
    ),
    Needle(
        "我的公司邮箱是xiaoming.wang@contoso.cn。",
        "xiaoming.wang@contoso.cn",
        "我之前给过你我的公司邮箱吗？",
    ),
    Needle(
        "We chose Hetzner for the staging servers.",
        "Hetzner",
        "What did we decide previously for the staging servers?",
    ),
    Needle("我的血型是O型。", "O型", "我之前说过我的血型是什么？"),
    Needle(
        "My mother's phone number is 138-0013-5577.",
        "138-0013-5577",
        "What did I mention previously about my mother's phone number?",
    ),
    Needle("我们下次复诊约在12月8日上午十点。", "12月8日", "之前说的复诊时间是哪天？"),
)

FILLER_HUMAN: tuple[str, ...] = (
    "能不能帮我看看花园里的番茄为什么叶子发黄？",
    "Could you explain how compost heats up in winter?",
    "最近在读一本关于宋代历史的书，挺有意思的。",
    "What's a good way to keep basil from flowering too early?",
    "帮我想一个家庭活动的点子吧。",
    "How do octopuses change colour so quickly?",
    "我想学做一道简单的川菜，有什么推荐？",
    "Can you summarise the main ideas of stoicism in plain words?",
    "咖啡和茶哪个对睡眠影响更大？",
    "Give me three tips for writing clearer emails.",
    "为什么秋天树叶会变红？",
    "What's the difference between a latte and a flat white?",
    "怎么给阳台上的绿萝换盆？",
    "Explain recursion to a ten year old.",
    "有没有适合初学者的跑步计划？",
    "Why do cats knead blankets?",
    "帮我把这句话翻译成英文：山重水复疑无路。",
    "What are some good board games for four players?",
    "怎样才能让米饭煮得更香？",
    "How does a heat pump work in cold weather?",
)
DISTRACTORS: tuple[str, ...] = (
    "I watered row {n} this morning and it took {m} minutes.",
    "我今天在第{n}排种了{m}棵生菜。",
    "My neighbour's dog barked {m} times last night.",
    "我们小区的快递柜编号是{n}-{m}。",
    "My step count yesterday was {n}{m}.",
    "我这周跑了{m}公里，比上周多了{n}公里。",
    "I have {m} tomato plants on the balcony now.",
    "我的快递单号是SF{n}{m}{n}。",
    "Our book club meets in room {n}{m} this time.",
    "我决定这次先试试{m}号肥料。",
)
"""Fact-like sentences (numbers, first person, 我的…是, I have …) that compete with the
needles for the summary budget and the flush's top facts."""
FILLER_AI: tuple[str, ...] = (
    "Good question. The short answer is that it depends on light, water and temperature, "
    "and small changes in any of them show up within a few days.",
    "可以从三个方面入手：先观察环境，再调整习惯，最后耐心等待结果，一般两三周就能看到变化。",
    "A simple rule of thumb helps here: start small, check the result, and only then scale up.",
    "这个问题很常见。大多数情况下原因并不复杂，按部就班地排查就可以找到答案。",
    "Many people find it easier to remember the idea with an everyday analogy, like a kettle "
    "that keeps heating until the water boils.",
    "从历史上看，这种做法已经流传了很久，不同地区还有各自的小变化，值得慢慢了解。",
    "If you want, I can break it down into steps and we can go through them one at a time.",
    "总的来说，保持规律、注意细节，再加上一点点耐心，效果通常都会不错。",
    "There is no single right answer, but the most common approach works well for beginners.",
    "另外要注意，别一次改变太多，否则很难判断到底是哪一步起了作用。",
)


@dataclass
class Turn:
    """One synthetic turn: the user's text, tool messages, the answer, its needle."""

    human: HumanMessage
    tools: list[BaseMessage]
    ai: AIMessage
    needle: Needle | None = None

    @property
    def messages(self) -> list[BaseMessage]:
        """The turn's messages in order."""
        return [self.human, *self.tools, self.ai]


def make_conversation(
    turns: int = 500,
    *,
    needles: Sequence[Needle] = NEEDLES,
    plant_every: int = 10,
    first_plant: int = 1,
    tool_every: int = 9,
    distractor_rate: float = 0.3,
    seed: int = 11,
) -> list[Turn]:
    """Build the synthetic conversation.

    Args:
        turns: Number of turns.
        needles: Facts to plant, in order.
        plant_every: A needle is planted every this many turns, from ``first_plant``.
        first_plant: Turn of the first needle.
        tool_every: Every this many turns the assistant calls two tools first.
        distractor_rate: Share of user messages that also carry a fact-like
            distractor sentence (numbers, 我的…是, I have …).
        seed: Random seed of the filler.

    Returns:
        The turns; ``turn.needle`` marks the planted ones.
    """
    rng = random.Random(seed)
    plant_at = {first_plant + i * plant_every: n for i, n in enumerate(needles)}
    out: list[Turn] = []
    for t in range(turns):
        needle = plant_at.get(t)
        text = rng.choice(FILLER_HUMAN)
        if rng.random() < distractor_rate:
            distractor = rng.choice(DISTRACTORS).format(n=rng.randint(2, 99), m=rng.randint(2, 99))
            text = f"{text} {distractor}"
        if needle is not None:
            text = f"{text} {needle.fact}" if rng.random() < 0.5 else f"{needle.fact} {text}"
        human = HumanMessage(text, id=f"h{t}")
        tools: list[BaseMessage] = []
        if t % tool_every == tool_every - 1:
            calls = [
                {"name": "web_search", "args": {"q": text[:40]}, "id": f"c{t}a"},
                {"name": "notes_lookup", "args": {"topic": f"topic-{t % 17}"}, "id": f"c{t}b"},
            ]
            tools = [
                AIMessage("", tool_calls=calls, id=f"a{t}c"),
                ToolMessage(
                    " ".join(rng.sample(FILLER_AI, 2)),
                    tool_call_id=f"c{t}a",
                    name="web_search",
                    id=f"t{t}a",
                ),
                ToolMessage(
                    "no notes on this topic",
                    tool_call_id=f"c{t}b",
                    name="notes_lookup",
                    id=f"t{t}b",
                ),
            ]
        answer = " ".join(rng.sample(FILLER_AI, 3))
        out.append(Turn(human, tools, AIMessage(answer, id=f"a{t}"), needle))
    return out


# --- the run --------------------------------------------------------------------------


@dataclass
class Series:
    """Tokens sent per turn by one strategy."""

    name: str
    tokens: list[int] = field(default_factory=list)

    def row(self, window: int, budget: int) -> list[str]:
        """Markdown cells: mean, p50, p95, max, max/window, turns over budget."""
        xs = sorted(self.tokens)
        p95 = xs[min(len(xs) - 1, int(0.95 * len(xs)))]
        over = sum(1 for x in self.tokens if x > budget)
        return [
            self.name,
            f"{statistics.fmean(xs):,.0f}",
            f"{statistics.median(xs):,.0f}",
            f"{p95:,}",
            f"{xs[-1]:,}",
            f"{xs[-1] / window:.2f}",
            str(over),
        ]


@dataclass
class Report:
    """Everything the run measured."""

    turns: int
    window: int
    budget: int
    series: list[Series]
    checkpoints: int
    hybrid_checkpoints: int
    flush_pending: int
    recall: dict[str, float]
    channels: dict[str, int]
    needles: int
    missing: list[str]
    seconds: float
    per_turn_ms: float
    embedder: str
    floor_context_ok: bool
    floor_recall_ok: bool


def _newest_fitting(messages: Sequence[BaseMessage], window: int) -> list[BaseMessage]:
    """The newest messages whose tokens fit the window (naive truncation)."""
    kept: list[BaseMessage] = []
    used = 0
    for m in reversed(messages):
        used += message_tokens(m)
        if used > window:
            break
        kept.append(m)
    return kept[::-1]


def _text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(message_text(m) for m in messages)


def run(turns: int, embedder: str, workdir: Path) -> Report:
    """Run the conversation and measure; see the module docstring."""
    settings = Settings(workspace=workdir / "ws")
    settings.embeddings.provider = embedder  # type: ignore[assignment]
    memory = Memory(settings=settings)
    sessions = SessionManager(memory)
    st = settings.short_term
    window = st.context_window
    budget = int(st.checkpoint_ratio * window)
    conversation = make_conversation(turns)
    start = time.time() - turns * TURN_SECONDS

    full = Series("FULL_HISTORY")
    summary_n = Series("SUMMARY_N (summary + last 8 turns)")
    hybrid = Series("bare window (15 msgs: 10 condensed + 5 verbatim, no summary)")
    hybrid_mode = Series("hybrid_window (summary + window)")
    hy_history: list[BaseMessage] = []
    hy_summary: str | None = None
    hy_checkpoints = 0
    extractive = Summarizer()
    hy_st = st.model_copy(update={"mode": "hybrid_window"})
    history: list[BaseMessage] = []
    history_tokens = 0
    per_message_summaries: dict[str, str] = {}
    checkpoints = 0
    flushed = 0
    t0 = time.perf_counter()
    for t, turn in enumerate(conversation):
        human_tokens = message_tokens(turn.human)
        full.tokens.append(history_tokens + human_tokens)

        ctx = sessions.query_context(SCOPE, THREAD, system_tokens=human_tokens)
        if ctx.should_checkpoint:
            result = sessions.checkpoint(SCOPE, THREAD, system_tokens=human_tokens)
            if result.made:
                checkpoints += 1
                flushed += len(result.flush.pending_ids) if result.flush else 0
            ctx = sessions.query_context(SCOPE, THREAD, system_tokens=human_tokens)
        sent = [*ctx.history, turn.human]
        validate_messages(sent)
        summary_n.tokens.append(ctx.estimated_tokens)

        window_msgs = build_hybrid_window(
            [*history, turn.human],
            per_message_summaries,
            size=st.window_messages,
            verbatim=st.window_verbatim,
            line_max_chars=st.summary_max_chars,
        )
        hybrid.tokens.append(count_message_tokens(window_msgs))
        hy_call = with_summary(
            settings_window([*hy_history, turn.human], per_message_summaries, st), hy_summary
        )
        validate_messages(hy_call)
        hybrid_mode.tokens.append(count_message_tokens(hy_call))

        sessions.write_turn(
            SCOPE,
            THREAD,
            turn.human,
            turn.ai,
            tool_messages=turn.tools,
            at=start + t * TURN_SECONDS,
        )
        for m in turn.messages:
            history_tokens += message_tokens(m)
            if m.id and needs_message_summary(m):
                per_message_summaries[m.id] = summarize_message(m, max_chars=st.summary_max_chars)
        history.extend(turn.messages)
        hy_history.extend(turn.messages)
        plan = plan_context(hy_history, running_summary=hy_summary, settings=st)
        if plan.should_checkpoint or window_overflow(hy_history, hy_st):
            cp = make_checkpoint(hy_history, hy_summary, extractive, hy_st)
            if cp.removed_count:
                hy_history, hy_summary, hy_checkpoints = cp.kept, cp.summary, hy_checkpoints + 1
        if (t + 1) % 100 == 0:
            logger.info("turn %d: %d checkpoints so far", t + 1, checkpoints)
    seconds = time.perf_counter() - t0

    # Needle probes at the end of the conversation.
    planted = [turn.needle for turn in conversation if turn.needle is not None]
    ctx = sessions.query_context(SCOPE, THREAD)
    seen_summary_n = _text(ctx.history)
    seen_hybrid = _text(build_hybrid_window(history, per_message_summaries))
    seen_hybrid_mode = _text(
        with_summary(settings_window(hy_history, per_message_summaries, st), hy_summary)
    )
    seen_full = _text(_newest_fitting(history, window))
    pending = "\n".join(p.text for p in memory.list_pending(scope=SCOPE))
    channels = {"context": 0, "pending": 0, "search: memory": 0, "search: session log": 0}
    found = {
        "summary_n": 0,
        "summary_n+memory": 0,
        "no_log": 0,
        "hybrid": 0,
        "hybrid_mode": 0,
        "hybrid_mode+memory": 0,
        "full": 0,
    }
    missing: list[str] = []
    for needle in planted:
        hits = memory.search(needle.probe, scope=SCOPE, k=10)
        in_context = needle.key in seen_summary_n
        in_pending = needle.key in pending
        in_memory = any(needle.key in h.text for h in hits if h.source == "memory")
        in_log = any(needle.key in h.text for h in hits if h.source == "session")
        channels["context"] += in_context
        channels["pending"] += in_pending
        channels["search: memory"] += in_memory
        channels["search: session log"] += in_log
        found["summary_n"] += in_context
        found["hybrid"] += needle.key in seen_hybrid
        found["hybrid_mode"] += needle.key in seen_hybrid_mode
        found["hybrid_mode+memory"] += needle.key in seen_hybrid_mode or in_log
        found["full"] += needle.key in seen_full
        found["no_log"] += in_context or in_pending or in_memory
        if in_context or in_pending or in_memory or in_log:
            found["summary_n+memory"] += 1
        else:
            missing.append(needle.key)
    n = max(1, len(planted))
    recall = {k: v / n for k, v in found.items()}
    memory.close()
    return Report(
        turns=turns,
        window=window,
        budget=budget,
        series=[full, summary_n, hybrid_mode, hybrid],
        checkpoints=checkpoints,
        hybrid_checkpoints=hy_checkpoints,
        flush_pending=flushed,
        recall=recall,
        channels=channels,
        needles=len(planted),
        missing=missing,
        seconds=seconds,
        per_turn_ms=1000 * seconds / max(1, turns),
        embedder=embedder,
        floor_context_ok=max(summary_n.tokens) <= budget,
        floor_recall_ok=recall["summary_n+memory"] >= 0.95,
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def render(report: Report, command: str, day: str) -> str:
    """The Markdown section of a report."""
    r = report
    tokens = _table(
        ["strategy", "mean", "p50", "p95", "max", "max / window", f"turns > {r.budget:,}"],
        [s.row(r.window, r.budget) for s in r.series],
    )
    recall = _table(
        ["what the agent has", "needle recall"],
        [
            ["FULL_HISTORY, newest messages that fit the window", f"{r.recall['full']:.0%}"],
            ["bare window alone (no summary)", f"{r.recall['hybrid']:.0%}"],
            ["hybrid_window context alone (summary + window)", f"{r.recall['hybrid_mode']:.0%}"],
            [
                "hybrid_window context + session-log search",
                f"{r.recall['hybrid_mode+memory']:.0%}",
            ],
            ["SUMMARY_N context alone (summary + kept turns)", f"{r.recall['summary_n']:.0%}"],
            [
                "SUMMARY_N + pending flush saves + memory entries (no session log)",
                f"{r.recall['no_log']:.0%}",
            ],
            [
                "**SUMMARY_N + memory** (pending flush saves, memory.search incl. session log)",
                f"**{r.recall['summary_n+memory']:.0%}**",
            ],
        ],
    )
    chans = _table(
        ["channel (a needle can be in several)", f"needles (of {r.needles})"],
        [[k, str(v)] for k, v in r.channels.items()],
    )
    floors = (
        f"- SUMMARY_N context ≤ 0.75 × window ({r.budget:,} tokens) at every turn: "
        f"{'**pass**' if r.floor_context_ok else '**FAIL**'} "
        f"(max {max(r.series[1].tokens):,})\n"
        f"- needle recall ≥ 95 % with the extractive fallback: "
        f"{'**pass**' if r.floor_recall_ok else '**FAIL**'} "
        f"({r.recall['summary_n+memory']:.0%})"
    )
    missing = f"\nMissing needles: {', '.join(r.missing)}\n" if r.missing else ""
    return f"""## Short-term memory

Date: {day}. Command:

```bash
{command}
```

{r.turns} turns of a synthetic bilingual conversation (tool calls every 9th turn,
{r.needles} facts planted every 10 turns from turn 1, fact-like numeric distractors
in 30 % of user messages), run through `SessionManager`
on a real workspace with **no chat model** (extractive flush and summaries),
embedder `{r.embedder}`, context window {r.window:,} tokens, checkpoint at
0.75 × window, 8 turns kept. Tokens are what the model is sent for the turn,
the new user message included.

{tokens}

Checkpoints: {r.checkpoints} (SUMMARY_N), {r.hybrid_checkpoints} (hybrid_window); facts the flush proposed (pending): {r.flush_pending};
{r.per_turn_ms:.0f} ms per turn end to end (query, checkpoint when due, write + hot log).

Needles, probed after the last turn with a recall question each
("之前我说过我的护照号码是多少？", "What did I tell you previously about my daughter's name?"):

{recall}

{chans}
{missing}
Floors:

{floors}
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--embedder", choices=["use", "e5", "fake"], default="use")
    parser.add_argument("--write", type=Path, help="also write the Markdown section here")
    parser.add_argument("--date", default=date.today().isoformat())
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logger.setLevel(logging.INFO)
    workdir = Path(tempfile.mkdtemp(prefix="langmem-short-term-"))
    try:
        report = run(args.turns, args.embedder, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    command = (
        f"python benchmarks/short_term.py --turns {args.turns} --embedder {args.embedder}"
        f" --date {args.date}" + (f" --write {args.write}" if args.write else "")
    )
    text = render(report, command, args.date)
    print(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    return 0 if report.floor_context_ok and report.floor_recall_ok else 1


if __name__ == "__main__":
    sys.exit(main())

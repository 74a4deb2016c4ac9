"""Needle test: facts planted early survive repeated checkpoints without a model.

A 200-turn bilingual conversation (with tool calls and numeric distractors) runs
through the real short-term loop — plan_context, flush fallback, make_checkpoint
with the extractive summarizer — on a small window so that many checkpoints
happen. Every planted fact must still be somewhere the agent can see it.
"""

from __future__ import annotations

import random

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from short_term_shapes import assert_invariants

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.short_term.checkpoint import Checkpoint, make_checkpoint, plan_context
from langmem_ext.short_term.content import message_text
from langmem_ext.short_term.flush_prompt import extract_candidate_facts, should_flush
from langmem_ext.short_term.summarizer import Summarizer

FACTS = [
    "我叫李雷。",
    "My English name is Alice Chen.",
    "我住在杭州市西湖区文三路 88 号。",
    "I'm allergic to peanuts and shellfish.",
    "我们决定用 PostgreSQL 16 作为主数据库。",
    "The launch deadline is 2025-03-14.",
    "TODO: migrate the billing service before Friday.",
    "我喜欢吃拉面，但是不喜欢香菜。",
    "My wife's birthday is May 3.",
    "I work at Contoso as a data engineer.",
]

FILLER_HUMAN = [
    "今天我们继续聊聊花园里的番茄。",
    "我觉得叶子有点发黄。",
    "Let's talk about the garden again.",
    "The tomatoes look a bit pale this week.",
    "天气预报说会下雨。",
    "I watered row {n} this morning.",
    "第 {n} 排的黄瓜长得不错。",
    "Can you suggest something for the roses?",
    "Honestly the weather has been strange lately.",
    "好的，明白了，继续吧。",
]
FILLER_AI = [
    "That sounds good, tell me more about it.",
    "好的，我明白了。叶子发黄可能是缺水。",
    "Pale leaves often mean the soil needs more nitrogen, so a light feed could help.",
    "Row {n} should be fine with regular watering and some mulch around the base.",
    "可以试试在早上浇水，这样蒸发会少一些。",
]


def _conversation(turns: int = 200, seed: int = 7) -> list[list[BaseMessage]]:
    """Turns of messages; the facts are planted in the first 20 turns."""
    rng = random.Random(seed)
    plant_at = {2 * i + 1: fact for i, fact in enumerate(FACTS)}
    out: list[list[BaseMessage]] = []
    for t in range(turns):
        n = rng.randint(1, 99)
        text = rng.choice(FILLER_HUMAN).format(n=n) + " " + rng.choice(FILLER_HUMAN).format(n=n + 1)
        if t in plant_at:
            text = f"{rng.choice(FILLER_HUMAN).format(n=n)} {plant_at[t]} {rng.choice(FILLER_HUMAN).format(n=n)}"
        turn: list[BaseMessage] = [HumanMessage(text, id=f"h{t}")]
        if t % 7 == 3:
            calls = [
                {"name": "weather", "args": {"city": "Hangzhou", "day": t}, "id": f"c{t}a"},
                {"name": "soil", "args": {"row": n}, "id": f"c{t}b"},
            ]
            turn.append(AIMessage("", tool_calls=calls, id=f"a{t}c"))
            turn.append(
                ToolMessage(f"soil moisture {n}%", tool_call_id=f"c{t}b", name="soil", id=f"t{t}b")
            )
            turn.append(
                ToolMessage(
                    f"sunny, {n % 30} C", tool_call_id=f"c{t}a", name="weather", id=f"t{t}a"
                )
            )
        turn.append(
            AIMessage(" ".join(rng.choice(FILLER_AI).format(n=n) for _ in range(3)), id=f"a{t}")
        )
        out.append(turn)
    return out


def _steps(turn: list[BaseMessage]) -> list[list[BaseMessage]]:
    """Split a turn where the graph would consult the model: tool results arrive together."""
    steps: list[list[BaseMessage]] = []
    for message in turn:
        if isinstance(message, ToolMessage) and isinstance(steps[-1][-1], ToolMessage):
            steps[-1].append(message)
        else:
            steps.append([message])
    return steps


def _visible(summary: str, kept: list[BaseMessage]) -> str:
    return summary + "\n" + "\n".join(message_text(m) for m in kept)


@pytest.mark.parametrize("window", [4000, 2500])
def test_planted_facts_survive_repeated_checkpoints(window: int) -> None:
    settings = ShortTermSettings(context_window=window)
    summarizer = Summarizer()  # no model: the extractive fallback
    state: list[BaseMessage] = []
    summary: str | None = None
    flushed: list[str] = []
    checkpoints: list[Checkpoint] = []
    planted: set[str] = set()
    for turn in _conversation():
        for step in _steps(turn):
            state += step
            planted.update(f for f in FACTS for m in step if f in message_text(m))
            if isinstance(step[-1], AIMessage) and step[-1].tool_calls:
                continue  # the graph runs the tools before it asks the model again
            plan = plan_context(state, running_summary=summary, settings=settings)
            assert_invariants(state, plan.messages_to_send)
            if not plan.should_checkpoint:
                continue
            if should_flush(plan.should_checkpoint, settings):
                flushed += [f for f in extract_candidate_facts(state) if f not in flushed]
            checkpoint = make_checkpoint(state, summary, summarizer, settings)
            assert checkpoint.used_fallback
            assert_invariants(state, checkpoint.kept)
            assert not checkpoint.over_budget
            assert checkpoint.estimated_tokens <= 0.75 * window
            assert len(checkpoint.summary) <= summarizer.max_chars
            checkpoints.append(checkpoint)
            state, summary = checkpoint.kept, checkpoint.summary
            # Every fact planted so far is still visible after every checkpoint.
            visible = _visible(summary, state)
            missing = [f for f in planted if f not in visible and f not in flushed]
            assert not missing, f"lost after checkpoint {len(checkpoints)}: {missing}"

    assert len(checkpoints) >= 5, "the test must exercise repeated checkpoints"
    assert planted == set(FACTS)
    assert summary is not None
    # Stronger than the union: each channel keeps every fact on its own.
    assert [f for f in FACTS if f not in summary] == []
    assert [f for f in FACTS if f not in flushed] == []
    # The planted turns are long gone from the state: the summary carried them.
    assert all(m.id not in {f"h{2 * i + 1}" for i in range(10)} for m in state)


def test_planted_facts_survive_tight_summary_budget() -> None:
    """With an 800-character summary, facts outrank the numeric distractors."""
    settings = ShortTermSettings(context_window=3000)
    summarizer = Summarizer(max_chars=800)
    state: list[BaseMessage] = []
    summary: str | None = None
    rounds = 0
    for turn in _conversation(turns=150, seed=11):
        state += turn
        plan = plan_context(state, running_summary=summary, settings=settings)
        if plan.should_checkpoint:
            checkpoint = make_checkpoint(state, summary, summarizer, settings)
            state, summary = checkpoint.kept, checkpoint.summary
            rounds += 1
    assert rounds >= 3
    assert summary is not None and len(summary) <= 800
    assert [f for f in FACTS if f not in summary] == []

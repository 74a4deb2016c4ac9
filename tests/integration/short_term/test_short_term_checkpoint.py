"""Checkpoints: FULL_HISTORY / SUMMARY_N, summary + last 8 turns past 0.75 × window."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langchain_core.outputs import ChatResult
from short_term_shapes import (
    ai,
    assert_invariants,
    human,
    random_history,
    shapes,
    simple,
    system,
    tool_round,
)

from langmem_ext.core.config import ShortTermSettings
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.short_term.accounting import count_message_tokens
from langmem_ext.short_term.checkpoint import (
    SUMMARY_HEADER,
    MemoryMode,
    amake_checkpoint,
    checkpoint_budget,
    finalize_session,
    make_checkpoint,
    plan_context,
    with_summary,
)
from langmem_ext.short_term.summarizer import Summarizer
from langmem_ext.short_term.validity import turn_starts

SHAPES = shapes()


class FailingModel(GenericFakeChatModel):
    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
        raise TimeoutError("model timed out")


def _turns(n: int, words: int = 40) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for t in range(n):
        out += [human(f"turn {t}: " + "garden " * words), ai(f"reply {t}: " + "okay " * words)]
    return out


# --- plan_context ---------------------------------------------------------------------


def test_defaults_match_seed() -> None:
    settings = ShortTermSettings()
    assert checkpoint_budget(settings) == 12000
    assert settings.keep_last_turns == 8


def test_plan_full_history_under_threshold() -> None:
    messages = simple(5)
    plan = plan_context(messages, running_summary=None, settings=ShortTermSettings())
    assert plan.mode is MemoryMode.FULL_HISTORY
    assert plan.messages_to_send == messages
    assert plan.estimated_tokens == count_message_tokens(messages)
    assert plan.ratio == pytest.approx(plan.estimated_tokens / 16000)
    assert not plan.should_checkpoint
    assert plan.budget_tokens == 12000


def test_plan_summary_n_inserts_summary_after_system_prompt() -> None:
    prompt = system("You are helpful.")
    messages = [prompt, *simple(3)]
    plan = plan_context(
        messages, running_summary="Facts:\n- 我叫李雷", settings=ShortTermSettings()
    )
    assert plan.mode is MemoryMode.SUMMARY_N
    assert plan.messages_to_send[0] is prompt
    summary = plan.messages_to_send[1]
    assert isinstance(summary, SystemMessage)
    assert str(summary.content).startswith(SUMMARY_HEADER)
    assert "我叫李雷" in str(summary.content)
    assert plan.messages_to_send[2:] == messages[1:]
    assert plan.estimated_tokens == count_message_tokens(plan.messages_to_send)


def test_blank_summary_is_full_history() -> None:
    plan = plan_context(simple(2), running_summary="  ", settings=ShortTermSettings())
    assert plan.mode is MemoryMode.FULL_HISTORY


def test_threshold_is_075_of_window() -> None:
    settings = ShortTermSettings(context_window=2000)  # threshold 1500 tokens
    messages = _turns(30)
    tokens = count_message_tokens(messages)
    assert tokens > 1500
    assert plan_context(messages, running_summary=None, settings=settings).should_checkpoint
    # system_tokens count toward the threshold too.
    small = _turns(2)
    small_tokens = count_message_tokens(small)
    under = plan_context(
        small, running_summary=None, settings=settings, system_tokens=1500 - small_tokens
    )
    over = plan_context(
        small, running_summary=None, settings=settings, system_tokens=1501 - small_tokens
    )
    assert not under.should_checkpoint
    assert over.should_checkpoint
    assert over.ratio == pytest.approx(1501 / 2000)


def test_no_checkpoint_when_only_latest_turn_left() -> None:
    settings = ShortTermSettings(context_window=100)
    plan = plan_context([human("x " * 500)], running_summary=None, settings=settings)
    assert plan.ratio > 0.75
    assert not plan.should_checkpoint


def test_negative_system_tokens_raise() -> None:
    with pytest.raises(InvalidInputError):
        plan_context(
            simple(1), running_summary=None, settings=ShortTermSettings(), system_tokens=-1
        )


# --- make_checkpoint ------------------------------------------------------------------


def test_checkpoint_keeps_last_8_turns_and_removes_the_rest() -> None:
    messages = _turns(20)
    cp = make_checkpoint(messages, None, Summarizer(), ShortTermSettings())
    assert len(turn_starts(cp.kept)) == 8
    assert cp.kept == messages[-16:]
    assert cp.removed_ids == [m.id for m in messages[:-16]]
    assert cp.removed_count == 24
    assert cp.used_fallback
    assert not cp.over_budget
    assert cp.estimated_tokens == count_message_tokens(with_summary(cp.kept, cp.summary))
    markers = cp.remove_messages()
    assert all(isinstance(m, RemoveMessage) for m in markers)
    assert [m.id for m in markers] == cp.removed_ids
    assert cp.messages_to_send()[0].content.startswith(SUMMARY_HEADER)  # type: ignore[union-attr]


def test_checkpoint_rolls_previous_summary_in() -> None:
    messages = [human("我们决定用 PostgreSQL 16。"), ai("好的"), *_turns(10)]
    cp = make_checkpoint(
        messages, "Facts:\n- I'm allergic to peanuts.", Summarizer(), ShortTermSettings()
    )
    assert "I'm allergic to peanuts." in cp.summary
    assert "我们决定用 PostgreSQL 16。" in cp.summary


def test_checkpoint_with_nothing_to_remove_keeps_summary() -> None:
    messages = _turns(3)
    cp = make_checkpoint(messages, "Facts:\n- x 1", Summarizer(), ShortTermSettings())
    assert cp.kept == messages
    assert cp.removed_ids == []
    assert cp.summary == "Facts:\n- x 1"
    assert not cp.used_fallback


def test_checkpoint_keeps_fewer_turns_when_over_budget() -> None:
    settings = ShortTermSettings(context_window=1000)  # threshold 750 tokens
    messages = _turns(20, words=60)  # one turn is ~130 tokens: 8 turns do not fit
    cp = make_checkpoint(messages, None, Summarizer(max_chars=600), settings)
    kept_turns = len(turn_starts(cp.kept))
    assert 1 <= kept_turns < 8
    assert cp.estimated_tokens <= checkpoint_budget(settings)
    assert not cp.over_budget
    assert_invariants(messages, cp.kept)
    assert cp.kept == messages[len(messages) - len(cp.kept) :]


def test_checkpoint_never_drops_latest_human_turn_even_if_huge() -> None:
    settings = ShortTermSettings(context_window=1000)
    huge = human("请看这段日志：" + "ERROR 12:00:01 timeout; " * 400)
    messages = [*_turns(10), huge, *tool_round(["grep"]), ai("found it")]
    cp = make_checkpoint(messages, None, Summarizer(max_chars=400), settings)
    assert cp.kept[0] is huge
    assert cp.over_budget
    assert_invariants(messages, cp.kept)


def test_checkpoint_pins_leading_system_prompt() -> None:
    prompt = system("You are helpful.")
    messages = [prompt, *_turns(12)]
    cp = make_checkpoint(messages, None, Summarizer(), ShortTermSettings())
    assert cp.kept[0] is prompt
    assert prompt.id not in cp.removed_ids
    sent = cp.messages_to_send()
    assert sent[0] is prompt and isinstance(sent[1], SystemMessage)


def test_checkpoint_model_failure_falls_back() -> None:
    model = FailingModel(messages=iter([]))
    messages = [human("My name is Alice Chen."), ai("Hi Alice"), *_turns(10)]
    cp = make_checkpoint(messages, None, Summarizer(model), ShortTermSettings())
    assert cp.used_fallback
    assert "My name is Alice Chen." in cp.summary


def test_checkpoint_with_model() -> None:
    model = GenericFakeChatModel(messages=iter(["Goal:\n- plan\nFacts:\n- Alice"]))
    cp = make_checkpoint(_turns(10), None, Summarizer(model), ShortTermSettings())
    assert not cp.used_fallback
    assert cp.summary == "Goal:\n- plan\nFacts:\n- Alice"


async def test_async_checkpoint_matches_sync() -> None:
    messages = _turns(15)
    settings = ShortTermSettings(context_window=3000)
    sync = make_checkpoint(messages, "Facts:\n- a 1", Summarizer(), settings)
    asyn = await amake_checkpoint(messages, "Facts:\n- a 1", Summarizer(), settings)
    assert sync == asyn


def test_bad_keep_last_turns_raises() -> None:
    with pytest.raises(InvalidInputError):
        make_checkpoint(_turns(3), None, Summarizer(), ShortTermSettings(keep_last_turns=0))


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("window", [16000, 3000, 600])
def test_checkpoint_invariants_on_shapes(name: str, window: int) -> None:
    messages, pending = SHAPES[name]
    settings = ShortTermSettings(context_window=window, keep_last_turns=3)
    cp = make_checkpoint(messages, None, Summarizer(max_chars=300), settings)
    assert_invariants(messages, cp.kept, pending=pending)
    assert_invariants(messages, cp.messages_to_send(), pending=pending)
    # kept + removed is exactly the input, in order.
    removed_ids = set(cp.removed_ids)
    assert [m for m in messages if m.id not in removed_ids] == cp.kept
    assert len(removed_ids) == cp.removed_count == len(messages) - len(cp.kept)
    plan = plan_context(cp.kept, running_summary=cp.summary, settings=settings)
    assert_invariants(messages, plan.messages_to_send, pending=pending)
    if not cp.over_budget:
        assert cp.estimated_tokens <= checkpoint_budget(settings)


@pytest.mark.parametrize("seed", range(80))
def test_checkpoint_invariants_random(seed: int) -> None:
    messages, pending = random_history(seed)
    settings = ShortTermSettings(context_window=2500)
    cp = make_checkpoint(messages, "Facts:\n- seed fact 1", Summarizer(max_chars=500), settings)
    assert_invariants(messages, cp.kept, pending=pending)
    assert_invariants(messages, cp.messages_to_send(), pending=pending)
    assert "seed fact 1" in cp.summary or cp.removed_count == 0 or len(cp.summary) > 0


# --- finalize_session -----------------------------------------------------------------


def test_finalize_summarises_whole_session_and_keeps_last_turns() -> None:
    messages = [*_turns(10), human("我们决定明天上线。"), ai("好的")]
    cp = finalize_session(messages, "Facts:\n- old 5", Summarizer(), ShortTermSettings())
    assert "我们决定明天上线。" in cp.summary  # inside the kept turns, still summarised
    assert "old 5" in cp.summary
    assert len(turn_starts(cp.kept)) == 8
    assert cp.kept == messages[-16:]
    assert isinstance(cp.kept[0], HumanMessage)
    assert not isinstance(cp.kept[-1], RemoveMessage)
    assert isinstance(messages[-1], AIMessage)

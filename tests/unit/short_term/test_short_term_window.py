"""The hybrid window: 15 messages, oldest 10 condensed, newest 5 verbatim."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from short_term_shapes import (
    assert_invariants,
    human,
    random_history,
    shapes,
    simple,
    system,
    tool_round,
)

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.short_term.window import (
    OLD_MARK,
    SUMMARY_MARK,
    WINDOW_HEADER,
    build_hybrid_window,
    render_old_line,
    window_text,
)

SHAPES = shapes()


def _block_lines(message: BaseMessage) -> list[str]:
    text = message.content
    assert isinstance(text, str)
    return [line for line in text.splitlines() if line.startswith((SUMMARY_MARK, OLD_MARK))]


def test_shape_15_messages_10_condensed_5_verbatim() -> None:
    messages = simple(15)  # 30 messages, alternating
    summaries = {m.id: f"Goal: summary of {m.id}" for m in messages[-15:-10] if m.id}
    window = build_hybrid_window(messages, summaries)
    assert len(window) == 6
    block, verbatim = window[0], window[1:]
    assert isinstance(block, SystemMessage)
    assert str(block.content).startswith(WINDOW_HEADER)
    lines = _block_lines(block)
    assert len(lines) == 10
    # Oldest first: five with stored summaries, then five [Old].
    assert all(line.startswith(SUMMARY_MARK) for line in lines[:5])
    assert all(line.startswith(OLD_MARK) for line in lines[5:])
    assert "summary of" in lines[0]
    # The newest five are the very same message objects.
    assert verbatim == messages[-5:]
    assert all(a is b for a, b in zip(verbatim, messages[-5:], strict=True))


def test_old_lines_are_truncated_and_summaries_capped() -> None:
    long_text = "很长的消息。" * 400
    messages = [human(long_text), AIMessage("short", id="a-x"), *simple(6)]
    summaries = {"a-x": "Facts: " + "x" * 1000}
    window = build_hybrid_window(messages, summaries, line_max_chars=120)
    lines = _block_lines(window[0])
    assert lines[0].startswith(f"{OLD_MARK} User: ")
    assert len(lines[0]) <= len(f"{OLD_MARK} User: ") + 120
    assert lines[0].endswith("…")
    assert lines[1].startswith(f"{SUMMARY_MARK} AI: Facts: ")
    assert len(lines[1]) <= len(f"{SUMMARY_MARK} AI: ") + 120


def test_multiline_summary_becomes_one_line() -> None:
    message = HumanMessage("anything", id="m1")
    line = render_old_line(message, {"m1": "Goal: plan trip\nDecision: go on 5月3日"})
    assert line == f"{SUMMARY_MARK} User: Goal: plan trip | Decision: go on 5月3日"


def test_short_history_is_all_verbatim() -> None:
    messages = simple(2)
    assert build_hybrid_window(messages) == messages


def test_window_keeps_only_last_size_messages() -> None:
    messages = simple(30)
    window = build_hybrid_window(messages, size=15, verbatim=5)
    text = window_text(window)
    assert "question 0 " not in text
    assert "answer 29" in text
    assert len(_block_lines(window[0])) == 10


def test_roles_packing_preserves_roles() -> None:
    messages = simple(10)
    window = build_hybrid_window(messages, pack="roles")
    packed = window[: len(window) - 5]
    assert isinstance(packed[0], HumanMessage)
    assert str(packed[0].content).startswith(WINDOW_HEADER)
    for message in packed:
        for line in _block_lines(message):
            role = "User" if isinstance(message, HumanMessage) else "AI"
            assert f" {role}: " in line
    assert window[-5:] == messages[-5:]
    assert_invariants(messages, window)


def test_roles_packing_opens_with_human_even_if_oldest_is_ai() -> None:
    messages = [AIMessage("hello", id="a-1"), *simple(7)]
    window = build_hybrid_window(messages, size=10, verbatim=4, pack="roles")
    assert isinstance(window[0], HumanMessage)
    assert isinstance(window[1], AIMessage)


def test_leading_system_prompt_stays_first_and_is_not_counted() -> None:
    prompt = system("You are helpful.")
    messages = [prompt, *simple(10)]
    window = build_hybrid_window(messages)
    assert window[0] is prompt
    assert isinstance(window[1], SystemMessage)
    assert len(_block_lines(window[1])) == 10
    assert_invariants(messages, window)


def test_boundary_inside_tool_group_extends_verbatim() -> None:
    rounds = tool_round(["a", "b", "c"])
    messages = [*simple(6), human("research"), *rounds, AIMessage("done", id="a-done")]
    # newest 5 = ToolMessage x3 (of 3) ... the AI call would be cut off.
    window = build_hybrid_window(messages, size=15, verbatim=5)
    verbatim = [m for m in window if not isinstance(m, SystemMessage)]
    assert verbatim[0].content == "research"
    assert rounds[0] in verbatim
    assert_invariants(messages, window)


def test_boundary_inside_older_tool_group_shrinks_verbatim() -> None:
    rounds = tool_round(["a", "b", "c"])
    tail = [AIMessage("done", id="a-done2"), human("thanks"), AIMessage("welcome", id="a-w")]
    messages = [*simple(6), human("research"), *rounds, *tail]
    window = build_hybrid_window(messages, size=15, verbatim=5)
    assert window[1:] == tail  # the earlier turn's tool group is condensed whole
    lines = _block_lines(window[0])
    assert sum(1 for line in lines if line.startswith(f"{OLD_MARK} Tool")) == 3
    assert any("[calls: a(" in line for line in lines)
    assert_invariants(messages, window)


def test_latest_human_always_verbatim_even_beyond_window() -> None:
    messages = [*simple(3), human("run the big job"), *tool_round([f"t{i}" for i in range(20)])]
    window = build_hybrid_window(messages, size=15, verbatim=5)
    assert any(m.content == "run the big job" for m in window if isinstance(m, HumanMessage))
    assert_invariants(messages, window)
    # The tool results in the verbatim part are not also in the condensed block.
    assert not any(isinstance(m, SystemMessage) and "t19 result" in str(m.content) for m in window)


def test_verbatim_zero_still_keeps_latest_human() -> None:
    messages = simple(10)
    window = build_hybrid_window(messages, verbatim=0)
    assert window[-2] is messages[-2] and window[-1] is messages[-1]
    assert_invariants(messages, window)


@pytest.mark.parametrize(
    ("kwargs"),
    [{"size": 0}, {"verbatim": -1}, {"size": 5, "verbatim": 6}, {"pack": "weird"}],
)
def test_bad_parameters_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        build_hybrid_window(simple(3), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("pack", ["system", "roles"])
@pytest.mark.parametrize(("size", "verbatim"), [(15, 5), (6, 2), (4, 0), (3, 3)])
def test_window_invariants_on_shapes(name: str, pack: str, size: int, verbatim: int) -> None:
    messages, pending = SHAPES[name]
    window = build_hybrid_window(messages, size=size, verbatim=verbatim, pack=pack)  # type: ignore[arg-type]
    assert_invariants(messages, window, pending=pending)
    # No ToolMessage is left without its call in the verbatim part.
    tool_ids = {m.tool_call_id for m in window if isinstance(m, ToolMessage)}
    call_ids = {c["id"] for m in window if isinstance(m, AIMessage) for c in m.tool_calls}
    assert tool_ids <= call_ids


@pytest.mark.parametrize("seed", range(120))
def test_window_invariants_random(seed: int) -> None:
    messages, pending = random_history(seed)
    for pack in ("system", "roles"):
        window = build_hybrid_window(messages, pack=pack)  # type: ignore[arg-type]
        assert_invariants(messages, window, pending=pending)


def test_settings_window_condenses_everything_older_and_fills_missing_summaries() -> None:
    from langmem_ext.core.config import ShortTermSettings
    from langmem_ext.short_term.window import settings_window, summaries_due, window_overflow

    st = ShortTermSettings(mode="hybrid_window")
    messages = simple(12)  # 24 messages: more than the 15 of the window
    long = messages[0]
    long.content = "决定：用 PostgreSQL 16。" + "其余都是闲聊。" * 80
    assert summaries_due(messages, {}) == [long]
    window = settings_window(messages, {}, st)
    lines = _block_lines(window[0])
    assert len(lines) == 19 and lines[0].startswith(SUMMARY_MARK) and "PostgreSQL 16" in lines[0]
    assert window[1:] == messages[-5:]
    assert not window_overflow(messages, st) and window_overflow(simple(13), st)
    assert not window_overflow(simple(40), ShortTermSettings())  # other modes: never


def test_window_settings_are_checked() -> None:
    from pydantic import ValidationError

    from langmem_ext.core.config import ShortTermSettings

    with pytest.raises(ValidationError):
        ShortTermSettings(window_messages=4, window_verbatim=5)
    with pytest.raises(ValidationError):
        ShortTermSettings(mode="sliding")  # type: ignore[arg-type]

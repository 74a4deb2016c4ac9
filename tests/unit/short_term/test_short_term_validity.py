"""validate_messages and safe_cut_index: the three must-never-happen invariants."""

from __future__ import annotations

import pytest
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from short_term_shapes import assert_invariants, human, random_history, shapes, simple, tool_round

from langmem_ext.core.errors import InvalidInputError, LangmemError
from langmem_ext.short_term.validity import (
    InvalidMessageListError,
    atomic_spans,
    is_safe_cut,
    latest_human_index,
    safe_cut_index,
    turn_starts,
    validate_messages,
)

SHAPES = shapes()


def _call(*ids: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": i} for i in ids])


# --- validate_messages ----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_all_shapes_are_valid(name: str) -> None:
    messages, pending = SHAPES[name]
    validate_messages(messages, allow_pending_tool_calls=pending)


def test_empty_list_is_valid() -> None:
    validate_messages([])


def test_error_is_typed() -> None:
    assert issubclass(InvalidMessageListError, InvalidInputError)
    assert issubclass(InvalidMessageListError, LangmemError)
    assert issubclass(InvalidMessageListError, ValueError)


@pytest.mark.parametrize(
    ("messages", "fragment"),
    [
        # langmem#126: a cut between parallel tool results leaves a call unanswered.
        (
            [
                HumanMessage("q"),
                _call("1", "2"),
                ToolMessage("r", tool_call_id="1"),
                AIMessage("x"),
            ],
            "missing",
        ),
        # Orphan tool result at the start of a kept part.
        ([ToolMessage("r", tool_call_id="1"), HumanMessage("q")], "orphan"),
        # langmem#98: a duplicated tool result.
        (
            [
                HumanMessage("q"),
                _call("1"),
                ToolMessage("r", tool_call_id="1"),
                ToolMessage("r", tool_call_id="1"),
            ],
            "twice",
        ),
        # A result for a call the AI message did not make.
        ([HumanMessage("q"), _call("1"), ToolMessage("r", tool_call_id="9")], "did not make"),
        # A result after an intervening human message.
        (
            [HumanMessage("q"), _call("1"), HumanMessage("?"), ToolMessage("r", tool_call_id="1")],
            "missing",
        ),
        # Tool call at the very end, not answered.
        ([HumanMessage("q"), _call("1")], "missing at the end"),
        # Tool call without an id.
        (
            [HumanMessage("q"), AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": None}])],
            "no id",
        ),
        # Two calls sharing an id.
        ([HumanMessage("q"), _call("1", "1")], "used twice"),
        # RemoveMessage is a state-update marker.
        ([HumanMessage("q"), RemoveMessage(id="x")], "RemoveMessage"),
        # Duplicate message ids.
        ([HumanMessage("q", id="m"), AIMessage("a", id="m")], "duplicate message id"),
        # System message after the conversation started.
        ([HumanMessage("q"), SystemMessage("late system")], "SystemMessage after"),
        # Not a message.
        ([HumanMessage("q"), "just a string"], "expected a LangChain BaseMessage"),
    ],
)
def test_invalid_lists_raise(messages: list[object], fragment: str) -> None:
    with pytest.raises(InvalidMessageListError, match=fragment):
        validate_messages(messages)  # type: ignore[arg-type]


def test_pending_tool_call_allowed_only_when_asked() -> None:
    messages = [HumanMessage("q"), _call("1", "2"), ToolMessage("r", tool_call_id="1")]
    with pytest.raises(InvalidMessageListError):
        validate_messages(messages)
    validate_messages(messages, allow_pending_tool_calls=True)


def test_system_anywhere_opt_in() -> None:
    messages = [SystemMessage("a"), SystemMessage("b"), HumanMessage("q"), SystemMessage("late")]
    validate_messages(messages, allow_system_anywhere=True)


def test_parallel_results_in_any_order_are_valid() -> None:
    validate_messages(
        [
            HumanMessage("q"),
            _call("1", "2", "3"),
            ToolMessage("c", tool_call_id="3"),
            ToolMessage("a", tool_call_id="1"),
            ToolMessage("b", tool_call_id="2"),
            AIMessage("done"),
        ]
    )


# --- spans and cuts -------------------------------------------------------------------


def test_atomic_spans_group_calls_with_results() -> None:
    messages = [human("q"), *tool_round(["a", "b"]), AIMessage("x"), human("y")]
    assert atomic_spans(messages) == [(0, 1), (1, 4), (4, 5), (5, 6)]
    assert not is_safe_cut(messages, 2)
    assert not is_safe_cut(messages, 3)
    assert is_safe_cut(messages, 4)
    assert is_safe_cut(messages, 0) and is_safe_cut(messages, len(messages))
    assert not is_safe_cut(messages, -1) and not is_safe_cut(messages, 99)


def test_spans_robust_to_invalid_lists() -> None:
    # A tool result far from its call pulls everything in between into one span.
    messages = [
        HumanMessage("q"),
        _call("1"),
        HumanMessage("?"),
        ToolMessage("r", tool_call_id="1"),
    ]
    assert atomic_spans(messages) == [(0, 1), (1, 4)]
    # An orphan result sticks to the message before it.
    orphan = [HumanMessage("q"), ToolMessage("r", tool_call_id="zz"), HumanMessage("n")]
    assert atomic_spans(orphan) == [(0, 2), (2, 3)]


def test_safe_cut_keeps_last_n_turns_starting_with_human() -> None:
    messages = simple(12)
    cut = safe_cut_index(messages, 8)
    recent = messages[cut:]
    assert isinstance(recent[0], HumanMessage)
    assert len(turn_starts(recent)) == 8
    assert safe_cut_index(messages, 12) == 0
    assert safe_cut_index(messages, 50) == 0


def test_safe_cut_rejects_zero_turns() -> None:
    with pytest.raises(InvalidInputError):
        safe_cut_index(simple(3), 0)


def test_safe_cut_on_invalid_list_never_splits() -> None:
    # Human message inside a (broken) tool span: the cut moves before the call.
    messages = [
        HumanMessage("a", id="1"),
        AIMessage("b", id="2"),
        _call("c1"),
        HumanMessage("latest", id="3"),
        ToolMessage("r", tool_call_id="c1"),
    ]
    cut = safe_cut_index(messages, 1)
    assert cut == 2
    assert messages[cut:][1].content == "latest"


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("turns", [1, 2, 3, 8])
def test_safe_cut_invariants_on_shapes(name: str, turns: int) -> None:
    messages, pending = SHAPES[name]
    cut = safe_cut_index(messages, turns)
    recent = messages[cut:]
    assert_invariants(messages, recent, pending=pending)
    humans = turn_starts(messages)
    if len(humans) > turns:
        assert isinstance(recent[0], HumanMessage)
        assert len(turn_starts(recent)) == turns
    else:
        assert cut == 0


@pytest.mark.parametrize("seed", range(150))
@pytest.mark.parametrize("turns", [1, 4, 8])
def test_safe_cut_invariants_random(seed: int, turns: int) -> None:
    messages, pending = random_history(seed)
    cut = safe_cut_index(messages, turns)
    assert_invariants(messages, messages[cut:], pending=pending)
    last = latest_human_index(messages)
    assert last is None or cut <= last

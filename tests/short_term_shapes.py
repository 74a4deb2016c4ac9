"""Message-list shapes shared by the short-term tests.

Every shape is a valid history (``validate_messages`` passes, with
``allow_pending_tool_calls`` for shapes that end on an unanswered tool call).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langmem_ext.short_term.validity import latest_human_index, validate_messages

_ids = itertools.count()


def _id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"


def human(text: str) -> HumanMessage:
    return HumanMessage(text, id=_id("h"))


def ai(text: str) -> AIMessage:
    return AIMessage(text, id=_id("a"))


def system(text: str) -> SystemMessage:
    return SystemMessage(text, id=_id("s"))


def tool_round(
    names: Sequence[str],
    *,
    text: str = "",
    results: Sequence[str] | None = None,
    shuffle: bool = False,
) -> list[BaseMessage]:
    """An AI message calling ``names`` (in parallel) and one ToolMessage per call."""
    calls = [
        {"name": n, "args": {"q": f"{n} query", "n": i}, "id": _id("call")}
        for i, n in enumerate(names)
    ]
    call_msg = AIMessage(text, id=_id("a"), tool_calls=calls)
    tool_msgs = [
        ToolMessage(
            results[i] if results else f"{c['name']} result {i}",
            tool_call_id=str(c["id"]),
            name=str(c["name"]),
            id=_id("t"),
        )
        for i, c in enumerate(calls)
    ]
    if shuffle:
        random.Random(len(tool_msgs)).shuffle(tool_msgs)
    return [call_msg, *tool_msgs]


def pending_call(names: Sequence[str]) -> AIMessage:
    calls = [{"name": n, "args": {"q": n}, "id": _id("call")} for n in names]
    return AIMessage("", id=_id("a"), tool_calls=calls)


def simple(turns: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for t in range(turns):
        out += [human(f"question {t} about the garden"), ai(f"answer {t} about the garden")]
    return out


def shapes() -> dict[str, tuple[list[BaseMessage], bool]]:
    """Named histories: ``name -> (messages, has_pending_tool_call)``."""
    result: dict[str, tuple[list[BaseMessage], bool]] = {}
    result["simple_12_turns"] = (simple(12), False)
    result["single_turn"] = ([human("hi there, how are you")], False)
    result["sequential_tools"] = (
        [
            *simple(5),
            human("look up the weather then the news"),
            *tool_round(["weather"]),
            *tool_round(["news"]),
            ai("Here is the weather and the news."),
            *simple(2),
        ],
        False,
    )
    result["parallel_tools_shuffled"] = (
        [
            *simple(6),
            human("generate two long random strings"),
            *tool_round(["rand", "rand", "rand"], text="Using rand", shuffle=True),
            ai("Generated."),
            human("explain the algorithm"),
        ],
        False,
    )
    result["tool_results_at_end"] = (
        [*simple(9), human("search it"), *tool_round(["search", "lookup"])],
        False,
    )
    result["tool_call_at_very_end"] = (
        [*simple(9), human("search it"), pending_call(["search", "lookup"])],
        True,
    )
    result["many_parallel_results_tail"] = (
        [*simple(3), human("fan out"), *tool_round([f"t{i}" for i in range(12)])],
        False,
    )
    result["tool_loop_in_one_turn"] = (
        [
            *simple(4),
            human("do the whole research task"),
            *tool_round(["a"]),
            *tool_round(["b", "c"]),
            *tool_round(["d"]),
            *tool_round(["e", "f", "g"]),
            ai("All done."),
        ],
        False,
    )
    result["huge_latest_human"] = (
        [*simple(10), human("请帮我分析这段日志。" + "日志行 ERROR timeout at 12:00:01; " * 2500)],
        False,
    )
    result["huge_tool_output"] = (
        [
            *simple(8),
            human("read the file"),
            *tool_round(["read_file"], results=["line of file content\n" * 3000]),
            ai("The file is long."),
            human("summarise it"),
        ],
        False,
    )
    result["leading_system_prompt"] = (
        [system("You are a helpful assistant."), *simple(10)],
        False,
    )
    result["ai_greeting_first"] = ([ai("Hello! How can I help?"), *simple(10)], False)
    result["no_human_at_all"] = ([ai("hello"), *tool_round(["ping"]), ai("pong")], False)
    result["tools_every_turn"] = (
        [
            m
            for t in range(10)
            for m in [human(f"turn {t}"), *tool_round(["x", "y"][: 1 + t % 2]), ai(f"done {t}")]
        ],
        False,
    )
    result["tool_call_right_after_latest_human"] = (
        [*simple(10), human("final question"), *tool_round(["a", "b"])],
        False,
    )
    for messages, pending in result.values():
        validate_messages(messages, allow_pending_tool_calls=pending)
    return result


def random_history(seed: int) -> tuple[list[BaseMessage], bool]:
    """A random valid history mixing plain turns, tool rounds and a pending call."""
    rng = random.Random(seed)
    out: list[BaseMessage] = []
    if rng.random() < 0.2:
        out.append(system("system prompt"))
    if rng.random() < 0.1:
        out.append(ai("greeting"))
    turns = rng.randint(1, 25)
    for t in range(turns):
        out.append(human(f"turn {t} " + "word " * rng.randint(1, 300)))
        for _ in range(rng.choice([0, 0, 0, 1, 1, 2, 3])):
            k = rng.choice([1, 1, 2, 3, 5])
            size = rng.choice([5, 50, 2000])
            out += tool_round(
                [f"tool{i}" for i in range(k)],
                results=["r " * size] * k,
                shuffle=rng.random() < 0.5,
            )
        if t < turns - 1 or rng.random() < 0.7:
            out.append(ai(f"answer {t} " + "text " * rng.randint(1, 200)))
    pending = False
    if rng.random() < 0.15:
        out.append(pending_call(["late"]))
        pending = True
    validate_messages(out, allow_pending_tool_calls=pending)
    return out, pending


def assert_invariants(
    original: Sequence[BaseMessage], result: Sequence[BaseMessage], *, pending: bool = False
) -> None:
    """The three must-never-happen checks (langmem#98, #126, #111)."""
    # 1 + 2: no tool call separated from its results, no orphan/duplicated results.
    validate_messages(result, allow_pending_tool_calls=pending)
    # 3: the latest human message is kept, verbatim.
    h = latest_human_index(original)
    if h is not None:
        latest = original[h]
        assert any(
            m is latest or (m.id == latest.id and m.content == latest.content) for m in result
        ), "latest human message dropped"


ShapeFn = Callable[[], tuple[list[BaseMessage], bool]]

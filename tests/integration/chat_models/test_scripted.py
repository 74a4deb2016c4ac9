"""The offline scripted model shared by ``demo``, ``chat --scripted`` and ``serve --scripted``.

The memory block it reads is rendered by the graph's own ``render_memory_block``;
the save/confirm flow runs through the real memory graph and a real workspace.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import memory_block_texts, offline_policy, remember_request
from langmem_ext.cli.chat import run_chat
from langmem_ext.cli.demo import load_sample, sample_policy
from langmem_ext.graph.prompts import render_memory_block


def _turn(question: str, *, core: list[str], recalled: list[str]) -> list[BaseMessage]:
    block = render_memory_block(
        core=[{"text": t, "citation": f"MEMORY.md:{i}"} for i, t in enumerate(core, 1)],
        recalled=[
            {"text": t, "citation": f"MEMORY.md:{i}", "score": 0.9 - i / 10, "created_at": "2026"}
            for i, t in enumerate(recalled, 10)
        ],
    )
    return [SystemMessage("You are helpful."), SystemMessage(block), HumanMessage(question)]


def test_the_memory_block_is_read_whole_core_first() -> None:
    messages = _turn(
        "Does Lin Wei have any food allergies?",
        core=["林伟对花生过敏（安全相关）"],
        recalled=["Lin Wei's sister Mei is vegetarian", "Lin Wei is training for a marathon"],
    )
    assert memory_block_texts(messages) == [
        ("core", "林伟对花生过敏（安全相关）"),
        ("recalled", "Lin Wei's sister Mei is vegetarian"),
        ("recalled", "Lin Wei is training for a marathon"),
    ]


def test_demo_model_answers_from_a_core_memory_that_is_not_the_top_hit() -> None:
    policy = sample_policy(load_sample())
    messages = _turn(
        "Does Lin Wei have any food allergies?",
        core=[
            "用户叫林伟，在柏林做软件工程师",
            "林伟对花生过敏（安全相关，推荐餐厅时必须避开花生）",
        ],
        recalled=["Lin Wei's sister Mei is vegetarian", "主人喜欢吃拉面"],
    )
    reply = str(policy(messages).content)
    assert "花生" in reply, reply


def test_offline_model_picks_the_memory_that_matches_the_question() -> None:
    messages = _turn(
        "which database did we choose for billing?",
        core=["The user is called Lin Wei"],
        recalled=["Lin Wei likes ramen", "Decision: the billing service uses PostgreSQL"],
    )
    assert "PostgreSQL" in str(offline_policy(messages).content)
    nothing = _turn("what is my locker code?", core=[], recalled=[])
    assert "nothing" in str(offline_policy(nothing).content)


@pytest.mark.parametrize(
    ("said", "saved"),
    [
        ("我喜欢吃拉面，请记住", "我喜欢吃拉面"),
        ("请记住：我对花生过敏。", "我对花生过敏"),
        ("记住我妹妹吃素", "我妹妹吃素"),
        ("Remember that my sister Mei is vegetarian", "My sister Mei is vegetarian"),
        ("I'm allergic to peanuts, remember that", "I'm allergic to peanuts"),
        (
            "Please remember this: the wifi password hint is the cat's name",
            "The wifi password hint is the cat's name",
        ),
    ],
)
def test_remember_requests_become_memory_save_calls(said: str, saved: str) -> None:
    assert remember_request(said) == saved
    reply = offline_policy([HumanMessage(said)])
    assert isinstance(reply, AIMessage)
    assert [(c["name"], c["args"]["text"]) for c in reply.tool_calls] == [("memory_save", saved)]


@pytest.mark.parametrize(
    "said",
    [
        "Do you remember what I like?",
        "你还记得我喜欢吃什么吗？",
        "hello, how are you",
        "I remember that day fondly",
        "好的，我记住了",
    ],
)
def test_questions_and_chatter_are_not_saved(said: str) -> None:
    assert remember_request(said) is None
    assert offline_policy([HumanMessage(said)]).tool_calls == []


@pytest.mark.parametrize("said", ["remember this", "请记住这个", "Please remember that."])
def test_remember_this_saves_the_previous_message(said: str) -> None:
    messages: list[BaseMessage] = [
        HumanMessage("My sister Mei is vegetarian"),
        AIMessage("OK."),
        HumanMessage(said),
    ]
    [call] = offline_policy(messages).tool_calls
    assert call["args"]["text"] == "My sister Mei is vegetarian"


def test_chat_scripted_saves_on_remember_and_the_user_confirms(tmp_path: Path) -> None:
    """``chat --scripted``: "请记住" asks about a pending save; "确认" stores it; a save
    of another conversation is listed by ``/pending`` and resolved only by its id."""
    out: list[str] = []
    feed = iter(
        ["/pending", "我喜欢吃拉面，请记住", "/pending", "确认", "/confirm p-0000000000",
         "我喜欢吃什么？"]
    )  # fmt: skip

    def read(_prompt: str) -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    with Memory(tmp_path / "ws") as memory:
        other = memory.save("主人喜欢喝茶", thread_id="another-chat")
        assert run_chat(memory, scripted=True, read=read, write=out.append) == 0
        stored = [e.text for e in memory.list()]
        assert [p.id for p in memory.list_pending()] == [other.id]  # "确认" left it alone
    transcript = "\n".join(out)
    assert out[1] == "1 save(s) wait for confirmation: /pending lists them.", transcript
    assert f"  pending {other.id}: 主人喜欢喝茶  (/confirm {other.id} or /reject {other.id})" in out
    assert "assistant> 要我记住这条吗：我喜欢吃拉面？" in transcript, transcript
    assert "我喜欢吃拉面  (proposed here: answer the assistant's question)" in transcript
    assert "  p-0000000000: No pending memory 'p-0000000000'" in transcript, transcript
    assert stored == ["我喜欢吃拉面"]
    assert out[-1].startswith("assistant> ") and "拉面" in out[-1], transcript


def test_sample_dates_are_relative_to_today() -> None:
    today = date(2031, 3, 2)
    sample = load_sample(today=today)
    starts = [s["started_at"][:10] for s in sample["sessions"]]
    assert starts == sorted(starts) and all("2031-02-01" <= d <= "2031-03-02" for d in starts)
    saves = [t["save"]["text"] for s in sample["sessions"] for t in s["turns"] if "save" in t]
    assert "Lin Wei is training for the Berlin half marathon in April 2031" in saves
    mei = next(t for t in saves if "Mei" in t)
    assert "2031-0" in mei and "2026" not in mei, mei
    assert "2026" not in str(sample)

"""SessionManager: turns, context, flush before checkpoint, episodes, idle, locks."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable

import langmem_ext.memory.sessions.manager as session_module
from langmem_ext import Memory, Settings
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.memory.sessions.manager import SessionManager
from langmem_ext.short_term.checkpoint import SUMMARY_HEADER, MemoryMode
from langmem_ext.short_term.content import message_text
from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY
from langmem_ext.short_term.validity import InvalidMessageListError, validate_messages

ROOT = Path(__file__).resolve().parents[4]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.short_term import NEEDLES, make_conversation  # noqa: E402

FILLER = "今天继续聊聊阳台上的花草和绿植怎么照顾，顺便讲讲浇水的方法。"
ANSWER = "Sure. Water in the morning, keep the soil loose, and give the plants some light. " * 2


class ToolFakeModel(GenericFakeChatModel):
    """GenericFakeChatModel with tool binding: the scripted replies decide the calls."""

    def bind_tools(
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:  # type: ignore[override]
        return self  # type: ignore[return-value]


class FailingModel(ToolFakeModel):
    """Every call raises, like a provider outage."""

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
        raise ConnectionError("provider down")


def _memory(tmp_path: Path, **short_term: Any) -> Memory:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.short_term.context_window = 2000
    s.short_term.keep_last_turns = 3
    for key, value in short_term.items():
        setattr(s.short_term, key, value)
    return Memory(settings=s)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    m = _memory(tmp_path)
    yield m
    m.close()


def _fill(sm: SessionManager, turns: int, *, scope: str = "main", thread: str = "t1") -> None:
    for i in range(turns):
        sm.write_turn(scope, thread, f"第{i}轮：{FILLER}", f"{i}: {ANSWER}")


def _compacted(m: Memory, thread: str = "t1") -> int:
    rows = m.workspace.ledger.query(
        "SELECT count(*) FROM session_messages WHERE thread_id = ? AND compacted = 1", (thread,)
    )
    return int(rows[0][0])


# --- turns and context ----------------------------------------------------------------


@pytest.mark.usefixtures("fixed_clock")  # today's transcript, read after the write
def test_write_turn_and_query_context_full_history(mem: Memory) -> None:
    sm = SessionManager(mem)
    r = sm.write_turn("main", "t1", "我叫李雷，我住在杭州。", "你好，李雷！")
    assert (r.stored, r.first_seq, r.last_seq, r.mode) == (True, 1, 2, MemoryMode.FULL_HISTORY)
    ctx = sm.query_context("main", "t1")
    assert ctx.mode is MemoryMode.FULL_HISTORY
    assert [message_text(m) for m in ctx.history] == ["我叫李雷，我住在杭州。", "你好，李雷！"]
    assert ctx.full_history == ctx.history
    assert ctx.summary is None and not ctx.should_checkpoint
    assert ctx.estimated_tokens > 0 and ctx.ratio == ctx.estimated_tokens / 2000
    assert ctx.budget_tokens == 1500
    # the hot log has both sides
    assert [e.role for e in sm.log.recent("main", thread_id="t1")] == ["user", "assistant"]
    transcript = mem.workspace.layout.transcript("main", date.today())
    assert "user: 我叫李雷，我住在杭州。" in transcript.read_text(encoding="utf-8")


def test_turn_with_tools_is_stored_in_order_and_invalid_turns_are_refused(mem: Memory) -> None:
    sm = SessionManager(mem)
    call = AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "杭州"}, "id": "c1"}])
    result = ToolMessage("晴，18°C", tool_call_id="c1", name="weather")
    sm.write_turn(
        "main", "t1", "杭州天气怎么样？", "杭州今天晴，18°C。", tool_messages=[call, result]
    )
    history = sm.query_context("main", "t1").history
    assert [type(m).__name__ for m in history] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert all(m.id for m in history)  # ids are assigned for checkpoint bookkeeping
    with pytest.raises(InvalidMessageListError):
        sm.write_turn("main", "t1", "again?", "ok", tool_messages=[call])  # result missing
    assert len(sm.query_context("main", "t1").full_history) == 4  # nothing half-written
    with pytest.raises(ValueError, match="thread id"):
        sm.write_turn("main", "", "hi", "hello")


def test_flush_turns_are_never_stored(mem: Memory) -> None:
    sm = SessionManager(mem)
    r = sm.write_turn("main", "t1", FLUSH_PROMPT, NO_REPLY)
    assert not r.stored
    assert sm.query_context("main", "t1").full_history == []
    assert sm.log.recent("main") == []


# --- checkpoints ----------------------------------------------------------------------


def test_checkpoint_not_due_does_nothing(mem: Memory) -> None:
    sm = SessionManager(mem)
    _fill(sm, 2)
    assert sm.checkpoint("main", "t1").reason == "not_due"
    assert mem.list_pending() == []


@pytest.mark.usefixtures("fixed_clock")  # the episode of today's daily notes
def test_flush_saves_are_pending_before_any_message_is_compacted(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    sm = SessionManager(mem)
    sm.write_turn("main", "t1", "我叫王小明，我的护照号码是E48213957。", "好的，记下了。")
    _fill(sm, 20)
    assert sm.query_context("main", "t1").should_checkpoint

    seen: dict[str, Any] = {}
    real = session_module.make_checkpoint

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen["pending"] = [p.text for p in mem.list_pending()]
        seen["compacted"] = _compacted(mem)
        return real(*args, **kwargs)

    monkeypatch.setattr(session_module, "make_checkpoint", spy)
    result = sm.checkpoint("main", "t1")
    assert result.made and result.reason == "made"
    assert "我叫王小明，我的护照号码是E48213957。" in seen["pending"]
    assert seen["compacted"] == 0
    assert result.flush is not None and result.flush.used_fallback  # no model
    pending = mem.list_pending()
    assert {p.id for p in pending} >= set(result.flush.pending_ids)
    assert all(p.status == "pending" for p in pending)  # pending, never confirmed

    ctx = sm.query_context("main", "t1")
    assert ctx.mode is MemoryMode.SUMMARY_N
    assert ctx.summary == result.summary
    assert message_text(ctx.history[0]).startswith(SUMMARY_HEADER)
    assert "E48213957" in message_text(ctx.history[0])
    assert _compacted(mem) == result.compacted > 0
    assert len(ctx.full_history) == 42  # nothing deleted
    validate_messages(ctx.history)

    # the summary is a session event and an episode of today's daily notes
    assert [e.text for e in sm.log.recent("main", role="summary")] == [result.summary]
    assert result.episode_id is not None
    episode = mem.get_entry(result.episode_id)
    assert episode.category == "episode"
    assert episode.path == f"memory/{date.today().isoformat()}.md"
    assert "E48213957" in episode.text


def test_model_flush_saves_through_the_tool_and_no_reply_is_never_stored(mem: Memory) -> None:
    save = AIMessage(
        "",
        tool_calls=[
            {"name": "memory_save", "args": {"text": "用户的护照号码是E48213957"}, "id": "s1"},
            {"name": "memory_save", "args": {"text": "User's daughter is Aurelia"}, "id": "s2"},
        ],
    )
    # The history (~2,000 tokens) is longer than one call may be in this 2,000-token
    # window: the flush reads it in two slices (two NO_REPLYs) and the summary is
    # rolled through chunks (the same summary for each chunk).
    summary = "Goal:\n- 照顾阳台植物\nFacts:\n- 护照号码 E48213957"
    model = ToolFakeModel(messages=iter([save, NO_REPLY, NO_REPLY, *[summary] * 8]))
    sm = SessionManager(mem, model)
    sm.write_turn("main", "t1", "我的护照号码是E48213957。我女儿叫Aurelia。", "好的。")
    _fill(sm, 20)
    result = sm.checkpoint("main", "t1")
    assert result.made and result.flush is not None
    assert not result.flush.used_fallback
    assert sorted(p.text for p in mem.list_pending()) == [
        "User's daughter is Aurelia",
        "用户的护照号码是E48213957",
    ]
    assert result.summary == "Goal:\n- 照顾阳台植物\nFacts:\n- 护照号码 E48213957"
    assert not result.summary_used_fallback
    full = sm.query_context("main", "t1").full_history
    texts = [message_text(m) for m in full]
    assert NO_REPLY not in texts and FLUSH_PROMPT not in texts
    assert len(full) == 42


def test_model_failure_falls_back_and_nothing_is_dropped(mem: Memory) -> None:
    sm = SessionManager(mem, FailingModel(messages=iter([])))
    sm.write_turn("main", "t1", "我对芒果过敏。", "记住了。")
    _fill(sm, 20)
    result = sm.checkpoint("main", "t1")
    assert result.made
    assert result.flush is not None and result.flush.used_fallback and result.flush.error
    assert result.summary_used_fallback
    assert "我对芒果过敏。" in [p.text for p in mem.list_pending()]
    assert "芒果" in (result.summary or "")
    assert len(sm.query_context("main", "t1").full_history) == 42


def test_model_without_tool_support_falls_back(mem: Memory) -> None:
    sm = SessionManager(mem, GenericFakeChatModel(messages=iter(["Goal:\n- chat"] * 5)))
    sm.write_turn("main", "t1", "My wifi password is tulip-4471.", "Noted.")
    _fill(sm, 20)
    result = sm.checkpoint("main", "t1")
    assert result.made and result.flush is not None and result.flush.used_fallback
    assert "My wifi password is tulip-4471." in [p.text for p in mem.list_pending()]


def test_failed_checkpoint_drops_nothing_and_is_retried(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    sm = SessionManager(mem)
    sm.write_turn("main", "t1", "I'm allergic to penicillin.", "Noted.")
    _fill(sm, 20)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    real = session_module.make_checkpoint
    monkeypatch.setattr(session_module, "make_checkpoint", broken)
    failed = sm.checkpoint("main", "t1")
    assert not failed.made and failed.reason == "failed" and "disk on fire" in (failed.error or "")
    assert _compacted(mem) == 0
    ctx = sm.query_context("main", "t1")
    assert ctx.should_checkpoint and ctx.mode is MemoryMode.FULL_HISTORY
    pending_after_first = sorted(p.text for p in mem.list_pending())
    assert "I'm allergic to penicillin." in pending_after_first

    monkeypatch.setattr(session_module, "make_checkpoint", real)
    retried = sm.checkpoint("main", "t1")
    assert retried.made
    assert sorted(p.text for p in mem.list_pending()) == pending_after_first  # no duplicates
    assert not sm.query_context("main", "t1").should_checkpoint


def test_episode_failure_keeps_the_checkpoint_and_finalize_retries(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    sm = SessionManager(mem)
    _fill(sm, 20)
    real_add = mem.add

    def down(*args: Any, **kwargs: Any) -> str:
        raise OSError("disk full")

    monkeypatch.setattr(mem, "add", down)
    result = sm.checkpoint("main", "t1")
    assert result.made and result.episode_id is None
    monkeypatch.setattr(mem, "add", real_add)
    episode = sm.finalize_session("main", "t1")
    assert episode is not None and mem.get_entry(episode.episode_id).category == "episode"


def test_second_checkpoint_rolls_the_summary_and_updates_the_episode(mem: Memory) -> None:
    sm = SessionManager(mem)
    sm.write_turn("main", "t1", "记住：我的车牌号是浙A7K3Q9。", "好的。")
    _fill(sm, 20)
    first = sm.checkpoint("main", "t1")
    _fill(sm, 25)
    assert sm.query_context("main", "t1").should_checkpoint
    second = sm.checkpoint("main", "t1")
    assert second.made and "浙A7K3Q9" in (second.summary or "")
    assert second.episode_id == first.episode_id  # one episode per conversation and day
    episode = mem.get_entry(second.episode_id or "")
    assert "浙A7K3Q9" in episode.text and episode.current  # edited in place, not versioned
    episodes = mem.list(category="episode", include_superseded=True)
    assert len(episodes) == 1


# --- the needle test ------------------------------------------------------------------


def test_needles_survive_200_bilingual_turns(tmp_path: Path) -> None:
    """Facts planted early stay answerable from summary + memory + hot log."""
    m = _memory(tmp_path, context_window=6000, keep_last_turns=4)
    sm = SessionManager(m)
    needles = NEEDLES[:20]
    conversation = make_conversation(200, needles=needles, plant_every=2, first_plant=1)
    start = time.time() - 200 * 60
    checkpoints = 0
    for t, turn in enumerate(conversation):
        ctx = sm.query_context("main", "long")
        validate_messages([*ctx.history, turn.human])
        if ctx.should_checkpoint:
            assert sm.checkpoint("main", "long").made
            checkpoints += 1
        sm.write_turn(
            "main", "long", turn.human, turn.ai, tool_messages=turn.tools, at=start + t * 60
        )
    assert checkpoints >= 3
    ctx = sm.query_context("main", "long")
    visible = "\n".join(message_text(msg) for msg in ctx.history)
    live = "\n".join(message_text(msg) for msg in ctx.history[1:])
    pending = "\n".join(p.text for p in m.list_pending())
    missing = []
    for needle in needles:
        assert needle.key not in live  # compacted long ago: not verbatim any more
        hits = m.search(needle.probe, scope="main", k=10)
        if not (
            needle.key in visible
            or needle.key in pending
            or any(needle.key in h.text for h in hits)
        ):
            missing.append(needle.key)
    assert missing == []
    assert len(ctx.full_history) == sum(len(t.messages) for t in conversation)
    m.close()


# --- validity -------------------------------------------------------------------------


def test_history_always_passes_validate_messages(tmp_path: Path) -> None:
    m = _memory(tmp_path, context_window=2500, keep_last_turns=2)
    sm = SessionManager(m)
    for t in range(60):
        tools: list[BaseMessage] = []
        if t % 3 == 1:
            calls = [
                {"name": "search", "args": {"q": f"q{t}"}, "id": f"c{t}a"},
                {"name": "lookup", "args": {"n": t}, "id": f"c{t}b"},
            ]
            tools = [
                AIMessage("", tool_calls=calls),
                ToolMessage("result " * 40, tool_call_id=f"c{t}b", name="lookup"),
                ToolMessage("found " * 30, tool_call_id=f"c{t}a", name="search"),
            ]
        sm.write_turn("main", "t1", f"turn {t}: {FILLER}", ANSWER, tool_messages=tools)
        ctx = sm.query_context("main", "t1")
        validate_messages(ctx.history)
        if ctx.should_checkpoint:
            assert sm.checkpoint("main", "t1").made
            ctx = sm.query_context("main", "t1")
            validate_messages(ctx.history)
            assert isinstance(ctx.history[1], HumanMessage)  # kept turns start at a turn
    assert _compacted(m) > 0
    m.close()


# --- concurrency ----------------------------------------------------------------------


def test_concurrent_writers_of_one_thread_serialise(mem: Memory) -> None:
    sm = SessionManager(mem)
    workers, turns = 8, 25
    errors: list[BaseException] = []
    seqs: list[int] = []

    def writer(w: int) -> None:
        try:
            for i in range(turns):
                r = sm.write_turn("main", "shared", f"w{w} q{i}", f"w{w} a{i}")
                seqs.extend((r.first_seq, r.last_seq))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    full = sm.query_context("main", "shared").full_history
    assert len(full) == 2 * workers * turns
    validate_messages(full)
    for q, a in zip(full[::2], full[1::2], strict=True):  # no interleaved half-turns
        assert message_text(q).replace("q", "a") == message_text(a)
    assert sorted(seqs) == list(range(1, 2 * workers * turns + 1))  # each position once
    assert len(sm.log.recent("main", thread_id="shared")) == 2 * workers * turns


def test_concurrent_checkpoint_and_writes(mem: Memory) -> None:
    sm = SessionManager(mem)
    _fill(sm, 20)
    done = threading.Event()

    def writer() -> None:
        for i in range(15):
            sm.write_turn("main", "t1", f"late {i}: {FILLER}", ANSWER)
        done.set()

    th = threading.Thread(target=writer)
    th.start()
    result = sm.checkpoint("main", "t1")
    th.join()
    assert done.is_set() and result.made
    ctx = sm.query_context("main", "t1")
    validate_messages(ctx.history)
    assert len(ctx.full_history) == 70


# --- first turn, finalize, idle -------------------------------------------------------


def test_first_turn_context_once_with_cap(tmp_path: Path) -> None:
    m = _memory(tmp_path)
    now = datetime.now()
    yesterday = now - timedelta(days=1)
    m.add("今天要去医院复诊", scope="main", target="daily", created_at=now)
    m.add("昨天买了新的绿萝", scope="main", target="daily", created_at=yesterday)
    m.add("three days ago note", scope="main", target="daily", created_at=now - timedelta(days=3))
    sm = SessionManager(m)
    block = sm.first_turn_context("main", "t1", now=now)
    assert "今天要去医院复诊" in block and "昨天买了新的绿萝" in block
    assert "three days ago" not in block and "^m-" not in block
    assert block.index(now.date().isoformat()) < block.index(yesterday.date().isoformat())
    assert sm.first_turn_context("main", "t1", now=now) == ""  # once per session
    assert sm.first_turn_context("main", "t2", now=now) == block  # a new session gets it
    assert sm.first_turn_context("other", "t1", now=now) == ""  # scopes isolate

    m.settings.injection.first_turn_daily_chars = 150
    for i in range(30):
        m.add(f"长长的笔记第{i}条，记录今天的各种安排和想法", target="daily", created_at=now)
    capped = sm.first_turn_context("main", "t3", now=now)
    assert 0 < len(capped) <= 150
    m.close()


def test_finalize_session_makes_one_episode(mem: Memory) -> None:
    sm = SessionManager(mem)
    sm.write_turn("main", "t1", "We decided to use PostgreSQL 16 for billing.", "Good choice.")
    sm.write_turn("main", "t1", "我们决定下周五上线新版本v2.3。", "好的。")
    result = sm.finalize_session("main", "t1")
    assert result is not None
    assert "PostgreSQL 16" in result.summary and "v2.3" in result.summary
    entry = mem.get_entry(result.episode_id)
    assert entry.category == "episode" and "v2.3" in entry.text
    assert sm.finalize_session("main", "t1") is None  # nothing new
    assert [e.role for e in sm.log.recent("main")][-1] == "summary"
    assert sm.finalize_session("main", "unknown") is None


def test_checkpoint_and_finalize_with_the_callers_summary_and_kept_turns(mem: Memory) -> None:
    sm = SessionManager(mem)
    for i in range(4):
        sm.write_turn("main", "t1", f"question {i} about the garden", f"answer {i}")
    done = sm.checkpoint(
        "main", "t1", force=True, summary="Four garden questions.", keep_last_turns=1
    )
    assert done.made and done.summary == "Four garden questions." and done.compacted == 6
    assert not done.summary_used_fallback
    ctx = sm.query_context("main", "t1")
    assert ctx.summary == "Four garden questions."
    assert [message_text(m) for m in ctx.history[1:]] == ["question 3 about the garden", "answer 3"]
    assert "Four garden questions." in mem.get_entry(done.episode_id).text
    final = sm.finalize_session("main", "t1", summary="The whole garden talk.")
    assert final is not None and final.summary == "The whole garden talk."


def test_a_bad_callers_summary_or_turn_count_changes_nothing(mem: Memory) -> None:
    sm = SessionManager(mem)
    for i in range(4):
        sm.write_turn("main", "t1", f"question {i} about the garden", f"answer {i}")
    too_long = "x" * (mem.settings.max_text_chars + 1)
    for kwargs in ({"summary": "  "}, {"summary": too_long}, {"keep_last_turns": 0}):
        with pytest.raises(InvalidInputError):
            sm.checkpoint("main", "t1", force=True, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        sm.finalize_session("main", "t1", summary="")
    ctx = sm.query_context("main", "t1")
    assert ctx.summary is None and len(ctx.history) == 8
    assert mem.list(scope="main", category="episode") == []


def test_idle_sessions_become_episodes_once(mem: Memory) -> None:
    sm = SessionManager(mem)
    now = time.time()
    two_hours_ago = now - 7200
    sm.write_turn("main", "idle", "My sister Priya lives in Toronto.", "Nice!", at=two_hours_ago)
    sm.write_turn("main", "busy", "我住在杭州市西湖区。", "好的。", at=now - 60)
    sm.write_turn("u2", "idle", "I work at Contoso Robotics.", "Cool.", at=two_hours_ago)
    idle = sm.idle_sessions(now)
    assert sorted((i.scope, i.thread_id) for i in idle) == [("main", "idle"), ("u2", "idle")]
    episodes = sm.summarize_idle(now)
    assert sorted(e.scope for e in episodes) == ["main", "u2"]
    main_episode = next(e for e in episodes if e.scope == "main")
    entry = mem.get_entry(main_episode.episode_id, scope="main")
    day = datetime.fromtimestamp(two_hours_ago).date().isoformat()
    assert entry.path == f"memory/{day}.md" and "Priya" in entry.text
    assert "Contoso" not in " ".join(e.text for e in mem.list(scope="main"))
    assert sm.summarize_idle(now) == []  # once
    assert sm.idle_sessions(now + 7200)[0].thread_id == "busy"
    sm.write_turn("main", "idle", "One more thing: she has a cat.", "Cute.", at=now)
    assert ("main", "idle") in {(i.scope, i.thread_id) for i in sm.idle_sessions(now + 3601)}


def test_scopes_and_threads_are_isolated(mem: Memory) -> None:
    sm = SessionManager(mem)
    sm.write_turn("alice", "t1", "alice's question", "alice's answer")
    sm.write_turn("bob", "t1", "bob's question", "bob's answer")
    assert [message_text(m) for m in sm.query_context("bob", "t1").history] == [
        "bob's question",
        "bob's answer",
    ]
    assert sm.query_context("alice", "t2").full_history == []
    alice = sm.query_context("alice", "t1").history
    assert message_text(alice[0]) == "alice's question"


async def test_async_twins(mem: Memory) -> None:
    sm = SessionManager(mem)
    r = await sm.awrite_turn("main", "t1", "async question here", "async answer here")
    assert r.stored
    ctx = await sm.aquery_context("main", "t1")
    assert len(ctx.history) == 2
    assert (await sm.acheckpoint("main", "t1")).reason == "not_due"
    assert await sm.afirst_turn_context("main", "t1") == ""
    assert await sm.aidle_sessions(time.time() + 7200)
    assert await sm.asummarize_idle(time.time() + 7200)
    assert await sm.afinalize_session("main", "t1") is None

"""Nothing the system found is lost because nobody answered.

The flush, the archive and the extractor note what they find at once in the daily
notes, marked unconfirmed; a pending save that expires leaves its text there too,
never twice; confirming keeps the note as the day's log, rejecting deletes it.
Every time is derived from a fixed instant (the clock is moved, and keeps ticking).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import time_machine
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, PendingExpiredError, Settings, build_memory_graph
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.graph import flush_turn_writes
from langmem_ext.memory.extraction.unconfirmed import MARK
from langmem_ext.memory.sessions.flush import flush_to_pending
from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY

T0 = datetime(2031, 5, 6, 9, 0)
"""The conversations happen on this local morning."""
TTL = timedelta(hours=24)


def travel(when: datetime) -> time_machine.travel:
    return time_machine.travel(when.timestamp(), tick=True)


def notes_of(memory: Memory, scope: str, when: datetime) -> str:
    return memory.daily_notes(when.date(), scope=scope)


def marked_lines(text: str, fact: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith(f"- {MARK} {fact} ^m-")]


@pytest.fixture
def at_t0() -> Iterator[None]:
    with travel(T0):
        yield


def test_an_expired_user_save_leaves_its_text_in_the_daily_notes_marked(
    memory: Memory, at_t0: None
) -> None:
    fact = "I am allergic to peanuts"
    item = memory.save(fact, scope="u1")
    assert item.target == "long_term" and notes_of(memory, "u1", T0) == ""  # waits, as before
    with travel(T0 + TTL + timedelta(hours=1)):
        assert memory.list_pending(scope="u1") == []  # expired now
        with pytest.raises(PendingExpiredError, match="daily notes"):
            memory.confirm(item.id, scope="u1")
        memory.maintain(now=T0 + 2 * TTL)  # expires nothing more, writes nothing twice
        assert len(marked_lines(notes_of(memory, "u1", T0), fact)) == 1
        [hit] = [h for h in memory.search("peanut allergy", scope="u1") if fact in h.text]
        assert hit.unconfirmed and hit.path == f"memory/scopes/u1/{T0.date().isoformat()}.md"
        entry = memory.get_entry(hit.id, scope="u1")
        assert entry.unconfirmed and not entry.verified and entry.source == "agent"
    assert not (memory.root / "memory" / "scopes" / "u1" / "LONG_TERM.md").exists()
    status = memory.workspace.ledger.pending.get(item.id, scope="u1")
    assert status is not None and status.status == "expired"


def test_maintain_expires_at_its_own_time_and_reports_it(fake_memory: Memory, at_t0: None) -> None:
    item = fake_memory.save("Our wifi password is hunter2")
    report = fake_memory.maintain(now=T0 + TTL + timedelta(minutes=1))
    assert [(c.action, c.id) for c in report.changes if c.action == "expired"] == [
        ("expired", item.id)
    ]
    assert marked_lines(notes_of(fake_memory, "main", T0), "Our wifi password is hunter2")


def test_the_flush_notes_at_once_and_its_expiry_writes_nothing_twice(
    fake_memory: Memory, at_t0: None
) -> None:
    said = [
        HumanMessage("我叫林伟，我住在柏林。"),
        AIMessage("好的"),
        HumanMessage("I like green tea."),
    ]
    result = flush_to_pending(fake_memory, "u1", said, None)
    assert result.used_fallback and len(result.pending_ids) == 2
    notes = notes_of(fake_memory, "u1", T0)
    assert marked_lines(notes, "我叫林伟，我住在柏林。") and marked_lines(
        notes, "I like green tea."
    )
    again = flush_to_pending(fake_memory, "u1", said, None)  # the next flush sees them again
    assert again.pending_ids == [] and notes_of(fake_memory, "u1", T0) == notes
    with travel(T0 + TTL + timedelta(hours=2)):
        assert fake_memory.list_pending(scope="u1") == []
        assert notes_of(fake_memory, "u1", T0) == notes  # already in the notes: not again
    entries = fake_memory.list(scope="u1")
    assert len(entries) == 2 and all(e.unconfirmed and e.source == "flush" for e in entries)
    assert all(e.path.endswith(f"{T0.date().isoformat()}.md") for e in entries)


def test_confirming_keeps_the_note_as_the_days_log_and_rejecting_deletes_it(
    fake_memory: Memory, at_t0: None
) -> None:
    said = [HumanMessage("My locker code is 4711."), HumanMessage("I hate cilantro.")]
    locker, cilantro = flush_to_pending(fake_memory, "main", said, None).pending_ids
    confirmed = fake_memory.confirm(locker)
    assert confirmed.path == "MEMORY.md" and confirmed.verified  # type: ignore[union-attr]
    fake_memory.reject(cilantro)
    notes = notes_of(fake_memory, "main", T0)
    assert "- My locker code is 4711. ^m-" in notes and MARK not in notes  # the day's log
    assert "cilantro" not in notes  # the user said not to keep it
    texts = sorted((e.path, e.text) for e in fake_memory.list())
    day = f"memory/{T0.date().isoformat()}.md"
    assert texts == [("MEMORY.md", "My locker code is 4711."), (day, "My locker code is 4711.")]
    note = next(e for e in fake_memory.list() if e.path == day)
    assert not note.unconfirmed and note.source == "flush"
    assert [h["op"] for h in fake_memory.history(note.id)] == ["add", "update"]


def test_the_archive_notes_what_it_finds_in_that_days_notes(
    fake_memory: Memory, at_t0: None
) -> None:
    from langmem_ext.memory.lifecycle.jobs import archive_day
    from langmem_ext.memory.sessions.log import SessionLog

    day = (T0 - timedelta(days=1)).date()
    yesterday = datetime.combine(day, T0.time())
    log = SessionLog(fake_memory)
    log.append(
        "main",
        "t1",
        "user",
        "My name is Tom and I am allergic to peanuts.",
        at=yesterday.timestamp(),
    )
    log.append("main", "t1", "assistant", "Noted.", at=yesterday.timestamp() + 5)
    [episode] = archive_day(fake_memory, day)
    [item] = [p for p in fake_memory.list_pending() if p.target != "profile"]
    notes = fake_memory.daily_notes(day)
    assert episode.pending_ids == [item.id]
    assert marked_lines(notes, "My name is Tom and I am allergic to peanuts.")
    note = next(e for e in fake_memory.list() if e.unconfirmed)
    assert note.source == "archive"


def test_the_extractor_in_pending_mode_notes_and_proposes_once(
    fake_memory: Memory, at_t0: None
) -> None:
    fake_memory.settings.lifecycle.extract_mode = "pending"
    turn = [("user", "我搬到广州了"), ("assistant", "好的")]
    report = fake_memory.extract(turn, scope="u1")
    assert len(report.pending) == 1 and report.added == []
    assert marked_lines(notes_of(fake_memory, "u1", T0), "我搬到广州了")
    again = fake_memory.extract(turn, scope="u1")  # said again: nothing new
    assert again.pending == [] and len(fake_memory.list(scope="u1")) == 1
    # the note is a log, not a memory: it is never superseded by the next statement
    moved = fake_memory.extract([("user", "我住在深圳"), ("assistant", "好")], scope="u1")
    assert len(moved.pending) == 1 and moved.updated == []
    assert all(p.supersedes is None for p in fake_memory.list_pending(scope="u1"))


def test_the_extractor_leaves_to_a_pending_save_of_the_turn_what_it_covers(
    fake_memory: Memory,
) -> None:
    fake_memory.settings.lifecycle.extract_mode = "pending"
    fake_memory.save("主人喜欢吃拉面", scope="u1")  # the answer model saved it this turn
    report = fake_memory.extract([("user", "我喜欢吃拉面，请记住"), ("ai", "记下了")], scope="u1")
    assert report.pending == [] and report.ignored
    assert [p.text for p in fake_memory.list_pending(scope="u1")] == ["主人喜欢吃拉面"]
    assert fake_memory.list(scope="u1") == []


def test_the_extractor_leaves_to_the_turns_own_save_what_it_covers_once_answered(
    fake_memory: Memory,
) -> None:
    """The user may confirm the turn's save before the extraction runs in the background."""
    fake_memory.settings.lifecycle.extract_mode = "pending"
    saved = fake_memory.save("主人喜欢吃拉面", scope="u1")
    fake_memory.confirm(saved.id, scope="u1")
    turn = [
        HumanMessage("我喜欢吃拉面，请记住"),
        AIMessage("", tool_calls=[tool_call("memory_save", text="主人喜欢吃拉面")]),
        ToolMessage(f"Saved as pending {saved.id}.", tool_call_id="c1"),
        AIMessage("记下了，请确认。"),
    ]
    report = fake_memory.extract(turn, scope="u1")
    assert report.pending == [] and fake_memory.list_pending(scope="u1") == []
    assert [e.text for e in fake_memory.list(scope="u1")] == ["主人喜欢吃拉面"]


# -- a long conversation nobody confirms ----------------------------------------------

NAMES = [
    "Aiko", "Bruno", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hamid", "Ines", "Jonas",
    "Kalani", "Lorenzo", "Mireille", "Nikos", "Oksana", "Pavel", "Quentin", "Rosalind",
    "Sven", "Tamsin", "Ulrich", "Valentina", "Wendell", "Ximena", "Yusuf", "Zofia",
    "Anselm", "Beatrix", "Cosimo", "Delphine", "Evander", "Fenella", "Gideon", "Hortense",
    "Isidore", "Juniper", "Kasimir", "Leocadia", "Marisol", "Nevenka",
]  # fmt: skip
PROJECTS = [
    "lighthouse", "orchard", "glacier", "compass", "lantern", "harbor", "meadow", "falcon",
    "quarry", "tundra", "beacon", "canyon", "delta", "ember", "fjord", "grove", "horizon",
    "island", "jasper", "kelp", "lagoon", "mesa", "nebula", "oasis", "prairie", "quartz",
    "reef", "savanna", "timber", "upland", "valley", "willow", "xylem", "yonder", "zephyr",
    "atlas", "bramble", "cedar", "dune", "estuary",
]  # fmt: skip
FACT_RE = re.compile(r"My colleague \w+ works on the \w+ project\.")


def _fact(i: int) -> str:
    return f"My colleague {NAMES[i]} works on the {PROJECTS[i]} project."


def _long_conversation_model() -> ScriptedChatModel:
    """Answers every turn; in the silent flush turn it saves every fact it reads."""

    def policy(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        flushing = any(isinstance(m, HumanMessage) and m.content == FLUSH_PROMPT for m in messages)
        if flushing and isinstance(last, ToolMessage):
            return AIMessage(NO_REPLY)
        if flushing:
            facts = [
                f
                for m in messages
                if isinstance(m, HumanMessage)
                for f in FACT_RE.findall(str(m.content))
            ]
            calls = [tool_call("memory_save", text=f) for f in dict.fromkeys(facts)]
            return AIMessage("" if calls else NO_REPLY, tool_calls=calls)
        return AIMessage("Thanks, noted. " + "Let us keep going. " * 6)

    return ScriptedChatModel(policy=policy)


def test_a_long_conversation_nobody_confirms_loses_no_flushed_fact(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")  # the real embedder, real Chroma and SQLite
    s.short_term.context_window = 4000  # the memory tools' schemas alone are ~1,500 tokens
    s.short_term.keep_last_turns = 2
    config = {"configurable": {"thread_id": "long", "user_id": "dana"}}
    flushes = 0
    with travel(T0), Memory(settings=s) as memory:
        graph = build_memory_graph(_long_conversation_model(), memory, checkpointer=InMemorySaver())
        for i in range(40):
            text = f"{_fact(i)} " + "We also chatted about the weather and the trains. " * 4
            out = graph.invoke({"messages": [HumanMessage(text)]}, config)
            flushes += bool(out.get("flushed")) and i > 0
        flush_turn_writes(memory, timeout=30)
        rows = memory.workspace.ledger.pending.of_scope("user_dana", "pending")
        flushed = sorted({r.text for r in rows if r.source == "flush"})
        assert memory.list(scope="user_dana", category="fact")  # noted already, before any answer
    assert out.get("checkpoints", 0) >= 3, "the flush should have fired several times"
    assert len(flushed) >= 30 and set(flushed) <= {_fact(i) for i in range(40)}
    later = T0 + TTL + timedelta(hours=3)
    with travel(later), Memory(settings=s) as memory:
        assert memory.list_pending(scope="user_dana") == []  # nobody answered: all expired
        notes = notes_of(memory, "user_dana", T0)
        for fact in flushed:
            assert len(marked_lines(notes, fact)) == 1, fact  # kept once, marked
            name = fact.split()[2]
            hits = memory.search(f"What does {name} work on?", scope="user_dana", k=3)
            assert any(fact in h.text and h.unconfirmed for h in hits), fact
        assert memory.long_term_text(scope="user_dana") == ""  # promotion waited; nobody said yes

"""Server jobs: the day archive, idle conversations, the daily schedule (real stores)."""

from __future__ import annotations

import time
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from langmem_ext import Memory
from langmem_ext.memory.lifecycle.jobs import (
    ARCHIVED_DAY_KEY,
    DailyJobs,
    archive_day,
    archive_due_days,
    flush_active_threads,
    maintenance_due,
    next_daily_at,
    summarize_threads,
)
from langmem_ext.memory.lifecycle.maintenance import MAINTAIN_AT_KEY
from langmem_ext.memory.sessions.log import SessionLog
from langmem_ext.memory.sessions.manager import SessionManager

HOUR = 3600.0

pytestmark = pytest.mark.usefixtures("fixed_clock")  # yesterday, catch-up week: a fixed day


def at(day: date, hour: int, minute: int = 0) -> float:
    return datetime.combine(day, datetime.min.time()).replace(hour=hour, minute=minute).timestamp()


def talk(memory: Memory, scope: str, thread: str, when: float, user: str, answer: str) -> None:
    log = SessionLog(memory)
    log.append(scope, thread, "user", user, at=when)
    log.append(scope, thread, "assistant", answer, at=when + 5)


def snapshot(memory: Memory) -> tuple[dict[Path, bytes], int, int]:
    files = {p: p.read_bytes() for p in memory.root.rglob("*.md") if "transcripts" not in p.parts}
    pending = len(memory.workspace.ledger.pending.of_scope("main", "pending"))
    episodes = len(memory.list(scope="main", category="episode"))
    return files, pending, episodes


def test_archive_flushes_facts_and_summarises_each_active_scope_once(fake_memory: Memory) -> None:
    day = date.today() - timedelta(days=1)
    talk(fake_memory, "main", "t1", at(day, 9), "我叫小明，我住在上海。", "好的，记住了。")
    talk(
        fake_memory,
        "main",
        "t2",
        at(day, 20),
        "My name is Tom and I am allergic to peanuts.",
        "Noted.",
    )
    talk(fake_memory, "alice", "t3", at(day, 10), "I moved to Berlin last month.", "Nice!")
    talk(fake_memory, "bob", "t4", at(day - timedelta(days=1), 10), "I like jazz a lot.", "Cool.")
    episodes = archive_day(fake_memory, day)
    assert sorted(e.scope for e in episodes) == ["alice", "main"]  # bob talked another day
    main = next(e for e in episodes if e.scope == "main")
    assert main.events == 4 and main.used_fallback
    texts = [p.text for p in fake_memory.list_pending(scope="main")]
    assert "我叫小明，我住在上海。" in texts and any("peanuts" in t for t in texts)
    entry = fake_memory.get_entry(main.entry_id, scope="main")
    assert entry.category == "episode" and entry.text.startswith(f"Day {day.isoformat()} (main)")
    assert entry.path == f"memory/{day.isoformat()}.md"
    before = snapshot(fake_memory)
    assert archive_day(fake_memory, day) == []  # a second run writes nothing
    assert snapshot(fake_memory) == before


def test_archive_catches_up_missed_days_once(fake_memory: Memory) -> None:
    today = date.today()
    for back in (1, 2, 10):
        day = today - timedelta(days=back)
        talk(fake_memory, "main", f"t{back}", at(day, 12), f"We planned trip number {back}.", "OK")
    episodes = archive_due_days(fake_memory)
    assert len(episodes) == 2  # 10 days ago is past the catch-up week (and the event TTL holds it)
    assert (
        fake_memory.workspace.ledger.meta.get(ARCHIVED_DAY_KEY)
        == (today - timedelta(days=1)).isoformat()
    )
    assert archive_due_days(fake_memory) == []


def test_idle_graph_threads_are_summarised_once(fake_memory: Memory) -> None:
    now = time.time()
    talk(fake_memory, "main", "u/t1", now - 3 * HOUR, "Let's plan the Kyoto trip in May.", "Sure.")
    talk(fake_memory, "main", "u/t1", now - 2 * HOUR, "Book the ryokan near Gion.", "Done.")
    talk(fake_memory, "main", "u/t2", now - 10 * 60, "What is a good pasta recipe?", "Carbonara.")
    [episode] = summarize_threads(fake_memory, now=now)
    assert (episode.thread_id, episode.events) == ("u/t1", 4)
    text = fake_memory.get_entry(episode.entry_id, scope="main").text
    assert text.startswith("Conversation u/t1 on ") and "Kyoto" in text
    assert summarize_threads(fake_memory, now=now) == []  # once
    # t1 goes on and falls idle again: only its new part makes a new episode
    talk(fake_memory, "main", "u/t1", now - 30 * 60, "Also add a day in Nara.", "Added.")
    assert summarize_threads(fake_memory, now=now) == []  # t1 and t2 active again
    later = {e.thread_id: e for e in summarize_threads(fake_memory, now=now + 2 * HOUR)}
    assert set(later) == {"u/t1", "u/t2"} and later["u/t1"].events == 2
    t1_text = fake_memory.get_entry(later["u/t1"].entry_id, scope="main").text
    assert "Nara" in t1_text and "Kyoto" not in t1_text
    assert summarize_threads(fake_memory, now=now + 2 * HOUR) == []


def test_shutdown_flush_summarises_active_threads_and_skips_session_api(
    fake_memory: Memory,
) -> None:
    now = time.time()
    talk(fake_memory, "main", "u/live", now - 60, "Remind me to call mum on Sunday.", "Will do.")
    sessions = SessionManager(fake_memory)
    sessions.write_turn("main", "s1", "I'm planning a garden.", "Lovely.")
    [episode] = flush_active_threads(fake_memory, now=now)
    assert episode.thread_id == "u/live"
    assert flush_active_threads(fake_memory, now=now) == []
    # the Session API conversation is summarised by SessionManager, not twice
    assert [r.thread_id for r in sessions.summarize_idle(now=now + 2 * HOUR)] == ["s1"]
    assert summarize_threads(fake_memory, now=now + 2 * HOUR) == []


def test_next_daily_at_and_when_maintenance_is_due(fake_memory: Memory) -> None:
    day = date(2026, 3, 5)
    assert next_daily_at(at(day, 3, 59), 4, 0) == at(day, 4)
    assert next_daily_at(at(day, 4), 4, 0) == at(day + timedelta(days=1), 4)
    assert next_daily_at(at(day, 10), 4, 0) == at(day + timedelta(days=1), 4)
    assert maintenance_due(fake_memory, at(day, 10))  # never ran
    fake_memory.workspace.ledger.meta.set(MAINTAIN_AT_KEY, repr(at(day, 10)))
    assert not maintenance_due(fake_memory, at(day, 23))
    assert not maintenance_due(fake_memory, at(day + timedelta(days=1), 3, 59))
    assert maintenance_due(fake_memory, at(day + timedelta(days=1), 4))


def test_daily_jobs_run_what_is_due(fake_memory: Memory) -> None:
    fact = fake_memory.add("Likes ramen", scope="main")
    now = time.time()
    talk(fake_memory, "main", "u/t1", now - 3 * HOUR, "Let's plan the Kyoto trip.", "Sure.")
    jobs = DailyJobs(fake_memory, clock=lambda: now)
    first = jobs.run_due()
    assert first.maintenance is not None and not first.errors
    assert [e.thread_id for e in first.idle] == ["u/t1"]
    second = jobs.run_due()
    assert second.maintenance is None and second.idle == []
    later = now + 8 * 24 * HOUR
    third = jobs.run_due(later)
    assert third.maintenance is not None and third.maintenance.count("decayed") == 1
    assert fake_memory.get_entry(fact, scope="main").importance < 1.0
    assert jobs.next_wake(now) <= now + 10 * 60


def test_daily_jobs_thread_starts_and_stops(fake_memory: Memory) -> None:
    jobs = DailyJobs(fake_memory)
    jobs.start()
    deadline = time.monotonic() + 30
    while fake_memory.workspace.ledger.meta.get(MAINTAIN_AT_KEY) is None:
        assert time.monotonic() < deadline, "maintain did not run on start"
        time.sleep(0.05)
    jobs.stop(timeout=30)


def test_the_pass_schedules_graphs_left_with_memories_nobody_extracted(
    fake_memory: Memory,
) -> None:
    fake_memory.settings.knowledge.extract = False  # a process that wrote and stopped
    fake_memory.add("I live in Shanghai", scope="alice")
    fake_memory.background.wait()
    repo = fake_memory.workspace.ledger.triples
    assert repo.unextracted("alice", 10)
    fake_memory.settings.knowledge.extract = True
    run = DailyJobs(fake_memory).run_due()
    assert run.graphs == ["alice"] and not run.errors
    fake_memory.background.wait()
    assert repo.unextracted("alice", 10) == []
    assert DailyJobs(fake_memory).run_due().graphs == []  # nothing behind any more

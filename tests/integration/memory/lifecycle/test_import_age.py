"""An imported memory keeps its age: its idle clock starts when it was said."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import time_machine

from langmem_ext import Memory
from langmem_ext.core.config import LifecycleSettings
from langmem_ext.memory.lifecycle.decay import day_of, decay_outcome

NOW = datetime(2031, 3, 10, 12, 0)
"""A fixed local time: the import and the maintenance run happen then."""


def importance(memory: Memory, entry_id: str) -> float:
    st = memory.workspace.ledger.entries.get(entry_id)
    assert st is not None
    return st.importance


def test_an_import_decays_from_its_created_at_unless_accessed_since(fake_memory: Memory) -> None:
    said = NOW - timedelta(days=10)
    with time_machine.travel(NOW.timestamp(), tick=True):
        jazz, chess = fake_memory.add_many(["Likes jazz", "Plays chess"], created_at=said)
        scifi = fake_memory.add("Reads science fiction", created_at=said)
        recalled = fake_memory.add("Collects stamps", created_at=said)
        fake_memory.record_access([recalled], at=(NOW - timedelta(days=2)).timestamp())
        fresh = fake_memory.add("Learns the violin")  # said now
        fake_memory.maintain(now=NOW)
    ten_days_idle = decay_outcome(
        category="fact",
        importance=1.0,
        created_at=said.timestamp(),
        last_active=said.timestamp(),
        last_run=None,
        today=day_of(NOW.timestamp()),
        settings=LifecycleSettings(),
    )
    assert ten_days_idle.steps == 6 and ten_days_idle.importance < 1.0
    for entry_id in (jazz, chess, scifi):
        assert importance(fake_memory, entry_id) == ten_days_idle.importance
        assert fake_memory.get_entry(entry_id).created_at.timestamp() == said.timestamp()
    assert importance(fake_memory, recalled) == 1.0  # accessed two days ago: not idle enough
    assert importance(fake_memory, fresh) == 1.0


def test_an_import_into_a_scope_decayed_today_catches_up_like_one_that_was_there(
    fake_memory: Memory,
) -> None:
    said = NOW - timedelta(days=10)
    with time_machine.travel(NOW.timestamp(), tick=True):
        fake_memory.add("Was here before", created_at=said)
        fake_memory.maintain(now=NOW)  # the scope's decay has processed today
        before = fake_memory.add("Imported after today's decay", created_at=said)
    tomorrow = NOW + timedelta(days=1)
    with time_machine.travel(tomorrow.timestamp(), tick=True):
        fake_memory.maintain(now=tomorrow)
    eleven_days_idle = decay_outcome(
        category="fact",
        importance=1.0,
        created_at=said.timestamp(),
        last_active=said.timestamp(),
        last_run=None,
        today=day_of(tomorrow.timestamp()),
        settings=LifecycleSettings(),
    )
    [there] = [e for e in fake_memory.list() if e.id != before]
    assert importance(fake_memory, there.id) == pytest.approx(eleven_days_idle.importance)
    assert importance(fake_memory, before) == pytest.approx(eleven_days_idle.importance)

"""Reads that find a hand edit of a memory file while another writer holds the lock
wait for it at most ``index.read_sync_wait_s``, then go on with the index as it is
(they never wait for a long write); the first read after the writer is done picks the
edit up."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from _lock_helpers import held_elsewhere

from langmem_ext import Memory, Settings
from langmem_ext.core.errors import WorkspaceLockTimeout


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    settings = Settings(workspace=tmp_path / "ws", lock_timeout_s=2.0)
    settings.embeddings.provider = "fake"
    settings.index.read_sync_wait_s = 0.2
    mem = Memory(settings=settings)
    mem.add_many(["I am allergic to peanuts", "I live in Hangzhou"])
    yield mem
    mem.close()


def _scope_held(memory: Memory) -> AbstractContextManager[threading.Event]:
    """Another writer of ``main`` holds its lock for the block."""
    return held_elsewhere(lambda: memory.workspace.lock.hold_scope("main"))


def test_reads_do_not_wait_for_a_writer_and_the_next_one_picks_up_the_hand_edit(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    path = memory.root / "MEMORY.md"
    moved = "I moved to Shanghai last month"
    with _scope_held(memory):
        path.write_text(path.read_text(encoding="utf-8") + f"- {moved}\n", encoding="utf-8")
        with caplog.at_level(logging.WARNING):
            # the lock's 2 s timeout would raise WorkspaceLockTimeout here
            hits = memory.search("Shanghai", k=5)
            listed = memory.list()
            stats = memory.stats()
        assert moved not in {h.text for h in hits}  # not indexed yet
        assert {e.text for e in listed} == {"I am allergic to peanuts", "I live in Hangzhou"}
        assert stats
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
        assert "^m-" not in path.read_text(encoding="utf-8").splitlines()[-1]  # untouched
    assert moved in {h.text for h in memory.search("Shanghai", k=5)}
    assert "^m-" in path.read_text(encoding="utf-8").splitlines()[-1]  # the sync gave it an id


def test_a_read_waits_for_a_short_writer_and_reads_the_hand_edit(memory: Memory) -> None:
    memory.settings.index.read_sync_wait_s = 10.0
    path = memory.root / "MEMORY.md"
    moved = "I moved to Shanghai last month"
    with _scope_held(memory) as release:
        path.write_text(path.read_text(encoding="utf-8") + f"- {moved}\n", encoding="utf-8")
        threading.Timer(0.3, release.set).start()  # a background job's few moments
        hits = memory.search("Shanghai", k=5)
    assert moved in {h.text for h in hits}


def test_a_write_still_waits_for_the_lock_to_read_a_hand_edit_first(memory: Memory) -> None:
    """An update or delete syncs the scope first and so waits for the other writer (its
    own write needs the lock anyway)."""
    entry = memory.list()[0]
    path = memory.root / "MEMORY.md"
    with _scope_held(memory):
        path.write_text(path.read_text(encoding="utf-8") + "- I own a red bicycle\n", "utf-8")
        with pytest.raises(WorkspaceLockTimeout):
            memory.update(entry.id, "I am allergic to peanuts and cashews")
    assert memory.update(entry.id, "I am allergic to peanuts and cashews").id

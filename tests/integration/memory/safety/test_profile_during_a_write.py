"""A search and the safety block of a model call read the profile without waiting for
a long write of its scope: a hand edit made meanwhile reaches them at once, and is
recorded in the profile's history by the first read that gets the lock."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from _lock_helpers import held_elsewhere

from langmem_ext import Memory, Settings


@pytest.fixture
def lin_wei(tmp_path: Path) -> Iterator[Memory]:
    settings = Settings(workspace=tmp_path / "ws", lock_timeout_s=1.0)
    settings.embeddings.provider = "fake"
    memory = Memory(settings=settings)
    memory.upsert_facts({"name": "Lin Wei", "allergies": ["shellfish"]})
    memory.add_many(
        ["I am allergic to peanuts", "My sister is allergic to shellfish", "I live in Hangzhou"]
    )
    yield memory
    memory.close()


def test_a_hand_edit_reaches_search_and_the_safety_block_while_a_writer_holds_the_scope(
    lin_wei: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    memory = lin_wei
    assert memory.search("What am I allergic to?", k=3)[0].text == "I am allergic to peanuts"
    assert '- allergies: ["shellfish"]' in memory.safety_block()
    path = memory.root / "PROFILE.md"
    with held_elsewhere(lambda: memory.workspace.lock.hold_scope("main")):
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace("- allergies: shellfish", "- allergies: shellfish, peanuts"),
            encoding="utf-8",
        )
        with caplog.at_level(logging.WARNING):
            block = memory.safety_block()
            hits = memory.search("What am I allergic to?", k=3)
            sections = memory.safety_recall("What am I allergic to?")
        assert '- allergies: ["shellfish", "peanuts"]' in block
        assert hits[0].text == "I am allergic to peanuts"
        assert hits[0].debug.get("safety_first") == 1.0
        assert [s.profile for s in sections] == [["shellfish", "peanuts"]]
        # nothing waited for the lock (its 1 s timeout would have logged and dropped
        # the safety stage)
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    history = memory.profile_history(field="allergies")
    assert [c.source for c in history] == ["app", "hand-edit"]
    assert history[-1].new == ["shellfish", "peanuts"]

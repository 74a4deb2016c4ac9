"""Memory versions: an update supersedes, never loses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from langmem_ext import EntrySupersededError, Memory, Settings

T1 = datetime(2026, 3, 1, 12, tzinfo=UTC)
T2 = datetime(2026, 6, 1, 12, tzinfo=UTC)


def _moved(memory: Memory, old: str, new: str, scope: str = "main") -> tuple[str, str]:
    first = memory.add(old, scope=scope, created_at=T1)
    second = memory.update(first, new, scope=scope, at=T2)
    return first, second.id


@pytest.mark.parametrize(
    ("old", "new", "question", "old_word", "new_word"),
    [
        ("我住在上海", "我上个月搬到深圳了", "我住在哪", "上海", "深圳"),
        (
            "I live in Berlin",
            "I moved to Munich last month",
            "Where do I live?",
            "Berlin",
            "Munich",
        ),
    ],
)
def test_search_gives_the_current_version_and_as_of_the_old_one(
    memory: Memory, old: str, new: str, question: str, old_word: str, new_word: str
) -> None:
    memory.add("My sister likes tennis")
    first, second = _moved(memory, old, new)
    hits = memory.search(question, k=5)
    assert new_word in hits[0].text and hits[0].id == second and hits[0].valid_to is None
    assert not any(old_word in h.text for h in hits)
    past = memory.search(question, k=5, as_of=T1 + timedelta(days=10))
    assert past[0].id == first and old_word in past[0].text
    assert not any(new_word in h.text for h in past)
    both = memory.search(question, k=5, include_superseded=True)
    by_id = {h.id: h for h in both}
    assert by_id[first].valid_to == T2 and by_id[second].valid_to is None


def test_markdown_shows_the_superseded_version_struck_through(memory: Memory) -> None:
    first, second = _moved(memory, "I live in Berlin", "I moved to Munich")
    md = (memory.root / "MEMORY.md").read_text(encoding="utf-8")
    assert f"- ~~I live in Berlin~~ ^{first}\n- I moved to Munich ^{second}\n" in md
    entries = {e.id: e for e in memory.list(include_superseded=True)}
    assert entries[first].current is False and entries[first].valid_to == T2
    assert entries[second].supersedes == first and entries[second].created_at == T2
    assert [e.id for e in memory.list()] == [second]


def test_history_shows_the_chain_from_any_version(memory: Memory) -> None:
    first, second = _moved(memory, "I live in Berlin", "I moved to Munich")
    third = memory.update(second, "I moved to Hamburg").id
    for vid in (first, second, third):
        hist = memory.history(vid)
        assert [h["id"] for h in hist] == [first, first, second, second, third]
        assert [h["op"] for h in hist] == ["add", "superseded", "add", "superseded", "add"]
    with pytest.raises(EntrySupersededError, match=third):
        memory.update(first, "I live in Paris")


def test_hand_edits_strike_and_revive(memory: Memory) -> None:
    first, second = _moved(memory, "I live in Berlin", "I moved to Munich")
    md = memory.root / "MEMORY.md"
    text = md.read_text(encoding="utf-8")
    text = text.replace("- ~~I live in Berlin~~", "- I live in Berlin")  # revived by hand
    text = text.replace(f"- I moved to Munich ^{second}", f"- ~~I moved to Munich~~ ^{second}")
    md.write_text(text, encoding="utf-8")
    memory.sync()
    assert [e.id for e in memory.list()] == [first]
    assert memory.search("Where do I live?", k=3)[0].id == first
    ops = [h["op"] for h in memory.history(first)]
    assert "hand-reopen" in ops and "hand-supersede" in ops


def test_edit_in_place_keeps_one_version(fake_memory: Memory) -> None:
    eid = fake_memory.add("I live in Berln")
    same = fake_memory.update(eid, "I live in Berlin", supersede=False)
    assert same.id == eid and same.current
    assert [h["op"] for h in fake_memory.history(eid)] == ["add", "update"]


def test_versions_survive_a_rebuild_of_the_index(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    mem = Memory(settings=s)
    first, second = _moved(mem, "I live in Berlin", "I moved to Munich")
    mem.reindex()
    assert [e.id for e in mem.list()] == [second]
    assert mem.get_entry(first).valid_to == T2
    mem.close()


def test_text_wrapped_in_strike_marks_is_refused(fake_memory: Memory) -> None:
    from langmem_ext import InvalidInputError

    with pytest.raises(InvalidInputError, match="superseded"):
        fake_memory.add("~~I live in Berlin~~")
    assert fake_memory.list() == []


def test_stats_count_current_versions(fake_memory: Memory) -> None:
    old = fake_memory.add("I live in Berlin")
    fake_memory.update(old, "I moved to Munich")
    main = fake_memory.stats()["scopes"]["main"]
    assert (main["entries"], main["by_category"]["fact"], main["superseded"]) == (1, 1, 1)


def test_stats_spread_counts_current_memories_by_importance_and_day(fake_memory: Memory) -> None:
    """The admin charts' numbers, counted in SQL, equal those of the memories themselves:
    superseded and deleted versions left out, days outside the window left out."""
    from collections import Counter
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    fake_memory.add("I live in Berlin", importance=0.3, created_at=now - timedelta(days=2))
    old = fake_memory.add("I work at Acme", importance=0.55)
    fake_memory.update(old, "I work at Initech")
    gone = fake_memory.add("I like jazz", importance=0.9)
    fake_memory.delete(gone)
    fake_memory.add("I own a cat", importance=1.0, created_at=now - timedelta(days=40))
    fake_memory.add("I like tea", importance=0.0)
    main = fake_memory.stats(days=30)["scopes"]["main"]
    entries = fake_memory.list()
    tenths = Counter(min(int(e.importance * 10), 9) for e in entries)
    assert main["importance_histogram"] == [tenths.get(i, 0) for i in range(10)]
    assert sum(main["importance_histogram"]) == main["entries"] == 4
    days = main["added_per_day"]
    assert len(days) == 30 and list(days) == sorted(days)
    assert list(days)[-1] == now.date().isoformat()
    per = Counter(e.created_at.date().isoformat() for e in entries)
    assert days == {d: per.get(d, 0) for d in days}
    assert sum(days.values()) == 3  # the cat was said 40 days ago

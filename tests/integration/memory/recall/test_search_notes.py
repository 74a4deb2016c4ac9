"""Notes in search: prose typed into memory files is found, cited and read back.

Real embedder (USE), real embedded Chroma, real SQLite throughout.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
import time_machine

from langmem_ext import Memory, Settings
from langmem_ext.core.errors import EntryNotFoundError, InvalidPathError
from langmem_ext.memory.types import UNCONFIRMED_MARK
from langmem_ext.tools import MemoryGetTool, MemorySearchTool

NOW = datetime(2026, 3, 16, 10, 0)
"""The tests' clock: two days after the daily note below."""

LONG_TERM = """# Long-term memory

My spare key is with the neighbour, Mrs. Wang, at number 12.

## Facts
- User works at a bakery ^m-aaaa1111
- User's sister lives in Shanghai ^m-bbbb2222

## 旅行
去年秋天我们在京都住了一周，最喜欢的是伏见稻荷。
"""
DAILY = """# 2026-03-14

Dentist appointment moved to Friday 3pm; bring the insurance card.

体检报告说胆固醇偏高，医生建议少吃油炸食品。
"""


@pytest.fixture
def frozen() -> object:
    with time_machine.travel(NOW.timestamp(), tick=True) as traveller:
        yield traveller


def _write(root: Path) -> None:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text(LONG_TERM, encoding="utf-8")
    (root / "memory" / "2026-03-14.md").write_text(DAILY, encoding="utf-8")


@pytest.fixture
def notes(settings: Settings, frozen: object) -> object:
    _write(Path(settings.workspace))
    mem = Memory(settings=settings)
    yield mem
    mem.close()


def _first_note(mem: Memory, query: str):  # type: ignore[no-untyped-def]
    hits = mem.search(query, scope="main", k=5)
    found = [h for h in hits if h.source == "note"]
    assert found, f"no note for {query!r}: {[h.text for h in hits]}"
    return found[0], hits


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Where is my spare key?", "My spare key is with the neighbour"),
        ("备用钥匙放在谁那里？", "My spare key is with the neighbour"),
        ("我们在京都住了多久？", "去年秋天我们在京都住了一周"),
        ("How long did we stay in Kyoto?", "去年秋天我们在京都住了一周"),
        ("When is the dentist appointment?", "Dentist appointment moved to Friday 3pm"),
        ("医生对胆固醇有什么建议？", "体检报告说胆固醇偏高"),
        ("What did the doctor say about my cholesterol?", "体检报告说胆固醇偏高"),
    ],
)
def test_a_hand_written_paragraph_is_found_in_both_languages(
    notes: Memory, query: str, expected: str
) -> None:
    note, hits = _first_note(notes, query)
    assert note.text.startswith(expected)
    assert hits[0].source == "note"  # nothing the user saved answers it better
    assert note.anchor == f"{note.path}#^{note.id}" and note.id.startswith("p-")


def test_a_note_is_read_back_through_memory_get(notes: Memory) -> None:
    note, _hits = _first_note(notes, "When is the dentist appointment?")
    assert note.path == "memory/2026-03-14.md"
    assert note.created_at.date().isoformat() == "2026-03-14"  # the daily note's day
    got = notes.get(note.anchor, scope="main")
    assert got.from_line == note.line == 3
    assert got.lines == ["Dentist appointment moved to Friday 3pm; bring the insurance card."]
    search = MemorySearchTool(memory=notes).invoke({"query": "When is the dentist appointment?"})
    assert f"[{note.anchor} (line 3)]" in search and "a note in the file" in search
    # the citation exactly as shown works as memory_get's path
    text = MemoryGetTool(memory=notes).invoke({"path": f"[{note.anchor} (line 3)]"})
    assert '3: "Dentist appointment moved to Friday 3pm; bring the insurance card."' in text

    zh, _ = _first_note(notes, "我们在京都住了多久？")
    assert zh.heading == "旅行" and zh.category == "fact"
    assert notes.get(zh.anchor, scope="main").lines == [
        "去年秋天我们在京都住了一周，最喜欢的是伏见稻荷。"
    ]


def test_the_anchor_survives_an_unrelated_edit(notes: Memory) -> None:
    note, _ = _first_note(notes, "Where is my spare key?")
    path = notes.root / "MEMORY.md"
    content = path.read_text(encoding="utf-8")
    path.write_text(
        content.replace(
            "# Long-term memory\n", "# Long-term memory\n\nA new note on top.\n"
        ).replace("最喜欢的是伏见稻荷", "最喜欢的是清水寺"),
        encoding="utf-8",
    )
    notes.add("User likes green tea", scope="main")
    again, _ = _first_note(notes, "Where is my spare key?")
    assert again.id == note.id and again.line == note.line + 2
    assert notes.get(note.anchor, scope="main").lines == [note.text]  # the old citation


def test_an_edited_note_is_found_by_its_new_text_and_a_deleted_one_is_gone(
    notes: Memory,
) -> None:
    note, _ = _first_note(notes, "When is the dentist appointment?")
    daily = notes.root / "memory" / "2026-03-14.md"
    daily.write_text(
        daily.read_text(encoding="utf-8").replace("Friday 3pm", "Monday 9am"), encoding="utf-8"
    )
    edited, _ = _first_note(notes, "When is the dentist appointment?")
    assert "Monday 9am" in edited.text and edited.id != note.id
    with pytest.raises(InvalidPathError, match="No note"):
        notes.get(note.anchor, scope="main")
    daily.write_text("# 2026-03-14\n", encoding="utf-8")
    hits = notes.search("When is the dentist appointment?", scope="main")
    assert not any("Dentist" in h.text for h in hits)
    assert notes.workspace.vectors.count("prose.main") == 2  # the daily's two went


def test_notes_search_through_chroma_when_there_are_many(tmp_path: Path, frozen: object) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.index.exact_search_max_entries = 0  # every vector search goes to Chroma
    _write(tmp_path / "ws")
    with Memory(settings=s) as mem:
        note, _ = _first_note(mem, "How long did we stay in Kyoto?")
        assert note.text.startswith("去年秋天")
        assert mem.workspace.vectors.count("prose.main") == 4


def test_a_note_that_is_a_memory_is_one_hit(settings: Settings, frozen: object) -> None:
    root = Path(settings.workspace)
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# Long-term memory\n\nI am allergic to peanuts.\n\n## Facts\n"
        "- I am allergic to peanuts ^m-cccc3333\n",
        encoding="utf-8",
    )
    (root / "memory" / "2026-03-15.md").write_text(
        f"# 2026-03-15\n\n- {UNCONFIRMED_MARK} My cat is called Doudou ^m-dddd4444\n\n"
        "My cat is called Doudou.\n",
        encoding="utf-8",
    )
    with Memory(settings=settings) as mem:
        allergy = mem.search("Am I allergic to anything?", scope="main", k=5)
        assert [h.source for h in allergy if "peanuts" in h.text] == ["memory"]
        cat = mem.search("What is my cat called?", scope="main", k=5)
        assert [h.source for h in cat if "Doudou" in h.text] == ["memory"]


def test_notes_are_not_memories(notes: Memory) -> None:
    note, _ = _first_note(notes, "Where is my spare key?")
    with pytest.raises(EntryNotFoundError):
        notes.update(note.id, "My spare key is in the drawer", scope="main")
    assert [e.text for e in notes.list(scope="main")] == [
        "User works at a bakery",
        "User's sister lives in Shanghai",
    ]
    cat = notes.search("Where is my spare key?", scope="main", category="core")
    assert not [h for h in cat if h.source == "note"]  # it is under no Core heading


def test_the_prose_setting_turns_notes_off(tmp_path: Path, frozen: object) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.retrieval.prose = False
    _write(tmp_path / "ws")
    with Memory(settings=s) as mem:
        hits = mem.search("Where is my spare key?", scope="main")
        assert not [h for h in hits if h.source == "note"]

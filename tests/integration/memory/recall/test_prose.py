"""The prose of memory files as chunks: parsing, anchors, and the index kept in step."""

from __future__ import annotations

import sqlite3

import pytest

from langmem_ext import Memory
from langmem_ext.workspace.prose import CHUNK_MAX_CHARS, joins_prose, parse_prose

FILE = """# Long-term memory

My spare key is with the neighbour, Mrs. Wang.
She lives at number 12.

## Core
- 主人喜欢拉面 ^m-3f9a1c02d4
A line typed right after an entry.

## Trip to Japan
### Food
1. Ramen in Fukuoka
   a very rich broth
2. Sushi in Tokyo
+ one more item
---
```
code

more code
```
| city | days |
|---|---|

去年秋天我们在京都住了一周。
"""


def _texts(content: str, path: str = "MEMORY.md") -> list[tuple[str, str, str, int, int]]:
    return [(c.text, c.heading, c.category, c.line, c.end_line) for c in parse_prose(content, path)]


def test_chunks_are_paragraphs_list_items_and_blocks_with_their_headings() -> None:
    assert _texts(FILE) == [
        (
            "My spare key is with the neighbour, Mrs. Wang.\nShe lives at number 12.",
            "",
            "fact",
            3,
            4,
        ),
        ("A line typed right after an entry.", "Core", "core", 8, 8),
        ("1. Ramen in Fukuoka\na very rich broth", "Trip to Japan › Food", "fact", 12, 13),
        ("2. Sushi in Tokyo", "Trip to Japan › Food", "fact", 14, 14),
        ("+ one more item", "Trip to Japan › Food", "fact", 15, 15),
        ("```\ncode\nmore code\n```", "Trip to Japan › Food", "fact", 17, 21),
        ("| city | days |\n|---|---|", "Trip to Japan › Food", "fact", 22, 23),
        ("去年秋天我们在京都住了一周。", "Trip to Japan › Food", "fact", 25, 25),
    ]
    [first] = parse_prose("# t\n\n## 旅行\n我们去了京都。\n", "memory/2026-03-14.md")
    assert first.indexed_text == "旅行\n我们去了京都。"  # headings are searched with it


def test_entries_and_headings_are_not_prose() -> None:
    content = (
        "# Long-term memory\n\n## Facts\n- Likes tea ^m-0001\n- typed by hand\n  on two lines\n"
    )
    assert parse_prose(content, "MEMORY.md") == []
    assert parse_prose("", "MEMORY.md") == []
    assert parse_prose("|---|---|\n\n🙂🙂\n", "MEMORY.md") == []  # nothing to search for


def test_anchors_survive_edits_elsewhere_and_change_with_the_text() -> None:
    before = {c.text: c for c in parse_prose(FILE, "MEMORY.md")}
    edited = (
        "# Long-term memory\n\nA new first paragraph.\n\n"
        + FILE.split("\n", 2)[2].replace("2. Sushi in Tokyo", "2. Sushi in Osaka")
        + "\n## Facts\n- Lives in Lyon ^m-0a1b2c3d4e\n"
    )
    after = {c.text: c for c in parse_prose(edited, "MEMORY.md")}
    for text in ("去年秋天我们在京都住了一周。", "1. Ramen in Fukuoka\na very rich broth"):
        assert after[text].anchor == before[text].anchor
        assert after[text].line == before[text].line + 2  # moved, same anchor
    assert "2. Sushi in Tokyo" not in after
    assert after["2. Sushi in Osaka"].anchor != before["2. Sushi in Tokyo"].anchor
    # the file is part of the anchor; copies of one text in a file are numbered
    again = parse_prose("Same words.\n\nSame words.\n", "memory/2026-03-14.md")
    assert again[1].anchor == again[0].anchor + "-2"
    assert parse_prose("Same words.\n", "MEMORY.md")[0].anchor != again[0].anchor


def test_long_paragraphs_are_cut_between_lines() -> None:
    line = "word " * 50
    chunks = parse_prose("\n".join([line] * 20) + "\n", "MEMORY.md")
    assert len(chunks) > 1
    assert all(len(c.text) <= CHUNK_MAX_CHARS for c in chunks)
    assert chunks[0].line == 1 and chunks[-1].end_line == 20
    assert [c.line for c in chunks[1:]] == [c.end_line + 1 for c in chunks[:-1]]


def test_joins_prose() -> None:
    assert joins_prose("a paragraph line", "another one")
    assert not joins_prose("a paragraph line", "")
    assert not joins_prose("- an entry ^m-0001", "prose")
    assert not joins_prose("prose", "## Heading")
    assert not joins_prose(None, "prose")


def _indexed(memory: Memory, path: str) -> list[tuple[str, int, int, str]]:
    return [
        (p.id, p.line, p.end_line, p.text)
        for p in memory.workspace.keyword.passages_of_path("prose", path)
    ]


def _parsed(memory: Memory, path: str) -> list[tuple[str, int, int, str]]:
    content = (memory.root / path).read_text(encoding="utf-8")
    return [(c.anchor, c.line, c.end_line, c.text) for c in parse_prose(content, path)]


def test_every_write_keeps_the_prose_index_in_step_with_the_file(fake_memory: Memory) -> None:
    mem = fake_memory
    (mem.root / "MEMORY.md").write_text(
        "# Long-term memory\n\nIntro paragraph.\n\n## Facts\n- Likes tea ^m-aaaa1111\n"
        "Between two entries.\n- Likes rice ^m-bbbb2222\nAfter the entries.\n\n"
        "## Episodes\nA trip in May.\n",
        encoding="utf-8",
    )
    mem.sync()
    assert _indexed(mem, "MEMORY.md") == _parsed(mem, "MEMORY.md")
    assert len(_indexed(mem, "MEMORY.md")) == 4
    mem.add("Lives in Lyon", scope="main")  # into the middle section: lines below move
    assert _indexed(mem, "MEMORY.md") == _parsed(mem, "MEMORY.md")
    mem.update("m-aaaa1111", "Likes green tea", scope="main")  # a new version below it
    assert _indexed(mem, "MEMORY.md") == _parsed(mem, "MEMORY.md")
    current = next(e for e in mem.list(scope="main") if e.text == "Likes rice")
    mem.delete(current.id, scope="main")  # two paragraphs now read as one
    assert _indexed(mem, "MEMORY.md") == _parsed(mem, "MEMORY.md")
    assert any(
        t == "Between two entries.\nAfter the entries." for *_x, t in _indexed(mem, "MEMORY.md")
    )
    lyon = next(e for e in mem.list(scope="main") if e.text == "Lives in Lyon")
    mem.set_category(lyon.id, "episode", scope="main")
    assert _indexed(mem, "MEMORY.md") == _parsed(mem, "MEMORY.md")
    assert not mem.workspace.keyword.prose_lagging("main")


def test_hand_edits_round_trip_and_reindex(fake_memory: Memory) -> None:
    mem = fake_memory
    path = mem.root / "MEMORY.md"
    prose = "Intro paragraph with two trailing spaces  \nand a hard break.\n\n> a quote\n"
    path.write_text(f"# Long-term memory\n\n{prose}\n## Facts\n- typed by hand\n", encoding="utf-8")
    report = mem.sync()
    assert report.ids_assigned == 1  # an id-less bullet is still a memory, as before
    assert [e.text for e in mem.list(scope="main")] == ["typed by hand"]
    mem.add("Lives in Lyon", scope="main")
    assert prose in path.read_text(encoding="utf-8")  # the prose is never rewritten
    first = _indexed(mem, "MEMORY.md")
    path.write_text(path.read_text(encoding="utf-8").replace("> a quote", "> a better quote"))
    mem.sync()
    second = _indexed(mem, "MEMORY.md")
    assert second[0] == first[0]  # untouched chunk: same row, same anchor
    assert second[1][3] == "> a better quote" and second[1][0] != first[1][0]
    path.write_text(path.read_text(encoding="utf-8").replace("> a better quote\n", ""))
    mem.sync()
    assert [t for *_x, t in _indexed(mem, "MEMORY.md")] == [first[0][3]]
    queued = {i for i, _part in mem.workspace.keyword.vector_deletes()}
    assert not queued  # the sync's flush removed the gone chunk's vector too


def test_an_index_from_before_prose_reads_it_on_the_next_search(
    fake_memory: Memory, request: pytest.FixtureRequest
) -> None:
    mem = fake_memory
    (mem.root / "memory").mkdir(exist_ok=True)
    (mem.root / "memory" / "2026-03-14.md").write_text(
        "# 2026-03-14\n\nDentist moved to Friday 3pm.\n", encoding="utf-8"
    )
    mem.sync()
    index = mem.root / ".index" / "index.db"
    settings = mem.settings
    mem.close()
    with sqlite3.connect(index) as conn:  # as an index written before prose was indexed
        conn.executescript("DROP TABLE passages; DROP TABLE passages_fts; DROP TABLE prose_files;")
    mem = Memory(settings=settings)
    request.addfinalizer(mem.close)
    kw = mem.workspace.keyword
    assert kw.prose_lagging("main") == ["memory/2026-03-14.md"]
    assert mem.workspace.scope_needs_sync("main")
    mem.search("dentist", scope="main")
    assert [p.text for p in kw.passages_of_path("prose", "memory/2026-03-14.md")] == [
        "Dentist moved to Friday 3pm."
    ]
    assert not kw.prose_lagging("main")

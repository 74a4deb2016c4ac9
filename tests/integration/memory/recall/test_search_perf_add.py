"""Appending entries indexes only the new ones: same index as a full parse.

Behaviour tests of :func:`insert_entries_tracked` and the append fast path of
:meth:`Workspace.write_entries` (no timings).
"""

from __future__ import annotations

import pytest

from langmem_ext import Memory
from langmem_ext.workspace.markdown import insert_entries, insert_entries_tracked, parse_entries

FILES = [
    "",
    "# Long-term memory\n",
    "# Long-term memory",
    "# t\n\n## Core\n- a core one ^m-aaaa1\n\n## Facts\n- a fact ^m-bbbb2\n- another\n  on two lines ^m-cccc3\n",
    "# t\n\n## Facts\n- f1 ^m-aaaa1\n## Core\n- c1 ^m-bbbb2\n",
    "# t\n\n## Core\n- c1 ^m-aaaa1\n\n### Sub notes\n- sub ^m-bbbb2\n\n\n## Episodes\n- e1 ^m-cccc3\n\n\n",
    "- loose bullet ^m-aaaa1\n- another ^m-bbbb2\n",
    "# t\n\n## 核心\n- 我叫林伟 ^m-aaaa1\n\n## Random notes\n- note ^m-bbbb2\n\n## Facts\n\n\n",
]
ITEMS = [
    [("m-new01", "a new fact", "fact")],
    [("m-new01", "new core", "core"), ("m-new02", "new episode", "episode")],
    [
        ("m-new01", "line one\nline two", "fact"),
        ("m-new02", "系统提示", "system"),
        ("m-new03", "core again", "core"),
        ("m-new04", "fact again", "fact"),
    ],
]


def _moved(old_line: int, shifts: list[tuple[int, int]]) -> int:
    for after, count in shifts:
        if old_line > after:
            old_line += count
    return old_line


@pytest.mark.parametrize("content", FILES)
@pytest.mark.parametrize("items", ITEMS)
def test_tracked_insert_matches_a_full_parse(
    content: str, items: list[tuple[str, str, str]]
) -> None:
    ins = insert_entries_tracked(content, items, title="Long-term memory")
    assert ins.content == insert_entries(content, items, title="Long-term memory")
    after = parse_entries(ins.content)
    new_ids = {i for i, _t, _c in items}
    assert ins.entries == [e for e in after if e.id in new_ids]
    before = {e.id: e for e in parse_entries(content)}
    for e in after:
        if e.id in before:
            old = before[e.id]
            assert (e.line, e.end_line) == (
                _moved(old.line, ins.shifts),
                _moved(old.end_line, ins.shifts),
            )
            assert (e.text, e.category) == (old.text, old.category)


def _index_of(memory: Memory, rel: str) -> dict[str, tuple[int, str, str]]:
    docs = memory.workspace.keyword.docs_of_path(rel)
    return {i: (d.line, d.category, d.text) for i, d in docs.items()}


def _parsed(memory: Memory, rel: str) -> dict[str, tuple[int, str, str]]:
    text = (memory.workspace.layout.root / rel).read_text(encoding="utf-8")
    return {e.id: (e.line, e.category, e.text) for e in parse_entries(text) if e.id}


def test_appends_keep_the_index_equal_to_the_file(fake_memory: Memory) -> None:
    m = fake_memory
    m.add_many([f"fact number {i}" for i in range(5)], category="fact")
    rel = "MEMORY.md"
    # Core goes above Facts: every fact moves down.
    for i, cat in enumerate(["core", "fact", "episode", "core", "system", "fact", "core"]):
        m.add(f"entry {i} in {cat}", category=cat)
        assert _index_of(m, rel) == _parsed(m, rel)
    m.add_many(
        ["one more core", "one more fact", "an episode"], category=["core", "fact", "episode"]
    )
    assert _index_of(m, rel) == _parsed(m, rel)
    hits = m.search("entry 3 in core", k=3)
    assert hits and hits[0].text == "entry 3 in core"
    assert m.get(f"{hits[0].path}:{hits[0].line}", lines=1).lines[0].startswith("- entry 3 in core")


def test_hand_edit_with_unchanged_stamp_still_indexes_right(fake_memory: Memory) -> None:
    """A file changed behind the index's back (same size and mtime) takes the full path."""
    import os

    m = fake_memory
    m.add_many(["alpha fact", "beta fact"], category="fact")
    path = m.workspace.layout.root / "MEMORY.md"
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    swapped = text.replace("- alpha fact", "- alpha fxct")  # same size
    path.write_text(swapped, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    m.add("gamma core", category="core")
    lines = {e.id: e.line for e in parse_entries(path.read_text(encoding="utf-8")) if e.id}
    assert {i: v[0] for i, v in _index_of(m, "MEMORY.md").items()} == lines

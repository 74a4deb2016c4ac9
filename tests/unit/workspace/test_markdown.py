from __future__ import annotations

from langmem_ext.workspace.markdown import (
    assign_missing_ids,
    entry_at,
    insert_entries,
    parse_entries,
    render_bullet,
    replace_entry,
    supersede_entry,
)


def test_entries_go_under_their_category_sections() -> None:
    c = insert_entries(
        "",
        [("m-aaaa1", "主人喜欢吃拉面", "core"), ("m-bbbb2", "Lives in Berlin", "fact")],
        title="Long-term memory",
    )
    c = insert_entries(c, [("m-cccc3", "Also core", "core")], title="ignored")
    entries = parse_entries(c)
    assert [(e.id, e.category) for e in entries] == [
        ("m-aaaa1", "core"),
        ("m-cccc3", "core"),
        ("m-bbbb2", "fact"),
    ]
    assert c.startswith("# Long-term memory\n")
    assert "## Core" in c and "## Facts" in c


def test_multiline_entries_round_trip() -> None:
    c = insert_entries("", [("m-dddd4", "line one\nline two", "fact")], title="t")
    [e] = parse_entries(c)
    assert e.text == "line one\nline two"
    assert e.end_line == e.line + 1


def test_hand_typed_bullets_get_ids_and_duplicates_are_renamed() -> None:
    c = "# Notes\n\n## Facts\n- typed by hand\n- copied ^m-aaaa1\n- copied again ^m-aaaa1\n"
    _new, entries = assign_missing_ids(c, taken=set())
    ids = [e.id for e in entries]
    assert None not in ids and len(set(ids)) == 3
    assert ids[1] == "m-aaaa1"
    # an id used in another file is renamed here
    _, entries2 = assign_missing_ids("- x ^m-zzzz9\n", taken={"m-zzzz9"})
    assert entries2[0].id != "m-zzzz9"


def test_unknown_headings_and_chinese_headings() -> None:
    c = "# x\n\n## 核心\n- 我叫林伟 ^m-aaaa1\n\n## Random notes\n- note ^m-bbbb2\n"
    cats = {e.id: e.category for e in parse_entries(c)}
    assert cats == {"m-aaaa1": "core", "m-bbbb2": "fact"}


def test_replace_and_remove() -> None:
    c = insert_entries("", [("m-aaaa1", "a", "fact"), ("m-bbbb2", "b", "fact")], title="t")
    c2, found = replace_entry(c, "m-aaaa1", "a2")
    assert found and [e.text for e in parse_entries(c2)] == ["a2", "b"]
    c3, found = replace_entry(c2, "m-bbbb2", None)
    assert found and [e.text for e in parse_entries(c3)] == ["a2"]
    _, found = replace_entry(c3, "m-nope1", "x")
    assert not found


def test_struck_bullets_are_superseded_versions() -> None:
    content = "## Facts\n- ~~I live in Berlin~~ ^m-aaaa1\n- I live in Munich ^m-bbbb2\n"
    old, new = parse_entries(content)
    assert (old.text, old.superseded, old.category) == ("I live in Berlin", True, "fact")
    assert (new.text, new.superseded) == ("I live in Munich", False)
    multi = render_bullet("line one\nline two", "m-cccc3", superseded=True)
    assert multi == ["- ~~line one", "  line two~~ ^m-cccc3"]
    (parsed,) = parse_entries("\n".join(multi))
    assert (parsed.text, parsed.superseded) == ("line one\nline two", True)


def test_supersede_entry_strikes_and_writes_below_in_the_same_section() -> None:
    content = "# M\n\n## Facts\n- I live in Berlin ^m-aaaa1\n- I like tea ^m-dddd4\n\n## Core\n- x ^m-eeee5\n"
    out, new = supersede_entry(content, "m-aaaa1", "m-bbbb2", "I moved to Munich")
    assert out == (
        "# M\n\n## Facts\n- ~~I live in Berlin~~ ^m-aaaa1\n- I moved to Munich ^m-bbbb2\n"
        "- I like tea ^m-dddd4\n\n## Core\n- x ^m-eeee5\n"
    )
    assert new is not None and (new.line, new.category, new.superseded) == (5, "fact", False)
    assert supersede_entry(content, "m-zzzz9", "m-bbbb2", "x") == (content, None)
    # an edit of a superseded version keeps it struck
    edited, found = replace_entry(out, "m-aaaa1", "I lived in Berlin")
    assert found and "- ~~I lived in Berlin~~ ^m-aaaa1" in edited


def test_a_line_typed_below_a_bullet_continues_it_and_keeps_its_id() -> None:
    text = "## Facts\n- Likes tea ^m-0001\n  green tea especially\n- Lives in Lyon ^m-0002\n"
    [tea, lyon] = parse_entries(text)
    assert (tea.id, tea.text, tea.end_line) == ("m-0001", "Likes tea\ngreen tea especially", 3)
    assert (lyon.id, lyon.text) == ("m-0002", "Lives in Lyon")
    last = "## Facts\n- Likes tea ^m-0001\n  green tea especially\n"
    assert [(e.id, e.text) for e in parse_entries(last)] == [
        ("m-0001", "Likes tea\ngreen tea especially")
    ]


def test_an_id_looking_word_of_the_text_is_text() -> None:
    text = "## Facts\n- ends with ^m-1234567890\n  and goes on ^m-0002\n- Likes tea ^m-0001\n  green tea\n"
    [first, tea] = parse_entries(text)
    assert (first.id, first.text) == ("m-0002", "ends with ^m-1234567890\nand goes on")
    assert (tea.id, tea.text) == ("m-0001", "Likes tea\ngreen tea")
    assert entry_at(text.splitlines(), 4, "fact") == tea


def test_a_new_id_replaces_every_id_of_the_bullet() -> None:
    text = "## Facts\n- Likes tea ^m-0001\n  green tea\n- Likes coffee ^m-0001\n"
    content, entries = assign_missing_ids(text, set())
    assert len({e.id for e in entries}) == 2 and content.count("^m-") == 2
    assert [e.text for e in parse_entries(content)] == ["Likes tea\ngreen tea", "Likes coffee"]

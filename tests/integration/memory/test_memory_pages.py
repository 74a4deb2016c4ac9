"""``Memory.list_page`` (filter, sort, paging of a scope's table) and ``Memory.set_category``."""

from __future__ import annotations

import pytest

from langmem_ext import EntryNotFoundError, InvalidInputError, Memory


def test_list_page_filters_sorts_and_pages(fake_memory: Memory) -> None:
    m = fake_memory
    ids = m.add_many([f"Fact {i:02d} about tea" for i in range(12)], scope="user_a", importance=0.3)
    m.add("Core rule: answer in Chinese", scope="user_a", category="core", importance=0.95)
    newer = m.update(ids[0], "Fact 00 about green tea", scope="user_a").id

    page = m.list_page(scope="user_a", limit=5)
    assert page.total == 13 and len(page.entries) == 5
    assert ids[0] not in [e.id for e in m.list_page(scope="user_a", limit=None).entries]
    with_old = m.list_page(scope="user_a", include_superseded=True, limit=None)
    assert with_old.total == 14

    tea = m.list_page(scope="user_a", text="ABOUT TEA", sort="text", limit=None)
    assert [e.text for e in tea.entries] == sorted(e.text for e in tea.entries)
    assert tea.total == 11  # "green tea" does not contain "about tea"

    top = m.list_page(scope="user_a", sort="importance", descending=True, limit=1)
    assert top.entries[0].category == "core"
    assert m.list_page(scope="user_a", category="core").total == 1
    last = m.list_page(scope="user_a", offset=10, limit=5)
    assert len(last.entries) == 3 and last.offset == 10
    assert newer in [e.id for e in m.list_page(scope="user_a", text="green", limit=None).entries]
    with pytest.raises(InvalidInputError):
        m.list_page(scope="user_a", sort="nonsense")
    assert m.list_page(scope="user_b").total == 0


def test_set_category_moves_the_entry_and_keeps_its_id(fake_memory: Memory) -> None:
    m = fake_memory
    eid = m.add("User's name is Lin", scope="user_a")
    entry = m.set_category(eid, "core", scope="user_a")
    assert entry.id == eid and entry.category == "core"
    assert m.history(eid, scope="user_a")[-1]["op"] == "category"
    assert "## Core" in m.long_term_text(scope="user_a")
    with pytest.raises(EntryNotFoundError):
        m.set_category(eid, "fact", scope="user_b")

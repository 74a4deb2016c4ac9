"""The slot stage: a question about the user's own attribute finds its current memory."""

from __future__ import annotations

from pathlib import Path

from langmem_ext import Memory, Settings


def _mem(tmp_path: Path, *, on: bool = True, graph: bool = False) -> Memory:
    s = Settings(workspace=tmp_path / ("on" if on else "off") / ("graph" if graph else "plain"))
    s.retrieval.slot_stage = on
    s.retrieval.graph_stage = graph  # the graph stage links the user's own facts too
    return Memory(settings=s)


MEMORIES = [
    "我住在上海浦东，离地铁二号线很近",
    "My sister lives in Rome",
    "I play tennis on Sundays",
    "Decision: the billing service uses PostgreSQL",
]


def test_question_about_the_user_finds_the_slot_across_languages(tmp_path: Path) -> None:
    mem = _mem(tmp_path)
    for text in MEMORIES:
        mem.add(text)
    top = mem.search("where do I live?", k=3)
    assert top[0].text == MEMORIES[0] and top[0].debug.get("slot") == 1.0
    # about someone else: no slot stage, no slot mark
    assert all(h.debug.get("slot") is None for h in mem.search("Where does my sister live?", k=3))
    mem.close()


def test_the_stage_can_be_switched_off(tmp_path: Path) -> None:
    mem = _mem(tmp_path, on=False)
    for text in MEMORIES:
        mem.add(text)
    top = mem.search("where do I live?", k=3)
    assert top and top[0].text != MEMORIES[0] and all("slot" not in h.debug for h in top)
    mem.close()


def test_the_graph_stage_alone_also_finds_where_the_user_lives(tmp_path: Path) -> None:
    mem = _mem(tmp_path, on=False, graph=True)
    for text in MEMORIES:
        mem.add(text)
    mem.background.wait()  # the triples: (user, lives_in, 上海浦东)
    top = mem.search("where do I live?", k=3)
    assert top[0].text == MEMORIES[0] and top[0].debug.get("graph", 0.0) > 0
    assert "slot" not in top[0].debug
    mem.close()


def test_only_the_current_version_of_the_slot(tmp_path: Path) -> None:
    mem = _mem(tmp_path)
    old = mem.add("I live in Berlin")
    new = mem.update(old, "I moved to Munich")
    hits = mem.search("Where do I live now?", k=3)
    assert hits[0].id == new.id and old not in [h.id for h in hits]
    mem.close()


def test_slot_lookup_takes_children_not_lookalikes(tmp_path: Path) -> None:
    mem = _mem(tmp_path)
    peanut = mem.add("我对花生过敏")
    shrimp = mem.add("I'm allergic to shrimp")
    mem.add("x", slot="user|allergic_tox")  # a look-alike slot, not a child
    found = {e.id for e in mem.slot_memories("user|allergic_to")}
    assert found == {peanut, shrimp}
    mem.close()

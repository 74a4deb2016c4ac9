"""The search's graph stage: scoring of linked memories and the pipeline's boost."""

from __future__ import annotations

import pytest

from langmem_ext import Memory
from langmem_ext.memory.knowledge.stage import graph_links
from langmem_ext.memory.knowledge.triples import GraphView, Triple
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.pipeline import graph_boost


def T(subject: str, predicate: str, obj: str, support: tuple[str, ...]) -> Triple:
    return Triple(f"{subject}|{predicate}|{obj}", "s", subject, predicate, obj, subject, obj,
                  False, None, None, support, None)  # fmt: skip


class FakeGraph:
    """The knowledge graph as the stage reads it: a view of fixed triples, no vectors."""

    def __init__(self, triples: list[Triple]) -> None:
        self.vectors = None
        self._view = GraphView.of(triples)

    def view(self, scope: str) -> GraphView:
        return self._view


def _graph() -> FakeGraph:
    hub = [T("melanie", "says", f"thing{i}", (f"m{i}",)) for i in range(40)]
    return FakeGraph(
        [
            *hub,
            T("melanie", "has", "kids", ("k1",)),
            T("kids", "like", "dinosaurs", ("k2",)),
            T("kids", "visit", "museum", ("k3",)),
            T("caroline", "likes", "pottery", ("c1",)),
        ]
    )


def test_no_entity_no_links() -> None:
    assert graph_links(_graph(), "s", "what is the weather?").scores == {}


def test_a_rare_entity_links_more_than_a_hub() -> None:
    links = graph_links(_graph(), "s", "What does Caroline like?", hops=1)
    assert links.entities == ["caroline"]
    assert links.scores == {"c1": links.scores["c1"]}
    hub = graph_links(_graph(), "s", "What does Melanie say?", hops=1)
    assert max(hub.scores.values()) < links.scores["c1"]


def test_two_hops_reach_the_kids_likes_and_score_the_question_words() -> None:
    g = _graph()
    links = graph_links(g, "s", "What do Melanie's kids like?", hops=2)
    assert "kids" in links.entities
    # "like" is in the question: the kids' likes are linked, their museum visit not
    assert links.scores["k2"] > links.scores.get("k3", 0.0)


def test_the_second_hop_reaches_what_the_first_only_names() -> None:
    g = FakeGraph(
        [
            T("wei", "has", "sister", ("s1",)),
            T("sister", "is_allergic_to", "peanuts", ("s2",)),
            T("wei", "likes", "tea", ("t1",)),
        ]
    )
    q = "Wei family allergic?"
    one = graph_links(g, "s", q, hops=1)
    two = graph_links(g, "s", q, hops=2)
    assert "s2" not in one.scores
    assert "s2" in two.scores  # through the sister; "has sister" itself says nothing asked


def test_hub_links_without_question_words_are_dropped() -> None:
    links = graph_links(_graph(), "s", "Tell me about Melanie and her weekend", hops=1)
    assert not any(m.startswith("m") for m in links.scores)


def test_links_are_capped() -> None:
    links = graph_links(_graph(), "s", "What does Melanie say?", hops=1)
    assert len(links.scores) <= 30


def test_graph_boost_adds_weighted_score_and_resorts() -> None:
    a = Candidate("a", "x", "fact", 0.0, 1.0, score=0.50)
    b = Candidate("b", "y", "fact", 0.0, 1.0, score=0.45, graph_score=1.0)
    out = graph_boost([a, b], 0.15)
    assert [c.id for c in out] == ["b", "a"]
    assert out[0].debug["graph"] == 0.15
    assert "graph" not in out[1].debug


def test_search_links_memories_through_the_graph_and_can_be_switched_off(
    fake_memory: Memory,
) -> None:
    fake_memory.add_many(
        [
            "Alice joined a pottery class last week",
            "Bob likes hiking in the mountains",
            "The weather was nice on Sunday",
        ]
    )
    fake_memory.background.wait()  # triples and their vectors are made in the background
    assert [t.text for t in fake_memory.triples("Alice")] == ["Alice — join → pottery class"]
    hits = fake_memory.search("What did Alice join?", k=3)
    linked = [h for h in hits if "graph" in h.debug]
    assert [h.text for h in linked] == ["Alice joined a pottery class last week"]
    off = fake_memory.settings.retrieval.model_copy(update={"graph_stage": False})
    fake_memory.engine.settings = fake_memory.settings.model_copy(update={"retrieval": off})
    hits = fake_memory.search("What did Alice join?", k=3)
    assert not any("graph" in h.debug for h in hits)


def test_a_deleted_memory_is_no_longer_linked(fake_memory: Memory) -> None:
    ids = fake_memory.add_many(["Alice joined a pottery class", "Alice joined a choir"])
    fake_memory.background.wait()
    fake_memory.delete(ids[0])
    fake_memory.background.wait()
    hits = fake_memory.search("What did Alice join?", k=5)
    assert ids[0] not in {h.id for h in hits}
    assert [h.id for h in hits if "graph" in h.debug] == [ids[1]]


def test_the_view_grows_with_new_memories_and_is_read_again_after_a_delete(
    fake_memory: Memory,
) -> None:
    first = fake_memory.add("Alice likes green tea")
    fake_memory.background.wait()
    view = fake_memory.knowledge.view("main")
    assert view is not None and view.degrees == {"alice": 1, "green tea": 1}
    second = fake_memory.add("Alice really likes green tea")  # the same triple, more support
    fake_memory.add("Bob likes coffee")
    fake_memory.background.wait()
    grown = fake_memory.knowledge.view("main")
    assert grown is not None and grown is not view
    (tea,) = grown.by_key["green tea"]
    assert set(tea.support) == {first, second}
    assert grown.degrees["bob"] == 1
    fake_memory.delete(first)
    fake_memory.background.wait()
    after = fake_memory.knowledge.view("main")
    assert after is not None
    assert [t.support for t in after.by_key["green tea"]] == [(second,)]


def _triples_of(view: GraphView | None) -> dict[str, tuple[str, ...]]:
    assert view is not None
    return {t.id: tuple(sorted(t.support)) for t in view.all_triples()}


def test_updates_and_deletes_change_the_view_as_a_full_read_would(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After versions, in-place edits and deletes, the view kept up write by write (and
    the ledger, pruned entry by entry) hold what reading the whole scope again gives;
    the scope is never read whole meanwhile."""
    kg = fake_memory.knowledge
    ids = fake_memory.add_many(
        [
            "Alice likes green tea",
            "Alice really likes green tea",
            "Bob likes coffee",
            "Alice joined a pottery class",
            "Bob joined a choir",
            "Carol likes jazz",
        ]
    )
    fake_memory.background.wait()
    assert kg.view("main") is not None
    reads: list[str] = []
    real = type(kg).refresh_view
    monkeypatch.setattr(
        type(kg), "refresh_view", lambda self, scope: reads.append(scope) or real(self, scope)
    )
    newer = fake_memory.update(ids[0], "Alice likes black tea").id  # a new version
    fake_memory.update(ids[2], "Bob likes espresso", supersede=False)  # in place
    fake_memory.delete(ids[1])  # green tea loses its last support
    fake_memory.delete(ids[4])
    fake_memory.add("Carol joined a choir")
    fake_memory.background.wait()
    assert reads == []
    kept = kg.view("main")
    assert kept is not None
    assert _triples_of(kept)  # not emptied
    repo = fake_memory.workspace.ledger.triples
    stored = repo.count("main")
    assert repo.prune("main") == 0 and repo.count("main") == stored  # nothing was left behind
    rebuilt = real(kg, "main")
    assert _triples_of(kept) == _triples_of(rebuilt)
    assert kept.degrees == rebuilt.degrees and set(kept.words) == set(rebuilt.words)
    assert "green tea" not in kept.degrees
    assert any(newer in t.support for t in kept.by_key["black tea"])


class FixedVectors:
    """The graph's vectors as the stage reads them: fixed cosines to the question."""

    def __init__(self, triples: dict[str, float], entities: dict[str, float]) -> None:
        self._triples, self._entities = triples, entities

    def triple_cosines(self, scope: str, query: object, ids: list[str]) -> dict[str, float]:
        return {i: self._triples[i] for i in ids if i in self._triples}

    def entity_cosines(
        self, scope: str, query: object, keys: list[str] | None = None
    ) -> dict[str, float]:
        return {k: c for k, c in self._entities.items() if keys is None or k in keys}


def test_a_hubs_triples_count_only_what_they_match_beyond_its_typical_triple() -> None:
    # the user: nearly every memory is about them and a question names them "I", so
    # the cosine of the entity's name says nothing of what each triple shares anyway
    triples = [
        T("wen", "lives_in", "haidian", ("home",)),
        T("wen", "learns", "german", ("german",)),
        T("wen", "drinks", "green_tea", ("tea",)),
        T("wen", "plans", "berlin_half_marathon", ("race",)),
    ]
    graph = FakeGraph(triples)
    graph.vectors = FixedVectors(  # type: ignore[assignment]
        {t.id: c for t, c in zip(triples, (0.22, 0.21, 0.20, 0.45), strict=True)},
        {"wen": 0.02},
    )
    links = graph_links(graph, "s", "What race is Wen training for?", query_vector=[1.0, 0.0])
    assert links.entities == ["wen"]
    assert set(links.scores) == {"race"}  # the typical triple (0.21) links nothing

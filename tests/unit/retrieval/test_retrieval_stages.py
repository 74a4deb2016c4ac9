"""The ranking pipeline: one ordered list of stages over Candidate."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest
from _retrieval_helpers import NOW, cand, ids

import langmem_ext.retrieval as retrieval_pkg
from langmem_ext.core.config import RetrievalSettings
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.retrieval.pipeline import PipelineOptions, rank
from langmem_ext.retrieval.stages import (
    Pipeline,
    Pool,
    QueryContext,
    SearchIO,
    Stage,
    default_stages,
    ranking_stages,
)

RS = RetrievalSettings()

SEARCH_ORDER = [
    "keyword", "vector", "graph_links", "category", "validity", "slot", "union", "graph",
    "safety", "person", "older_statement",
    "fusion", "context", "graph_boost", "person_demote", "working_set", "min_score",
    "recency", "importance", "length_norm", "time_decay", "time_window", "hard_min_score",
    "mmr", "noise", "safety_first", "top_k",
    "coverage", "profile", "notes", "sources", "order",
]  # fmt: skip


def test_the_default_stage_list_is_the_search_order() -> None:
    assert default_stages().names == SEARCH_ORDER
    assert default_stages(RS).names == SEARCH_ORDER
    assert [s.name for s in ranking_stages()] == SEARCH_ORDER[11:27]
    assert all(isinstance(s, Stage) for s in default_stages())


def test_a_stage_switched_off_in_the_settings_leaves_the_list() -> None:
    off = RetrievalSettings(slot_stage=False, graph_stage=False, prose=False)
    names = default_stages(off).names
    assert {"slot", "graph_links", "graph", "notes"}.isdisjoint(names)
    assert names == [n for n in SEARCH_ORDER if n not in {"slot", "graph_links", "graph", "notes"}]


def test_two_stages_of_one_name_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="unique"):
        Pipeline([*ranking_stages(), *ranking_stages()[:1]])


def _ctx(k: int = 5) -> QueryContext:
    return QueryContext(query="q", texts=["q"], k=k, now=NOW, settings=RS, io=SearchIO())


def _engines() -> Pool:
    vector = [cand(n, f"memory {n} about tea", cos=cos) for n, cos in
              (("a", 0.9), ("b", 0.7), ("c", 0.5), ("d", 0.4))]  # fmt: skip
    return Pool(vector=vector, keyword=None)


@dataclass(frozen=True)
class Reverse:
    """A stage written in a test: reverses the ranked list."""

    name: str = "reverse"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        pool.ranked = pool.ranked[::-1]
        return pool


def test_a_stage_is_added_by_one_line_and_its_order_is_the_result() -> None:
    plain = Pipeline(ranking_stages()).run(_engines(), _ctx()).ranked
    assert ids(plain) == ["a", "b", "c", "d"]
    with_it = Pipeline([*ranking_stages(), Reverse()]).run(_engines(), _ctx()).ranked
    assert ids(with_it) == ["d", "c", "b", "a"]  # nothing re-sorts after the last stage
    assert [c.score for c in with_it] == sorted(c.score for c in with_it)


def test_rank_is_the_ranking_stages_and_options_switch_stages_off_by_name() -> None:
    vector = [cand("a", "memory a about tea", cos=0.9), cand("x", "hello!", cos=0.95)]
    assert "x" not in ids(rank(vector, [], k=5, settings=RS, now=NOW))  # noise dropped
    no_noise = PipelineOptions(noise=False)
    assert no_noise.off() == ["noise"]
    assert "x" in ids(rank(vector, [], k=5, settings=RS, now=NOW, options=no_noise))
    assert PipelineOptions(thresholds=False).off() == ["min_score", "hard_min_score"]
    assert Pipeline(ranking_stages()).without(no_noise.off()).names == [
        n for n in SEARCH_ORDER[11:27] if n != "noise"
    ]


def test_retrieval_imports_nothing_from_the_memory_layer() -> None:
    root = Path(retrieval_pkg.__file__).parent
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names] if isinstance(node, ast.Import)
                else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            )  # fmt: skip
            for name in names:
                assert not name.startswith("langmem_ext.memory"), f"{path.name} imports {name}"

"""Recall on our own bilingual evaluation set, with the real default embedder.

The floor is what the default pipeline reaches today minus a small margin; a
change to tokenisation, fusion or scoring that loses recall fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmem_ext import Memory

DATA = json.loads(
    (Path(__file__).resolve().parents[2] / "data" / "bilingual_eval.json").read_text("utf-8")
)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Memory, dict[str, str]]:
    mem = Memory(tmp_path_factory.mktemp("eval") / "ws")
    keys = list(DATA["memories"])
    ids = mem.add_many([DATA["memories"][k] for k in keys])
    return mem, dict(zip(ids, keys, strict=True))


def recall_at(loaded: tuple[Memory, dict[str, str]], k: int, mode: str = "hybrid") -> float:
    mem, key_of = loaded
    found = 0
    for item in DATA["questions"]:
        hits = mem.search(item["q"], k=k, mode=mode)
        found += any(key_of.get(h.id) == item["expect"] for h in hits)
    return found / len(DATA["questions"])


def test_hybrid_recall_on_the_bilingual_set(loaded: tuple[Memory, dict[str, str]]) -> None:
    r1, r3 = recall_at(loaded, 1), recall_at(loaded, 3)
    assert r3 >= 0.9, r3
    assert r1 >= 0.85, r1


def test_hybrid_beats_each_engine_alone(loaded: tuple[Memory, dict[str, str]]) -> None:
    hybrid = recall_at(loaded, 3)
    assert hybrid >= recall_at(loaded, 3, mode="fts")
    assert hybrid >= recall_at(loaded, 3, mode="vector")


def test_noise_is_never_returned(loaded: tuple[Memory, dict[str, str]]) -> None:
    mem, key_of = loaded
    for q in ["hello", "Hello! how are you", "sorry I can't help", "你好"]:
        for h in mem.search(q, k=10):
            assert key_of[h.id] not in ("noise", "refusal")

"""KeywordIndex.neighbours: the entries next to an anchor, as the context stage sees them."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from langmem_ext.workspace.docs import Doc
from langmem_ext.workspace.sqlite.keyword_index import KeywordIndex

Anchor = tuple[str, str, int, str]


def _doc(i: int, path: str, line: int, category: str, scope: str = "main") -> Doc:
    return Doc(
        id=f"m-{i:04d}", scope=scope, path=path, line=line, category=category,
        text=f"entry {i}", text_hash=f"h{i}", created_at=1.0, updated_at=1.0, importance=1.0,
    )  # fmt: skip


def _reference(
    docs: Sequence[Doc], scope: str, anchors: Sequence[Anchor], window: int
) -> dict[str, list[tuple[int, str]]]:
    """The documented rule, in plain Python: same file, section and scope, within
    ``window + 2`` lines, then ``window`` places on each side in file order."""
    span = window + 2
    out: dict[str, list[tuple[int, str]]] = {}
    for aid, path, line, cat in anchors:
        near = sorted(
            (d.line, d.id)
            for d in docs
            if d.scope == scope and d.path == path and d.category == cat
            and line - span <= d.line <= line + span
        )  # fmt: skip
        ids = [i for _, i in near]
        if aid not in ids:
            continue
        at = ids.index(aid)
        lo, hi = max(at - window, 0), min(at + window + 1, len(ids))
        out[aid] = [(j - at, ids[j]) for j in range(lo, hi) if j != at]
    return out


@pytest.fixture
def index(tmp_path: Path) -> Iterator[KeywordIndex]:
    kw = KeywordIndex(tmp_path / "index.db")
    yield kw
    kw.close()


def _fill(index: KeywordIndex, rng: random.Random, per_file: int = 60) -> list[Doc]:
    """Two files of bullets, some spanning lines, in sections of two categories,
    plus another scope's file."""
    docs: list[Doc] = []
    for path, scope in (("MEMORY.md", "main"), ("memory/2024-05-01.md", "main"), ("B.md", "b")):
        line = 1
        for _ in range(per_file):
            if rng.random() < 0.1:
                line += 2  # a heading and a blank line
            cat = "fact" if (line // 25) % 2 == 0 else "episode"
            docs.append(_doc(len(docs), path, line, cat, scope))
            line += rng.choice([1, 1, 1, 2, 3])  # multi-line bullets
    index.apply(upserts=docs)
    return docs


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("window", [1, 2, 5])
def test_neighbours_follow_the_documented_rule(index: KeywordIndex, seed: int, window: int) -> None:
    rng = random.Random(seed)
    docs = _fill(index, rng)
    anchors: list[Anchor] = [(d.id, d.path, d.line, d.category) for d in rng.sample(docs, 40)]
    anchors.append(("m-gone", "MEMORY.md", 10, "fact"))  # deleted since
    d = docs[3]
    anchors.append((d.id, d.path, d.line, "core"))  # its section changed since
    got = index.neighbours("main", anchors, window)
    assert got == _reference(docs, "main", anchors, window)
    assert not any(a[0] in got for a in anchors[-2:])


def test_neighbours_of_many_anchors_span_several_queries(index: KeywordIndex) -> None:
    docs = _fill(index, random.Random(7), per_file=300)
    anchors: list[Anchor] = [(d.id, d.path, d.line, d.category) for d in docs]  # 900
    got = index.neighbours("main", anchors, 3)
    assert got == _reference(docs, "main", anchors, 3)


def test_no_window_or_no_anchor_finds_nothing(index: KeywordIndex) -> None:
    docs = _fill(index, random.Random(1))
    assert index.neighbours("main", [], 3) == {}
    assert index.neighbours("main", [(docs[0].id, docs[0].path, docs[0].line, "fact")], 0) == {}

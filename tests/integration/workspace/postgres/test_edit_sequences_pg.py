"""The same sequence of workspace edits on the embedded engine and on PostgreSQL leaves
the same Markdown, byte for byte, and the same doc rows (ids, lines, categories)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from langmem_ext.embeddings.factory import HashingEmbeddings
from langmem_ext.workspace.engines import engines_from_url
from langmem_ext.workspace.store import NewEntry, Workspace

MODEL = "hashing-256"
CATEGORIES = ("fact", "core", "episode")
WORDS = [
    "tea",
    "coffee",
    "Berlin",
    "北京",
    "meeting",
    "Tuesday",
    "spare",
    "key",
    "boiler",
    "October",
    "green",
    "bike",
]


def _workspace(root: Path, url: str | None) -> Workspace:
    engines = engines_from_url(url, root=root, model_name=MODEL)
    return Workspace(root, HashingEmbeddings(), model_name=MODEL, engines=engines)


def _run(ws: Workspace, seed: int) -> list[tuple[str, int, str]]:
    """Apply a seeded sequence of adds, updates, supersedes, moves and deletes."""
    rng = random.Random(seed)
    path = ws.layout.long_term("main")
    alive: list[str] = []
    n = 0

    def entry() -> NewEntry:
        nonlocal n
        n += 1
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
        return NewEntry(
            f"m-{seed}x{n:04d}", f"{text} {n}", rng.choice(CATEGORIES), 0.5, 1.7e9 + n, "user"
        )

    for _ in range(40):
        op = rng.random() if alive else 0.0
        with ws.lock.hold():
            if op < 0.35:
                batch = [entry() for _ in range(rng.randint(1, 3))]
                ws.write_entries("main", path, batch, title="Long-term memory")
                alive += [e.id for e in batch]
            elif op < 0.5:
                ws.rewrite_entry("main", path, rng.choice(alive), f"rewritten {n}")
            elif op < 0.65:
                i = rng.randrange(len(alive))
                new = entry()
                ws.supersede("main", path, alive[i], new)
                alive[i] = new.id
            elif op < 0.8:
                ws.move_entry(
                    "main",
                    path,
                    rng.choice(alive),
                    rng.choice(CATEGORIES),
                    op="move",
                    importance=0.6,
                )
            else:
                ws.rewrite_entry("main", path, alive.pop(rng.randrange(len(alive))), None)
    return sorted((d.id, d.line, d.category) for d in ws.keyword.scope_docs("main"))


@pytest.mark.parametrize("seed", [1, 2])
def test_one_edit_sequence_writes_the_same_markdown_on_both_engines(
    tmp_path: Path, pg_vector_url: str, seed: int
) -> None:
    files = _workspace(tmp_path / "embedded", None)
    pg = _workspace(tmp_path / "pg", pg_vector_url)
    try:
        docs_files = _run(files, seed)
        docs_pg = _run(pg, seed)
        text = files.documents.read("main", "MEMORY.md")
        assert text.count("\n") > 20
        assert pg.documents.read("main", "MEMORY.md") == text
        assert docs_pg == docs_files
        lines = text.splitlines()
        for entry_id, line, _category in docs_pg:  # the rows' lines are the file's
            assert entry_id in lines[line - 1]
        assert pg.documents.versions("main", "MEMORY.md")[-1][1] == text
    finally:
        files.close()
        pg.close()

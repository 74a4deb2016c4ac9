"""Memory operations at scale on both engines: search, add, update and delete.

For each size, a workspace per engine is filled with the same synthetic memories
(the generator of ``engines_pg.py``: English sentences from a 61-word list and
Chinese strings from 38 characters, seeded) through :meth:`Memory.add_many`, by
default in one call (an import: PostgreSQL loads it by its bulk path and builds the
HNSW index once; ``--batch`` splits it), into the scope's long-term file
(``MEMORY.md``: one file holds them all).
Embeddings come from the deterministic hashing embedder (``provider="fake"``,
256-d bag of hashed tokens), so that building 100k memories does not wait for the
neural embedder; every other part is the real pipeline. The knowledge graph's
triple extraction is off during the build and on again for the timed operations; its
catch-up over the built memories (the first look at the scope schedules it on the
background writer) is run to its end and timed before them, so that it does not hold
the workspace lock in the middle of the timed operations.

* **embedded**: the workspace folder (Markdown file, SQLite ledger, FTS5, Chroma);
* **postgres**: a database of its own on a local PostgreSQL 18 + pgvector server
  started for the run (or ``--database-url``).

Then, alternating engines operation by operation, it times ``Memory.search``
(default pipeline, k=10), a single ``Memory.add``, ``Memory.update`` of a random
stored memory and ``Memory.delete`` of another. Figures are milliseconds,
p50 / p95 over ``--ops`` operations of each kind.

Usage::

    python benchmarks/scale.py --sizes 1000 100000 --ops 40 --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import add_engine_arguments, engine_databases
from engines_pg import _text

from langmem_ext import Memory
from langmem_ext.core.config import EmbeddingSettings, KnowledgeSettings, Settings

ENGINES = ("embedded", "postgres")
OPS = ("search", "add", "update", "delete")
SCOPE = "bench"


def _ms(samples: list[float]) -> tuple[float, float]:
    s = sorted(samples)
    p95 = s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]
    return statistics.median(s) * 1000, p95 * 1000


def build(
    n: int, engine: str, database_url: str | None, workdir: Path, batch: int, log: Any
) -> tuple[Memory, list[str], float]:
    """A workspace holding ``n`` synthetic memories in ``SCOPE``, their ids, and the
    seconds the knowledge graph's catch-up over them took."""
    root = workdir / f"ws-{engine}-{n}"
    settings = Settings(
        workspace=root,
        embeddings=EmbeddingSettings(provider="fake", cache=False),
        knowledge=KnowledgeSettings(extract=False),
        database_url=database_url,
    )
    memory = Memory(root, settings=settings)
    rng = np.random.default_rng(7)
    ids: list[str] = []
    t0 = time.perf_counter()
    base = 1.7e9
    while len(ids) < n:
        texts = [_text(rng) for _ in range(min(batch or n, n - len(ids)))]
        stamps = [base + len(ids) + i for i in range(len(texts))]
        ids += memory.add_many(texts, scope=SCOPE, created_at=stamps)
        if len(ids) % 10_000 == 0 or len(ids) == n:
            log(f"  {engine} {n}: {len(ids)} stored, {time.perf_counter() - t0:.0f} s")
    memory.close()
    on = settings.model_copy(update={"knowledge": KnowledgeSettings()})
    memory = Memory(root, settings=on)
    t0 = time.perf_counter()
    memory.search("catch up", scope=SCOPE, k=1)  # the first look schedules the catch-up
    memory.background.wait()
    graph_s = time.perf_counter() - t0
    log(f"  {engine} {n}: knowledge graph caught up in {graph_s:.0f} s")
    return memory, ids, graph_s


def measure(
    n: int,
    ops: int,
    databases: dict[str, Any],
    workdir: Path,
    batch: int,
    log: Any,
    runs: int = 1,
) -> dict[str, Any]:
    """Build ``n`` memories on each engine, then time every operation ``ops`` times in
    each of ``runs`` runs (the background writer drained between runs)."""
    stores: dict[str, tuple[Memory, list[str]]] = {}
    build_s: dict[str, float] = {}
    graph_s: dict[str, float] = {}
    for engine in ENGINES:
        t0 = time.perf_counter()
        memory, ids, graph_s[engine] = build(
            n, engine, databases[engine](f"scale-{n}"), workdir, batch, log
        )
        stores[engine] = (memory, ids)
        build_s[engine] = time.perf_counter() - t0 - graph_s[engine]
    rng = np.random.default_rng(11)
    per_run: list[dict[str, dict[str, tuple[float, float]]]] = []
    for run in range(runs):
        samples: dict[str, dict[str, list[float]]] = {e: {o: [] for o in OPS} for e in ENGINES}
        for i in range(ops):
            query = _text(rng)
            new = _text(rng)
            changed = _text(rng)
            a, b = (int(x) for x in rng.choice(n - 1, size=2, replace=False))
            order = ENGINES if i % 2 == 0 else ENGINES[::-1]
            for engine in order:
                memory, alive = stores[engine]  # the current ids, in the same order on both
                t = time.perf_counter()
                memory.search(query, scope=SCOPE, k=10)
                samples[engine]["search"].append(time.perf_counter() - t)
                t = time.perf_counter()
                alive.append(memory.add(new, scope=SCOPE))
                samples[engine]["add"].append(time.perf_counter() - t)
                t = time.perf_counter()
                alive[a] = memory.update(alive[a], changed, scope=SCOPE).id
                samples[engine]["update"].append(time.perf_counter() - t)
                t = time.perf_counter()
                memory.delete(alive[b], scope=SCOPE)
                samples[engine]["delete"].append(time.perf_counter() - t)
                alive[b] = alive.pop()
        for memory, _ in stores.values():
            memory.background.wait()
        per_run.append({e: {o: _ms(samples[e][o]) for o in OPS} for e in ENGINES})
        log(f"  {n}: run {run + 1}/{runs} done")
    for memory, _ in stores.values():
        memory.background.wait()
        memory.close()
    return {
        "n": n,
        "build_s": build_s,
        "graph_s": graph_s,
        "runs": per_run,
        "ms": {
            e: {
                o: (
                    statistics.median(r[e][o][0] for r in per_run),
                    statistics.median(r[e][o][1] for r in per_run),
                )
                for o in OPS
            }
            for e in ENGINES
        },
    }


def render(results: list[dict[str, Any]], command: str, load: str) -> str:
    """One Markdown table: size × engine, p50 / p95 per operation (with several runs:
    each run's row, then the median of the runs' p50 and of their p95)."""
    out = [f"Command: `{command}`; {load}\n",
           "| memories | engine | build (s) | graph catch-up (s) | search | single add | update | delete |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for r in results:
        many = len(r["runs"]) > 1
        for e in ENGINES:
            if many:
                for k, one in enumerate(r["runs"], 1):
                    cells = [f"{one[e][o][0]:.1f} / {one[e][o][1]:.1f}" for o in OPS]
                    out.append(f"| {r['n']:,} | {e}, run {k} | | | " + " | ".join(cells) + " |")
            cells = [f"{r['ms'][e][o][0]:.1f} / {r['ms'][e][o][1]:.1f}" for o in OPS]
            label = f"{e}, median of {len(r['runs'])}" if many else e
            head = f"| {r['n']:,} | {label} | {r['build_s'][e]:.0f} | {r['graph_s'][e]:.0f} | "
            out.append(head + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    ap.add_argument("--ops", type=int, default=40, help="timed operations of each kind")
    ap.add_argument(
        "--runs", type=int, default=1, help="timed runs on each built store (median reported)"
    )
    ap.add_argument(
        "--batch", type=int, default=0, help="memories per add_many call (0: all in one)"
    )
    ap.add_argument("--workdir", type=Path, default=None)
    add_engine_arguments(ap)
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="langmem-scale-", dir=args.workdir))
    start = os.getloadavg()
    try:
        with (
            engine_databases("embedded", None) as embedded,
            engine_databases("postgres", args.database_url) as postgres,
        ):
            dbs = {"embedded": embedded, "postgres": postgres}
            results = []
            for n in args.sizes:
                results.append(measure(n, args.ops, dbs, tmp, args.batch, log, args.runs))
                log(render(results[-1:], "(so far)", ""))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = "load average (1/5/15 min) at start {:.1f}/{:.1f}/{:.1f}, at end {:.1f}/{:.1f}/{:.1f}"
    command = "python " + " ".join([sys.argv[0], *(sys.argv[1:] if argv is None else argv)])
    print(render(results, command, load.format(*start, *os.getloadavg())))


if __name__ == "__main__":
    main()

"""1,000 puts into ``ChromaMemoryStore`` beside LangGraph's SQLite stores.

In one process, each round times ``--puts`` puts of small ``{"text": ...}`` values
into a fresh namespace of each store, four ways:

* **async**: ``asyncio.gather`` of ``--puts`` ``aput`` calls — ``ChromaMemoryStore``
  vs ``AsyncSqliteStore`` (``aiosqlite``);
* **sync**: a loop of ``put`` calls — ``ChromaMemoryStore`` vs ``SqliteStore``;

each without an index (``ChromaMemoryStore``: ``index=False`` on the put;
LangGraph's stores: no ``index`` config) and with one that embeds ``text`` with the
same embedder (the memory's USE embedder, through its embedding cache; every text is
unique, so nothing is a cache hit). The stores are files on disk (the workspace
ledger, a temp ``.db``); ``ChromaMemoryStore`` commits with ``synchronous=FULL``
(durable when ``put`` returns), LangGraph's stores with SQLite's defaults.
Rounds alternate the order of the stores; the table shows the median of
``--rounds`` rounds and the ratio ChromaMemoryStore / LangGraph store.

Floor: 1,000 async puts within 10 x ``AsyncSqliteStore`` in the same run.

Usage::

    python benchmarks/store_puts.py --puts 1000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import AsyncSqliteStore, SqliteStore

from langmem_ext import Memory, Settings
from langmem_ext.store.chroma import ChromaMemoryStore

# LangGraph's SQLite stores index vectors with the sqlite-vec extension, which needs
# a Python whose sqlite3 can load extensions; without it the index rows compare with
# InMemoryStore (same embedder) and say so.
VEC_OK = hasattr(sqlite3.Connection, "enable_load_extension")

TOPICS = ("ramen", "cycling", "tea", "jazz", "hiking", "chess", "python", "gardening")


def _value(run: str, i: int) -> dict[str, Any]:
    return {"text": f"{run} note {i}: user {i % 37} mentioned {TOPICS[i % 8]} on day {i // 8}"}


def _time_sync(fn: Callable[[], None]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


async def _time_async(fn: Callable[[], Awaitable[Any]]) -> float:
    t = time.perf_counter()
    await fn()
    return time.perf_counter() - t


class Bench:
    def __init__(self, puts: int, tmp: Path) -> None:
        self.puts = puts
        self.tmp = tmp
        self.memory = Memory(settings=Settings(workspace=tmp / "ws"))
        self.emb = self.memory.embeddings
        self.chroma = ChromaMemoryStore(self.memory, index={"fields": ["text"]})
        self.seq = 0
        # Warm up the embedder, Chroma and the ledger outside the timings.
        self.chroma.put(("warm",), "w", {"text": "warm up"})
        self.emb.embed_documents(["warm up"])

    def _run(self) -> str:
        self.seq += 1
        return f"r{self.seq}"

    def _db(self) -> str:
        return str(self.tmp / f"lg-{self.seq}-{time.monotonic_ns()}.db")

    def sqlite_index(self) -> dict[str, Any]:
        return {"dims": 512, "embed": self.emb, "text_fields": ["text"]}

    # -- ChromaMemoryStore ------------------------------------------------------------

    def chroma_sync(self, index: bool) -> float:
        run = self._run()
        ns = ("bench", run)
        return _time_sync(
            lambda: [
                self.chroma.put(ns, f"k{i}", _value(run, i), index=None if index else False)
                for i in range(self.puts)
            ]
        )

    async def chroma_async(self, index: bool) -> float:
        run = self._run()
        ns = ("bench", run)

        async def go() -> None:
            await asyncio.gather(
                *(
                    self.chroma.aput(ns, f"k{i}", _value(run, i), index=None if index else False)
                    for i in range(self.puts)
                )
            )

        return await _time_async(go)

    # -- LangGraph's stores -----------------------------------------------------------

    def sqlite_sync(self, index: bool) -> float:
        run = self._run()
        cfg: Any = self.sqlite_index() if index else None
        if index and not VEC_OK:
            store0 = InMemoryStore(index={"dims": 512, "embed": self.emb, "fields": ["text"]})
            return _time_sync(
                lambda: [
                    store0.put(("bench", run), f"k{i}", _value(run, i)) for i in range(self.puts)
                ]
            )
        with SqliteStore.from_conn_string(self._db(), index=cfg) as store:
            store.setup()
            store.put(("warm",), "w", {"text": "warm up"})
            return _time_sync(
                lambda: [
                    store.put(("bench", run), f"k{i}", _value(run, i)) for i in range(self.puts)
                ]
            )

    async def sqlite_async(self, index: bool) -> float:
        run = self._run()
        cfg: Any = self.sqlite_index() if index else None
        if index and not VEC_OK:
            store0 = InMemoryStore(index={"dims": 512, "embed": self.emb, "fields": ["text"]})

            async def go0() -> None:
                await asyncio.gather(
                    *(
                        store0.aput(("bench", run), f"k{i}", _value(run, i))
                        for i in range(self.puts)
                    )
                )

            return await _time_async(go0)
        async with AsyncSqliteStore.from_conn_string(self._db(), index=cfg) as store:
            await store.setup()
            await store.aput(("warm",), "w", {"text": "warm up"})

            async def go() -> None:
                await asyncio.gather(
                    *(store.aput(("bench", run), f"k{i}", _value(run, i)) for i in range(self.puts))
                )

            return await _time_async(go)


CASES = [
    ("async", False),
    ("async", True),
    ("sync", False),
    ("sync", True),
]


async def _round(
    b: Bench, flip: bool, skip_sync_index: bool
) -> dict[tuple[str, bool], dict[str, float]]:
    out: dict[tuple[str, bool], dict[str, float]] = {}
    for mode, index in CASES:
        if mode == "sync" and index and skip_sync_index:
            continue
        if mode == "async":
            pair = [("chroma", b.chroma_async), ("langgraph", b.sqlite_async)]
            if flip:
                pair.reverse()
            out[(mode, index)] = {name: await fn(index) for name, fn in pair}
        else:
            spair: list[tuple[str, Callable[[bool], float]]] = [
                ("chroma", b.chroma_sync),
                ("langgraph", b.sqlite_sync),
            ]
            if flip:
                spair.reverse()
            out[(mode, index)] = {name: fn(index) for name, fn in spair}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--puts", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--skip-sync-index", action="store_true", help="skip sync puts with an index")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="store-puts-"))
    try:
        b = Bench(args.puts, tmp)
        rounds = [
            asyncio.run(_round(b, flip=r % 2 == 1, skip_sync_index=args.skip_sync_index))
            for r in range(args.rounds)
        ]
        b.memory.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    rows = []
    for key in rounds[0]:
        chroma = statistics.median(r[key]["chroma"] for r in rounds)
        lg = statistics.median(r[key]["langgraph"] for r in rounds)
        mode, index = key
        rows.append(
            {
                "mode": mode,
                "index": index,
                "puts": args.puts,
                "chroma_s": chroma,
                "langgraph_s": lg,
                "ratio": chroma / lg,
                "langgraph_store": (
                    ("AsyncSqliteStore" if mode == "async" else "SqliteStore")
                    if VEC_OK or not index
                    else "InMemoryStore (no sqlite-vec here)"
                ),
            }
        )
    floor = next(r for r in rows if r["mode"] == "async" and not r["index"])
    if args.json:
        print(json.dumps({"rows": rows, "rounds": args.rounds}, indent=2))
    else:
        print(f"{args.puts} puts, median of {args.rounds} rounds, CPUs: {os.cpu_count()}\n")
        print("| puts | index | ChromaMemoryStore (s) | LangGraph store | LangGraph (s) | ratio |")
        print("| --- | --- | ---: | --- | ---: | ---: |")
        for r in rows:
            print(
                f"| {r['mode']} | {'USE, `text`' if r['index'] else 'none'} | {r['chroma_s']:.3f} "
                f"| {r['langgraph_store']} | {r['langgraph_s']:.3f} | {r['ratio']:.1f}x |"
            )
        ok = floor["ratio"] <= 10
        print(
            f"\nfloor (async puts within 10x AsyncSqliteStore): "
            f"{'met' if ok else 'NOT met'} (no index {floor['ratio']:.1f}x"
            + "".join(
                f", with index {r['ratio']:.1f}x"
                for r in rows
                if r["mode"] == "async" and r["index"]
            )
            + ")"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

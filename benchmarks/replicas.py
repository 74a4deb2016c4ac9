"""Eight clients through one ``serve`` replica or two, on one PostgreSQL database.

Two real ``langmem-ext serve`` processes (``LANGMEM_DATABASE_URL`` set to the same
database; a local PostgreSQL 18 + pgvector server started for the run, or
``--database-url``) are started once. Each user's scope is first filled with
``--memories`` memories through the real pipeline (USE embedder by default). Then,
for ``--seconds`` each, ``--clients`` threads (one user each, one
:class:`~langmem_ext.client.MemoryClient` each) run a fixed mix against

* **1 replica**: every client talks to replica A;
* **2 replicas**: clients alternate between A and B;

in the order given by ``--order``. The mix, per client, repeats: seven searches,
two adds, one save followed by its confirm. Reported: operations per second over
all clients, and p50 / p95 latency per kind of operation.

Usage::

    python benchmarks/replicas.py --clients 8 --seconds 60 --order 1 2 2 1
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _serving import admin_url, serve
from engines_pg import _text

from langmem_ext import Memory, Settings
from langmem_ext.client import MemoryClient
from langmem_ext.core.config import EmbeddingSettings

QUERIES = ["tea garden morning", "my sister the doctor", "peanut allergy", "妹妹在北京工作",
           "weekend climbing mountain", "piano lessons friday", "早上去市场买水果"]  # fmt: skip
MIX = ["search"] * 7 + ["add"] * 2 + ["save+confirm"]


def run_clients(urls: list[str], clients: int, seconds: float) -> dict[str, list[float]]:
    """``clients`` threads running the mix for ``seconds``; latencies (s) by kind."""
    samples: dict[str, list[float]] = defaultdict(list)
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    errors: list[BaseException] = []

    def client(i: int) -> None:
        mine: dict[str, list[float]] = defaultdict(list)
        texts = itertools.count()
        try:
            with MemoryClient(urls[i % len(urls)], user_id=f"bench{i}", timeout=120) as mem:
                for n, kind in enumerate(itertools.cycle(MIX)):
                    if time.monotonic() >= stop:
                        break
                    t = time.perf_counter()
                    if kind == "search":
                        mem.search(QUERIES[(n + i) % len(QUERIES)])
                    elif kind == "add":
                        mem.add(f"client {i} note {next(texts)}: {QUERIES[n % len(QUERIES)]}")
                    else:
                        mem.confirm(mem.save(f"client {i} likes item {next(texts)}").id)
                    mine[kind].append(time.perf_counter() - t)
        except BaseException as exc:  # reported after the threads end
            errors.append(exc)
        with lock:
            for k, v in mine.items():
                samples[k].extend(v)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return samples


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--memories", type=int, default=200, help="stored per user before the runs")
    ap.add_argument("--order", type=int, nargs="+", default=[1, 2, 2, 1],
                    help="replica counts of the runs, in order")  # fmt: skip
    ap.add_argument("--embedder", default="use", choices=["use", "fake"])
    ap.add_argument("--database-url", default=None, metavar="URL",
                    help="the server's admin URL (default: a local server for the run)")  # fmt: skip
    args = ap.parse_args(argv)
    from langmem_ext.workspace.postgres.local_server import create_database

    tmp = Path(tempfile.mkdtemp(prefix="langmem-replicas-"))
    start_load = os.getloadavg()
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, tmp, True)
        admin = admin_url(stack, args.database_url)
        url = create_database(admin, "bench_replicas")
        settings = Settings(
            workspace=tmp / "fill",
            database_url=url,
            embeddings=EmbeddingSettings(provider=args.embedder),
        )
        t0 = time.perf_counter()
        with Memory(settings=settings) as memory:
            rng = __import__("numpy").random.default_rng(7)
            for i in range(args.clients):
                memory.add_many([_text(rng) for _ in range(args.memories)], scope=f"user_bench{i}")
            memory.background.wait()
        print(f"filled {args.clients} x {args.memories} in {time.perf_counter() - t0:.0f} s",
              file=sys.stderr, flush=True)  # fmt: skip
        env = {**os.environ, "LANGMEM_DATABASE_URL": url,
               "LANGMEM_EMBEDDINGS__PROVIDER": args.embedder,
               "LANGMEM_LIFECYCLE__DAILY_JOBS": "false"}  # fmt: skip
        urls = [stack.enter_context(serve(tmp / n, tmp / f"{n}.log", env)) for n in ("a", "b")]
        for url_ in urls:  # warm each replica (embedder, connections) outside the timings
            for i in range(args.clients):
                with MemoryClient(url_, user_id=f"bench{i}", timeout=120) as mem:
                    mem.search("warm up")
        rows = []
        for replicas in args.order:
            samples = run_clients(urls[:replicas], args.clients, args.seconds)
            total = sum(len(v) for v in samples.values())
            row = [f"{replicas}", f"{total / args.seconds:.1f}"]
            for kind in ("search", "add", "save+confirm"):
                v = samples.get(kind, [])
                row.append(f"{statistics.median(v) * 1000:.0f} / {_pct(v, 0.95) * 1000:.0f}"
                           if v else "-")  # fmt: skip
            rows.append(row)
            print(f"  {replicas} replica(s): {total} operations", file=sys.stderr, flush=True)
    print(f"{args.clients} clients, {args.seconds:.0f} s per run, {args.memories} memories per "
          f"user before the runs, embedder {args.embedder}; load average at start "
          "{:.1f}/{:.1f}/{:.1f}, at end {:.1f}/{:.1f}/{:.1f}\n".format(*start_load,
                                                                      *os.getloadavg()))  # fmt: skip
    print("| replicas | operations/s | search p50 / p95 ms | add p50 / p95 ms "
          "| save + confirm p50 / p95 ms |")  # fmt: skip
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

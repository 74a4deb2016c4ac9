"""Writers of two scopes on PostgreSQL: one workspace lock, or a lock per scope.

One :class:`~langmem_ext.Memory` on a PostgreSQL database (a local PostgreSQL 18 +
pgvector server started for the run, or ``--database-url``); ``--scopes`` scopes,
each filled with ``--memories`` memories, then ``--threads`` writer threads per
scope for ``--seconds``, each alternating an add and an update of one of its scope's
memories. Two lock modes, in the order of ``--order``, each on a fresh database:

* **workspace**: every write holds the whole workspace's lock (one advisory lock
  for all scopes: the scope's hold is made the workspace's, as the lock was before
  it had one per scope);
* **scope**: a write holds its scope's lock and the workspace's shared.

Reported per run: writes per second over all threads, p50 / p95 latency per kind of
write, and a check that every add is stored once (memories per scope at the end).

Usage::

    python benchmarks/scope_locks.py --seconds 30 --order workspace scope scope workspace
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _serving import admin_url
from engines_pg import _text

from langmem_ext import Memory, Settings
from langmem_ext.core.config import EmbeddingSettings
from langmem_ext.workspace.postgres.lock import PgWorkspaceLock


@contextmanager
def lock_mode(mode: str) -> Iterator[None]:
    """``workspace``: a scope's hold takes the whole workspace's lock for the block."""
    if mode == "scope":
        yield
        return
    own = PgWorkspaceLock._held_scope

    def whole(
        self: PgWorkspaceLock, scope: str, timeout: float
    ) -> AbstractContextManager[str | None]:
        return self._held(timeout)

    PgWorkspaceLock._held_scope = whole  # type: ignore[method-assign]
    try:
        yield
    finally:
        PgWorkspaceLock._held_scope = own  # type: ignore[method-assign]


def run_mode(url: str, root: Path, args: argparse.Namespace, mode: str) -> dict[str, object]:
    """One run: fill, then the writers; returns its figures."""
    settings = Settings(
        workspace=root, database_url=url, embeddings=EmbeddingSettings(provider=args.embedder)
    )
    scopes = [f"user_w{i}" for i in range(args.scopes)]
    samples: dict[str, list[float]] = defaultdict(list)
    adds: dict[str, int] = defaultdict(int)
    guard = threading.Lock()
    errors: list[BaseException] = []
    with Memory(settings=settings) as memory, lock_mode(mode):
        rng = np.random.default_rng(7)
        ids = {s: [memory.add(_text(rng), scope=s) for _ in range(args.memories)] for s in scopes}
        memory.background.wait()
        start = threading.Barrier(len(scopes) * args.threads)
        stop_at: list[float] = []

        def writer(scope: str, n: int) -> None:
            local = np.random.default_rng(n)
            mine = ids[scope][n :: args.threads]
            try:
                start.wait()
                if not stop_at:
                    stop_at.append(time.monotonic() + args.seconds)
                i = 0
                while time.monotonic() < stop_at[0]:
                    kind = "add" if i % 2 == 0 else "update"
                    t0 = time.perf_counter()
                    if kind == "add":
                        memory.add(_text(local), scope=scope)
                    else:
                        entry = memory.update(mine[i // 2 % len(mine)], _text(local), scope=scope)
                        mine[i // 2 % len(mine)] = entry.id
                    took = time.perf_counter() - t0
                    with guard:
                        samples[kind].append(took)
                        adds[scope] += kind == "add"
                    i += 1
            except BaseException as e:  # reported after the run
                errors.append(e)

        threads = [
            threading.Thread(target=writer, args=(s, n))
            for s in scopes
            for n in range(args.threads)
        ]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        memory.background.wait()
        stored = {s: memory.stats(scope=s)["scopes"][s]["entries"] for s in scopes}
    if errors:
        raise errors[0]
    superseded_ok = all(stored[s] >= args.memories + adds[s] for s in scopes)
    total = sum(len(v) for v in samples.values())
    return {
        "mode": mode,
        "writes/s": total / wall,
        "add p50/p95 ms": _pct(samples["add"]),
        "update p50/p95 ms": _pct(samples["update"]),
        "adds stored": "yes" if superseded_ok else f"NO {stored} vs {dict(adds)}",
    }


def _pct(values: list[float]) -> str:
    s = sorted(values)
    if not s:
        return "-"
    p = [s[min(len(s) - 1, round(q * (len(s) - 1)))] * 1000 for q in (0.5, 0.95)]
    return f"{p[0]:.0f} / {p[1]:.0f}"


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scopes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=4, help="writer threads per scope")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--memories", type=int, default=20, help="stored per scope before the run")
    ap.add_argument("--order", nargs="+", default=["workspace", "scope", "scope", "workspace"],
                    choices=["workspace", "scope"])  # fmt: skip
    ap.add_argument("--embedder", default="use", choices=["use", "fake"])
    ap.add_argument("--database-url", default=None, metavar="URL",
                    help="the server's admin URL (default: a local server for the run)")  # fmt: skip
    args = ap.parse_args(argv)
    from langmem_ext.workspace.postgres.local_server import create_database

    tmp = Path(tempfile.mkdtemp(prefix="langmem-scope-locks-"))
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, tmp, True)
        admin = admin_url(stack, args.database_url)
        for n, mode in enumerate(args.order):
            url = create_database(admin, f"bench_scope_locks_{n}")
            rows.append(run_mode(url, tmp / f"run{n}", args, mode))
            print(rows[-1], file=sys.stderr, flush=True)
    cols = list(rows[0])
    print(f"\n{args.scopes} scopes x {args.threads} writer threads, {args.seconds:.0f} s per run, "
          f"embedder {args.embedder}")  # fmt: skip
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        cells = [f"{v:.1f}" if isinstance(v, float) else str(v) for v in r.values()]
        print("| " + " | ".join(cells) + " |")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

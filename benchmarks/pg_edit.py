"""One edit of a large memory file on PostgreSQL: update and delete of one memory.

For each size, a fresh database on a local PostgreSQL 18 + pgvector server (started
for the run, or ``--database-url``) is filled with ``n`` synthetic memories in one
scope's long-term file (``MEMORY.md``) through :meth:`Workspace.write_entries` in
batches of 5,000, without embeddings (the vector rows wait in the outbox; this
measures the Markdown document, the ledger and the keyword/doc table, which is
where an edit's cost grows with the file). Then it times, alternating, the two
edits :class:`~langmem_ext.memory.Memory` makes of one memory:

* **update**: :meth:`Workspace.supersede` (the old bullet struck through, the new
  version written right below it: one line more in the file);
* **delete**: :meth:`Workspace.rewrite_entry` with no text (the bullet removed: one
  line less);

each under the workspace lock, on a memory chosen at random (seeded), and prints
p50 / p95 in milliseconds with the ratio to the smallest size. ``--profile`` also
prints where the time of the largest size's edits goes.

``--documents-only`` times the document store alone (:class:`PgDocuments` on a
database of its own): a file of ``n`` bullets written once, then one-line edits of
it at random places — a bullet replaced, a bullet removed, a bullet added — each a
:meth:`PgDocuments.write` of the whole new text, as the workspace writes it.

Usage::

    python benchmarks/pg_edit.py --sizes 1000 20000 100000 --ops 40
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
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

from _common import engine_databases
from engines_pg import _text

from langmem_ext.embeddings.factory import HashingEmbeddings
from langmem_ext.workspace.engines import engines_from_url
from langmem_ext.workspace.markdown import new_entry_id
from langmem_ext.workspace.store import NewEntry, Workspace

SCOPE = "main"
BATCH = 5_000


def _ms(samples: list[float]) -> tuple[float, float]:
    s = sorted(samples)
    return statistics.median(s) * 1000, s[min(len(s) - 1, round(0.95 * (len(s) - 1)))] * 1000


def build(n: int, url: str, root: Path, log: Any) -> tuple[Workspace, list[str]]:
    """A workspace on ``url`` holding ``n`` memories in ``SCOPE``'s long-term file."""
    model = "hashing-256"
    ws = Workspace(
        root,
        HashingEmbeddings(),
        model_name=model,
        engines=engines_from_url(url, root=root, model_name=model),
    )
    path = ws.layout.long_term(SCOPE)
    rng = np.random.default_rng(7)
    ids: list[str] = []
    t0 = time.perf_counter()
    while len(ids) < n:
        batch = [
            NewEntry(new_entry_id(), _text(rng), "fact", 0.5, 1.7e9 + len(ids) + i, "user")
            for i in range(min(BATCH, n - len(ids)))
        ]
        with ws.lock.hold():
            ws.write_entries(SCOPE, path, batch, title="Long-term memory")
        ids += [e.id for e in batch]
        log(f"  {n}: {len(ids)} stored, {time.perf_counter() - t0:.0f} s")
    return ws, ids


def measure(ws: Workspace, ids: list[str], ops: int, seed: int) -> dict[str, list[float]]:
    """Time ``ops`` updates and deletes of random memories (the ids list is updated)."""
    rng = np.random.default_rng(seed)
    path = ws.layout.long_term(SCOPE)
    out: dict[str, list[float]] = {"update": [], "delete": []}
    for _ in range(ops):
        a, b = (int(x) for x in rng.choice(len(ids) - 1, size=2, replace=False))
        new = NewEntry(new_entry_id(), _text(rng), "fact", 0.5, time.time(), "user")
        with ws.lock.hold():
            t = time.perf_counter()
            ws.supersede(SCOPE, path, ids[a], new)
            out["update"].append(time.perf_counter() - t)
        ids[a] = new.id
        with ws.lock.hold():
            t = time.perf_counter()
            ws.rewrite_entry(SCOPE, path, ids[b], None)
            out["delete"].append(time.perf_counter() - t)
        ids[b] = ids.pop()
    return out


def documents_only(n: int, url: str, ops: int) -> dict[str, list[float]]:
    """Time ``ops`` one-line edits of each kind of an ``n``-bullet file."""
    from langmem_ext.workspace.postgres._base import PgConnections
    from langmem_ext.workspace.postgres.documents import PgDocuments

    rng = np.random.default_rng(5)
    lines = ["# Long-term memory", "", "## Facts", ""]
    lines += [f"- {_text(rng)} <!-- id:{new_entry_id()} -->" for _ in range(n)]
    db = PgConnections(url)
    out: dict[str, list[float]] = {"replace": [], "remove": [], "add": []}
    try:
        docs = PgDocuments(db)
        docs.write(SCOPE, "MEMORY.md", "\n".join(lines) + "\n")
        for _ in range(ops):
            for kind in out:
                at = 4 + int(rng.integers(0, len(lines) - 4))
                bullet = f"- {_text(rng)} <!-- id:{new_entry_id()} -->"
                if kind == "replace":
                    lines[at] = bullet
                elif kind == "remove":
                    del lines[at]
                else:
                    lines.insert(at, bullet)
                text = "\n".join(lines) + "\n"
                t = time.perf_counter()
                docs.write(SCOPE, "MEMORY.md", text)
                out[kind].append(time.perf_counter() - t)
        assert docs.read(SCOPE, "MEMORY.md") == text
    finally:
        db.close()
    return out


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 20_000, 100_000])
    ap.add_argument("--ops", type=int, default=40, help="timed edits of each kind")
    ap.add_argument("--database-url", default=None, help="admin URL of a server to use")
    ap.add_argument("--profile", action="store_true", help="profile the largest size's edits")
    ap.add_argument(
        "--documents-only", action="store_true", help="time the document store's writes alone"
    )
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    start = os.getloadavg()
    rows: list[tuple[int, dict[str, tuple[float, float]]]] = []
    with (
        tempfile.TemporaryDirectory(prefix="langmem-pgedit-") as tmp,
        engine_databases("postgres", args.database_url) as databases,
    ):
        for n in args.sizes:
            if args.documents_only:
                found = documents_only(n, databases(f"docs-{n}"), args.ops)
                rows.append((n, {k: _ms(v) for k, v in found.items()}))
                log(
                    f"  {n}: "
                    + ", ".join(f"{k} {v[0]:.1f}/{v[1]:.1f}" for k, v in rows[-1][1].items())
                )
                continue
            ws, ids = build(n, databases(f"edit-{n}"), Path(tmp) / f"ws-{n}", log)
            try:
                measure(ws, ids, 3, seed=1)  # warm: this process's copy of the file
                profiler = cProfile.Profile() if args.profile and n == max(args.sizes) else None
                if profiler is not None:
                    profiler.enable()
                samples = measure(ws, ids, args.ops, seed=11)
                if profiler is not None:
                    profiler.disable()
                    pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(
                        30
                    )
            finally:
                ws.close()
            rows.append((n, {k: _ms(v) for k, v in samples.items()}))
            log(
                f"  {n}: " + ", ".join(f"{k} {v[0]:.1f}/{v[1]:.1f}" for k, v in rows[-1][1].items())
            )
    base = rows[0][1]
    print(f"Command: `python {' '.join([sys.argv[0], *(sys.argv[1:] if argv is None else argv)])}`")
    end = os.getloadavg()
    print(f"load average (1/5/15 min) at start {start[0]:.1f}/{start[1]:.1f}/{start[2]:.1f}, "
          f"at end {end[0]:.1f}/{end[1]:.1f}/{end[2]:.1f}\n")  # fmt: skip
    if args.documents_only:
        print("| bullets | replace p50 / p95 ms | remove p50 / p95 ms | add p50 / p95 ms |")
        print("| --- | --- | --- | --- |")
        for n, ms in rows:
            print(f"| {n:,} | " + " | ".join(f"{ms[k][0]:.1f} / {ms[k][1]:.1f}" for k in ms) + " |")
        return
    print(
        "| memories | update p50 / p95 ms | × smallest (p50) | delete p50 / p95 ms | × smallest (p50) |"
    )
    print("| --- | --- | --- | --- | --- |")
    for n, ms in rows:
        u, d = ms["update"], ms["delete"]
        print(f"| {n:,} | {u[0]:.1f} / {u[1]:.1f} | {u[0] / base['update'][0]:.1f} "
              f"| {d[0]:.1f} / {d[1]:.1f} | {d[0] / base['delete'][0]:.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()

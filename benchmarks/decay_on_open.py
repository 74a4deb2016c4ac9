"""Cost of the decay on open: ``Memory()`` + first search, due vs off.

A workspace of N facts in one scope, every one idle for 10 days, so the catch-up
changes every importance (the worst case: N history rows, N index rows). Each trial
copies the built workspace (so the catch-up is due again), then times, in one
process:

- ``open``: ``Memory(settings)`` (the catch-up runs inside it when due);
- ``first search``: the first ``memory.search`` after the open;
- ``catch-up``: :func:`~langmem_ext.memory.lifecycle.operations.catch_up_on_open` alone, on a
  copy opened with ``decay_on_open=False``.

``due`` and ``off`` alternate, so both see the same machine noise. The embedder is
``fake`` (hashing) unless ``--embedder use``: the catch-up never embeds, and the
first search's own cost is reported beside it.

    python benchmarks/decay_on_open.py --sizes 1000 10000 --trials 5
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from langmem_ext import Memory, Settings
from langmem_ext.memory.lifecycle.operations import DECAY_AT_KEY, catch_up_on_open

DAY = 86400.0


def settings_for(root: Path, embedder: str, *, on_open: bool) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = embedder  # type: ignore[assignment]
    s.embeddings.cache = False
    s.lifecycle.decay_on_open = on_open
    return s


def build(root: Path, n: int, embedder: str) -> None:
    """N facts, every one idle for 10 days; decay last ran 2 days ago."""
    with Memory(settings=settings_for(root, embedder, on_open=False)) as m:
        texts = [
            f"Fact number {i}: the user mentioned item {i * 7 % 1009} on day {i % 31}"
            for i in range(n)
        ]
        m.add_many(texts, scope="main")
        old = time.time() - 10 * DAY
        ledger = m.workspace.ledger
        with ledger.transaction():
            for st in ledger.entries.of_scope("main"):
                ledger.entries.upsert(replace(st, created_at=old, updated_at=old))
        ledger.meta.set(DECAY_AT_KEY, repr(time.time() - 2 * DAY))


def trial(built: Path, embedder: str, *, on_open: bool) -> tuple[float, float]:
    """``(open ms, first search ms)`` on a fresh copy of ``built``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        shutil.copytree(built, root)
        t0 = time.perf_counter()
        m = Memory(settings=settings_for(root, embedder, on_open=on_open))
        t1 = time.perf_counter()
        m.search("what did the user mention on day 12?", scope="main")
        t2 = time.perf_counter()
        if on_open:
            assert m._catch_up is not None, "the catch-up was not due"
            m._catch_up.join()
            st = m.workspace.ledger.entries.of_scope("main")[0]
            assert st.importance < 1.0, "the catch-up did not run"
        m.close()
    return (t1 - t0) * 1000, (t2 - t1) * 1000


def catch_up_alone(built: Path, embedder: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        shutil.copytree(built, root)
        with Memory(settings=settings_for(root, embedder, on_open=False)) as m:
            t0 = time.perf_counter()
            m.settings.lifecycle.decay_on_open = True
            changes = catch_up_on_open(m)
            took = (time.perf_counter() - t0) * 1000
            assert changes, "nothing was due"
    return took


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--embedder", default="fake", choices=["fake", "use"])
    args = p.parse_args()
    print(
        "| memories | open, off | open, due | first search, off | first search, due | catch-up alone |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            built = Path(tmp) / "built"
            build(built, n, args.embedder)
            off, due, alone = [], [], []
            for _ in range(args.trials):
                off.append(trial(built, args.embedder, on_open=False))
                due.append(trial(built, args.embedder, on_open=True))
                alone.append(catch_up_alone(built, args.embedder))
            med = statistics.median
            print(
                f"| {n:,} | {med(o for o, _ in off):.1f} ms | {med(o for o, _ in due):.1f} ms "
                f"| {med(s for _, s in off):.1f} ms | {med(s for _, s in due):.1f} ms "
                f"| {med(alone):.1f} ms |"
            )


if __name__ == "__main__":
    main()

"""Prose and session events in search: what indexing and searching them costs.

For each size N, in one process, on the deterministic bilingual texts of
``ingest.py`` (two or three of them per paragraph):

* a workspace of ``--memories`` entries (``Memory.add_many``) whose ``MEMORY.md``
  then gets N/2 hand-written paragraphs under headings, and whose daily notes get
  the other N/2 (ten per day); then, timed, with the embedding cache off:
  - the **first sync** that indexes the prose (parse, keyword rows, embedding,
    Chroma), split into the embedder's own time and the rest;
  - a **sync with nothing changed** (stat only), and one after **one paragraph
    edited by hand** (one file read again, one chunk embedded; with N = 0 an entry
    is edited instead: the same sync without prose);
  - single **adds** into the long-term file holding N/2 paragraphs (the
    append path is kept), and single **deletes** of an entry (the prose below moves);
* **search**: ``Memory.search`` p50 / p95 on ``--queries`` questions with the notes
  searched (default) and with ``retrieval.prose`` off, each query both ways one right
  after the other (the notes' cost is the paired difference), and ``embed_query``;
* **session events**: ``--events`` events appended (one transcript line and a ledger
  row each), then ``SessionLog.embed_pending`` timed (what the background writer
  does after appends), and recall questions (``"上次我问的…"``) searched with the
  events' vectors.

Usage::

    python benchmarks/prose.py --sizes 0 100 1000 5000 --memories 1000 --embedder use
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import TimedEmbeddings, make_embedder, markdown_table, percentiles
from ingest import SEED, make_queries, make_texts

from langmem_ext import Memory
from langmem_ext.core.config import Settings
from langmem_ext.memory.sessions.log import SessionLog

SCOPE = "main"
PER_DAY = 10
"""Paragraphs per daily note."""
FIRST_DAY = date(2026, 1, 5)
HEADINGS = ("Trips", "Family", "Work", "Health", "读书笔记", "旅行", "家人", "工作")


def paragraphs(n: int, seed: int = SEED) -> list[str]:
    """``n`` paragraphs of two or three of the ingest texts each."""
    r = random.Random(seed * 7 + n)
    texts = make_texts(3 * n, seed + 1)
    out: list[str] = []
    at = 0
    for _ in range(n):
        take = r.choice((2, 3))
        out.append(" ".join(texts[at : at + take]))
        at += take
    return out


def write_prose(root: Path, paras: Sequence[str]) -> None:
    """Half the paragraphs under headings at the top of ``MEMORY.md`` (its entries
    stay below), the rest in daily notes of ``PER_DAY`` each."""
    half = len(paras) // 2
    lt = root / "MEMORY.md"
    body = lt.read_text(encoding="utf-8") if lt.exists() else "# Long-term memory\n"
    title, _nl, rest = body.partition("\n")
    parts = [title, ""]
    for i, p in enumerate(paras[:half]):
        if i % 25 == 0:
            parts += [f"## {HEADINGS[(i // 25) % len(HEADINGS)]} {i // 25}", ""]
        parts += [p, ""]
    lt.write_text("\n".join(parts) + rest.lstrip("\n"), encoding="utf-8")
    folder = root / "memory"
    folder.mkdir(exist_ok=True)
    daily = paras[half:]
    for d in range(0, len(daily), PER_DAY):
        day = FIRST_DAY + timedelta(days=d // PER_DAY)
        chunk = daily[d : d + PER_DAY]
        (folder / f"{day.isoformat()}.md").write_text(
            f"# {day.isoformat()}\n\n" + "\n\n".join(chunk) + "\n", encoding="utf-8"
        )


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _settings(root: Path, prose: bool = True) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.cache = False
    s.retrieval.prose = prose
    return s


def run_size(n: int, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    root = workdir / f"prose-{n}"
    shutil.rmtree(root, ignore_errors=True)
    inner = make_embedder(args.embedder)
    timed = TimedEmbeddings(inner)
    mem = Memory(settings=_settings(root), embeddings=timed)
    out: dict[str, Any] = {"paragraphs": n, "memories": args.memories}
    try:
        mem.add_many(make_texts(args.memories), scope=SCOPE)
        mem.background.wait()  # the memories' triples: not the sync's work
        write_prose(root, paragraphs(n))
        timed.seconds = 0.0
        report: Any = None

        def first() -> None:
            nonlocal report
            report = mem.sync(scope=SCOPE)

        out["first_sync_s"] = _timed(first)
        out["first_sync_embed_s"] = timed.seconds
        out["chunks"] = mem.workspace.keyword.passage_count("prose", SCOPE)
        out["embedded"] = report.embedded
        out["noop_sync_ms"] = 1000 * _timed(lambda: mem.sync(scope=SCOPE))
        lt = root / "MEMORY.md"
        content = lt.read_text(encoding="utf-8")
        if n:  # one paragraph edited by hand
            victim = paragraphs(n)[n // 4]
            lt.write_text(content.replace(victim, victim + " (edited)", 1), encoding="utf-8")
        else:  # no prose: one entry edited by hand instead
            lt.write_text(content.replace("\n- ", "\n- (edited) ", 1), encoding="utf-8")
        timed.seconds = 0.0
        out["edit_sync_ms"] = 1000 * _timed(lambda: mem.sync(scope=SCOPE))
        out["edit_sync_embed_ms"] = 1000 * timed.seconds
        mem.background.wait()
        r = random.Random(SEED + n)
        adds = []
        for t in make_texts(args.single, SEED + 99):
            adds.append(1000 * _timed(lambda t=t: mem.add(t, scope=SCOPE)))
        out["add"] = percentiles(adds)
        ids = [e.id for e in mem.list(scope=SCOPE)]
        dels = []
        for entry_id in r.sample(ids, args.single):
            dels.append(1000 * _timed(lambda e=entry_id: mem.delete(e, scope=SCOPE)))
        out["delete"] = percentiles(dels)
        assert not mem.workspace.keyword.prose_lagging(SCOPE)
        mem.background.wait()
        out.update(_search(mem, inner, args))
    finally:
        mem.close()
    return out


def _search(mem: Memory, inner: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Each query searched with the notes and without (``retrieval.prose`` off), one
    right after the other in alternating order, and ``embed_query`` alone: the
    notes' cost is the paired difference, whatever the machine does meanwhile."""
    queries = make_queries(args.queries)
    for q in queries[:5]:
        mem.search(q, scope=SCOPE)  # warm caches
    on: list[float] = []
    off: list[float] = []
    embeds: list[float] = []
    notes = 0
    for i, q in enumerate(queries):
        embeds.append(1000 * _timed(lambda q=q: inner.embed_query(q)))
        for flag in (True, False) if i % 2 else (False, True):
            mem.settings.retrieval.prose = flag
            t0 = time.perf_counter()
            hits = mem.search(q, scope=SCOPE, k=10)
            (on if flag else off).append(1000 * (time.perf_counter() - t0))
            notes += flag and any(h.source == "note" for h in hits)
    mem.settings.retrieval.prose = True
    return {
        "search": percentiles(on),
        "search_prose_off": percentiles(off),
        "notes_cost_ms": float(np.percentile(np.array(on) - np.array(off), 50)),
        "embed": percentiles(embeds),
        "with_note": notes / len(queries),
    }


def run_events(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    root = workdir / "events"
    shutil.rmtree(root, ignore_errors=True)
    inner = make_embedder(args.embedder)
    timed = TimedEmbeddings(inner)
    mem = Memory(settings=_settings(root), embeddings=timed)
    out: dict[str, Any] = {"events": args.events}
    try:
        log = SessionLog(mem).attach()
        texts = make_texts(args.events, SEED + 5)
        now = time.time()
        t0 = time.perf_counter()
        for i in range(0, len(texts), 2):
            log.append_many(
                SCOPE,
                f"t{i // 40}",
                [
                    _event("user", texts[i], now - (len(texts) - i) * 60),
                    *([_event("assistant", texts[i + 1], now - (len(texts) - i) * 60 + 5)]
                      if i + 1 < len(texts) else []),
                ],
            )  # fmt: skip
        out["append_ms_per_event"] = 1000 * (time.perf_counter() - t0) / len(texts)
        mem.background.wait()  # what the appends queued
        timed.seconds = 0.0
        mem.workspace.keyword.set_meta(log._upto_key(), "0")  # embed every event again
        out["embed_all_s"] = _timed(log.embed_pending)
        out["embed_all_embedder_s"] = timed.seconds
        questions = [
            f"What did I ask about {' '.join(t.split()[:4])} before?"
            if t.isascii()
            else f"上次我问的{t[:10]}"
            for t in texts[: 2 * args.queries : 2]  # the user's events
        ]
        times, found = [], 0
        for q in questions:
            t0 = time.perf_counter()
            hits = mem.search(q, scope=SCOPE, k=5)
            times.append(1000 * (time.perf_counter() - t0))
            found += any(h.source == "session" for h in hits)
        out["recall_search"] = percentiles(times)
        out["recall_with_event"] = found / max(1, len(questions))
    finally:
        mem.close()
    return out


def _event(role: str, text: str, at: float) -> Any:
    from langmem_ext.memory.sessions.log import NewEvent

    return NewEvent(role, text, at)


def render(results: dict[str, Any]) -> str:
    rows = []
    for r in results["sizes"]:
        rows.append(
            [
                str(r["paragraphs"]),
                str(r["chunks"]),
                f"{r['first_sync_s']:.2f} ({r['first_sync_embed_s']:.2f})",
                f"{1000 * (r['first_sync_s'] - r['first_sync_embed_s']) / r['chunks']:.2f}"
                if r["chunks"]
                else "–",
                f"{r['noop_sync_ms']:.1f}",
                f"{r['edit_sync_ms']:.1f} ({r['edit_sync_embed_ms']:.1f})",
                f"{r['add']['p50_ms']:.1f} / {r['add']['p95_ms']:.1f}",
                f"{r['delete']['p50_ms']:.1f} / {r['delete']['p95_ms']:.1f}",
                f"{r['search']['p50_ms']:.1f} / {r['search']['p95_ms']:.1f}",
                f"{r['search_prose_off']['p50_ms']:.1f} / {r['search_prose_off']['p95_ms']:.1f}",
                f"{r['notes_cost_ms']:.1f}",
                f"{100 * r['with_note']:.0f} %",
                f"{r['embed']['p95_ms']:.1f}",
            ]
        )
    table = markdown_table(
        [
            "paragraphs",
            "chunks",
            "first sync s (embedder)",
            "ms / chunk besides embedding",
            "no-op sync ms",
            "sync after one edit ms (embedder)",
            "add p50 / p95 ms",
            "delete p50 / p95 ms",
            "search p50 / p95 ms",
            "prose off p50 / p95 ms",
            "notes' cost ms (paired p50)",
            "searches with a note",
            "embed_query p95 ms",
        ],
        rows,
    )
    ev = results.get("events")
    if ev:
        table += (
            f"\n\nSession events: {ev['events']} appended at {ev['append_ms_per_event']:.2f} ms "
            f"each; embed_pending of all of them {ev['embed_all_s']:.2f} s (embedder "
            f"{ev['embed_all_embedder_s']:.2f} s); recall questions p50 / p95 "
            f"{ev['recall_search']['p50_ms']:.1f} / {ev['recall_search']['p95_ms']:.1f} ms, "
            f"{100 * ev['recall_with_event']:.0f} % with a session hit."
        )
    return table


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--memories", type=int, default=1000)
    p.add_argument("--embedder", choices=["use", "e5"], default="use")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--single", type=int, default=30, help="single adds and deletes timed")
    p.add_argument("--events", type=int, default=2000)
    p.add_argument("--workdir", type=Path, default=None)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="langmem-prose-"))
    results: dict[str, Any] = {"sizes": [run_size(n, args, workdir) for n in args.sizes]}
    if args.events:
        results["events"] = run_events(args, workdir)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(render(results))
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()

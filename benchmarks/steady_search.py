"""Search in a long-running process: every question of ``ingest.py``'s vocabulary
over a 10k store, asked again and again.

``ingest.py`` times 300 questions once each, on a fresh process. A server answers
for hours: what it reads of each memory text (its keyword tokens, script profile,
safety facts, person reading, noise check) is kept in per-text caches, and whether
those hold a whole scope decides what a search costs once the process is warm. This
script builds one store with ``ingest.py``'s texts, then, per run and per variant:

* **first pass** — each distinct question once, caches emptied before the pass
  (the process has read no memory yet);
* **steady** — two more passes over the same questions (what a warm process pays).

Variants, alternating within each run on the same store: the caches as shipped, and
the two per-text caches that were smaller than a 10k scope capped at their former
sizes (the fusion's keyword tokens at 4,096 texts, the safety facts at 8,192) — the
baseline of the same run. The query embeddings are memoised: the figures are the
search's own work.

Usage::

    python benchmarks/steady_search.py --size 10000 --embedder use --runs 3
"""

from __future__ import annotations

import argparse
import functools
import gc
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import ingest
from _common import QueryMemo, make_embedder, markdown_table, percentiles

from langmem_ext import Memory
from langmem_ext.core.config import EmbeddingSettings, Settings
from langmem_ext.memory.safety import facts
from langmem_ext.retrieval import fusion

CAPPED = [(fusion, "_text_words", 4096), (facts, "_facts_cached", 8192)]
"""The per-text caches the baseline caps, and their former sizes."""

_SHIPPED = {name: getattr(module, name) for module, name, _size in CAPPED}


def questions() -> list[str]:
    """Every distinct question ``ingest.make_queries`` asks (5,000 draws cover all of
    its templates and names)."""
    return list(dict.fromkeys(ingest.make_queries(5000)))


def _set_caches(capped: bool) -> None:
    """Put the shipped caches in place, or capped copies of the same functions."""
    for module, name, size in CAPPED:
        shipped = _SHIPPED[name]
        setattr(
            module,
            name,
            functools.lru_cache(maxsize=size)(shipped.__wrapped__) if capped else shipped,
        )


def _clear_caches() -> None:
    """Empty every per-text cache of the package (a process that has read nothing)."""
    for obj in gc.get_objects():
        if isinstance(obj, functools._lru_cache_wrapper) and getattr(
            obj, "__module__", ""
        ).startswith("langmem_ext"):
            obj.cache_clear()


def _timed(search: Callable[[str], Any], qs: list[str]) -> list[float]:
    out = []
    for q in qs:
        t = time.perf_counter()
        search(q)
        out.append((time.perf_counter() - t) * 1000)
    return out


def run(size: int, provider: str, runs: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Build the store, then time both variants ``runs`` times."""
    work = Path(tempfile.mkdtemp(prefix="langmem-steady-"))
    try:
        texts = ingest.make_texts(size)
        base = datetime(2026, 8, 23, 9, 0)
        created = [
            (base + timedelta(minutes=131 * i % (90 * 24 * 60))).timestamp() for i in range(size)
        ]
        settings = Settings(
            workspace=work / "ws",
            embeddings=EmbeddingSettings(provider=provider, cache=False),  # type: ignore[arg-type]
        )
        raw = make_embedder(provider)
        memo = QueryMemo(raw)
        memory = Memory(settings=settings, embeddings=memo)
        memory.add_many(texts, scope=ingest.SCOPE, created_at=created)
        memory.background.wait()
        qs = questions()
        for q in qs:
            memo.memo[q] = raw.embed_query(q)
        log(f"  {size} memories, {len(qs)} questions: store built")

        def search(q: str) -> Any:
            return memory.search(q, scope=ingest.SCOPE, k=ingest.K)

        rows: list[dict[str, Any]] = []
        for r in range(1, runs + 1):
            for capped in (False, True) if r % 2 else (True, False):
                _set_caches(capped)
                _clear_caches()
                first = _timed(search, qs)
                steady = _timed(search, qs) + _timed(search, qs)
                info = fusion._text_words.cache_info()
                rows.append(
                    {
                        "run": r,
                        "variant": "capped" if capped else "shipped",
                        "first": percentiles(first),
                        "steady": percentiles(steady),
                        "steady_mean": statistics.mean(steady),
                        "text_words_misses": info.misses,
                        "text_words_hits": info.hits,
                    }
                )
                log(f"  run {r} {rows[-1]['variant']}: steady p95 {rows[-1]['steady']['p95_ms']}")
        _set_caches(False)
        memory.close()
        return {"size": size, "embedder": provider, "questions": len(qs), "rows": rows}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def render(res: dict[str, Any]) -> str:
    """The Markdown table of the runs, and the medians."""
    name = {
        "shipped": "caches as shipped",
        "capped": "tokens 4,096 / safety facts 8,192 (before)",
    }
    body = []
    for row in res["rows"]:
        f, s = row["first"], row["steady"]
        body.append(
            [
                str(row["run"]),
                name[row["variant"]],
                f"{f['p50_ms']:.1f} / {f['p95_ms']:.1f}",
                f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f}",
                f"{row['steady_mean']:.2f}",
                f"{row['text_words_misses']:,} / {row['text_words_hits']:,}",
            ]
        )
    for variant in ("shipped", "capped"):
        mine = [r for r in res["rows"] if r["variant"] == variant]

        def med(key: str, p: str, rows: list[dict[str, Any]] = mine) -> float:
            return statistics.median(r[key][p] for r in rows)

        body.append(
            [
                "**median**",
                name[variant],
                f"{med('first', 'p50_ms'):.1f} / {med('first', 'p95_ms'):.1f}",
                f"**{med('steady', 'p50_ms'):.1f} / {med('steady', 'p95_ms'):.1f}**",
                f"{statistics.median(r['steady_mean'] for r in mine):.2f}",
                "",
            ]
        )
    header = [
        "run",
        "per-text caches",
        "first pass p50 / p95 (ms)",
        "steady p50 / p95 (ms)",
        "steady mean (ms)",
        "keyword tokens: misses / hits",
    ]
    return (
        f"## Search in a long-running process — {date.today().isoformat()}\n\n"
        f"Command: `python benchmarks/steady_search.py --size {res['size']} "
        f"--embedder {res['embedder']} --runs {len(res['rows']) // 2}`\n\n"
        f"{res['size']:,} memories, {res['questions']} distinct questions, query "
        "embeddings memoised.\n\n" + markdown_table(header, body)
    )


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--embedder", default="use")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args(argv)
    res = run(args.size, args.embedder, args.runs, lambda m: print(m, file=sys.stderr))
    print(render(res))


if __name__ == "__main__":
    main()

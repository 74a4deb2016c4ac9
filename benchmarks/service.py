"""The memory as a service: what a running server saves a search.

One workspace of N memories of one user (``--memories``, the real USE embedder by
default) is searched four ways:

1. **cold CLI**: ``langmem-ext --workspace W --user bench search Q`` — a new process
   that opens the workspace and loads the embedder for its one search;
2. **CLI through the server**: ``langmem-ext --server URL --user bench search Q`` — a
   new process that sends the search to a running ``langmem-ext serve``;
3. **REST**: ``POST /v1/search`` from one ``httpx.Client``, one request at a time,
   against the same server;
4. **in process**: ``Memory.search`` on an open ``Memory``.

The CLI variants are timed per command (process start to exit, ``--cli-runs`` each,
median); REST and in process per call (``--searches`` each, p50 / p95), after a warm-up
of ten. The queries cycle through a fixed list. The cold runs and the in-process
searches happen before the server starts, so no two processes open the workspace at
once. Prints a Markdown table (``--json`` for JSON).

    PYTHONPATH=$PWD python benchmarks/service.py --memories 1000 --cli-runs 10 --searches 1000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import httpx

from langmem_ext import Memory, Settings

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _serving import serve

USER = "bench"
QUERIES = [
    "what does the user like to drink",
    "where did the user travel",
    "user's favourite book",
    "用户喜欢吃什么",
    "the user's sister",
    "what sport does the user play",
    "用户住在哪里",
    "when is the dentist appointment",
    "the user's job",
    "music the user listens to",
]
TOPICS = [
    ("likes {x} tea", ["green", "black", "jasmine", "oolong"]),
    ("travelled to {x} last year", ["Lisbon", "Kyoto", "Oslo", "Lima"]),
    ("is reading a book about {x}", ["whales", "Rome", "chess", "bees"]),
    ("喜欢吃{x}", ["拉面", "饺子", "火锅", "寿司"]),
    ("plays {x} on weekends", ["tennis", "football", "chess", "golf"]),
    ("has a meeting about {x}", ["budget", "hiring", "release", "design"]),
]
CLI = [sys.executable, "-c", "import sys; from langmem_ext.cli.app import main; sys.exit(main())"]


def _texts(n: int) -> list[str]:
    out = []
    for i in range(n):
        pattern, values = TOPICS[i % len(TOPICS)]
        out.append(f"User {pattern.format(x=values[(i // len(TOPICS)) % len(values)])} (note {i})")
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _timed(fn: Callable[[], Any], runs: int, warmup: int = 0) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _cli(env: dict[str, str], *args: str) -> Callable[[], None]:
    def run() -> None:
        done = subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise SystemExit(f"langmem-ext {' '.join(args)} failed:\n{done.stderr}")

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument("--embedder", default="use", choices=["use", "fake"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="bench-service-"))
    ws = root / "ws"
    env = {
        **os.environ,
        "LANGMEM_EMBEDDINGS__PROVIDER": args.embedder,
        "LANGMEM_LIFECYCLE__DAILY_JOBS": "false",
        "ANONYMIZED_TELEMETRY": "False",
    }
    settings = Settings(workspace=ws)
    settings.embeddings.provider = args.embedder
    with Memory(settings=settings) as memory:
        memory.add_many(_texts(args.memories), scope=f"user_{USER}")
        queries = iter(QUERIES * (args.searches // len(QUERIES) + 2))
        in_process = _timed(
            lambda: memory.search(next(queries), scope=f"user_{USER}"), args.searches, warmup=10
        )
    query = QUERIES[0]
    cold = _timed(_cli(env, "--workspace", str(ws), "--user", USER, "search", query), args.cli_runs)

    started = time.perf_counter()
    with serve(ws, root / "serve.log", env) as url:
        start_s = time.perf_counter() - started
        through = _timed(
            _cli(env, "--server", url, "--user", USER, "search", query), args.cli_runs, warmup=1
        )
        headers = {"X-User-Id": USER, "content-type": "application/json"}
        with httpx.Client(base_url=f"{url}/v1", headers=headers, timeout=60) as client:
            queries = iter(QUERIES * (args.searches // len(QUERIES) + 2))

            def search() -> None:
                r = client.post("/search", json={"query": next(queries)})
                r.raise_for_status()

            rest = _timed(search, args.searches, warmup=10)

    rows = [
        ("cold CLI search (new process, loads the embedder)", "per command", cold),
        ("CLI search through the server (`--server`)", "per command", through),
        ("REST `POST /v1/search`, one client", "per request", rest),
        ("`Memory.search` in process", "per call", in_process),
    ]
    result = {
        "memories": args.memories,
        "embedder": args.embedder,
        "server_start_s": round(start_s, 2),
        "rows": [
            {
                "what": what,
                "unit": unit,
                "n": len(ms),
                "median_ms": round(statistics.median(ms), 2),
                "p95_ms": round(_pct(ms, 0.95), 2),
            }
            for what, unit, ms in rows
        ],
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{args.memories} memories of one user, embedder {args.embedder}; "
        f"server ready in {start_s:.1f} s\n"
    )
    print("| search | timed | n | p50 (median) ms | p95 ms |")
    print("| --- | --- | ---: | ---: | ---: |")
    for r in result["rows"]:
        print(
            f"| {r['what']} | {r['unit']} | {r['n']} | {r['median_ms']:.1f} | {r['p95_ms']:.1f} |"
        )


if __name__ == "__main__":
    main()

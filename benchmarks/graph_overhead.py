"""Per-turn overhead of the memory graph at 10k memories.

In one process, on one workspace of ``--memories`` memories in scope ``main``
(ingested with ``Memory.add_many``, USE embedder), each turn of a fixed mix is sent
to two graphs in alternating order:

* **memory graph** — :func:`langmem_ext.graph.build_memory_graph`: pending check
  (``pending_confirm`` runs only when a save is pending), preflight recall (gate,
  intent, hybrid search, core memories, first-turn daily notes), answer, then the
  post-turn nodes: ``propose_saves`` (the thread's pending saves, one ledger read)
  and ``record_turn`` (overlap test, token count; the hot-log append and boosts
  handed to the background writer);
* **bare graph** — ``StateGraph(MessagesState)`` with one node calling the model.

Both call the same instant ``ScriptedChatModel`` and use the same checkpointer kind
(a fresh ``SqliteSaver`` file each, opened as ``build_memory_graph``'s default is:
WAL, ``synchronous=NORMAL``; or ``InMemorySaver``). The difference of the two is
what the memory graph adds to a turn, everything but the model call.
Threads change every ``--turns-per-thread`` turns, as sessions do.

The turn mix (repeating, 10 turns): 3 recall questions that force a search ("上次…",
"do you remember …"), 3 ordinary questions the gate lets through (also searched),
4 small-talk turns the gate skips ("ok", "谢谢", "👍"). Floor: ≤ 10 ms added at p50.

A second, separate pass times each node of the memory graph through callbacks
(callbacks cost time themselves, so those numbers are not the timed turns').
``--profile`` writes a pyinstrument profile of the memory-graph turns.

Usage::

    python benchmarks/graph_overhead.py --memories 10000 --turns 200
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any
from uuid import UUID

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import markdown_table, percentiles
from ingest import make_texts
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.core.config import EmbeddingSettings, Settings
from langmem_ext.graph import (
    ANSWER,
    PENDING_CONFIRM,
    PREFLIGHT_RECALL,
    PROPOSE_SAVES,
    RECORD_TURN,
    TOOLS,
    MemoryState,
    build_memory_graph,
    flush_turn_writes,
    sqlite_checkpointer,
)
from langmem_ext.retrieval.gate import should_retrieve
from langmem_ext.short_term.accounting import count_message_tokens

SCOPE = "main"
FLOOR_MS = 10.0
REPLY = "好的，明白了。Noted."

RECALL = [
    "上次我说我对什么过敏？",
    "Do you remember when Emma's birthday is?",
    "我之前说过小王在哪里工作吗？",
    "Remember how much I paid for the laptop?",
    "昨天我们聊了什么？",
    "Did I tell you who is going to Tokyo?",
]
QUESTIONS = [
    "What does Alice like to do at the gym?",
    "谁在北京当老师？",
    "Who borrowed my running shoes?",
    "主人晚饭喜欢吃什么？",
    "Which podcast did Noah recommend?",
    "丽丽和建国打算去哪里旅行？",
]
SMALL_TALK = ["ok", "谢谢", "👍", "好的", "thanks!", "嗯嗯", "got it", "你好"]
PATTERN = ("recall", "smalltalk", "question", "smalltalk", "recall",
           "question", "smalltalk", "recall", "question", "smalltalk")  # fmt: skip


def turn_mix(n: int) -> list[tuple[str, str]]:
    """``n`` turns ``(kind, text)``, deterministic."""
    pools = {"recall": RECALL, "question": QUESTIONS, "smalltalk": SMALL_TALK}
    seen: dict[str, int] = defaultdict(int)
    out = []
    for i in range(n):
        kind = PATTERN[i % len(PATTERN)]
        out.append((kind, pools[kind][seen[kind] % len(pools[kind])]))
        seen[kind] += 1
    return out


def instant_model() -> ScriptedChatModel:
    """A chat model that answers at once, the same text every time."""

    def policy(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage(REPLY)

    return ScriptedChatModel(policy=policy)


def bare_graph(model: ScriptedChatModel, saver: BaseCheckpointSaver[Any]) -> Any:
    """``StateGraph(MessagesState)`` with one node calling ``model``."""

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("model", call_model)
    g.add_edge(START, "model")
    return g.compile(checkpointer=saver)


def shape_graph(model: ScriptedChatModel, saver: BaseCheckpointSaver[Any]) -> Any:
    """The memory graph's shape with no memory work: same state, nodes, edges, updates.

    ``(router: nothing pending) → preflight_recall → answer → propose_saves →
    record_turn → END``, each node returning the keys the real one returns, but computing nothing.
    Its cost over the bare graph is LangGraph's: the extra steps, channels and
    checkpoint writes.
    """

    def pending_confirm(state: MemoryState) -> dict[str, Any]:
        return {"pending_ids": [], "notes": []}

    def preflight_recall(state: MemoryState) -> dict[str, Any]:
        return {"memory_context": "", "recalled": [], "first_turn_done": True}

    def answer(state: MemoryState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def propose_saves(state: MemoryState) -> dict[str, Any]:
        return {"proposed": [], "asks": {}, "pending_ids": []}

    def record_turn(state: MemoryState) -> dict[str, Any]:
        return {"token_count": 0, "notes": [], "tool_context": None}

    def tools(state: MemoryState) -> dict[str, Any]:  # never reached: no tool calls
        return {}

    g = StateGraph(MemoryState)
    g.add_node(PENDING_CONFIRM, pending_confirm)
    g.add_node(PREFLIGHT_RECALL, preflight_recall)
    g.add_node(ANSWER, answer)
    g.add_node(TOOLS, tools)
    g.add_node(PROPOSE_SAVES, propose_saves)
    g.add_node(RECORD_TURN, record_turn)
    g.add_conditional_edges(
        START, lambda state: PREFLIGHT_RECALL, [PENDING_CONFIRM, PREFLIGHT_RECALL]
    )
    g.add_edge(PENDING_CONFIRM, PREFLIGHT_RECALL)
    g.add_edge(PREFLIGHT_RECALL, ANSWER)
    g.add_conditional_edges(
        ANSWER,
        lambda state: TOOLS if tools_condition(state) == TOOLS else PROPOSE_SAVES,
        [TOOLS, PROPOSE_SAVES],
    )
    g.add_edge(TOOLS, ANSWER)
    g.add_edge(PROPOSE_SAVES, RECORD_TURN)
    g.add_conditional_edges(RECORD_TURN, lambda state: END, [END])
    return g.compile(checkpointer=saver)


@contextmanager
def checkpointer(kind: str, path: Path) -> Iterator[BaseCheckpointSaver[Any]]:
    """A fresh checkpointer: ``sqlite`` (the graph's default on ``path``) or ``memory``."""
    if kind == "memory":
        yield InMemorySaver()
        return
    saver = sqlite_checkpointer(path)
    assert isinstance(saver, SqliteSaver)
    try:
        yield saver
    finally:
        saver.conn.close()


class NodeTimer(BaseCallbackHandler):
    """Wall time of each node run (direct children of a graph's root run) and of the root."""

    def __init__(self) -> None:
        self.starts: dict[UUID, tuple[str, float, UUID | None]] = {}
        self.roots: set[UUID] = set()
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.turn_nodes_ms = 0.0
        self.gaps_ms: list[float] = []
        """Per turn: the root run's time minus its nodes' time (steps, channels, checkpoints)."""

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Remember when a run started."""
        name = kwargs.get("name") or (serialized or {}).get("name") or "?"
        if parent_run_id is None:
            self.roots.add(run_id)
            self.turn_nodes_ms = 0.0
        self.starts[run_id] = (str(name), time.perf_counter(), parent_run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Record a node's time, or the turn's remainder for a root run."""
        name, t0, parent = self.starts.pop(run_id, ("?", time.perf_counter(), None))
        ms = (time.perf_counter() - t0) * 1000
        if parent in self.roots:
            self.ms[name].append(ms)
            self.turn_nodes_ms += ms
        elif run_id in self.roots:
            self.gaps_ms.append(ms - self.turn_nodes_ms)

    on_chain_error = on_chain_end  # type: ignore[assignment]


def _stats(values: list[float]) -> dict[str, float]:
    return {**percentiles(values), "n": len(values), "total_ms": float(np.sum(values))}


def run_kind(
    kind: str,
    memory: Memory,
    turns: list[tuple[str, str]],
    per_thread: int,
    workdir: Path,
    log: Callable[[str], None],
    profile: Path | None,
    durability: str = "async",
) -> dict[str, Any]:
    """All passes for one checkpointer kind.

    1. timed: every turn on both graphs, alternating which goes first;
    2. nodes: every turn again on both graphs with a timing callback;
    3. components: the memory calls of each turn, alone;
    4. with ``profile``: every turn again on the memory graph under pyinstrument.
    """
    model = instant_model()
    with (
        checkpointer(kind, workdir / f"mem-{kind}.db") as mem_saver,
        checkpointer(kind, workdir / f"bare-{kind}.db") as bare_saver,
        checkpointer(kind, workdir / f"shape-{kind}.db") as shape_saver,
    ):
        mem = build_memory_graph(model, memory, checkpointer=mem_saver, scope=SCOPE)
        bare = bare_graph(model, bare_saver)
        shape = shape_graph(model, shape_saver)

        def config(prefix: str, i: int, **extra: Any) -> dict[str, Any]:
            thread = f"{prefix}-{i // per_thread}"
            return {"configurable": {"thread_id": thread, "scope": SCOPE}, **extra}

        def turn(graph: Any, text: str, cfg: dict[str, Any]) -> float:
            t0 = time.perf_counter()
            graph.invoke({"messages": [HumanMessage(text)]}, cfg, durability=durability)
            ms = (time.perf_counter() - t0) * 1000
            # The memory graph's background writes (hot log, boosts) run after the
            # reply, while a user reads it; untimed here, and finished before the next
            # turn of any graph so they do not slow the graphs compared with it.
            flush_turn_writes(memory)
            return ms

        for i, (_, text) in enumerate(turn_mix(20)):  # warm up: models, pages, caches
            turn(mem, text, config("warm-m", i))
            turn(bare, text, config("warm-b", i))
            turn(shape, text, config("warm-s", i))

        mem_ms: list[float] = []
        bare_ms: list[float] = []
        shape_ms: list[float] = []
        graphs = [("m", mem, mem_ms), ("b", bare, bare_ms), ("s", shape, shape_ms)]
        for i, (_, text) in enumerate(turns):
            for prefix, graph, sink in graphs[i % 3 :] + graphs[: i % 3]:  # rotate the order
                sink.append(turn(graph, text, config(prefix, i)))
            if (i + 1) % 50 == 0:
                log(f"  {kind}: {i + 1}/{len(turns)} timed turns")

        mem_timer, bare_timer = NodeTimer(), NodeTimer()
        for i, (_, text) in enumerate(turns):
            turn(mem, text, config("nm", i, callbacks=[mem_timer]))
            turn(bare, text, config("nb", i, callbacks=[bare_timer]))
        log(f"  {kind}: node pass done")

        if profile is not None:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0005)
            profiler.start()
            for i, (_, text) in enumerate(turns):
                turn(mem, text, config("p", i))
            profiler.stop()
            out = profile.with_name(f"{profile.stem}-{kind}{profile.suffix or '.html'}")
            out.write_text(profiler.output_html())
            out.with_suffix(".txt").write_text(profiler.output_text(unicode=True))
            log(f"  profile written to {out} (+ .txt)")

    components: dict[str, list[float]] = defaultdict(list)
    history = [HumanMessage(t) if j % 2 == 0 else AIMessage(REPLY)
               for j, (_, t) in enumerate(turns[: 2 * per_thread])]  # fmt: skip
    k = memory.settings.injection.top_k
    for _, text in turns:
        searched = should_retrieve(text, memory.settings.gate).retrieve
        calls: list[tuple[str, Callable[[], Any]]] = [
            ("Memory.list(category='core') (preflight, every turn)",
             lambda: memory.list(scope=SCOPE, category="core")),
            ("Memory.list_pending of the thread (propose_saves)",
             lambda: memory.list_pending(scope=SCOPE, thread_id="t")),
            ("count_message_tokens(history) (record_turn)", lambda: count_message_tokens(history)),
        ]  # fmt: skip
        if searched:
            calls += [
                ("embed_query alone (searched turns)",
                 lambda t=text: memory.embeddings.embed_query(t)),
                ("Memory.search, hybrid, k=3 (searched turns; includes embed_query)",
                 lambda t=text: memory.search(t, scope=SCOPE, k=k)),
            ]  # fmt: skip
        for name, fn in calls:
            t0 = time.perf_counter()
            fn()
            components[name].append((time.perf_counter() - t0) * 1000)

    kinds = [kk for kk, _ in turns]
    per_kind = {}
    for kk in ("recall", "question", "smalltalk"):
        idx = [i for i, x in enumerate(kinds) if x == kk]
        m = [mem_ms[i] for i in idx]
        b = [bare_ms[i] for i in idx]
        per_kind[kk] = {
            "n": len(idx),
            "memory": percentiles(m),
            "bare": percentiles(b),
            "shape": percentiles([shape_ms[i] for i in idx]),
            "paired": percentiles([x - y for x, y in zip(m, b, strict=True)]),
        }
    return {
        "checkpointer": "SqliteSaver" if kind == "sqlite" else "InMemorySaver",
        "turns": len(turns),
        "memory": percentiles(mem_ms),
        "bare": percentiles(bare_ms),
        "paired": percentiles([x - y for x, y in zip(mem_ms, bare_ms, strict=True)]),
        "shape": percentiles(shape_ms),
        "per_kind": per_kind,
        "nodes": {name: _stats(v) for name, v in mem_timer.ms.items()},
        "machinery": {"memory": _stats(mem_timer.gaps_ms), "bare": _stats(bare_timer.gaps_ms)},
        "bare_nodes": {name: _stats(v) for name, v in bare_timer.ms.items()},
        "components": {name: _stats(v) for name, v in components.items()},
    }


def _ms(x: float) -> str:
    return f"{x:.2f}"


def render(results: dict[str, Any]) -> str:
    """The Markdown section for BENCHMARKS.md."""
    load0, load1 = results["load_average"][0][0], results["load_average"][1][0]
    secs = results["ingest_seconds"]
    ingest = f", {secs:.0f} s" if secs >= 1 else ", workspace reused"
    out = [
        f"## Graph overhead per turn — {results['date']}, {results['machine']}"
        + (f" — {results['label']}" if results.get("label") else "")
        + "\n",
        f"Command: `{results['command']}`\n",
        *([f"{results['note']}\n"] if results.get("note") else []),
        f"{results['memories']} memories in scope `{SCOPE}` (ingested with `add_many`, "
        f"embedder `{results['embedder']}`{ingest}). {results['turns']} timed turns per checkpointer "
        f"after 20 warm-up turns, each sent to the three graphs in rotating order; a new "
        f"thread every {results['per_thread']} turns. Mix: {results['mix']}. The model is a "
        f"`ScriptedChatModel` that answers at once (no tool calls), so *added* is the "
        f"memory graph's own cost: pending check, preflight recall (gate, search, core "
        f"memories, first-turn notes), boost, session log, token count, and its extra "
        f"checkpointed steps. `SqliteSaver` as `build_memory_graph` opens it by default "
        f"(WAL, synchronous=NORMAL). LangGraph durability `{results['durability']}`; "
        f"OpenBLAS threads {results['blas_threads']} (the embedder runs queries on one). "
        f"Load average {load0:.2f} before, {load1:.2f} after.\n",
    ]
    rows = []
    for r in results["runs"]:
        added50 = r["memory"]["p50_ms"] - r["bare"]["p50_ms"]
        added95 = r["memory"]["p95_ms"] - r["bare"]["p95_ms"]
        rows.append([
            r["checkpointer"], _ms(r["memory"]["p50_ms"]), _ms(r["memory"]["p95_ms"]),
            _ms(r["bare"]["p50_ms"]), _ms(r["bare"]["p95_ms"]), f"**{_ms(added50)}**",
            _ms(added95), f"{_ms(r['paired']['p50_ms'])} / {_ms(r['paired']['p95_ms'])}",
            "met" if added50 <= FLOOR_MS else "NOT met",
        ])  # fmt: skip
    out.append(markdown_table(
        ["checkpointer", "memory graph p50", "p95", "bare graph p50", "p95", "added p50",
         "added p95", "paired diff p50 / p95", f"floor ≤ {FLOOR_MS:.0f} ms p50"],
        rows,
    ))  # fmt: skip
    out.append("\nTimes in ms per turn. *added* = memory-graph percentile − bare-graph "
               "percentile; *paired diff* = percentiles of the per-turn differences.\n")  # fmt: skip
    out.append("By turn kind, with the added time split in two by a third graph of the "
               "memory graph's shape that does no memory work (same state, nodes, edges and "
               "updates): *LangGraph steps* = shape − bare (extra supersteps, channels, "
               "checkpoint writes), *memory work* = memory − shape (search, core memories, "
               "pending, boost, token count):\n")  # fmt: skip
    rows = []
    for r in results["runs"]:
        for kk, s in [*r["per_kind"].items(), ("all", r)]:
            m50, b50, s50 = s["memory"]["p50_ms"], s["bare"]["p50_ms"], s["shape"]["p50_ms"]
            rows.append([
                r["checkpointer"], kk, str(s.get("n", r["turns"])), _ms(m50), _ms(s50),
                _ms(b50), f"**{_ms(m50 - b50)}**", _ms(s50 - b50), _ms(m50 - s50),
            ])  # fmt: skip
    out.append(markdown_table(
        ["checkpointer", "turn kind", "n", "memory p50", "shape p50", "bare p50",
         "added p50", "LangGraph steps", "memory work"], rows))  # fmt: skip
    for r in results["runs"]:
        out.append(f"\nWhere the memory graph's time goes, {r['checkpointer']} (a second "
                   f"pass with a timing callback, which costs time itself; mean × runs / "
                   f"turns = ms per turn):\n")  # fmt: skip
        n_turns = r["turns"]
        rows = [
            [name, str(v["n"]), _ms(v["p50_ms"]), _ms(v["p95_ms"]), _ms(v["total_ms"] / n_turns)]
            for name, v in sorted(r["nodes"].items(), key=lambda kv: -kv[1]["total_ms"])
        ]
        mm, mb = r["machinery"]["memory"], r["machinery"]["bare"]
        rows.append(["graph steps + checkpoints (turn − nodes), memory graph", str(mm["n"]),
                     _ms(mm["p50_ms"]), _ms(mm["p95_ms"]), _ms(mm["mean_ms"])])  # fmt: skip
        rows.append(["… the same, bare graph", str(mb["n"]), _ms(mb["p50_ms"]),
                     _ms(mb["p95_ms"]), _ms(mb["mean_ms"])])  # fmt: skip
        out.append(markdown_table(["part", "runs", "p50", "p95", "ms per turn"], rows))
        out.append("\nThe memory calls of those nodes, timed alone on the same turns:\n")
        rows = [
            [name, str(v["n"]), _ms(v["p50_ms"]), _ms(v["p95_ms"]), _ms(v["mean_ms"])]
            for name, v in r["components"].items()
        ]
        out.append(markdown_table(["call", "calls", "p50", "p95", "mean"], rows))
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    """Run the graph overhead benchmark from the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--memories", type=int, default=10_000)
    p.add_argument("--turns", type=int, default=200)
    p.add_argument("--turns-per-thread", type=int, default=10)
    p.add_argument("--embedder", choices=["use", "e5"], default="use")
    p.add_argument("--checkpointer", choices=["sqlite", "memory", "both"], default="both")
    p.add_argument(
        "--durability",
        choices=["async", "sync", "exit"],
        default="async",
        help="LangGraph durability of every invoke, both graphs (default: LangGraph's)",
    )
    p.add_argument("--label", default="", help="a variant name added to the section title")
    p.add_argument("--note", default="", help="a paragraph added under the section title")
    p.add_argument("--append", action="store_true", help="append to --out instead of replacing")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "BENCHMARKS-graph.md",
                   help="write the Markdown here ('-' to skip)")  # fmt: skip
    p.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    p.add_argument("--profile", type=Path, default=None, metavar="PATH.html",
                   help="pyinstrument profile of the memory-graph turns (pip install pyinstrument)")  # fmt: skip
    p.add_argument("--workdir", type=Path, default=None)
    p.add_argument("--workspace", type=Path, default=None,
                   help="keep the ingested workspace here and reuse it when it already holds "
                        "--memories memories (ingest time then reads 0)")  # fmt: skip
    args = p.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="langmem-graph-bench-", dir=args.workdir))
    load_start = os.getloadavg()
    try:
        settings = Settings(
            workspace=args.workspace or tmp / "ws",
            embeddings=EmbeddingSettings(provider=args.embedder, cache=False),  # type: ignore[arg-type]
        )
        with Memory(settings=settings) as memory:
            t0 = time.perf_counter()
            have = memory.stats(scope=SCOPE)["scopes"].get(SCOPE, {}).get("entries", 0)
            if have < args.memories:
                memory.add_many(make_texts(args.memories - have), scope=SCOPE, embed=True)
            ingest = time.perf_counter() - t0
            log(f"{args.memories} memories ready in {ingest:.1f} s")
            turns = turn_mix(args.turns)
            kinds = ["sqlite", "memory"] if args.checkpointer == "both" else [args.checkpointer]
            runs = [
                run_kind(
                    k,
                    memory,
                    turns,
                    args.turns_per_thread,
                    tmp,
                    log,
                    args.profile,
                    args.durability,
                )
                for k in kinds
            ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    counts = {k: sum(1 for kk, _ in turns if kk == k) for k in ("recall", "question", "smalltalk")}
    mix = (
        f"{counts['recall']} recall questions (forced search), {counts['question']} ordinary "
        f"questions (gate: search), {counts['smalltalk']} small-talk turns (gate: skip)"
    )
    argv_list = list(argv) if argv is not None else sys.argv[1:]
    for opt in ("--note", "--label", "--json", "--out"):  # not part of what is measured
        if opt in argv_list:
            i = argv_list.index(opt)
            del argv_list[i : i + 2]
    env = " ".join(
        f"{k}={os.environ[k]}"
        for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
        if k in os.environ
    )
    results = {
        "date": date.today().isoformat(),
        "machine": "2 cores",
        "command": " ".join(
            [*([env] if env else []), "python benchmarks/graph_overhead.py", *argv_list]
        ),
        "label": args.label,
        "memories": args.memories,
        "embedder": args.embedder,
        "ingest_seconds": ingest,
        "turns": args.turns,
        "per_thread": args.turns_per_thread,
        "mix": mix,
        "durability": args.durability,
        "note": args.note,
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
        "load_average": [load_start, os.getloadavg()],
        "runs": runs,
    }
    text = render(results)
    print(text)
    if str(args.out) != "-":
        before = args.out.read_text() + "\n" if args.append and args.out.exists() else ""
        args.out.write_text(before + text)
        log(f"written to {args.out}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

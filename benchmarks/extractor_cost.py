"""What the background extractor adds to a turn: reply path and background.

Two memory graphs on one workspace (``--memories`` filler memories, USE embedder),
one with the default extractor (deterministic, on) and one with ``extractor=False``,
are sent the same turns in alternating order (an instant scripted answer model); a third of the turns state a fact about the user ("I moved to
Lisbon", "我在腾讯工作"). Reported:

- reply path: ``graph.invoke`` time per turn, p50 / p95, with and without the
  extractor, and their difference (floor: ≤ 1 ms added at p50: the extraction runs
  on the background writer after the reply);
- background: the time of ``Memory.extract`` per turn (p50 / p95), measured on the
  writer's thread, and how many memories it wrote.

Usage::

    python benchmarks/extractor_cost.py --memories 1000 --turns 120
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, Settings, build_memory_graph
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import flush_turn_writes

STATEMENTS = ["I moved to {c} last month.", "我现在住在{z}。", "I work at {o} now.",
              "我最喜欢的颜色是{k}。", "My favourite colour is {e} now.", "我在{p}工作。"]  # fmt: skip
OTHER = ["What did we talk about yesterday?", "好的，谢谢", "Can you remind me of my plans?",
         "ok", "上次我们聊了什么？", "Tell me something nice."]  # fmt: skip
VALUES = {"c": ["Lisbon", "Oslo", "Madrid"], "z": ["上海", "深圳", "成都"],
          "o": ["Stripe", "Nokia", "Canva"], "k": ["蓝色", "绿色", "紫色"],
          "e": ["teal", "red", "grey"], "p": ["腾讯", "华为", "小米"]}  # fmt: skip


def turns(n: int) -> list[str]:
    """``n`` turns, every third one a statement about the user."""
    out = []
    for i in range(n):
        if i % 3 == 0:
            t = STATEMENTS[(i // 3) % len(STATEMENTS)]
            key = t[t.index("{") + 1]
            out.append(t.format(**{key: VALUES[key][(i // 18) % 3]}))
        else:
            out.append(OTHER[i % len(OTHER)])
    return out


def _pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def main(argv: Sequence[str] | None = None) -> None:
    """Run and print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--memories", type=int, default=1000)
    p.add_argument("--turns", type=int, default=120)
    p.add_argument("--embedder", default="use", choices=["use", "e5", "fake"])
    p.add_argument(
        "--mode",
        default="pending",
        choices=["direct", "pending", "off"],
        help="lifecycle.extract_mode (pending, the default: notes and pending saves; "
        "off: the extractor runs but writes nothing)",
    )
    args = p.parse_args(argv)
    # the instant answer model gives no structured plan: every turn logs the fallback
    logging.getLogger("langmem_ext.memory.extraction.extractor").setLevel(logging.ERROR)
    root = Path(tempfile.mkdtemp(prefix="extractor-cost-"))
    s = Settings(workspace=root / "ws")
    s.embeddings.provider = args.embedder
    s.lifecycle.extract_mode = args.mode
    mem = Memory(settings=s)
    background: list[float] = []
    original = mem.extract

    def timed_extract(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            background.append((time.perf_counter() - t0) * 1000)

    mem.extract = timed_extract  # type: ignore[method-assign]
    try:
        fillers = [f"Note {i}: the meeting about project {i % 97} moved to room {i % 13}."
                   for i in range(args.memories)]  # fmt: skip
        for scope in ("user_on", "user_off"):
            mem.add_many(fillers, scope=scope)
        model = ScriptedChatModel(policy=lambda _m: AIMessage("OK."))
        graphs = {
            "on": build_memory_graph(model, mem, checkpointer=InMemorySaver()),
            "off": build_memory_graph(model, mem, checkpointer=InMemorySaver(), extractor=False),
        }
        times: dict[str, list[float]] = {"on": [], "off": []}
        for i, text in enumerate(turns(args.turns)):
            order = ("on", "off") if i % 2 == 0 else ("off", "on")
            for name in order:
                cfg = {"configurable": {"thread_id": f"t{i // 10}", "user_id": name}}
                msg: list[BaseMessage] = [HumanMessage(text)]
                t0 = time.perf_counter()
                graphs[name].invoke({"messages": msg}, cfg)
                times[name].append((time.perf_counter() - t0) * 1000)
                flush_turn_writes(mem)  # the next turn starts from a drained writer
        written = len(mem.list(scope="user_on", include_superseded=True)) - args.memories
        proposed = len(mem.list_pending(scope="user_on"))
    finally:
        mem.close()
        shutil.rmtree(root, ignore_errors=True)
    on, off = times["on"], times["off"]
    added = statistics.median(on) - statistics.median(off)
    print(f"{args.turns} turns, {args.memories} memories per scope, embedder {args.embedder}")
    print("| | p50 ms | p95 ms |")
    print("| --- | ---: | ---: |")
    print(f"| reply path, extractor off | {statistics.median(off):.2f} | {_pct(off, 0.95):.2f} |")
    print(f"| reply path, extractor on | {statistics.median(on):.2f} | {_pct(on, 0.95):.2f} |")
    print(f"| added to the reply path (p50 difference) | {added:.2f} | |")
    print(
        f"| background: Memory.extract per turn ({len(background)} runs) | "
        f"{statistics.median(background):.2f} | {_pct(background, 0.95):.2f} |"
    )
    print(f"\nMemories and notes the extractor wrote (versions included): {written}")
    print(f"Pending long-term saves it proposed: {proposed}")
    print(f"Floor: ≤ 1 ms added at p50 → {'met' if added <= 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()

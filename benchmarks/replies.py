"""How well replies to a save proposal are read: ``benchmarks/data/replies.jsonl``.

Each row is a reply the user sent right after the assistant asked to confirm one or
more proposed saves (``proposals``, numbered as shown), labelled with the ids it
should confirm and reject and a class: ``affirm``, ``deny``, ``mixed`` (one yes,
another no), ``unrelated`` (another topic), ``question``, ``lookalike`` (contains
好 / 不 / ok / no / save words but answers nothing). Batch 1 was written before the
classifier, batch 2 after it (before it was run on them).

Per class: n, correct (confirm and reject sets both exact), recall (correct / n) and
the resolved-anything rate (share of replies that confirmed or rejected something;
must be 0 for ``unrelated``, ``question`` and ``lookalike``). The deterministic
classifier runs by default; ``--model`` runs the structured-output classifier
with a chat model (``init_chat_model`` string, e.g. ``ollama:qwen2.5:7b``).

Usage::

    python benchmarks/replies.py [--data benchmarks/data/replies.jsonl] [--batch 2]
        [--model ollama:qwen2.5:7b] [--show-errors] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from langmem_ext.graph.replies import classify_reply

DATA = Path(__file__).parent / "data" / "replies.jsonl"
CLASSES = ("affirm", "deny", "mixed", "unrelated", "question", "lookalike")
UNTOUCHED = ("unrelated", "question", "lookalike")
"""Classes that must resolve nothing (floor: 100 % untouched)."""
RECALL_FLOOR = {"affirm": 0.95, "deny": 0.95}


@dataclass(frozen=True)
class Item:
    """A proposal as the user saw it."""

    id: str
    text: str


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The labelled rows of ``path`` (JSON Lines)."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def evaluate(
    rows: Sequence[dict[str, Any]], model: BaseChatModel | None = None
) -> tuple[dict[str, dict[str, float]], list[dict[str, Any]], float]:
    """Classify every row; per-class figures, the wrong rows and the ms per reply."""
    stats: dict[str, dict[str, float]] = defaultdict(lambda: {"n": 0, "correct": 0, "resolved": 0})
    wrong: list[dict[str, Any]] = []
    started = time.perf_counter()
    for row in rows:
        items = [Item(p["id"], p["text"]) for p in row["proposals"]]
        got = classify_reply(row["reply"], items, model=model)
        s = stats[row["class"]]
        s["n"] += 1
        ok = list(got.confirm) == row["confirm"] and list(got.reject) == row["reject"]
        s["correct"] += ok
        s["resolved"] += got.resolves
        if not ok:
            wrong.append({**row, "got_confirm": list(got.confirm), "got_reject": list(got.reject)})
    ms = (time.perf_counter() - started) * 1000 / max(1, len(rows))
    for s in stats.values():
        s["recall"] = s["correct"] / s["n"]
        s["resolved_rate"] = s["resolved"] / s["n"]
    return dict(stats), wrong, ms


def floors_met(stats: dict[str, dict[str, float]]) -> list[str]:
    """The floors a result misses (empty when all are met)."""
    missed = [
        f"{c}: {stats[c]['resolved']:.0f} resolved something"
        for c in UNTOUCHED
        if c in stats and stats[c]["resolved"]
    ]
    missed += [
        f"{c}: recall {stats[c]['recall']:.3f} < {floor}"
        for c, floor in RECALL_FLOOR.items()
        if c in stats and stats[c]["recall"] < floor
    ]
    return missed


def table(stats: dict[str, dict[str, float]]) -> str:
    """A Markdown table of the per-class figures."""
    lines = [
        "| class | n | correct | recall | resolved anything |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in CLASSES:
        if c in stats:
            s = stats[c]
            lines.append(
                f"| {c} | {s['n']:.0f} | {s['correct']:.0f} | {s['recall']:.1%} "
                f"| {s['resolved_rate']:.1%} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; exit 1 when a floor is missed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--batch", type=int, help="only this batch (1 or 2)")
    ap.add_argument("--model", help="classify with this chat model (init_chat_model string)")
    ap.add_argument("--show-errors", action="store_true", help="list the wrong rows")
    ap.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = ap.parse_args(argv)
    rows = load(args.data)
    if args.batch is not None:
        rows = [r for r in rows if r.get("batch") == args.batch]
    model: BaseChatModel | None = None
    if args.model:
        from langmem_ext.graph import resolve_model

        model = resolve_model(args.model)
    stats, wrong, ms = evaluate(rows, model)
    missed = floors_met(stats)
    if args.json:
        print(json.dumps({"stats": stats, "ms_per_reply": ms, "missed": missed, "wrong": wrong},
                         ensure_ascii=False, indent=1))  # fmt: skip
    else:
        by = f"model {args.model}" if args.model else "deterministic rules"
        print(f"{len(rows)} replies, {by}, {ms:.2f} ms per reply\n")
        print(table(stats))
        print("\nfloors: " + ("met" if not missed else "MISSED: " + "; ".join(missed)))
        if args.show_errors:
            for w in wrong:
                print(f"- [{w['class']}] {w['reply']!r}: confirm {w['got_confirm']} reject "
                      f"{w['got_reject']}, expected {w['confirm']} / {w['reject']}")  # fmt: skip
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

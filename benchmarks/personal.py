"""A user's own facts, in two languages: personal-memory retrieval benchmark.

``benchmarks/data/personal.jsonl`` holds one persona per line: a user, the short
memories an assistant keeps about them and the people around them (Chinese, English
and both mixed; safety-critical facts as ``core``), and questions about them. Each
persona is one scope of one workspace, stored through :meth:`langmem_ext.Memory.add_many`
with its dates (and, for the personas marked so, the profile's name through
:meth:`~langmem_ext.Memory.upsert_facts`). Every question is asked at
:data:`ASKED_AT` and labelled with a kind:

* ``fact``: an attribute of the user or their life, asked plainly;
* ``paraphrase``: asked in other words than the memory's (based / live / 住,
  can't eat / allergic / 过敏);
* ``safety``: an allergy, diet restriction, condition, medication or surgery of the
  user (or of the person the question names);
* ``other``: about someone else (a family member, a friend, a colleague): the
  user's own fact of the same kind is a wrong answer;
* ``update``: a fact that changed (a move): the newer statement must come first;
* ``two``: needs two memories (both must be in the top ``k``).

``gold`` are the memories that answer (any of them is a hit; for ``two`` all are
needed), ``wrong_person`` the look-alikes that state the same kind of fact about
another person, ``decoy`` other look-alikes (the older city, a food liked next to a
food to avoid). The direction of a question is its language → its answer's
(``zh->en``: a Chinese question, an English memory), from
:func:`langmem_ext.language.text.script_profile`.

Methods, in the same run on the same workspace: plain BM25, plain dense cosine of
the same embedder, and :meth:`langmem_ext.Memory.search` (the full pipeline with its
safety and slot stages). Metrics: hit@1, hit@3 (top 3 is what recall injects), the
share of questions whose first hit states the fact of another person (of those with
such a look-alike), the share whose first hit is a decoy, and questions left with no
hit at all.

Usage::

    python benchmarks/personal.py --embedder use --runs 3 --json benchmarks/results/personal-use.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    ALL_OFF,
    EMBEDDERS,
    PLAIN,
    add_engine_arguments,
    engine_databases,
    make_embedder,
    markdown_table,
    percentiles,
    retrieval_settings,
)

from langmem_ext import Memory
from langmem_ext.core.config import EmbeddingSettings, Settings
from langmem_ext.language.text import script_profile
from langmem_ext.memory.recall.search import SearchEngine
from langmem_ext.memory.types import SearchHit

DATA = Path(__file__).resolve().parent / "data" / "personal.jsonl"
ASKED_AT = datetime(2025, 11, 1, 12, 0)
"""When every question is asked (after the newest memory of every persona)."""
K = 10
KINDS = ("fact", "paraphrase", "safety", "other", "update", "two")
DIRECTIONS = ("zh->zh", "en->en", "zh->en", "en->zh")
PIPELINE = "pipeline (Memory.search)"
BARE = (*PLAIN, ("slot_stage", False), ("safety_stage", False), ("person_stage", False))
"""The baselines are one engine alone: no slot, safety or person stage either."""
BARE_OPTIONS = replace(ALL_OFF, safety=False, person=False)
BASELINES = ("BM25 (plain)", "dense (plain)")
METHODS = (*BASELINES, PIPELINE)


@dataclass(frozen=True)
class PQuestion:
    """One question of one persona."""

    persona: str
    text: str
    kind: str
    gold: tuple[str, ...]
    wrong_person: tuple[str, ...]
    decoy: tuple[str, ...]
    direction: str


@dataclass
class Persona:
    """One user: their memories (id, date, category, text) and questions."""

    pid: str
    name: str
    profile_name: str | None
    memories: list[dict[str, str]]
    questions: list[PQuestion] = field(default_factory=list)


def language(text: str) -> str:
    """``zh`` or ``en``: the script most of ``text`` is written in."""
    words, cjk = script_profile(text)
    return "zh" if cjk > words else "en"


def load(path: Path) -> list[Persona]:
    """Read the personas of ``path`` (JSON lines)."""
    out: list[Persona] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        texts = {m["id"]: m["text"] for m in raw["memories"]}
        p = Persona(raw["persona"], raw["name"], raw.get("profile_name"), raw["memories"])
        for q in raw["questions"]:
            answers = {language(texts[g]) for g in q["gold"]}
            lang = language(q["question"])
            direction = f"{lang}->{answers.pop()}" if len(answers) == 1 else f"{lang}->both"
            p.questions.append(
                PQuestion(p.pid, q["question"], q["kind"], tuple(q["gold"]),
                          tuple(q["wrong_person"]), tuple(q["decoy"]), direction)
            )  # fmt: skip
        out.append(p)
    return out


def question_result(ranked: Sequence[str], q: PQuestion) -> dict[str, float]:
    """hit@1 / hit@3, first hit of another person / a decoy, nothing returned."""
    gold = set(q.gold)

    def hit(k: int) -> float:
        top = set(ranked[:k])
        return float(gold <= top) if q.kind == "two" else float(bool(gold & top))

    first = ranked[0] if ranked else None
    return {
        "hit@1": hit(1) if q.kind != "two" else hit(2),
        "hit@3": hit(3),
        "wrong_person@1": float(first in q.wrong_person),
        "decoy@1": float(first in q.decoy),
        "empty": float(not ranked),
    }


@dataclass
class Store:
    """One workspace holding every persona, and what its entry ids are."""

    memory: Memory
    ext: dict[str, str]
    root: Path


def build(
    personas: list[Persona], provider: str, workdir: Path, database_url: str | None = None
) -> Store:
    """Store every persona in its own scope of a fresh workspace (``database_url``:
    its engines, ``None`` for the embedded ones)."""
    root = workdir / f"ws-{provider}"
    settings = Settings(
        workspace=root,
        embeddings=EmbeddingSettings(provider=provider, cache=False),  # type: ignore[arg-type]
        database_url=database_url,
    )
    memory = Memory(root, settings=settings)
    ext: dict[str, str] = {}
    for p in personas:
        if p.profile_name:
            memory.upsert_facts({"name": p.profile_name}, scope=p.pid)
        ids = memory.add_many(
            [m["text"] for m in p.memories],
            scope=p.pid,
            category=[m["category"] for m in p.memories],
            created_at=[datetime.fromisoformat(m["date"]).replace(hour=20) for m in p.memories],
        )
        for m, entry_id in zip(p.memories, ids, strict=True):
            ext[entry_id] = m["id"]
    memory.background.wait()
    return Store(memory, ext, root)


Searcher = Callable[[PQuestion], list[SearchHit]]


def searchers(store: Store) -> dict[str, Searcher]:
    """The methods: plain BM25 and dense on the store's engines, and ``Memory.search``."""
    mem = store.memory
    now = ASKED_AT.timestamp()
    out: dict[str, Searcher] = {}
    for name, mode in (("BM25 (plain)", "fts"), ("dense (plain)", "vector")):
        settings = mem.settings.model_copy(
            update={"retrieval": retrieval_settings(mem.settings.retrieval, BARE)}
        )
        eng = SearchEngine(mem.workspace, mem.engine.embeddings, settings)

        def run(q: PQuestion, eng: SearchEngine = eng, mode: str = mode) -> list[SearchHit]:
            return eng.search(
                q.text, scope=q.persona, k=K, mode=mode, options=BARE_OPTIONS, now=now
            )

        out[name] = run

    def pipeline(q: PQuestion) -> list[SearchHit]:
        return mem.search(q.text, scope=q.persona, k=K, now=ASKED_AT)

    out[PIPELINE] = pipeline
    return out


def _mean(rows: list[dict[str, float]], key: str) -> float:
    return sum(r[key] for r in rows) / len(rows) if rows else float("nan")


def summarise(rows: list[tuple[PQuestion, dict[str, float]]]) -> dict[str, Any]:
    """Overall, per kind, per direction, safety per direction, look-alike rates."""
    allr = [m for _, m in rows]

    def group(pred: Callable[[PQuestion], bool]) -> dict[str, float]:
        sel = [m for q, m in rows if pred(q)]
        return {"n": len(sel), "hit@1": _mean(sel, "hit@1"), "hit@3": _mean(sel, "hit@3")}

    same = group(lambda q: q.direction in ("zh->zh", "en->en"))
    cross = group(lambda q: q.direction in ("zh->en", "en->zh"))
    wrong = [m for q, m in rows if q.wrong_person]
    decoy = [m for q, m in rows if q.decoy]
    safety_wrong = [m for q, m in rows if q.wrong_person and q.kind == "safety"]
    return {
        "n": len(allr),
        "hit@1": _mean(allr, "hit@1"),
        "hit@3": _mean(allr, "hit@3"),
        "empty": sum(m["empty"] for m in allr),
        "same_language": same,
        "cross_language": cross,
        "by_kind": {k: group(lambda q, k=k: q.kind == k) for k in KINDS},  # type: ignore[misc]
        "by_direction": {
            d: group(lambda q, d=d: q.direction == d)  # type: ignore[misc]
            for d in (*DIRECTIONS, "zh->both", "en->both")
        },
        "safety_by_direction": {
            d: group(lambda q, d=d: q.kind == "safety" and q.direction == d)  # type: ignore[misc]
            for d in DIRECTIONS
        },
        "wrong_person@1": {"n": len(wrong), "rate": _mean(wrong, "wrong_person@1")},
        "safety_wrong_person@1": {
            "n": len(safety_wrong),
            "rate": _mean(safety_wrong, "wrong_person@1"),
        },
        "decoy@1": {"n": len(decoy), "rate": _mean(decoy, "decoy@1")},
    }


def run_once(
    personas: list[Persona],
    provider: str,
    workdir: Path,
    log: Callable[[str], None],
    misses: bool = False,
    database_url: str | None = None,
) -> dict[str, Any]:
    """Ingest and ask every question with every method once."""
    t0 = time.perf_counter()
    store = build(personas, provider, workdir, database_url)
    log(f"  ingest: {len(store.ext)} memories in {time.perf_counter() - t0:.1f} s")
    methods = searchers(store)
    for p in personas:  # warm each scope's pages outside the timings
        for run in methods.values():
            run(PQuestion(p.pid, "warm up", "fact", (), (), (), "en->en"))
    rows: dict[str, list[tuple[PQuestion, dict[str, float]]]] = defaultdict(list)
    latency: dict[str, list[float]] = defaultdict(list)
    missed: list[str] = []
    for p in personas:
        for q in p.questions:
            for name, run in methods.items():
                t = time.perf_counter()
                hits = run(q)
                latency[name].append((time.perf_counter() - t) * 1000)
                ranked = [store.ext[h.id] for h in hits if h.id in store.ext]
                res = question_result(ranked, q)
                rows[name].append((q, res))
                if misses and name == PIPELINE and not res["hit@1"]:
                    texts = {m["id"]: m["text"] for m in p.memories}
                    lines = [f"- [{q.kind} {q.direction}] {p.pid} {q.text}  gold: "
                             + " / ".join(texts[g] for g in q.gold)]  # fmt: skip
                    for h in hits[:3]:
                        dbg = ", ".join(f"{k}={v:.2f}" for k, v in h.debug.items())
                        lines.append(f"    {h.score:.3f} {h.text}  {{{dbg}}}")
                    missed.append("\n".join(lines))
    store.memory.close()
    shutil.rmtree(store.root, ignore_errors=True)
    out: dict[str, Any] = {
        name: {**summarise(r), **percentiles(latency[name])} for name, r in rows.items()
    }
    if misses:
        out["misses"] = missed
    return out


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each number the median over runs (same structure as one run)."""

    def med(values: list[Any]) -> Any:
        if isinstance(values[0], dict):
            return {k: med([v[k] for v in values]) for k in values[0]}
        if isinstance(values[0], list):
            return values[0]
        return statistics.median(values)

    return med(runs)


def floors(r: dict[str, Any]) -> list[str]:
    """The floors: safety hit@3 ≥ 0.95 per direction, hit@1 ≥ best baseline + 15
    points, cross-language hit@3 within 5 points of same-language."""
    pipe = r[PIPELINE]
    out = []
    for d, g in pipe["safety_by_direction"].items():
        ok = g["hit@3"] >= 0.95
        out.append(f"safety {d} hit@3 {g['hit@3']:.3f} (n={g['n']}): {'met' if ok else 'NOT met'}")
    best = max(BASELINES, key=lambda n: r[n]["hit@1"])
    gap = (pipe["hit@1"] - r[best]["hit@1"]) * 100
    out.append(f"hit@1 {pipe['hit@1']:.3f} vs {best} {r[best]['hit@1']:.3f}: {gap:+.1f} points "
               f"(floor +15: {'met' if gap >= 15 else 'NOT met'})")  # fmt: skip
    same, cross = pipe["same_language"]["hit@3"], pipe["cross_language"]["hit@3"]
    out.append(f"cross-language hit@3 {cross:.3f} vs same-language {same:.3f}: "
               f"{(cross - same) * 100:+.1f} points (floor -5: "
               f"{'met' if cross >= same - 0.05 else 'NOT met'})")  # fmt: skip
    return out


def render(results: dict[str, Any]) -> str:
    """Markdown tables of a (median) run."""
    r = results["median"]
    out = [f"## Personal memories — {results['date']}, {results['runs']} run(s), "
           f"embedder `{results['embedder']}`, {results.get('engine', 'embedded')} engine\n", f"Command: `{results['command']}`\n",
           f"{results['personas']} personas, {results['memories']} memories, "
           f"{results['questions']} questions.\n"]  # fmt: skip
    head = ["method", "hit@1", "hit@3", "same-lang hit@1 / @3", "cross-lang hit@1 / @3",
            "wrong person @1", "decoy @1", "no hit", "p50 / p95 ms"]  # fmt: skip
    rows = []
    for name in METHODS:
        s = r[name]
        rows.append([
            name, f"{s['hit@1']:.3f}", f"{s['hit@3']:.3f}",
            f"{s['same_language']['hit@1']:.3f} / {s['same_language']['hit@3']:.3f}",
            f"{s['cross_language']['hit@1']:.3f} / {s['cross_language']['hit@3']:.3f}",
            f"{s['wrong_person@1']['rate']:.3f} (n={s['wrong_person@1']['n']})",
            f"{s['decoy@1']['rate']:.3f} (n={s['decoy@1']['n']})",
            f"{s['empty']:.0f}", f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f}",
        ])  # fmt: skip
    out += [markdown_table(head, rows), ""]
    for title, key, names in (
        ("hit@1 / hit@3 per kind", "by_kind", KINDS),
        ("hit@1 / hit@3 per direction (question → answer)", "by_direction",
         (*DIRECTIONS, "zh->both", "en->both")),
        ("safety questions, hit@1 / hit@3 per direction", "safety_by_direction", DIRECTIONS),
    ):  # fmt: skip
        first = r[METHODS[0]][key]
        head = ["method", *(f"{n} (n={first[n]['n']})" for n in names if first[n]["n"])]
        rows = [
            [name, *(f"{r[name][key][n]['hit@1']:.3f} / {r[name][key][n]['hit@3']:.3f}"
                     for n in names if first[n]["n"])]
            for name in METHODS
        ]  # fmt: skip
        out += [f"{title}:\n", markdown_table(head, rows), ""]
    sw = r[PIPELINE]["safety_wrong_person@1"]
    out.append("Safety questions with another person's look-alike: wrong person at rank 1 "
               + ", ".join(f"{n} {r[n]['safety_wrong_person@1']['rate']:.3f}" for n in METHODS)
               + f" (n={sw['n']}).\n")  # fmt: skip
    out.append("**Floors** (median of the runs): " + "; ".join(floors(r)) + ".")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark from the command line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the personas (JSON lines)")
    ap.add_argument("--embedder", choices=EMBEDDERS, default="use")
    ap.add_argument("--runs", type=int, default=1, help="ingest and ask this many times; "
                    "the tables show the median of each number")  # fmt: skip
    ap.add_argument("--json", default=None, metavar="PATH", help="also write the results here")
    ap.add_argument(
        "--misses",
        action="store_true",
        help="print the pipeline's questions without a hit at rank 1 (first run)",
    )
    ap.add_argument("--workdir", type=Path, default=None)
    add_engine_arguments(ap)
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    personas = load(args.data)
    make_embedder(args.embedder).embed_query("warm up")  # load the model outside the timings
    tmp = Path(tempfile.mkdtemp(prefix="langmem-personal-", dir=args.workdir))
    runs = []
    try:
        with engine_databases(args.engine, args.database_url) as database_for:
            for i in range(args.runs):
                log(f"run {i + 1}/{args.runs}")
                runs.append(run_once(personas, args.embedder, tmp / f"run{i}", log,
                                     misses=args.misses and i == 0,
                                     database_url=database_for(f"personal-{i}")))  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    missed = runs[0].pop("misses", None)
    for r in runs[1:]:
        r.pop("misses", None)
    results: dict[str, Any] = {
        "dataset": "personal",
        "date": date.today().isoformat(),
        "command": "python " + " ".join([sys.argv[0], *(sys.argv[1:] if argv is None else argv)]),
        "embedder": args.embedder,
        "engine": args.engine,
        "personas": len(personas),
        "memories": sum(len(p.memories) for p in personas),
        "questions": sum(len(p.questions) for p in personas),
        "runs": len(runs),
        "median": median_of(runs),
        "each_run": runs,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, ensure_ascii=False))
    print(render(results))
    if missed:
        print("\nPipeline questions without a hit at rank 1:\n")
        print("\n".join(missed))
    return results


if __name__ == "__main__":
    main()

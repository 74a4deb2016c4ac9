"""MemDaily "pooled" retrieval benchmark (Chinese).

One scope per file: every message of every trajectory of the file is one memory
(id ``"<tid>/<mid>"``, timestamped with its ``time``), so each scope holds hundreds
of similar memories of one user. Each question is searched in its file's scope at
the question's own ``time``; its evidence is ``"<tid>/<mid>"`` for each
``target_step_id``. Questions ``[ERRORQ]`` / answers ``[ERRORA]`` are skipped. See
``/work/shared/bench/README.md`` and ``benchmarks/_common.py``.

Usage::

    python benchmarks/memdaily.py --data /work/shared/bench/memdaily --embedder use --ablation
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Dataset, Item, Question, run_cli

_TIME_RE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日(?:\s*周.)?\s*(\d{1,2}):(\d{2})")
_FILE_RE = re.compile(r"^\d+_(.+?)_(events|hybrid|items|places|roles)$")


def parse_memdaily_time(text: str) -> datetime:
    """Parse MemDaily's ``"2024年04月01日 周一 08:30"`` (naive local time)."""
    m = _TIME_RE.search(text)
    if m is None:
        raise ValueError(f"unrecognised MemDaily time {text!r}")
    y, mo, d, h, mi = (int(g) for g in m.groups())
    return datetime(y, mo, d, h, mi)


def load(folder: Path) -> Dataset:
    """Load every file of ``folder`` as one pooled scope."""
    corpora: dict[str, list[Item]] = {}
    questions: list[Question] = []
    skipped = missing = 0
    for path in sorted(folder.glob("*.json")):
        trajectories = json.loads(path.read_text(encoding="utf-8"))
        scope = path.stem
        m = _FILE_RE.match(path.stem)
        qtype = m.group(1) if m else path.stem
        items: list[Item] = []
        for traj in trajectories:
            tid = traj["tid"]
            prev: str | None = None
            for msg in traj["message_list"]:
                text = str(msg["message"])
                when = parse_memdaily_time(msg["time"])
                items.append(Item(f"{tid}/{msg['mid']}", text, when.timestamp(), prev))
                prev = text
        known = {it.ext_id for it in items}
        for traj in trajectories:
            tid = traj["tid"]
            for q in traj["question_list"]:
                if q["question"] == "[ERRORQ]" or q["answer"] == "[ERRORA]":
                    skipped += 1
                    continue
                evidence = {f"{tid}/{mid}" for mid in q["target_step_id"]}
                if not evidence <= known:
                    missing += 1
                evidence &= known
                if not evidence:
                    continue
                questions.append(
                    Question(f"{scope}/{tid}/{q.get('qid', 0)}", scope, str(q["question"]),
                             parse_memdaily_time(q["time"]).timestamp(), frozenset(evidence),
                             qtype)
                )  # fmt: skip
        corpora[scope] = items
    notes = [
        "MemDaily (MemSim, Zhang et al., 2024), the 26 files of the shared half; pooled: "
        "one scope per file holding every message of every trajectory of that file.",
        "`now` of every question: its own `time`. Categories are the question types "
        "(file name prefix).",
        f"{skipped} [ERRORQ]/[ERRORA] questions skipped; {missing} question(s) with "
        "evidence outside their file.",
    ]
    return Dataset("MemDaily (pooled)", corpora, questions, notes)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the MemDaily benchmark from the command line."""
    run_cli(argv, __doc__.splitlines()[0], load, floor_points=7.0)


if __name__ == "__main__":
    main()

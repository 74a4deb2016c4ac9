"""LoCoMo turn-level retrieval benchmark.

Every turn of a conversation is one memory, ``"{speaker}: {text}"`` plus
``" [image: {blip_caption}]"`` when the speaker shared an image, timestamped with
its session's date, in one scope per conversation. Each question of categories 1-4
is searched in its conversation's scope at the time of the conversation's last
session; its ``evidence`` turns are the relevant ones. See
``/work/shared/bench/README.md`` and ``benchmarks/_common.py``.

Usage::

    python benchmarks/locomo.py --data /work/shared/bench/locomo --embedder both --ablation
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Dataset, Item, Question, run_cli

CATEGORIES = {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop"}
_SESSION_RE = re.compile(r"^session_(\d+)$")
_DIA_RE = re.compile(r"^D:?(\d+):(\d+)$")


def parse_locomo_time(text: str) -> datetime:
    """Parse LoCoMo's ``"1:56 pm on 8 May, 2023"`` (naive local time)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def turn_text(turn: dict[str, Any]) -> str:
    """The stored memory of one turn."""
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def normalise_evidence(raw: Sequence[str], known: set[str]) -> tuple[set[str], list[str]]:
    """Evidence ids as turn ids; returns ``(valid ids, dropped raw values)``.

    The data has a few malformed entries: ``"D8:6; D9:17"`` (two ids in one
    string), ``"D:11:26"`` (an extra colon), ``"D"`` and ids of turns that do not
    exist. The first two are repaired, the others dropped.
    """
    ok: set[str] = set()
    dropped: list[str] = []
    for value in raw:
        for part in re.split(r"[;,]", str(value)):
            m = _DIA_RE.match(part.strip())
            dia = f"D{m.group(1)}:{m.group(2)}" if m else None
            if dia is not None and dia in known:
                ok.add(dia)
            elif part.strip():
                dropped.append(part.strip())
    return ok, dropped


def load(folder: Path) -> Dataset:
    """Load every conversation file of ``folder``."""
    corpora: dict[str, list[Item]] = {}
    questions: list[Question] = []
    dropped_ev: list[str] = []
    no_evidence = 0
    for path in sorted(folder.glob("*.json")):
        conv = json.loads(path.read_text(encoding="utf-8"))
        scope = f"conv-{path.stem}"
        items: list[Item] = []
        last: datetime | None = None
        sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION_RE.match(key)))
        for n, key in sessions:
            turns = conv[key]
            if not turns:
                continue
            when = parse_locomo_time(conv[f"session_{n}_date_time"])
            last = when if last is None or when > last else last
            prev: str | None = None
            for turn in turns:
                text = turn_text(turn)
                items.append(Item(turn["dia_id"], text, when.timestamp(), prev))
                prev = text
        if last is None:
            continue
        corpora[scope] = items
        known = {it.ext_id for it in items}
        for i, qa in enumerate(conv["qa"]):
            cat = int(qa["category"])
            if cat not in CATEGORIES:
                continue
            evidence, dropped = normalise_evidence(qa.get("evidence", []), known)
            dropped_ev += [f"{path.stem}:{d}" for d in dropped]
            if not evidence:
                no_evidence += 1
                continue
            questions.append(
                Question(f"{path.stem}/{i}", scope, str(qa["question"]), last.timestamp(),
                         frozenset(evidence), CATEGORIES[cat])
            )  # fmt: skip
    notes = [
        "LoCoMo (Maharana et al., ACL 2024), 5 conversations; categories 1-4 "
        "(5, adversarial, has no evidence). One memory per turn, one scope per conversation.",
        "`now` of every question: the date of its conversation's last session with turns.",
        f"Evidence repaired/dropped: {len(dropped_ev)} malformed or unknown evidence "
        f"values dropped ({', '.join(dropped_ev) or 'none'}); 'D8:6; D9:17' split and "
        f"'D:11:26' read as D11:26; {no_evidence} question(s) left with no evidence skipped.",
    ]
    return Dataset("LoCoMo", corpora, questions, notes)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the LoCoMo benchmark from the command line."""
    run_cli(argv, __doc__.splitlines()[0], load, floor_points=10.0)


if __name__ == "__main__":
    main()

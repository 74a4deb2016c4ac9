"""XQuAD cross-lingual sentence retrieval benchmark (English ⇄ Chinese).

LAReQA-style (see ``/work/shared/bench/README.md``): every context of the memory
language is split into sentences (Chinese after 。！？, English after ``". "``), each
sentence one memory, all sentences of a language in one scope. Each question is
searched in the query language against the memory language's scope; the gold memory
is the sentence of the memory-language context that holds that language's
``answer_start``. Four directions, reported per category: ``en→zh`` (English
questions, Chinese memories), ``zh→en``, ``zh→zh`` and ``en→en``.

The harness (``benchmarks/_common.py``) runs the full pipeline, plain dense cosine
of the same embedder, plain BM25 and RRF on every question in the same loop, so the
latencies are comparable; the per-category table gives R@1 / R@3 / R@10 / hit@3 of
each direction.

Usage::

    python benchmarks/xquad.py --data /work/shared/bench/xquad --embedder use
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

LANGS = ("en", "zh")
DIRECTIONS = (("en", "zh"), ("zh", "en"), ("zh", "zh"), ("en", "en"))
"""(query language, memory language)."""
_SPLIT = {"zh": re.compile(r"(?<=[。！？])"), "en": re.compile(r"(?<=\. )")}
_NOW = datetime(2026, 11, 24, 12, 0).timestamp()
_CREATED = datetime(2026, 11, 1, 12, 0).timestamp()


def split_sentences(context: str, lang: str) -> list[tuple[int, int, str]]:
    """``(start, end, sentence)`` spans of ``context`` (stripped; empty ones dropped)."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for part in _SPLIT[lang].split(context):
        start, end = pos, pos + len(part)
        pos = end
        if part.strip():
            out.append((start, end, part.strip()))
    return out


def _load_lang(folder: Path, lang: str) -> list[dict[str, Any]]:
    data = json.loads((folder / f"xquad.{lang}.dev.json").read_text(encoding="utf-8"))
    return list(data["data"])


def load(folder: Path) -> Dataset:
    """Load both languages; one scope per memory language, four directions of questions."""
    articles = {lang: _load_lang(folder, lang) for lang in LANGS}
    corpora: dict[str, list[Item]] = {lang: [] for lang in LANGS}
    # question id -> memory language -> gold ext id; question id -> language -> text
    gold: dict[str, dict[str, str]] = {}
    texts: dict[str, dict[str, str]] = {}
    order: list[str] = []
    duplicates = 0
    for lang in LANGS:
        first_of: dict[str, str] = {}  # a sentence stored twice is one memory
        for a, art in enumerate(articles[lang]):
            for p, para in enumerate(art["paragraphs"]):
                spans = split_sentences(para["context"], lang)
                ids: list[str] = []
                for s, (_, _, sentence) in enumerate(spans):
                    ext = f"{lang}/{a}/{p}/{s}"
                    if sentence in first_of:
                        duplicates += 1
                        ids.append(first_of[sentence])
                        continue
                    first_of[sentence] = ext
                    ids.append(ext)
                    corpora[lang].append(Item(ext, sentence, _CREATED))
                for qa in para["qas"]:
                    start = int(qa["answers"][0]["answer_start"])
                    idx = next(
                        (i for i, (lo, hi, _) in enumerate(spans) if lo <= start < hi),
                        len(spans) - 1,
                    )
                    qid = str(qa["id"])
                    if qid not in gold:
                        order.append(qid)
                    gold.setdefault(qid, {})[lang] = ids[idx]
                    texts.setdefault(qid, {})[lang] = str(qa["question"])
    questions: list[Question] = []
    for q_lang, m_lang in DIRECTIONS:
        for qid in order:
            if q_lang in texts[qid] and m_lang in gold[qid]:
                questions.append(
                    Question(f"{q_lang}{m_lang}/{qid}", m_lang, texts[qid][q_lang], _NOW,
                             frozenset({gold[qid][m_lang]}), f"{q_lang}→{m_lang}")
                )  # fmt: skip
    notes = [
        "XQuAD (Artetxe et al., 2020), articles 0–23 of 48, LAReQA-style sentence "
        f"retrieval: {len(corpora['zh'])} Chinese and {len(corpora['en'])} English "
        f"sentences ({duplicates} repeated sentence(s) stored once), {len(order)} "
        "questions asked in each of four directions (category = query→memory language).",
    ]
    return Dataset("XQuAD (sentence retrieval)", corpora, questions, notes)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the XQuAD benchmark from the command line."""
    run_cli(argv, __doc__.splitlines()[0], load, floor_points=0.0)


if __name__ == "__main__":
    main()

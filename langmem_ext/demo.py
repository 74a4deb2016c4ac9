"""``langmem-ext demo``: the shipped bilingual sample conversation, end to end.

Runs on the embedded default (Chroma ``PersistentClient`` + the offline embedder)
in a fresh workspace: every proposed save goes to pending, the user's replies
confirm or reject them, then Chinese and English questions are searched and the
best hit is read back with ``get``.
"""

from __future__ import annotations

import json
import tempfile
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any


def load_sample() -> dict[str, Any]:
    """The sample conversation shipped in ``langmem_ext/data``."""
    text = (
        resources.files("langmem_ext").joinpath("data/sample_conversation.json").read_text("utf-8")
    )
    data: dict[str, Any] = json.loads(text)
    return data


def run_demo(
    workspace: str | None = None, *, as_json: bool = False, embedder: str | None = None
) -> int:
    """Run the demo; prints a narrated transcript (or JSON). Returns an exit code."""
    from langmem_ext.config import Settings
    from langmem_ext.memory import Memory

    root = Path(workspace) if workspace else Path(tempfile.mkdtemp(prefix="langmem-demo-"))
    if root.exists() and any(root.iterdir()):
        print(f"error: {root} is not empty; the demo needs a fresh workspace folder.")
        return 2
    settings = Settings(workspace=root)
    if embedder:
        settings.embeddings.provider = embedder  # type: ignore[assignment]
    sample = load_sample()
    scope = sample["scope"]
    report: dict[str, Any] = {"workspace": str(root), "saves": [], "searches": []}
    say = (lambda *_a: None) if as_json else print
    say(f"langmem-ext demo — {sample['title']}")
    say(f"workspace: {root}  (embedder: {settings.embeddings.provider}, Chroma embedded)\n")
    with Memory(settings=settings) as memory:
        for n, session in enumerate(sample["sessions"], 1):
            started = datetime.fromisoformat(session["started_at"])
            say(f"── session {n} · {started:%Y-%m-%d %H:%M} ──")
            for turn in session["turns"]:
                who = "user" if turn["role"] == "user" else "assistant"
                say(f"  {who:>9}: {turn['text']}")
                if "save" in turn:
                    s = turn["save"]
                    p = memory.save(
                        s["text"],
                        scope=scope,
                        category=s.get("category", "fact"),
                        target=s.get("target", "long_term"),
                        created_at=started,
                    )
                    report["saves"].append({"pending": p.id, "text": p.text, "status": "pending"})
                    say(f"{'':>13}↳ memory_save → pending {p.id} ({p.category}, {p.target})")
                decision = turn.get("decision")
                if decision:
                    for p in memory.list_pending(scope=scope):
                        if decision == "confirm":
                            e = memory.confirm(p.id, scope=scope)
                            say(f"{'':>13}↳ confirmed {p.id} → {e.citation} ^{e.id}")
                        else:
                            memory.reject(p.id, scope=scope)
                            say(f"{'':>13}↳ rejected {p.id}")
                        for r in report["saves"]:
                            if r["pending"] == p.id:
                                r["status"] = "confirmed" if decision == "confirm" else "rejected"
            say("")
        say("── searches ──")
        for q in sample["queries"]:
            hits = memory.search(q["query"], scope=scope, k=3)
            top = hits[0] if hits else None
            ok = bool(top and q["expect"].lower() in top.text.lower())
            report["searches"].append(
                {
                    "query": q["query"],
                    "top": top.text if top else None,
                    "score": top.score if top else None,
                    "expected_found": ok,
                }
            )
            say(f"  ? {q['query']}")
            for h in hits:
                say(f"      {h.score:.3f}  {h.citation:<28} {h.text}")
            if not hits:
                say("      (searched, found nothing)")
        best = memory.search("拉面", scope=scope, k=1)
        if best:
            got = memory.get(best[0].citation, scope=scope, lines=3)
            say(f"\n── get {best[0].citation} ──\n{got.text}")
            report["get"] = got.model_dump(mode="json")
        stats = memory.stats(scope=scope)
        report["stats"] = stats
        say(f"\nstored: {stats['scopes'][scope]['entries']} memories; files under {root}")
    if as_json:
        print(json.dumps(report, ensure_ascii=False, indent=2, default=str))
    return 0


__all__ = ["load_sample", "run_demo"]

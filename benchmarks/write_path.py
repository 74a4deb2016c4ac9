"""Print the project functions one memory passes through, from ``Memory.add`` to a search hit.

Runs one ``add`` and one ``search`` on a small workspace (the ``fake`` embedder)
under ``sys.setprofile`` and prints, as a call tree, every ``langmem_ext`` function
entered, leaving out the tokenizer, the scope-name checks and the ranking internals
(``--all`` keeps them). Usage::

    python benchmarks/write_path.py [--all] [--confirm]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

from langmem_ext import Memory, Settings

_QUIET = ("text.py", "layout.py", "retrieval/fusion.py", "_repo.py", "_sql.py", "doc_cache.py")


def main() -> None:
    """Trace one write and one search, then print the calls."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="keep every project function")
    ap.add_argument("--confirm", action="store_true", help="write through save + confirm")
    args = ap.parse_args()
    settings = Settings(workspace=Path(tempfile.mkdtemp()) / "ws")
    settings.embeddings.provider = "fake"
    memory = Memory.from_settings(settings)
    memory.add_many([f"User fact number {i} about topic {i % 7}" for i in range(50)])
    memory.search("topic")  # warm the caches: the trace shows the steady state
    calls: list[tuple[int, str]] = []
    depth = 0

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal depth
        if event == "call":
            name = frame.f_code.co_filename
            if "langmem_ext" in name and not frame.f_code.co_name.startswith("<"):
                rel = name.split("langmem_ext/")[-1]
                if args.all or not rel.endswith(_QUIET):
                    calls.append((depth, f"{rel}:{frame.f_code.co_qualname}"))
            depth += 1
        elif event == "return":
            depth -= 1

    text = "User is allergic to peanuts"
    pending = memory.save(text) if args.confirm else None
    sys.setprofile(profile)
    try:
        if pending is not None:
            memory.confirm(pending.id)
        else:
            memory.add(text)
        hits = memory.search("peanuts allergy")
    finally:
        sys.setprofile(None)
    memory.close()
    base = min(d for d, _ in calls)
    last = None
    for d, name in calls:
        if name != last:
            print("  " * (d - base) + name)
        last = name
    print(f"\nhit: {hits[0].text if hits else None!r}")


if __name__ == "__main__":
    main()

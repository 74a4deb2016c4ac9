"""Quick start: save → confirm → search → get, in Chinese and English.

Runs offline on the default embedded Chroma and the bundled multilingual embedder,
in a temporary workspace (or ``--workspace DIR`` to keep it)::

    python examples/quickstart.py
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from langmem_ext import LangmemError, Memory


def run(workspace: Path) -> None:
    memory = Memory(workspace)
    print(f"workspace: {workspace}")

    # 1. An agent proposes memories; nothing is stored until the user confirms.
    ramen = memory.save("主人喜欢吃拉面", scope="main")
    marathon = memory.save("I am training for a half marathon in April", scope="main")
    cilantro = memory.save("主人讨厌香菜", scope="main", category="core")
    print(f"pending: {[p.text for p in memory.list_pending(scope='main')]}")
    print(f"search '拉面' before confirming: {memory.search('拉面', scope='main')}")

    # 2. The user says yes to two of them and no to one.
    for pending in (ramen, cilantro):
        entry = memory.confirm(pending.id, scope="main")  # durable when this returns
        print(f"confirmed {entry.id} at {entry.citation}: {entry.text}")
    memory.reject(marathon.id, scope="main")
    print(f"rejected: {marathon.text}")
    try:
        memory.confirm(marathon.id, scope="main")
    except LangmemError as e:  # typed errors that say what to do next
        print(f"confirming it anyway: {type(e).__name__}: {e}")

    # 3. Trusted sources write directly.
    memory.add_many(
        ["Our billing service uses PostgreSQL 16", "妹妹是素食者，不吃肉"],
        scope="main",
    )

    # 4. Search in either language; hits cite path:line.
    for query in ("拉面", "what food do I like?", "which database does billing use?", "素食"):
        hits = memory.search(query, scope="main", k=2)
        best = f"{hits[0].text} ({hits[0].citation}, score {hits[0].score:.2f})" if hits else "—"
        print(f"search {query!r}: {best}")

    # 5. Read the Markdown file around a hit.
    hit = memory.search("拉面", scope="main")[0]
    got = memory.get(hit.citation, scope="main", lines=3)
    print(f"get {hit.citation}:\n{got.text}")

    # 6. Scopes isolate: another user's scope sees none of this.
    print(f"search '拉面' in scope user_bob: {memory.search('拉面', scope='user_bob')}")
    print(f"\n{workspace / 'MEMORY.md'}:\n{(workspace / 'MEMORY.md').read_text()}")
    memory.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workspace", type=Path, help="keep the workspace here (default: temp)")
    args = p.parse_args()
    if args.workspace:
        run(args.workspace)
        return
    with tempfile.TemporaryDirectory(prefix="langmem-quickstart-") as tmp:
        run(Path(tmp) / "ws")
    print("done")


if __name__ == "__main__":
    main()

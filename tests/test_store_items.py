"""The store's ledger repository: filters in SQL (nested subsets and lists too), pages."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

from langmem_ext.workspace.item_filter import matches_filter
from langmem_ext.workspace.records import ItemWrite
from langmem_ext.workspace.sqlite.json_filter import compile_filter
from langmem_ext.workspace.sqlite.ledger import Ledger


def test_subset_and_list_filters_compile_and_agree_with_python() -> None:
    leaves: list[Any] = [
        None, True, False, 0, 1, 1.0, 2.5, -1, 2**70, "a", "b", "1", "",
        [1], [1, "a"], [], {"x": 1}, {"x": 1, "y": "a"}, {}, [{"x": 1}], [[1]],
    ]  # fmt: skip
    values: list[dict[str, Any]] = (
        [{}]
        + [{"f": v} for v in leaves]
        + [{"m": {"f": v}} for v in leaves]
        + [{"m": v} for v in leaves]
    )
    conds: list[Any] = [
        None, True, 0, 1, 2.5, 2**70, "a", [], [1], [1, "a"], [True], {}, {"x": 1},
        {"x": {"$gt": 0}}, {"f": 1}, {"f": [1]}, {"f": {"x": 1}}, [{"x": 1}], [[1]],
        {"$eq": 1}, {"$ne": [1]}, {"$eq": {"x": 1}}, {"f": None}, {"y": None},
        {"x": 1, "y": "a"},
    ]  # fmt: skip
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, value TEXT)")
    db.executemany(
        "INSERT INTO t VALUES (?, ?)", [(i, json.dumps(v)) for i, v in enumerate(values)]
    )
    remainders = 0
    for key, cond in itertools.product(["f", "m", "m.f", "m.x"], conds):
        flt = {key: cond}
        sql, params, rest = compile_filter(flt)
        remainders += bool(rest)
        ids = {r[0] for r in db.execute(f"SELECT id FROM t WHERE {sql}", params)}
        got = {i for i in ids if matches_filter(values[i], rest)}
        want = {i for i, v in enumerate(values) if matches_filter(v, flt)}
        assert got == want, (flt, sorted(got ^ want))
    # Only huge ints and $eq / $ne of a dict or list are left to Python.
    assert remainders == 12


def test_pages_with_a_python_remainder_are_exact(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "state.db")
    items = ledger.store
    with ledger.transaction():
        items.write(
            [ItemWrite("p", f"k{i}", json.dumps({'q"k': i % 2, "i": i})) for i in range(10)],
            now=1000.0,
        )
    assert compile_filter({'q"k': 1})[2] == {'q"k': 1}  # a key SQLite paths cannot spell
    pages = [[r.key for r in items.page("p", {'q"k': 1}, 2000.0, 2, o)] for o in (0, 2, 4)]
    assert pages == [["k9", "k7"], ["k5", "k3"], ["k1"]]  # ties on updated_at: newest id first
    ledger.close()

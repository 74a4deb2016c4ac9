"""The store's ledger repository: filters in SQL (nested subsets and lists too), pages,
the keyword index kept in step with the items."""

from __future__ import annotations

import itertools
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from langmem_ext.workspace.item_filter import matches_filter
from langmem_ext.workspace.records import ItemText, ItemWrite
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


def _ids(ledger: Ledger, query: str, prefix: str = "") -> list[int]:
    return [h.item_id for h in ledger.store.keyword_search(prefix, query, None, 2000.0, 10)]


def test_the_keyword_index_follows_puts_deletes_and_sweeps(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "state.db")
    items = ledger.store

    def put(key: str, *texts: str, ttl: float | None = None) -> None:
        with ledger.transaction():
            items.write(
                [
                    ItemWrite(
                        "n.a",
                        key,
                        json.dumps({"t": list(texts)}),
                        tuple(ItemText(f"p{i}", f"{key}{i}", t, t) for i, t in enumerate(texts)),
                        ttl,
                    )
                ],
                now=1000.0,
            )

    put("k1", "red bicycle", "green tea")
    put("k2", "ramen noodles")
    [k1] = _ids(ledger, "bicycle")
    assert _ids(ledger, "tea") == [k1] and _ids(ledger, "tea", "n") == [k1]
    assert _ids(ledger, "tea", "m") == [] and _ids(ledger, "tea", "n.a.b") == []
    put("k1", "green tea")  # a text went
    assert _ids(ledger, "bicycle") == [] and _ids(ledger, "tea") == [k1]
    put("k1", "black coffee")  # a text changed
    assert _ids(ledger, "tea") == [] and _ids(ledger, "coffee") == [k1]
    with ledger.transaction():
        items.write([ItemWrite("n.a", "k2", None)], now=1000.0)
    assert _ids(ledger, "ramen") == []
    put("k3", "short lived", ttl=1)
    assert _ids(ledger, "lived") == []  # expired at 2000: never returned
    with ledger.transaction():
        assert items.sweep(2000.0)[0] == 1
    assert ledger.query("SELECT count(*) FROM store_fts")[0][0] == 1  # k1 only
    assert items.full_match_score("coffee") > 0
    ledger.close()


def test_migration_2_indexes_the_items_of_an_older_ledger(v0_workspace: Path) -> None:
    root = v0_workspace
    ledger = Ledger(root / "state.db")
    hits = ledger.store.keyword_search("prefs", "green tea", None, time.time(), 10)
    assert [ledger.store.by_ids([h.item_id])[h.item_id].key for h in hits] == ["k1"]
    ledger.close()

"""Repository of the LangGraph store's tables: ``store_items``, ``store_texts``, ``store_fts``.

``store_items`` holds each item's value as JSON text with its dates and TTL;
``store_texts`` the texts chosen for indexing, each with its vector id, its
language-aware tokens (:mod:`langmem_ext.language.text`), its hash and the mark of the
vector the collection holds (``vec_hash``); ``store_fts`` (FTS5, BM25) one document
per item under the item's id, its texts' tokens, rewritten in the same transaction
whenever the texts change. Filters run in the queries
(:mod:`~langmem_ext.workspace.sqlite.json_filter`); only what SQLite cannot decide
exactly is checked in Python, on the rows a query returned. The statements both
engines run are in :mod:`langmem_ext.workspace.sql.store_items`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langmem_ext.language.text import query_tokens
from langmem_ext.workspace.records import KeywordHit
from langmem_ext.workspace.sql.base import SQLITE
from langmem_ext.workspace.sql.store_items import LIVE, SharedStoreItems, prefix_sql
from langmem_ext.workspace.sqlite._repo import SqliteRepo
from langmem_ext.workspace.sqlite._sql import in_chunks
from langmem_ext.workspace.sqlite.fts import idf_sum, match_any
from langmem_ext.workspace.sqlite.json_filter import compile_filter


class SqliteStoreItems(SqliteRepo, SharedStoreItems):
    """:class:`~langmem_ext.workspace.records.StoreItemsRepository` on SQLite.

    Args:
        conn: The ledger's connection.
        lock: The ledger's lock.
    """

    dialect = SQLITE
    _for_write = ""
    _fts_key = "rowid"

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        super().__init__(conn, lock)
        self._vocab = False
        self._n_docs: tuple[int, int, int] | None = None
        """``(data_version, total_changes, documents in store_fts)`` when last counted."""

    def _filter(self, flt: Mapping[str, Any] | None) -> tuple[str, list[Any], dict[str, Any]]:
        return compile_filter(flt, "i.value")

    @contextmanager
    def _scan(self, sql: str, params: Sequence[Any]) -> Iterator[Iterable[Any]]:
        with self._lock:
            yield self._conn.execute(sql, params)

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._conn

    def _index_item(self, c: Any, item_id: int, had_texts: bool) -> None:
        if had_texts:
            c.execute("DELETE FROM store_fts WHERE rowid = ?", (item_id,))
        c.execute(
            "INSERT INTO store_fts (rowid, tokens) SELECT item_id, group_concat(tokens, ' ') "
            "FROM store_texts WHERE item_id = ? GROUP BY item_id",
            (item_id,),
        )

    # -- search ----------------------------------------------------------------------

    def keyword_search(
        self, prefix: str, query: str, flt: Mapping[str, Any] | None, now: float, limit: int
    ) -> list[KeywordHit]:
        """FTS5 finds the items holding any query token; the prefix, expiry and filter
        conditions run in the same query, before the ``LIMIT``. Scores are FTS5's
        BM25 (global statistics), negated: positive, bigger is better."""
        toks = query_tokens(query)
        if not toks:
            return []
        where, params = prefix_sql(prefix)
        flt_sql, flt_params, rest = compile_filter(flt, "i.value")
        sql = (
            "SELECT i.id, bm25(store_fts) AS s, i.value FROM store_fts "
            "JOIN store_items i ON i.id = store_fts.rowid "
            f"WHERE store_fts MATCH ? AND {where} AND {LIVE} AND {flt_sql} ORDER BY s"
        )
        return self._passing(
            sql,
            [match_any(toks), *params, now, *flt_params],
            rest,
            lambda r: KeywordHit(int(r[0]), -float(r[1])),
            limit,
        )

    def full_match_score(self, query: str) -> float:
        """The sum is over FTS5's document frequencies."""
        toks = query_tokens(query)
        if not toks:
            return 0.0
        with self._lock:
            if not self._vocab:  # document frequencies (temp: not in the file)
                self._conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.store_fts_vocab "
                    "USING fts5vocab(main, store_fts, row)"
                )
                self._vocab = True
            marks = ",".join("?" * len(toks))
            rows = self._conn.execute(
                f"SELECT term, doc FROM temp.store_fts_vocab WHERE term IN ({marks})", toks
            )
            df = {str(term): int(n) for term, n in rows}
            return idf_sum(self._documents(), df, toks)

    def _documents(self) -> int:
        """Documents in ``store_fts``, counted again only after a write (under the lock)."""
        version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        seen = (version, self._conn.total_changes)
        if self._n_docs is None or self._n_docs[:2] != seen:
            n = int(self._conn.execute("SELECT count(*) FROM store_fts").fetchone()[0])
            self._n_docs = (*seen, n)
        return self._n_docs[2]

    # -- writes ----------------------------------------------------------------------

    def sweep(self, now: float) -> tuple[int, dict[str, list[str]]]:
        dropped: dict[str, list[str]] = {}
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, ns FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ?",
                (now,),
            ).fetchall()
            ns_of = {int(r[0]): str(r[1]) for r in rows}
            for chunk, marks in in_chunks(list(ns_of)):
                for item_id, vec_id in self._conn.execute(
                    f"SELECT item_id, vec_id FROM store_texts WHERE item_id IN ({marks})", chunk
                ):
                    dropped.setdefault(ns_of[int(item_id)], []).append(str(vec_id))
                for table, col in (("store_texts", "item_id"), ("store_fts", "rowid")):
                    self._conn.execute(f"DELETE FROM {table} WHERE {col} IN ({marks})", chunk)
                self._conn.execute(f"DELETE FROM store_items WHERE id IN ({marks})", chunk)
        return len(ns_of), dropped


__all__ = ["SqliteStoreItems"]

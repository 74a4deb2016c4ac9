"""Repository of the LangGraph store's tables: ``store_items``, ``store_texts``, ``store_fts``.

``store_items`` holds each item's value as JSON text with its dates and TTL;
``store_texts`` the texts chosen for indexing, each with its vector id, its
language-aware tokens (:mod:`langmem_ext.language.text`), its hash and the mark of the
vector the collection holds (``vec_hash``); ``store_fts`` (FTS5, BM25) one document
per item under the item's id, its texts' tokens, rewritten in the same transaction
whenever the texts change. Filters run in the queries
(:mod:`~langmem_ext.workspace.sqlite.json_filter`); only what SQLite cannot decide
exactly is checked in Python, on the rows a query returned.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from typing import Any, TypeVar

from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.workspace.item_filter import matches_filter
from langmem_ext.workspace.records import (
    ItemWrite,
    KeywordHit,
    StoredItem,
    TextMatch,
    UnembeddedText,
)
from langmem_ext.workspace.sqlite._repo import SqliteRepo
from langmem_ext.workspace.sqlite._sql import in_chunks
from langmem_ext.workspace.sqlite.fts import idf_sum, match_any
from langmem_ext.workspace.sqlite.json_filter import compile_filter

T = TypeVar("T")

_COLS = "i.id, i.ns, i.key, i.value, i.created_at, i.updated_at"
_LIVE = "(i.expires_at IS NULL OR i.expires_at > ?)"
_TEXT = "t.item_id, t.ns, t.vec_id, t.text, i.created_at"
_TEXTS = "store_texts t JOIN store_items i ON i.id = t.item_id"


def _item(r: Sequence[Any]) -> StoredItem:
    return StoredItem(int(r[0]), str(r[1]), str(r[2]), json.loads(r[3]), float(r[4]), float(r[5]))


def _text(r: Sequence[Any]) -> TextMatch:
    return TextMatch(int(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4]))


def _prefix_sql(prefix: str, col: str = "i.ns") -> tuple[str, list[Any]]:
    """``col`` is ``prefix`` or below it (``'/'`` sorts right after ``'.'``)."""
    if not prefix:
        return "1", []
    return f"({col} = ? OR ({col} >= ? AND {col} < ?))", [prefix, prefix + ".", prefix + "/"]


class SqliteStoreItems(SqliteRepo):
    """:class:`~langmem_ext.workspace.records.StoreItemsRepository` on SQLite.

    Args:
        conn: The ledger's connection.
        lock: The ledger's lock.
    """

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        super().__init__(conn, lock)
        self._vocab = False
        self._n_docs: tuple[int, int, int] | None = None
        """``(data_version, total_changes, documents in store_fts)`` when last counted."""

    def _passing(
        self,
        sql: str,
        params: Sequence[Any],
        rest: Mapping[str, Any],
        make: Callable[[Sequence[Any]], T],
        limit: int,
        offset: int = 0,
    ) -> list[T]:
        """Rows of ``sql`` passing the filter remainder ``rest``, ``offset`` .. ``+ limit``.

        The query's last column is the item's value (JSON). Without a remainder
        ``LIMIT`` / ``OFFSET`` cut the rows in SQL; with one they are read in order
        and checked until ``limit`` passed.
        """
        if limit <= 0:
            return []
        if not rest:
            rows = self._all(f"{sql} LIMIT ? OFFSET ?", [*params, limit, offset])
            return [make(r) for r in rows]
        with self._lock:
            cursor = self._conn.execute(sql, params)
            passing = (r for r in cursor if matches_filter(json.loads(r[-1]), rest))
            return [make(r) for r in islice(passing, offset, offset + limit)]

    # -- reads -----------------------------------------------------------------------

    def get(self, ns: str, key: str, now: float) -> StoredItem | None:
        """The live item ``key`` of namespace ``ns``, or ``None``."""
        row = self._one(
            f"SELECT {_COLS} FROM store_items i WHERE i.ns = ? AND i.key = ? AND {_LIVE}",
            (ns, key, now),
        )
        return None if row is None else _item(row)

    def page(
        self,
        prefix: str,
        flt: Mapping[str, Any] | None,
        now: float,
        limit: int,
        offset: int = 0,
    ) -> list[StoredItem]:
        """Live items under ``prefix`` passing ``flt``, newest first (``updated_at``)."""
        where, params = _prefix_sql(prefix)
        flt_sql, flt_params, rest = compile_filter(flt, "i.value")
        sql = (
            f"SELECT {_COLS}, i.value FROM store_items i WHERE {where} AND {_LIVE} AND {flt_sql} "
            "ORDER BY i.updated_at DESC, i.id DESC"
        )
        return self._passing(sql, [*params, now, *flt_params], rest, _item, limit, max(offset, 0))

    def by_ids(self, item_ids: Sequence[int]) -> dict[int, StoredItem]:
        """These items (live or not), by row id; ids that are gone are absent."""
        out: dict[int, StoredItem] = {}
        for chunk, marks in in_chunks(list(item_ids)):
            for r in self._all(f"SELECT {_COLS} FROM store_items i WHERE i.id IN ({marks})", chunk):
                item = _item(r)
                out[item.id] = item
        return out

    def texts_of(self, item_ids: Sequence[int]) -> list[TextMatch]:
        """The indexed texts of these items."""
        out: list[TextMatch] = []
        for chunk, marks in in_chunks(list(item_ids)):
            rows = self._all(f"SELECT {_TEXT} FROM {_TEXTS} WHERE t.item_id IN ({marks})", chunk)
            out += [_text(r) for r in rows]
        return out

    def namespaces(self, now: float) -> list[str]:
        """The namespaces holding live items."""
        rows = self._all(f"SELECT DISTINCT i.ns FROM store_items i WHERE {_LIVE}", (now,))
        return [str(r[0]) for r in rows]

    def indexed_namespaces(self, prefix: str) -> list[str]:
        """The namespaces under ``prefix`` holding indexed texts."""
        where, params = _prefix_sql(prefix, "ns")
        rows = self._all(f"SELECT DISTINCT ns FROM store_texts WHERE {where}", params)
        return [str(r[0]) for r in rows]

    # -- search ----------------------------------------------------------------------

    def texts_by_vector(
        self, vec_ids: Sequence[str], flt: Mapping[str, Any] | None, now: float
    ) -> list[TextMatch]:
        """The texts of these vector ids whose item is live and passes ``flt``."""
        flt_sql, flt_params, rest = compile_filter(flt, "i.value")
        out: list[TextMatch] = []
        for chunk, marks in in_chunks(list(vec_ids)):
            sql = (
                f"SELECT {_TEXT}, i.value FROM {_TEXTS} "
                f"WHERE t.vec_id IN ({marks}) AND {_LIVE} AND {flt_sql}"
            )
            out += self._passing(sql, [*chunk, now, *flt_params], rest, _text, len(chunk))
        return out

    def vector_ids(
        self, ns: str, flt: Mapping[str, Any] | None, now: float, limit: int
    ) -> list[str]:
        """Vector ids of marked texts of ``ns`` whose item is live and passes ``flt``."""
        flt_sql, flt_params, rest = compile_filter(flt, "i.value")
        sql = (
            f"SELECT t.vec_id, i.value FROM {_TEXTS} "
            f"WHERE t.ns = ? AND t.vec_hash IS NOT NULL AND {_LIVE} AND {flt_sql}"
        )
        return self._passing(sql, [ns, now, *flt_params], rest, lambda r: str(r[0]), limit)

    def keyword_search(
        self, prefix: str, query: str, flt: Mapping[str, Any] | None, now: float, limit: int
    ) -> list[KeywordHit]:
        """BM25 search of the items' texts under ``prefix`` passing ``flt``, best first.

        FTS5 finds the items holding any query token; the prefix, expiry and filter
        conditions run in the same query, before the ``LIMIT``. Scores are FTS5's
        BM25 (global statistics), negated: positive, bigger is better.
        """
        toks = query_tokens(query)
        if not toks:
            return []
        where, params = _prefix_sql(prefix)
        flt_sql, flt_params, rest = compile_filter(flt, "i.value")
        sql = (
            "SELECT i.id, bm25(store_fts) AS s, i.value FROM store_fts "
            "JOIN store_items i ON i.id = store_fts.rowid "
            f"WHERE store_fts MATCH ? AND {where} AND {_LIVE} AND {flt_sql} ORDER BY s"
        )
        return self._passing(
            sql,
            [match_any(toks), *params, now, *flt_params],
            rest,
            lambda r: KeywordHit(int(r[0]), -float(r[1])),
            limit,
        )

    def full_match_score(self, query: str) -> float:
        """The sum of the query tokens' IDFs over the store's keyword index (FTS5's)."""
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

    def write(self, puts: Sequence[ItemWrite], now: float) -> dict[str, list[str]]:
        """Apply puts and deletes; returns namespace -> vector ids of texts that went."""
        dropped: dict[str, list[str]] = {}
        with self._lock:
            for p in puts:
                gone = self._write_one(p, now)
                if gone:
                    dropped.setdefault(p.ns, []).extend(gone)
        return dropped

    def _write_one(self, p: ItemWrite, now: float) -> list[str]:
        c = self._conn
        row = c.execute(
            "SELECT id FROM store_items WHERE ns = ? AND key = ?", (p.ns, p.key)
        ).fetchone()
        old: dict[str, tuple[str, str]] = {}
        if row is not None:
            for path, vec_id, text_hash in c.execute(
                "SELECT path, vec_id, text_hash FROM store_texts WHERE item_id = ?", (row[0],)
            ):
                old[str(path)] = (str(vec_id), str(text_hash))
        if p.value_json is None:
            if row is not None:
                c.execute("DELETE FROM store_texts WHERE item_id = ?", (row[0],))
                c.execute("DELETE FROM store_fts WHERE rowid = ?", (row[0],))
                c.execute("DELETE FROM store_items WHERE id = ?", (row[0],))
            return [v for v, _ in old.values()]
        ttl = p.ttl_minutes
        expires = None if ttl is None else now + ttl * 60
        item_id = c.execute(
            "INSERT INTO store_items (ns, key, value, created_at, updated_at, "
            "ttl_minutes, expires_at) VALUES (?,?,?,?,?,?,?) "
            "ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, "
            "created_at = CASE WHEN store_items.expires_at IS NOT NULL "
            "AND store_items.expires_at <= excluded.updated_at "
            "THEN excluded.created_at ELSE store_items.created_at END, "
            "updated_at = excluded.updated_at, ttl_minutes = excluded.ttl_minutes, "
            "expires_at = excluded.expires_at RETURNING id",
            (p.ns, p.key, p.value_json, now, now, ttl, expires),
        ).fetchone()[0]
        new_paths = {t.path for t in p.texts}
        gone = [path for path in old if path not in new_paths]
        for path in gone:
            c.execute("DELETE FROM store_texts WHERE item_id = ? AND path = ?", (item_id, path))
        changed = bool(gone)
        for t in p.texts:
            if t.path in old and old[t.path][1] == t.text_hash:
                continue  # same text: its vector stays valid
            changed = True
            # vec_hash keeps naming the text whose vector the collection holds, so
            # embedded_count stays exact while this text waits for its vector.
            c.execute(
                "INSERT INTO store_texts VALUES (?,?,?,?,?,?,?,NULL) "
                "ON CONFLICT (item_id, path) DO UPDATE SET text = excluded.text, "
                "tokens = excluded.tokens, text_hash = excluded.text_hash",
                (
                    item_id,
                    t.path,
                    p.ns,
                    t.vec_id,
                    t.text,
                    " ".join(index_tokens(t.text)),
                    t.text_hash,
                ),
            )
        if changed:  # the item's keyword document: its texts' tokens
            if old:
                c.execute("DELETE FROM store_fts WHERE rowid = ?", (item_id,))
            c.execute(
                "INSERT INTO store_fts (rowid, tokens) SELECT item_id, group_concat(tokens, ' ') "
                "FROM store_texts WHERE item_id = ? GROUP BY item_id",
                (item_id,),
            )
        return [old[path][0] for path in gone]

    def sweep(self, now: float) -> tuple[int, dict[str, list[str]]]:
        """Delete expired items; returns their count and namespace -> their vector ids."""
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

    def refresh_ttl(self, item_ids: Sequence[int], now: float) -> None:
        """Restart the TTL of these items (those with one) at ``now``."""
        for chunk, marks in in_chunks(sorted(item_ids)):
            self._run(
                "UPDATE store_items SET expires_at = ? + ttl_minutes * 60 "
                f"WHERE ttl_minutes IS NOT NULL AND id IN ({marks})",
                [now, *chunk],
            )

    # -- vector marks ----------------------------------------------------------------

    def embedded_count(self, ns: str) -> int:
        """How many texts of ``ns`` carry a vector mark."""
        row = self._one(
            "SELECT count(*) FROM store_texts WHERE ns = ? AND vec_hash IS NOT NULL", (ns,)
        )
        return int(row[0]) if row else 0

    def forget_vectors(self, ns: str) -> None:
        """Clear the vector marks of ``ns``."""
        self._run("UPDATE store_texts SET vec_hash = NULL WHERE ns = ?", (ns,))

    def unembedded(self, ns: str, embedder: str) -> list[UnembeddedText]:
        """Texts of ``ns`` without a vector of their current text by ``embedder``."""
        rows = self._all(
            "SELECT item_id, path, vec_id, text, text_hash FROM store_texts "
            "WHERE ns = ? AND (vec_hash IS NULL OR vec_hash != text_hash || ?)",
            (ns, embedder),
        )
        return [UnembeddedText(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]

    def mark_embedded(self, texts: Sequence[UnembeddedText], embedder: str) -> None:
        """Mark these texts' vectors as held; a text changed since keeps its old mark."""
        self._run_many(
            "UPDATE store_texts SET vec_hash = ? WHERE item_id = ? AND path = ? AND text_hash = ?",
            [(t.text_hash + embedder, t.item_id, t.path, t.text_hash) for t in texts],
        )


__all__ = ["SqliteStoreItems"]

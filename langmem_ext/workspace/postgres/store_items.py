"""Repository of the LangGraph store's tables on PostgreSQL: ``store_items``,
``store_texts`` and the keyword table ``store_fts`` (one document per item, its
texts' tokens, rewritten in the same write as the texts).

Store filters are checked in Python
(:func:`~langmem_ext.workspace.item_filter.matches_filter`) on the rows a query
returns, in order, until the page is full.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from typing import Any, TypeVar

from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.workspace.item_filter import check_operators, matches_filter
from langmem_ext.workspace.postgres._base import PgConnections, PgRepo
from langmem_ext.workspace.postgres._fts import TableStats, score_sql
from langmem_ext.workspace.records import (
    ItemWrite,
    KeywordHit,
    StoredItem,
    TextMatch,
    UnembeddedText,
)

T = TypeVar("T")

_COLS = "i.id, i.ns, i.key, i.value, i.created_at, i.updated_at"
_LIVE = "(i.expires_at IS NULL OR i.expires_at > %(now)s)"
_TEXT = "t.item_id, t.ns, t.vec_id, t.text, i.created_at"
_TEXTS = "store_texts t JOIN store_items i ON i.id = t.item_id"


def _item(r: Sequence[Any]) -> StoredItem:
    return StoredItem(int(r[0]), str(r[1]), str(r[2]), json.loads(r[3]), float(r[4]), float(r[5]))


def _text(r: Sequence[Any]) -> TextMatch:
    return TextMatch(int(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4]))


def _prefix_sql(prefix: str, col: str = "i.ns") -> tuple[str, dict[str, Any]]:
    """``col`` is ``prefix`` or below it (``'/'`` sorts right after ``'.'``; the
    column's collation is byte order)."""
    if not prefix:
        return "TRUE", {}
    return (
        f"({col} = %(p0)s OR ({col} >= %(p1)s AND {col} < %(p2)s))",
        {"p0": prefix, "p1": prefix + ".", "p2": prefix + "/"},
    )


def _checked(flt: Mapping[str, Any] | None) -> dict[str, Any]:
    """The filter to check in Python (operators validated first, as SQLite's compiler does).

    Raises:
        InvalidInputError: An operator other than the supported ones.
    """
    rest = dict(flt or {})
    for cond in rest.values():
        check_operators(cond)
    return rest


class PgStoreItems(PgRepo):
    """:class:`~langmem_ext.workspace.records.StoreItemsRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.store_items.SqliteStoreItems`).

    Args:
        db: The ledger's connections.
    """

    def __init__(self, db: PgConnections) -> None:
        super().__init__(db)
        self._stats = TableStats("store_fts")

    def _passing(
        self,
        sql: str,
        params: dict[str, Any],
        rest: Mapping[str, Any],
        make: Callable[[Sequence[Any]], T],
        limit: int,
        offset: int = 0,
    ) -> list[T]:
        """Rows of ``sql`` passing ``rest``, ``offset`` .. ``+ limit`` (the query's last
        column is the item's value, JSON)."""
        if limit <= 0:
            return []
        if not rest:
            rows = self._all(
                f"{sql} LIMIT %(lim)s OFFSET %(off)s", {**params, "lim": limit, "off": offset}
            )
            return [make(r) for r in rows]
        with self._db.connection() as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            passing = (r for r in cur if matches_filter(json.loads(r[-1]), rest))
            return [make(r) for r in islice(passing, offset, offset + limit)]

    # -- reads -----------------------------------------------------------------------

    def get(self, ns: str, key: str, now: float) -> StoredItem | None:
        """The live item ``key`` of namespace ``ns``, or ``None``."""
        row = self._one(
            f"SELECT {_COLS} FROM store_items i WHERE i.ns = %(ns)s AND i.key = %(key)s "
            f"AND {_LIVE}",
            {"ns": ns, "key": key, "now": now},
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
        sql = (
            f"SELECT {_COLS}, i.value FROM store_items i WHERE {where} AND {_LIVE} "
            "ORDER BY i.updated_at DESC, i.id DESC"
        )
        return self._passing(
            sql, {**params, "now": now}, _checked(flt), _item, limit, max(offset, 0)
        )

    def by_ids(self, item_ids: Sequence[int]) -> dict[int, StoredItem]:
        """These items (live or not), by row id; ids that are gone are absent."""
        rows = self._all(
            f"SELECT {_COLS} FROM store_items i WHERE i.id = ANY(%s)", ([int(i) for i in item_ids],)
        )
        return {int(r[0]): _item(r) for r in rows}

    def texts_of(self, item_ids: Sequence[int]) -> list[TextMatch]:
        """The indexed texts of these items."""
        rows = self._all(
            f"SELECT {_TEXT} FROM {_TEXTS} WHERE t.item_id = ANY(%s)", ([int(i) for i in item_ids],)
        )
        return [_text(r) for r in rows]

    def namespaces(self, now: float) -> list[str]:
        """The namespaces holding live items."""
        rows = self._all(f"SELECT DISTINCT i.ns FROM store_items i WHERE {_LIVE}", {"now": now})
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
        ids = list(vec_ids)
        sql = f"SELECT {_TEXT}, i.value FROM {_TEXTS} WHERE t.vec_id = ANY(%(ids)s) AND {_LIVE}"
        return self._passing(sql, {"ids": ids, "now": now}, _checked(flt), _text, len(ids))

    def vector_ids(
        self, ns: str, flt: Mapping[str, Any] | None, now: float, limit: int
    ) -> list[str]:
        """Vector ids of marked texts of ``ns`` whose item is live and passes ``flt``."""
        sql = (
            f"SELECT t.vec_id, i.value FROM {_TEXTS} "
            f"WHERE t.ns = %(ns)s AND t.vec_hash IS NOT NULL AND {_LIVE}"
        )
        return self._passing(sql, {"ns": ns, "now": now}, _checked(flt), lambda r: str(r[0]), limit)

    def keyword_search(
        self, prefix: str, query: str, flt: Mapping[str, Any] | None, now: float, limit: int
    ) -> list[KeywordHit]:
        """BM25 search of the items' texts under ``prefix`` passing ``flt``, best first
        (FTS5's BM25 with global statistics: positive, bigger is better)."""
        toks = query_tokens(query)
        rest = _checked(flt)
        if not toks:
            return []
        where, params = _prefix_sql(prefix)
        with self._db.connection() as conn:
            params.update(self._stats.query_params(conn, toks))
        sql = (
            f"SELECT i.id, {score_sql('f', params)} AS s, i.value FROM store_fts f "
            "JOIN store_items i ON i.id = f.item_id "
            f"WHERE f.tsv @@ %(match)s::tsquery AND {where} AND {_LIVE} ORDER BY s DESC, i.id"
        )
        return self._passing(
            sql,
            {**params, "now": now},
            rest,
            lambda r: KeywordHit(int(r[0]), float(r[1])),
            limit,
        )

    def full_match_score(self, query: str) -> float:
        """The sum of the query tokens' IDFs over the store's keyword table."""
        toks = query_tokens(query)
        if not toks:
            return 0.0
        with self._db.connection() as conn:
            return self._stats.idf_sum(conn, toks)

    # -- writes ----------------------------------------------------------------------

    def write(self, puts: Sequence[ItemWrite], now: float) -> dict[str, list[str]]:
        """Apply puts and deletes; returns namespace -> vector ids of texts that went."""
        dropped: dict[str, list[str]] = {}
        with self._atomic() as conn:
            for p in puts:
                gone = self._write_one(conn, p, now)
                if gone:
                    dropped.setdefault(p.ns, []).extend(gone)
        self._stats.invalidate()
        return dropped

    def _write_one(self, c: Any, p: ItemWrite, now: float) -> list[str]:
        row = c.execute(
            "SELECT id FROM store_items WHERE ns = %s AND key = %s FOR UPDATE", (p.ns, p.key)
        ).fetchone()
        old: dict[str, tuple[str, str]] = {}
        if row is not None:
            for path, vec_id, text_hash in c.execute(
                "SELECT path, vec_id, text_hash FROM store_texts WHERE item_id = %s", (row[0],)
            ).fetchall():
                old[str(path)] = (str(vec_id), str(text_hash))
        if p.value_json is None:
            if row is not None:
                for table, col in (("store_texts", "item_id"), ("store_fts", "item_id")):
                    c.execute(f"DELETE FROM {table} WHERE {col} = %s", (row[0],))
                c.execute("DELETE FROM store_items WHERE id = %s", (row[0],))
            return [v for v, _ in old.values()]
        ttl = p.ttl_minutes
        expires = None if ttl is None else now + ttl * 60
        item_id = c.execute(
            "INSERT INTO store_items (ns, key, value, created_at, updated_at, "
            "ttl_minutes, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s) "
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
            c.execute("DELETE FROM store_texts WHERE item_id = %s AND path = %s", (item_id, path))
        changed = bool(gone)
        for t in p.texts:
            if t.path in old and old[t.path][1] == t.text_hash:
                continue  # same text: its vector stays valid
            changed = True
            c.execute(
                "INSERT INTO store_texts VALUES (%s, %s, %s, %s, %s, %s, %s, NULL) "
                "ON CONFLICT (item_id, path) DO UPDATE SET text = excluded.text, "
                "tokens = excluded.tokens, text_hash = excluded.text_hash",
                (item_id, t.path, p.ns, t.vec_id, t.text, " ".join(index_tokens(t.text)),
                 t.text_hash),
            )  # fmt: skip
        if changed:  # the item's keyword document: its texts' tokens
            c.execute("DELETE FROM store_fts WHERE item_id = %s", (item_id,))
            c.execute(
                "INSERT INTO store_fts (item_id, tokens) SELECT item_id, "
                "array_remove(string_to_array(string_agg(tokens, ' '), ' '), '') "
                "FROM store_texts WHERE item_id = %s GROUP BY item_id",
                (item_id,),
            )
        return [old[path][0] for path in gone]

    def sweep(self, now: float) -> tuple[int, dict[str, list[str]]]:
        """Delete expired items; returns their count and namespace -> their vector ids."""
        dropped: dict[str, list[str]] = {}
        with self._atomic() as conn:
            rows = conn.execute(
                "DELETE FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= %s "
                "RETURNING id, ns",
                (now,),
            ).fetchall()
            ns_of = {int(r[0]): str(r[1]) for r in rows}
            ids = list(ns_of)
            for item_id, vec_id in conn.execute(
                "DELETE FROM store_texts WHERE item_id = ANY(%s) RETURNING item_id, vec_id", (ids,)
            ).fetchall():
                dropped.setdefault(ns_of[int(item_id)], []).append(str(vec_id))
            conn.execute("DELETE FROM store_fts WHERE item_id = ANY(%s)", (ids,))
        self._stats.invalidate()
        return len(ns_of), dropped

    def refresh_ttl(self, item_ids: Sequence[int], now: float) -> None:
        """Restart the TTL of these items (those with one) at ``now``."""
        self._run(
            "UPDATE store_items SET expires_at = %s + ttl_minutes * 60 "
            "WHERE ttl_minutes IS NOT NULL AND id = ANY(%s)",
            (now, sorted(int(i) for i in item_ids)),
        )

    # -- vector marks ----------------------------------------------------------------

    def embedded_count(self, ns: str) -> int:
        """How many texts of ``ns`` carry a vector mark."""
        row = self._one(
            "SELECT count(*) FROM store_texts WHERE ns = %s AND vec_hash IS NOT NULL", (ns,)
        )
        return int(row[0]) if row else 0

    def forget_vectors(self, ns: str) -> None:
        """Clear the vector marks of ``ns``."""
        self._run("UPDATE store_texts SET vec_hash = NULL WHERE ns = %s", (ns,))

    def unembedded(self, ns: str, embedder: str) -> list[UnembeddedText]:
        """Texts of ``ns`` without a vector of their current text by ``embedder``."""
        rows = self._all(
            "SELECT item_id, path, vec_id, text, text_hash FROM store_texts "
            "WHERE ns = %s AND (vec_hash IS NULL OR vec_hash != text_hash || %s)",
            (ns, embedder),
        )
        return [UnembeddedText(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]

    def mark_embedded(self, texts: Sequence[UnembeddedText], embedder: str) -> None:
        """Mark these texts' vectors as held; a text changed since keeps its old mark."""
        self._run_many(
            "UPDATE store_texts SET vec_hash = %s "
            "WHERE item_id = %s AND path = %s AND text_hash = %s",
            [(t.text_hash + embedder, t.item_id, t.path, t.text_hash) for t in texts],
        )


__all__ = ["PgStoreItems"]

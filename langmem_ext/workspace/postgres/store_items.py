"""Repository of the LangGraph store's tables on PostgreSQL: ``store_items``,
``store_texts`` and the keyword table ``store_fts`` (one document per item, its
texts' tokens, rewritten in the same write as the texts).

Store filters are checked in Python
(:func:`~langmem_ext.workspace.item_filter.matches_filter`) on the rows a query
returns, in order, until the page is full. The statements both engines run are in
:mod:`langmem_ext.workspace.sql.store_items`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langmem_ext.language.text import query_tokens
from langmem_ext.workspace.item_filter import check_operators
from langmem_ext.workspace.postgres._base import PgConnections, PgRepo
from langmem_ext.workspace.postgres._fts import TableStats, score_sql
from langmem_ext.workspace.records import KeywordHit
from langmem_ext.workspace.sql.base import POSTGRES
from langmem_ext.workspace.sql.store_items import LIVE, SharedStoreItems, prefix_sql


def _in_order(sql: str, named: Mapping[str, Any], values: Sequence[Any]) -> tuple[str, list[Any]]:
    """``sql``, whose placeholders are ``?`` (taking ``values`` in turn) and
    ``%(name)s`` (taking ``named[name]``), with ``?`` placeholders only, and the
    parameters in the order they stand."""
    ordered: list[Any] = []
    rest = iter(values)

    def mark(m: re.Match[str]) -> str:
        ordered.append(next(rest) if m.group(0) == "?" else named[m.group(1)])
        return "?"

    return re.sub(r"\?|%\((\w+)\)s", mark, sql), ordered


class PgStoreItems(PgRepo, SharedStoreItems):
    """:class:`~langmem_ext.workspace.records.StoreItemsRepository` on PostgreSQL.

    Args:
        db: The ledger's connections.
    """

    dialect = POSTGRES
    _for_write = " FOR UPDATE"
    _fts_key = "item_id"

    def __init__(self, db: PgConnections) -> None:
        super().__init__(db)
        self._stats = TableStats("store_fts")

    def _filter(self, flt: Mapping[str, Any] | None) -> tuple[str, list[Any], dict[str, Any]]:
        """Nothing runs in the query: the whole filter is checked in Python (its
        operators validated first, as SQLite's compiler does)."""
        rest = dict(flt or {})
        for cond in rest.values():
            check_operators(cond)
        return "TRUE", [], rest

    @contextmanager
    def _scan(self, sql: str, params: Sequence[Any]) -> Iterator[Iterable[Any]]:
        with self._db.connection() as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            yield cur

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        with self._atomic() as conn:
            yield conn
        self._stats.invalidate()

    def _index_item(self, c: Any, item_id: int, had_texts: bool) -> None:
        c.execute("DELETE FROM store_fts WHERE item_id = %s", (item_id,))
        c.execute(
            "INSERT INTO store_fts (item_id, tokens) SELECT item_id, "
            "array_remove(string_to_array(string_agg(tokens, ' '), ' '), '') "
            "FROM store_texts WHERE item_id = %s GROUP BY item_id",
            (item_id,),
        )

    # -- search ----------------------------------------------------------------------

    def keyword_search(
        self, prefix: str, query: str, flt: Mapping[str, Any] | None, now: float, limit: int
    ) -> list[KeywordHit]:
        """Scores are BM25 over the store's keyword table (positive, bigger is better)."""
        toks = query_tokens(query)
        _, _, rest = self._filter(flt)
        if not toks:
            return []
        where, params = prefix_sql(prefix)
        with self._db.connection() as conn:
            named = self._stats.query_params(conn, toks)
        sql, ordered = _in_order(
            f"SELECT i.id, {score_sql('f', named)} AS s, i.value FROM store_fts f "
            "JOIN store_items i ON i.id = f.item_id "
            f"WHERE f.tsv @@ %(match)s::tsquery AND {where} AND {LIVE} ORDER BY s DESC, i.id",
            named,
            [*params, now],
        )
        return self._passing(
            sql, ordered, rest, lambda r: KeywordHit(int(r[0]), float(r[1])), limit
        )

    def full_match_score(self, query: str) -> float:
        """The sum is over the store's keyword table."""
        toks = query_tokens(query)
        if not toks:
            return 0.0
        with self._db.connection() as conn:
            return self._stats.idf_sum(conn, toks)

    # -- writes ----------------------------------------------------------------------

    def sweep(self, now: float) -> tuple[int, dict[str, list[str]]]:
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


__all__ = ["PgStoreItems"]

"""The LangGraph store's repository in either dialect: ``store_items`` and
``store_texts``. Each engine adds its keyword table (``store_fts``: its search and
how an item's document is rewritten) and how a store filter runs (in the query, or
in Python on the rows it returns)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from itertools import islice
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from langmem_ext.language.text import index_tokens
from langmem_ext.workspace.item_filter import matches_filter
from langmem_ext.workspace.records import ItemWrite, StoredItem, TextMatch, UnembeddedText
from langmem_ext.workspace.sql.base import SharedRepo

T = TypeVar("T")

ITEM_COLS = "i.id, i.ns, i.key, i.value, i.created_at, i.updated_at"
"""The columns :func:`item` reads, of ``store_items i``."""
LIVE = "(i.expires_at IS NULL OR i.expires_at > ?)"
"""The item ``i`` has not expired (``?``: now)."""
_TEXT = "t.item_id, t.ns, t.vec_id, t.text, i.created_at"
_TEXTS = "store_texts t JOIN store_items i ON i.id = t.item_id"


def item(r: Sequence[Any]) -> StoredItem:
    """A stored item from a row of :data:`ITEM_COLS`."""
    return StoredItem(int(r[0]), str(r[1]), str(r[2]), json.loads(r[3]), float(r[4]), float(r[5]))


def _text(r: Sequence[Any]) -> TextMatch:
    return TextMatch(int(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4]))


def prefix_sql(prefix: str, col: str = "i.ns") -> tuple[str, list[Any]]:
    """``col`` is ``prefix`` or below it (``'/'`` sorts right after ``'.'``; the
    column compares in byte order), with ``?`` placeholders and their values."""
    if not prefix:
        return "1 = 1", []
    return f"({col} = ? OR ({col} >= ? AND {col} < ?))", [prefix, prefix + ".", prefix + "/"]


class SharedStoreItems(SharedRepo):
    """:class:`~langmem_ext.workspace.records.StoreItemsRepository` in either
    dialect, but for the keyword table and how filters run."""

    _for_write: ClassVar[str]
    """What follows the ``SELECT`` of the item a write replaces (a row lock, or nothing)."""
    _fts_key: ClassVar[str]
    """The column of ``store_fts`` naming the item."""

    if TYPE_CHECKING:  # supplied by the engine's repository base

        def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    def _filter(self, flt: Mapping[str, Any] | None) -> tuple[str, list[Any], dict[str, Any]]:
        """``flt`` as a condition on ``i.value``, its parameters, and what is left to
        check in Python.

        Raises:
            InvalidInputError: An operator other than the supported ones.
        """
        raise NotImplementedError

    def _scan(self, sql: str, params: Sequence[Any]) -> AbstractContextManager[Iterable[Any]]:
        """The rows of ``sql`` read as they are iterated, for the ``with`` block."""
        raise NotImplementedError

    def _index_item(self, c: Any, item_id: int, had_texts: bool) -> None:
        """Write the item's keyword document again from its texts (``c``: the write's
        connection; ``had_texts``: the item was indexed before)."""
        raise NotImplementedError

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
            rows = self._all(self.dialect.sql(f"{sql} LIMIT ? OFFSET ?"), [*params, limit, offset])
            return [make(r) for r in rows]
        with self._scan(self.dialect.sql(sql), params) as scanned:
            passing = (r for r in scanned if matches_filter(json.loads(r[-1]), rest))
            return [make(r) for r in islice(passing, offset, offset + limit)]

    # -- reads -----------------------------------------------------------------------

    def get(self, ns: str, key: str, now: float) -> StoredItem | None:
        row = self._one(
            self.dialect.sql(
                f"SELECT {ITEM_COLS} FROM store_items i WHERE i.ns = ? AND i.key = ? AND {LIVE}"
            ),
            (ns, key, now),
        )
        return None if row is None else item(row)

    def page(
        self,
        prefix: str,
        flt: Mapping[str, Any] | None,
        now: float,
        limit: int,
        offset: int = 0,
    ) -> list[StoredItem]:
        where, params = prefix_sql(prefix)
        flt_sql, flt_params, rest = self._filter(flt)
        sql = (
            f"SELECT {ITEM_COLS}, i.value FROM store_items i WHERE {where} AND {LIVE} "
            f"AND {flt_sql} ORDER BY i.updated_at DESC, i.id DESC"
        )
        return self._passing(sql, [*params, now, *flt_params], rest, item, limit, max(offset, 0))

    def by_ids(self, item_ids: Sequence[int]) -> dict[int, StoredItem]:
        rows = self._all_of(
            f"SELECT {ITEM_COLS} FROM store_items i WHERE {{in_ids}}",
            "i.id",
            [int(i) for i in item_ids],
        )
        return {int(r[0]): item(r) for r in rows}

    def texts_of(self, item_ids: Sequence[int]) -> list[TextMatch]:
        rows = self._all_of(
            f"SELECT {_TEXT} FROM {_TEXTS} WHERE {{in_ids}}",
            "t.item_id",
            [int(i) for i in item_ids],
        )
        return [_text(r) for r in rows]

    def namespaces(self, now: float) -> list[str]:
        rows = self._all(
            self.dialect.sql(f"SELECT DISTINCT i.ns FROM store_items i WHERE {LIVE}"), (now,)
        )
        return [str(r[0]) for r in rows]

    def indexed_namespaces(self, prefix: str) -> list[str]:
        where, params = prefix_sql(prefix, "ns")
        rows = self._all(
            self.dialect.sql(f"SELECT DISTINCT ns FROM store_texts WHERE {where}"), params
        )
        return [str(r[0]) for r in rows]

    # -- search ----------------------------------------------------------------------

    def texts_by_vector(
        self, vec_ids: Sequence[str], flt: Mapping[str, Any] | None, now: float
    ) -> list[TextMatch]:
        flt_sql, flt_params, rest = self._filter(flt)
        out: list[TextMatch] = []
        for chunk in self.dialect.chunks(vec_ids):
            cond, bound = self.dialect.one_of("t.vec_id", chunk)
            sql = f"SELECT {_TEXT}, i.value FROM {_TEXTS} WHERE {cond} AND {LIVE} AND {flt_sql}"
            out += self._passing(sql, [*bound, now, *flt_params], rest, _text, len(chunk))
        return out

    def vector_ids(
        self, ns: str, flt: Mapping[str, Any] | None, now: float, limit: int
    ) -> list[str]:
        flt_sql, flt_params, rest = self._filter(flt)
        sql = (
            f"SELECT t.vec_id, i.value FROM {_TEXTS} "
            f"WHERE t.ns = ? AND t.vec_hash IS NOT NULL AND {LIVE} AND {flt_sql}"
        )
        return self._passing(sql, [ns, now, *flt_params], rest, lambda r: str(r[0]), limit)

    # -- writes ----------------------------------------------------------------------

    def _writing(self) -> AbstractContextManager[Any]:
        """The connection a write's statements run on, for the ``with`` block."""
        raise NotImplementedError

    def write(self, puts: Sequence[ItemWrite], now: float) -> dict[str, list[str]]:
        dropped: dict[str, list[str]] = {}
        with self._writing() as c:
            for p in puts:
                gone = self._write_one(c, p, now)
                if gone:
                    dropped.setdefault(p.ns, []).extend(gone)
        return dropped

    def _write_one(self, c: Any, p: ItemWrite, now: float) -> list[str]:
        """Apply one put or delete on the write's connection ``c``; returns the vector
        ids of the texts that went."""
        sql = self.dialect.sql
        row = c.execute(
            sql(f"SELECT id FROM store_items WHERE ns = ? AND key = ?{self._for_write}"),
            (p.ns, p.key),
        ).fetchone()
        old: dict[str, tuple[str, str]] = {}
        if row is not None:
            for path, vec_id, text_hash in c.execute(
                sql("SELECT path, vec_id, text_hash FROM store_texts WHERE item_id = ?"), (row[0],)
            ).fetchall():
                old[str(path)] = (str(vec_id), str(text_hash))
        if p.value_json is None:
            if row is not None:
                for table, col in (("store_texts", "item_id"), ("store_fts", self._fts_key)):
                    c.execute(sql(f"DELETE FROM {table} WHERE {col} = ?"), (row[0],))
                c.execute(sql("DELETE FROM store_items WHERE id = ?"), (row[0],))
            return [v for v, _ in old.values()]
        ttl = p.ttl_minutes
        expires = None if ttl is None else now + ttl * 60
        item_id = int(
            c.execute(
                sql(
                    "INSERT INTO store_items (ns, key, value, created_at, updated_at, "
                    "ttl_minutes, expires_at) VALUES (?,?,?,?,?,?,?) "
                    "ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, "
                    "created_at = CASE WHEN store_items.expires_at IS NOT NULL "
                    "AND store_items.expires_at <= excluded.updated_at "
                    "THEN excluded.created_at ELSE store_items.created_at END, "
                    "updated_at = excluded.updated_at, ttl_minutes = excluded.ttl_minutes, "
                    "expires_at = excluded.expires_at RETURNING id"
                ),
                (p.ns, p.key, p.value_json, now, now, ttl, expires),
            ).fetchone()[0]
        )
        new_paths = {t.path for t in p.texts}
        gone = [path for path in old if path not in new_paths]
        for path in gone:
            c.execute(
                sql("DELETE FROM store_texts WHERE item_id = ? AND path = ?"), (item_id, path)
            )
        changed = bool(gone)
        for t in p.texts:
            if t.path in old and old[t.path][1] == t.text_hash:
                continue  # same text: its vector stays valid
            changed = True
            # vec_hash keeps naming the text whose vector the collection holds, so
            # embedded_count stays exact while this text waits for its vector.
            c.execute(
                sql(
                    "INSERT INTO store_texts VALUES (?,?,?,?,?,?,?,NULL) "
                    "ON CONFLICT (item_id, path) DO UPDATE SET text = excluded.text, "
                    "tokens = excluded.tokens, text_hash = excluded.text_hash"
                ),
                (item_id, t.path, p.ns, t.vec_id, t.text, " ".join(index_tokens(t.text)),
                 t.text_hash),
            )  # fmt: skip
        if changed:  # the item's keyword document: its texts' tokens
            self._index_item(c, item_id, bool(old))
        return [old[path][0] for path in gone]

    def refresh_ttl(self, item_ids: Sequence[int], now: float) -> None:
        for text, bound in self._in(
            "UPDATE store_items SET expires_at = ? + ttl_minutes * 60 "
            "WHERE ttl_minutes IS NOT NULL AND {in_ids}",
            "id",
            sorted(int(i) for i in item_ids),
        ):
            self._run(text, [now, *bound])

    # -- vector marks ----------------------------------------------------------------

    def embedded_count(self, ns: str) -> int:
        row = self._one(
            self.dialect.sql(
                "SELECT count(*) FROM store_texts WHERE ns = ? AND vec_hash IS NOT NULL"
            ),
            (ns,),
        )
        return int(row[0]) if row else 0

    def forget_vectors(self, ns: str) -> None:
        self._run(self.dialect.sql("UPDATE store_texts SET vec_hash = NULL WHERE ns = ?"), (ns,))

    def unembedded(self, ns: str, embedder: str) -> list[UnembeddedText]:
        rows = self._all(
            self.dialect.sql(
                "SELECT item_id, path, vec_id, text, text_hash FROM store_texts "
                "WHERE ns = ? AND (vec_hash IS NULL OR vec_hash != text_hash || ?)"
            ),
            (ns, embedder),
        )
        return [UnembeddedText(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]

    def mark_embedded(self, texts: Sequence[UnembeddedText], embedder: str) -> None:
        self._run_many(
            self.dialect.sql(
                "UPDATE store_texts SET vec_hash = ? "
                "WHERE item_id = ? AND path = ? AND text_hash = ?"
            ),
            [(t.text_hash + embedder, t.item_id, t.path, t.text_hash) for t in texts],
        )


__all__ = ["ITEM_COLS", "LIVE", "SharedStoreItems", "item", "prefix_sql"]

"""Repository of the LangGraph store's tables: ``store_items`` and ``store_texts``.

``store_items`` holds each item's value as JSON text with its dates and TTL;
``store_texts`` the texts chosen for indexing, each with its vector id, its
language-aware tokens (:mod:`langmem_ext.text`), its hash and the mark of the
vector the collection holds (``vec_hash``). Filters run in the queries
(:mod:`~langmem_ext.workspace.sqlite.json_filter`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langmem_ext.text import index_tokens
from langmem_ext.workspace.item_filter import matches_filter
from langmem_ext.workspace.records import (
    IndexedText,
    ItemWrite,
    StoredItem,
    UnembeddedText,
)
from langmem_ext.workspace.sqlite._repo import SqliteRepo
from langmem_ext.workspace.sqlite._sql import in_chunks
from langmem_ext.workspace.sqlite.json_filter import compile_filter

_COLS = "id, ns, key, value, created_at, updated_at"
_LIVE = "(expires_at IS NULL OR expires_at > ?)"


def _item(r: Sequence[Any]) -> StoredItem:
    return StoredItem(int(r[0]), str(r[1]), str(r[2]), json.loads(r[3]), float(r[4]), float(r[5]))


def _prefix_sql(prefix: str) -> tuple[str, list[Any]]:
    """``ns`` is ``prefix`` or below it (``'/'`` sorts right after ``'.'``)."""
    if not prefix:
        return "1", []
    return "(ns = ? OR (ns >= ? AND ns < ?))", [prefix, prefix + ".", prefix + "/"]


class SqliteStoreItems(SqliteRepo):
    """:class:`~langmem_ext.workspace.records.StoreItemsRepository` on SQLite."""

    # -- reads -----------------------------------------------------------------------

    def get(self, ns: str, key: str, now: float) -> StoredItem | None:
        """The live item ``key`` of namespace ``ns``, or ``None``."""
        row = self._one(
            f"SELECT {_COLS} FROM store_items WHERE ns = ? AND key = ? AND {_LIVE}",
            (ns, key, now),
        )
        return None if row is None else _item(row)

    def _passing(
        self, sql: str, params: list[Any], rest: Mapping[str, Any], limit: int, offset: int
    ) -> Iterator[StoredItem]:
        """Rows of ``sql`` passing the filter remainder ``rest``, ``offset`` .. ``+ limit``.

        Without a remainder ``LIMIT`` / ``OFFSET`` cut the page in SQL; with one the
        rows are read in order and checked until the page is full.
        """
        if not rest:
            rows = self._all(f"{sql} LIMIT ? OFFSET ?", [*params, limit, offset])
            yield from (_item(r) for r in rows)
            return
        with self._lock:
            cursor = self._conn.execute(sql, params)
            seen = 0
            for r in cursor:
                item = _item(r)
                if not matches_filter(item.value, rest):
                    continue
                seen += 1
                if seen > offset:
                    yield item
                if seen >= offset + limit:
                    return

    def page(
        self,
        prefix: str,
        flt: Mapping[str, Any] | None,
        now: float,
        limit: int,
        offset: int = 0,
    ) -> list[StoredItem]:
        """Live items under ``prefix`` passing ``flt``, newest first (``updated_at``)."""
        if limit <= 0:
            return []
        where, params = _prefix_sql(prefix)
        flt_sql, flt_params, rest = compile_filter(flt)
        sql = (
            f"SELECT {_COLS} FROM store_items WHERE {where} AND {_LIVE} AND {flt_sql} "
            "ORDER BY updated_at DESC, id DESC"
        )
        return list(self._passing(sql, [*params, now, *flt_params], rest, limit, max(offset, 0)))

    def matching(self, prefix: str, flt: Mapping[str, Any] | None, now: float) -> list[StoredItem]:
        """Every live item under ``prefix`` passing ``flt``, newest first."""
        return self.page(prefix, flt, now, limit=2**62)

    def texts_of(self, item_ids: Sequence[int]) -> list[IndexedText]:
        """The indexed texts of these items."""
        out: list[IndexedText] = []
        for chunk, marks in in_chunks(list(item_ids)):
            for item_id, ns, vec_id, text, tokens in self._all(
                "SELECT item_id, ns, vec_id, text, tokens FROM store_texts "
                f"WHERE item_id IN ({marks})",
                chunk,
            ):
                out.append(IndexedText(int(item_id), str(ns), str(vec_id), str(text), str(tokens)))
        return out

    def namespaces(self, now: float) -> list[str]:
        """The namespaces holding live items."""
        return [
            str(r[0])
            for r in self._all(f"SELECT DISTINCT ns FROM store_items WHERE {_LIVE}", (now,))
        ]

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
        for t in p.texts:
            if t.path in old and old[t.path][1] == t.text_hash:
                continue  # same text: its vector stays valid
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
        return [old[path][0] for path in gone]

    def sweep(self, now: float) -> tuple[int, dict[str, list[str]]]:
        """Delete expired items; returns their count and namespace -> their vector ids."""
        dropped: dict[str, list[str]] = {}
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, ns FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ?",
                (now,),
            ).fetchall()
            ids = [int(r[0]) for r in rows]
            ns_of = {int(r[0]): str(r[1]) for r in rows}
            for chunk, marks in in_chunks(ids):
                for item_id, vec_id in self._conn.execute(
                    f"SELECT item_id, vec_id FROM store_texts WHERE item_id IN ({marks})", chunk
                ):
                    dropped.setdefault(ns_of[int(item_id)], []).append(str(vec_id))
                self._conn.execute(f"DELETE FROM store_texts WHERE item_id IN ({marks})", chunk)
                self._conn.execute(f"DELETE FROM store_items WHERE id IN ({marks})", chunk)
        return len(ids), dropped

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

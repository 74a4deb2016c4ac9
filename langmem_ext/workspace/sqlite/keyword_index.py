"""The FTS5 keyword index of ``.index/index.db``: BM25 and substring search.

``fts`` holds language-aware tokens (:mod:`langmem_ext.language.text`) ranked with FTS5's
BM25, written with the docs they belong to (:mod:`~langmem_ext.workspace.sqlite.fts`); a
search reads only its scope's rowid block. :class:`KeywordIndex` is the doc table
(:class:`~langmem_ext.workspace.sqlite.doc_table.DocTable`) plus these searches, which run
on reader connections of their own.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.workspace.docs import _D_COLS, _DOC_COLS, Doc, _doc
from langmem_ext.workspace.sqlite.doc_table import _CACHE_KIB
from langmem_ext.workspace.sqlite.fts import BLOCK_BITS, block_range, idf_sum, match_any
from langmem_ext.workspace.sqlite.passage_rows import FTS_TABLE, P_COLS, Passage, passage
from langmem_ext.workspace.sqlite.passages import PassageTable

GATE_MIN_DOCS = 20_000
"""Below this many docs in the index, a keyword query matches on every token."""
COMMON_TOKEN_SHARE = 0.05
"""A token in more than this share of a large index's docs is common (see
:meth:`KeywordIndex._match_tokens`)."""


class KeywordIndex(PassageTable):
    """The doc table (and its passages) with FTS5 BM25 keyword search, in one SQLite file.

    Args:
        path: ``.index/index.db``.
        cache_max_entries: See :class:`~langmem_ext.workspace.sqlite.doc_table.DocTable`.
        exact_max_entries: See :class:`~langmem_ext.workspace.sqlite.doc_table.DocTable`.
    """

    def __init__(
        self, path: Path, *, cache_max_entries: int = 50_000, exact_max_entries: int = 5_000
    ) -> None:
        super().__init__(
            path, cache_max_entries=cache_max_entries, exact_max_entries=exact_max_entries
        )
        self._blocks: dict[str, int] = {}
        # BM25 runs next to the vector side on worker threads; on a connection of its
        # own it does not hold the index lock the vector side needs (WAL: readers run
        # beside each other and beside the writer).
        self._reader_local = threading.local()
        self._readers: list[sqlite3.Connection] = []

    def _block_of(self, scope: str) -> int | None:
        """The rowid block of ``scope`` (a committed block never changes: cached)."""
        block = self._blocks.get(scope)
        if block is None:
            rows = self._q("SELECT block FROM scope_blocks WHERE scope = ?", (scope,))
            if not rows:
                return None
            block = self._blocks[scope] = int(rows[0][0])
        return block

    def _reader(self) -> sqlite3.Connection:
        """This thread's read-only connection (for BM25), opened on first use."""
        conn: sqlite3.Connection | None = getattr(self._reader_local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, timeout=30, check_same_thread=False, isolation_level=None
            )
            conn.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            conn.execute(  # document frequencies for bm25_full (temp: not in the file)
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_vocab USING fts5vocab(main, fts, row)"
            )
            conn.execute(  # ... and for prose_bm25_full
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.passages_vocab "
                f"USING fts5vocab(main, {FTS_TABLE}, row)"
            )
            conn.execute("PRAGMA query_only=1")
            with self._lock:
                self._readers.append(conn)
            self._reader_local.conn = conn
        return conn

    def close(self) -> None:
        """Close the connections."""
        with self._lock:
            super().close()
            for conn in self._readers:
                conn.close()
            self._readers.clear()

    # -- search ------------------------------------------------------------

    def bm25(self, scope: str, query: str, limit: int) -> list[tuple[Doc, float]]:
        """BM25 keyword search in one scope.

        Returns:
            ``(doc, score)`` pairs, best first; score is positive, bigger is better.

        Raises:
            sqlite3.Error: when FTS5 fails (the caller degrades to substring search).
        """
        toks = query_tokens(query)
        if not toks:
            return []
        block = self._block_of(scope)
        if block is None:  # no doc was ever indexed in this scope
            return []
        match = match_any(self._match_tokens(toks))
        # FTS5 ranks inside the scope's rowid block first (`ORDER BY rank LIMIT` is
        # its own top-k; `rank` is bm25() by default) and only those rows are joined
        # to `docs`: the join no longer touches every match of a large scope.
        rows = (
            self._reader()
            .execute(  # not under the index lock: see __init__
                f"SELECT {_D_COLS}, t.s FROM ("
                "SELECT rowid, rank AS s FROM fts "
                "WHERE fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rank LIMIT ?"
                ") t JOIN docs d ON d.rowid = t.rowid WHERE d.scope = ? ORDER BY t.s",
                (match, *block_range(block), limit, scope),
            )
            .fetchall()
        )
        return [(_doc(r[:10]), -float(r[10])) for r in rows]

    def bm25_full(self, query: str) -> float:
        """The BM25 score of a doc of average length holding every query token once.

        That is the sum of the tokens' IDFs as FTS5 computes them,
        ``log((N - n + 0.5) / (n + 0.5))`` (at least 1e-6), with ``N`` docs in the
        index and ``n`` holding the token (0 for a token no doc holds): what a match
        of the whole query scores, so ``bm25 / bm25_full`` is the (IDF-weighted)
        share of the query a doc matched. Statistics are global, like FTS5's.

        Raises:
            sqlite3.Error: when FTS5 fails.
        """
        toks = query_tokens(query)
        if not toks:
            return 0.0
        n_docs, df = self._doc_frequencies(toks)
        return idf_sum(n_docs, df, toks)

    def _n_docs(self) -> int:
        """Docs in the index (counted once per commit of the index)."""
        conn = self._reader()
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        cached: tuple[int, int] | None = getattr(self._reader_local, "n_docs", None)
        if cached is None or cached[0] != version:
            cached = (version, int(conn.execute("SELECT count(*) FROM fts").fetchone()[0]))
            self._reader_local.n_docs = cached
        return cached[1]

    def _doc_frequencies(self, toks: list[str]) -> tuple[int, dict[str, int]]:
        """``(docs in the index, docs holding each token)`` from FTS5's vocabulary."""
        n_docs = self._n_docs()
        marks = ",".join("?" * len(toks))
        df = dict(
            self._reader().execute(
                f"SELECT term, doc FROM temp.fts_vocab WHERE term IN ({marks})", toks
            )
        )
        return n_docs, df

    def _match_tokens(self, toks: list[str]) -> list[str]:
        """The tokens a large index matches on: those in at most
        :data:`COMMON_TOKEN_SHARE` of its docs when the query has such tokens besides
        common ones. A common token's postings are most of the index (each costs a
        read of every doc holding it) and its IDF is small (≤ log 19 ≈ 2.9 at 5 %), so
        the candidates come from the query's rarer tokens; below
        :data:`GATE_MIN_DOCS` docs every token matches."""
        if len(toks) < 2 or self._n_docs() < GATE_MIN_DOCS:
            return toks
        n_docs, df = self._doc_frequencies(toks)
        rare = [t for t in toks if df.get(t, 0) <= COMMON_TOKEN_SHARE * n_docs]
        return rare if rare else toks

    def prose_bm25(self, scope: str, query: str, limit: int) -> list[tuple[Passage, float]]:
        """BM25 keyword search over a scope's prose chunks (their headings included),
        on this thread's reader connection (as :meth:`bm25`).

        Returns:
            ``(passage, score)`` pairs, best first; scores are positive.

        Raises:
            sqlite3.Error: When FTS5 fails.
        """
        toks = query_tokens(query)
        if not toks:
            return []
        rows = (
            self._reader()
            .execute(
                f"SELECT {P_COLS}, t.s FROM (SELECT rowid, rank AS s FROM {FTS_TABLE} "
                f"WHERE {FTS_TABLE} MATCH ?) t JOIN passages p ON p.rowid = t.rowid "
                "WHERE p.kind = 'prose' AND p.scope = ? ORDER BY t.s LIMIT ?",
                (match_any(toks), scope, limit),
            )
            .fetchall()
        )
        return [(passage(r[:-1]), -float(r[-1])) for r in rows]

    def prose_bm25_full(self, query: str) -> float:
        """What a prose chunk of average length holding every query token once scores
        (:meth:`bm25_full`, over the prose chunks' statistics).

        Raises:
            sqlite3.Error: When FTS5 fails.
        """
        toks = query_tokens(query)
        if not toks:
            return 0.0
        conn = self._reader()
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        cached: tuple[int, int] | None = getattr(self._reader_local, "n_prose", None)
        if cached is None or cached[0] != version:
            n = int(conn.execute(f"SELECT count(*) FROM {FTS_TABLE}").fetchone()[0])
            cached = self._reader_local.n_prose = (version, n)
        marks = ",".join("?" * len(toks))
        df = dict(
            conn.execute(f"SELECT term, doc FROM temp.passages_vocab WHERE term IN ({marks})", toks)
        )
        return idf_sum(cached[1], df, toks)

    def substring(self, scope: str, query: str, limit: int) -> list[tuple[Doc, float]]:
        """Plain substring match (the last-resort keyword mode).

        Scores are the share of query tokens found in the text. A token counts as
        found when it is a substring of the lower-cased text or one of the text's own
        index tokens: query tokens are stemmed (``cherries`` -> ``cherry``), so the
        text is compared on the same tokens FTS5 would use.
        """
        toks = query_tokens(query) or [query.strip().lower()]
        out: list[tuple[Doc, float]] = []
        for row in self._q(f"SELECT {_DOC_COLS} FROM docs WHERE scope = ?", (scope,)):
            d = _doc(row)
            low = d.text.lower()
            own: set[str] | None = None
            hits = 0
            for t in toks:
                if not t:
                    continue
                if t in low:
                    hits += 1
                    continue
                if own is None:
                    own = set(index_tokens(d.text))
                hits += t in own
            if hits:
                out.append((d, hits / len(toks)))
        out.sort(key=lambda p: -p[1])
        return out[:limit]


__all__ = ["BLOCK_BITS", "KeywordIndex"]

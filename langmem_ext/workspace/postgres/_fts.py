"""BM25 over PostgreSQL token arrays: FTS5's ranking, computed in SQL.

A keyword table holds each document's language-aware tokens
(:mod:`langmem_ext.language.text`) as a ``TEXT[]`` in order, with repeats, and a
``tsvector`` of them (``array_to_tsvector``: the tokens are the lexemes, no parser
or dictionary runs, so Chinese characters and bigrams are matched as the tokenizer
wrote them) under a GIN index. A search finds the documents holding any query
token through that index and scores them with FTS5's BM25 (``k1 = 1.2``,
``b = 0.75``, IDF ``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, document
length in tokens), so the two engines rank alike.

The keyword tables of the ledger (session events, store items) and the prose
passages work so. The memories' keyword index sums the same BM25 over a postings
table instead (:mod:`~langmem_ext.workspace.postgres.keyword_index`): scoring each
matching row's array costs ~15 us a row, too much for a common query over many
memories; :class:`TableStats` then counts document frequencies from the postings.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from langmem_ext.workspace.sqlite.fts import idf_sum

K1 = 1.2
B = 0.75
STATS_TTL_S = 1.0
"""Seconds a table's document count and average length are reused (a write of this
process refreshes them at once)."""


def lexeme(token: str) -> str:
    """``token`` as one quoted ``tsquery`` lexeme (taken as it is, not parsed).

    Example:
        >>> lexeme("it's")
        "'it''s'"
    """
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def match_any(tokens: Sequence[str]) -> str:
    """A ``tsquery`` matching a document that holds any of ``tokens``.

    Example:
        >>> match_any(["tea", "花生"])
        "'tea' | '花生'"
    """
    return " | ".join(lexeme(t) for t in tokens)


def score_sql(alias: str, params: Mapping[str, Any]) -> str:
    """The BM25 score of the row ``alias`` for the query terms of ``params`` (from
    :meth:`TableStats.query_params`): one term of the sum per query token, each
    ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`` with ``tf`` the
    token's count in the row's tokens and ``dl`` their number."""
    dl = f"({1 - B}::float8 + {B}::float8 * cardinality({alias}.tokens) / %(avgdl)s::float8)"
    parts = []
    for i in range(len(params["terms"])):
        tf = f"cardinality(array_positions({alias}.tokens, %(t{i})s::text))"
        parts.append(f"%(i{i})s::float8 * {tf} * {K1 + 1}::float8 / ({tf} + {K1}::float8 * {dl})")
    return "(" + (" + ".join(parts) or "0") + ")"


class TableStats:
    """Document count, average length and document frequencies of one keyword table.

    Args:
        table: The table (columns ``tokens TEXT[]`` and ``tsv TSVECTOR``).
        where: A condition on its rows that makes a document (all rows when empty).
        postings: A table of ``(term, …)`` rows, one per document holding the term,
            to count document frequencies from (an index-only count) instead of the
            ``tsvector``.
    """

    def __init__(self, table: str, where: str = "", postings: str | None = None) -> None:
        self.table = table
        self.where = where
        self.postings = postings
        self._lock = threading.Lock()
        self._kept: tuple[float, int, float] | None = None

    def invalidate(self) -> None:
        """Count again at the next read (this process wrote the table)."""
        with self._lock:
            self._kept = None

    def totals(self, conn: Any) -> tuple[int, float]:
        """``(documents, average tokens per document)`` (1.0 when empty)."""
        with self._lock:
            kept = self._kept
        if kept is not None and time.monotonic() - kept[0] < STATS_TTL_S:
            return kept[1], kept[2]
        n, total = conn.execute(
            f"SELECT count(*), coalesce(sum(cardinality(tokens)), 0) FROM {self.table}"
            + (f" WHERE {self.where}" if self.where else "")
        ).fetchone()
        n_docs, avgdl = int(n), (float(total) / int(n) if n else 1.0) or 1.0
        with self._lock:
            self._kept = (time.monotonic(), n_docs, avgdl)
        return n_docs, avgdl

    def doc_freq(self, conn: Any, tokens: Sequence[str]) -> dict[str, int]:
        """Documents holding each of ``tokens`` (absent: none)."""
        terms = list(dict.fromkeys(tokens))
        if not terms:
            return {}
        if self.postings is not None:
            rows = conn.execute(
                f"SELECT term, count(*) FROM {self.postings} WHERE term = ANY(%s) GROUP BY term",
                (terms,),
            ).fetchall()
            return {str(t): int(n) for t, n in rows}
        rows = conn.execute(
            f"SELECT u.term, (SELECT count(*) FROM {self.table} f WHERE f.tsv @@ u.q"
            + (f" AND {self.where}" if self.where else "")
            + ") "
            "FROM unnest(%s::text[], %s::tsquery[]) AS u(term, q)",
            (terms, [lexeme(t) for t in terms]),
        ).fetchall()
        return {str(t): int(n) for t, n in rows if n}

    def idf_sum(self, conn: Any, tokens: Sequence[str]) -> float:
        """The BM25 of a document of average length holding each token once."""
        terms = list(dict.fromkeys(tokens))
        if not terms:
            return 0.0
        n_docs, _ = self.totals(conn)
        return idf_sum(n_docs, self.doc_freq(conn, terms), terms)

    def query_params(self, conn: Any, tokens: Sequence[str]) -> dict[str, Any]:
        """The named parameters of :func:`score_sql` and ``match`` for ``tokens``."""
        terms = list(dict.fromkeys(tokens))
        n_docs, avgdl = self.totals(conn)
        df = self.doc_freq(conn, terms)
        idfs = [idf_sum(n_docs, df, [t]) for t in terms]
        out: dict[str, Any] = {
            "terms": terms, "idfs": idfs, "avgdl": avgdl, "match": match_any(terms)
        }  # fmt: skip
        for i, (t, idf) in enumerate(zip(terms, idfs, strict=True)):
            out[f"t{i}"], out[f"i{i}"] = t, idf
        return out


__all__ = ["K1", "B", "TableStats", "lexeme", "match_any", "score_sql"]

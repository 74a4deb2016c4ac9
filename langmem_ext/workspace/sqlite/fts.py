"""FTS5 rows and per-scope rowid blocks of ``index.db``: the keyword side of a write.

``fts`` holds each doc's language-aware tokens (:mod:`langmem_ext.language.text`) under the
doc's rowid, and a scope's docs have rowids in the scope's block (:data:`BLOCK_BITS`).
The doc table (:mod:`~langmem_ext.workspace.sqlite.doc_table`) runs these statements inside
its own transactions, so a doc and its tokens change together; the keyword index
(:mod:`~langmem_ext.workspace.sqlite.keyword_index`) searches them.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time
from collections.abc import Mapping, Sequence

from langmem_ext.language.text import TOKENIZER_VERSION, index_tokens

logger = logging.getLogger(__name__)

BLOCK_BITS = 32
"""A scope's docs have rowids in its block, ``[block << 32, (block + 1) << 32)``.

BM25 then asks FTS5 for that rowid range only, so a keyword search reads and scores
the postings of its own scope, not those of every user of the workspace (MemDaily,
26 scopes: 4.9 → 2.4 ms p50). FTS5's statistics stay global, so scores are the same.
Blocks are handed out in order of first use (table ``scope_blocks``) and never reused.
"""


def index_doc(c: sqlite3.Connection, rowid: int, text: str, table: str = "fts") -> None:
    """Add the tokens of a doc's text under its rowid; inside a write.

    ``table`` is the FTS5 table (``fts`` for entries, ``passages_fts`` for prose).
    """
    c.execute(
        f"INSERT INTO {table} (rowid, tokens) VALUES (?, ?)",
        (rowid, " ".join(index_tokens(text))),
    )


def unindex_doc(c: sqlite3.Connection, rowid: int, table: str = "fts") -> None:
    """Remove the tokens under a doc's rowid from ``table``; inside a write."""
    c.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))


TOKENIZER_KEY = "tokenizer"
"""``meta`` key naming the tokens ``fts`` holds (:data:`~langmem_ext.language.text.TOKENIZER_VERSION`)."""


def retokenize_index(c: sqlite3.Connection) -> int:
    """Write every doc's tokens again when ``fts`` holds another tokenizer's.

    One transaction; a no-op once the index's ``meta`` names the current tokenizer
    (a new index is marked at once). Call under the connection's lock.

    Returns:
        The docs tokenized again.
    """
    row = c.execute("SELECT value FROM meta WHERE key = ?", (TOKENIZER_KEY,)).fetchone()
    if row is not None and row[0] == TOKENIZER_VERSION:
        return 0
    started = time.perf_counter()
    c.execute("BEGIN IMMEDIATE")
    try:
        docs = c.execute("SELECT rowid, text FROM docs").fetchall()
        c.execute("DELETE FROM fts")
        c.executemany(
            "INSERT INTO fts (rowid, tokens) VALUES (?, ?)",
            ((rowid, " ".join(index_tokens(text))) for rowid, text in docs),
        )
        c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (TOKENIZER_KEY, TOKENIZER_VERSION))
        c.execute("COMMIT")
    except BaseException:
        c.execute("ROLLBACK")
        raise
    if docs:
        logger.info(
            "keyword index: %d docs tokenized again in %.1f s",
            len(docs),
            time.perf_counter() - started,
        )
    return len(docs)


def retokenize_ledger(c: sqlite3.Connection) -> int:
    """:func:`retokenize_index` for the ledger's keyword tables: the session hot log's
    events (``session_events_fts``) and the LangGraph store's texts (``store_texts``,
    ``store_fts``). Call after the ledger's migrations, under its lock.

    Returns:
        The events and store texts tokenized again.
    """
    row = c.execute("SELECT value FROM meta WHERE key = ?", (TOKENIZER_KEY,)).fetchone()
    if row is not None and row[0] == TOKENIZER_VERSION:
        return 0
    c.execute("BEGIN IMMEDIATE")
    try:
        events = c.execute(
            "SELECT e.id, e.text FROM session_events e JOIN session_events_fts f ON f.rowid = e.id"
        ).fetchall()
        c.executemany("DELETE FROM session_events_fts WHERE rowid = ?", ((i,) for i, _ in events))
        c.executemany(
            "INSERT INTO session_events_fts (rowid, tokens) VALUES (?, ?)",
            ((i, " ".join(dict.fromkeys(index_tokens(t)))) for i, t in events),
        )
        texts = c.execute("SELECT item_id, path, text FROM store_texts").fetchall()
        c.executemany(
            "UPDATE store_texts SET tokens = ? WHERE item_id = ? AND path = ?",
            ((" ".join(index_tokens(t)), i, p) for i, p, t in texts),
        )
        c.execute("DELETE FROM store_fts")
        c.execute(
            "INSERT INTO store_fts (rowid, tokens) "
            "SELECT item_id, group_concat(tokens, ' ') FROM store_texts GROUP BY item_id"
        )
        c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (TOKENIZER_KEY, TOKENIZER_VERSION))
        c.execute("COMMIT")
    except BaseException:
        c.execute("ROLLBACK")
        raise
    return len(events) + len(texts)


def move_to_scope_blocks(c: sqlite3.Connection) -> None:
    """Give the docs of an index from before scope blocks rowids in their blocks.

    One transaction, in rowid order (a scope's docs keep their order); a no-op
    once done. Call under the connection's lock.
    """
    legacy = (1 << BLOCK_BITS,)
    if c.execute("SELECT 1 FROM docs WHERE rowid < ? LIMIT 1", legacy).fetchone() is None:
        return
    started = time.perf_counter()
    c.execute("BEGIN IMMEDIATE")
    try:
        old = c.execute(
            "SELECT rowid, scope FROM docs WHERE rowid < ? ORDER BY rowid", legacy
        ).fetchall()
        logger.info("keyword index: moving %d docs to per-scope rowid blocks", len(old))
        following: dict[str, int] = {}  # scope -> its next free rowid
        moves: list[tuple[int, int]] = []
        for rowid, scope in old:
            if scope not in following:
                following[scope] = next_rowid(c, scope)
            moves.append((following[scope], rowid))
            following[scope] += 1
        c.executemany("UPDATE docs SET rowid = ? WHERE rowid = ?", moves)
        c.executemany("UPDATE fts SET rowid = ? WHERE rowid = ?", moves)
        c.execute("COMMIT")
    except BaseException:
        c.execute("ROLLBACK")
        raise
    logger.info("keyword index: %d docs moved in %.1f s", len(old), time.perf_counter() - started)


def next_rowid(c: sqlite3.Connection, scope: str) -> int:
    """The next free rowid of ``scope``'s block (allocating the block); inside a write."""
    c.execute(
        "INSERT OR IGNORE INTO scope_blocks (scope, block) "
        "VALUES (?, (SELECT coalesce(max(block), 0) + 1 FROM scope_blocks))",
        (scope,),
    )
    block = int(c.execute("SELECT block FROM scope_blocks WHERE scope = ?", (scope,)).fetchone()[0])
    lo, hi = block_range(block)
    top = c.execute("SELECT max(rowid) FROM docs WHERE rowid BETWEEN ? AND ?", (lo, hi)).fetchone()[
        0
    ]
    return lo if top is None else int(top) + 1


def match_any(tokens: Sequence[str]) -> str:
    """The FTS5 query matching a document that holds any of ``tokens`` (each a phrase)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


def idf_sum(n_docs: int, doc_freq: Mapping[str, int], tokens: Sequence[str]) -> float:
    """The sum of the tokens' IDFs as FTS5's BM25 computes them.

    ``log((N - n + 0.5) / (n + 0.5))``, at least 1e-6, with ``N`` documents and ``n``
    holding the token (0 when absent from ``doc_freq``): the BM25 of a document of
    average length holding every token once. The counts come from two reads, so a
    token may be counted in more documents than ``N``: it is then as common as can be
    (the 1e-6 floor), never a math domain error.
    """
    return sum(
        max(
            1e-6,
            math.log(max(1e-12, (n_docs - doc_freq.get(t, 0) + 0.5) / (doc_freq.get(t, 0) + 0.5))),
        )
        for t in tokens
    )


def block_range(block: int) -> tuple[int, int]:
    """The first and last rowid of ``block``."""
    return block << BLOCK_BITS, ((block + 1) << BLOCK_BITS) - 1


__all__ = [
    "BLOCK_BITS",
    "TOKENIZER_KEY",
    "block_range",
    "idf_sum",
    "index_doc",
    "match_any",
    "move_to_scope_blocks",
    "next_rowid",
    "retokenize_index",
    "retokenize_ledger",
    "unindex_doc",
]

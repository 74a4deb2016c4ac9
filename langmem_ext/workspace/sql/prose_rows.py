"""What writing a file's prose passages changes, worked out the same for both
engines: which chunks are new, which stored rows take a chunk's new place or text,
and which rows are gone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langmem_ext.workspace.docs import text_hash
from langmem_ext.workspace.prose import ProseChunk

SELECT_PROSE_ROWS = (
    "SELECT rowid, id, text_hash, scope, line, end_line, category, heading, text "
    "FROM passages WHERE kind = 'prose' AND path = ?"
)
"""A file's stored prose rows, as :func:`prose_plan` reads them (``?``: the path)."""


@dataclass(frozen=True)
class StoredChunk:
    """A stored prose row: its rowid, text hash and scope."""

    rowid: int
    text_hash: str
    scope: str


@dataclass
class ProsePlan:
    """The writes that make a file's stored prose its chunks.

    Attributes:
        scope: The file's scope.
        added: Chunks not stored yet, with their text hash.
        moved: Chunks stored under their anchor whose place, text or scope changed,
            with their new text hash and their stored row.
        gone: Stored rows whose anchor the file no longer has, by anchor.
    """

    scope: str
    added: list[tuple[ProseChunk, str]] = field(default_factory=list)
    moved: list[tuple[ProseChunk, str, StoredChunk]] = field(default_factory=list)
    gone: dict[str, StoredChunk] = field(default_factory=dict)

    @property
    def stale(self) -> bool:
        """Whether a vector becomes stale (a chunk added, removed, re-headed or moved
        to another scope)."""
        return bool(self.added or self.gone) or any(
            self.rewritten(h, old) for _ch, h, old in self.moved
        )

    def rewritten(self, new_hash: str, old: StoredChunk) -> bool:
        """Whether a moved chunk's text or scope changed (its tokens and vector go stale)."""
        return new_hash != old.text_hash or old.scope != self.scope


def _place(ch: ProseChunk) -> tuple[Any, ...]:
    """What a stored chunk row holds of ``ch`` besides its anchor, in column order."""
    return (ch.line, ch.end_line, ch.category, ch.heading, ch.text)


def prose_plan(
    rows: Iterable[Sequence[Any]], scope: str, chunks: Sequence[ProseChunk]
) -> ProsePlan:
    """The writes that make the stored prose rows of a file its ``chunks``.

    A chunk stored under its anchor, in ``scope`` and at the same place, needs no write.

    Args:
        rows: The file's stored rows, as :data:`SELECT_PROSE_ROWS` reads them.
        scope: The file's scope.
        chunks: The file's chunks, in file order.
    """
    old = {str(r[1]): (StoredChunk(int(r[0]), str(r[2]), str(r[3])), tuple(r[4:])) for r in rows}
    plan = ProsePlan(scope)
    for ch in chunks:
        found = old.pop(ch.anchor, None)
        if found is not None and found[0].scope == scope and found[1] == _place(ch):
            continue  # as stored: nothing to write
        h = text_hash(ch.indexed_text)
        if found is None:
            plan.added.append((ch, h))
        else:
            plan.moved.append((ch, h, found[0]))
    plan.gone = {anchor: stored for anchor, (stored, _place_) in old.items()}
    return plan


__all__ = ["SELECT_PROSE_ROWS", "ProsePlan", "StoredChunk", "prose_plan"]

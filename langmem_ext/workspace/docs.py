"""The doc/section table's row types and their row mapping (``docs`` of ``index.db``).

:class:`Doc` is one row of ``docs``; :class:`FileStamp` one of ``files``; an
:data:`Entry` a doc with its kept vector (``kept_vectors``). The keyword index, the
doc cache and the vector side all speak these types, so they live here, below each
of them: the arrows between those modules run one way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

_VEC_DTYPE = np.dtype("<f4")
"""Stored vectors: little-endian float32 (Chroma's precision)."""

Vector = NDArray[np.float32]

Entry = tuple["Doc", "Vector | None"]
"""A doc and its kept vector (``None``: no valid copy kept)."""


class Previous(NamedTuple):
    """The entry before a doc in its file section (see ``DocTable.docs_with_previous_vectors``)."""

    id: str
    text: str | None
    """Its text (``None`` when its doc was not found)."""
    vector: Vector | None
    """Its kept vector (``None``: no valid copy kept; ask the vector index)."""


@dataclass(frozen=True)
class Doc:
    """One indexed entry."""

    id: str
    scope: str
    path: str
    line: int
    category: str
    text: str
    text_hash: str
    created_at: float
    updated_at: float
    importance: float


_DOC_COLS = ", ".join(f.name for f in fields(Doc))
"""The ``docs`` columns of a :class:`Doc`, in its fields' order."""
_D_COLS = ", ".join("d." + f.name for f in fields(Doc))


@dataclass(frozen=True)
class FileStamp:
    """What the index knows of a Markdown file."""

    path: str
    scope: str
    hash: str
    mtime_ns: int
    size: int


def text_hash(text: str) -> str:
    """Stable hash of an indexed text (an entry's, a prose chunk's, an event's)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def vector_blob(vector: Sequence[float] | NDArray[Any]) -> bytes:
    """The stored form of a vector (see :func:`blob_vector`)."""
    return np.asarray(vector, dtype=_VEC_DTYPE).tobytes()


def blob_vector(blob: bytes) -> Vector:
    """A stored vector as a float32 array (of its own, like Chroma's)."""
    return np.frombuffer(blob, dtype=_VEC_DTYPE).copy()


def _entry(row: Sequence[Any]) -> Entry:
    """A doc and its kept vector from a ``_D_COLS, vec`` row; the vector is read-only."""
    blob = row[10]
    if blob is None:
        return _doc(row), None
    vec = blob_vector(blob)
    vec.flags.writeable = False
    return _doc(row), vec


_doc_fields = attrgetter(*(f.name for f in fields(Doc)))


def _doc_values(d: Doc) -> tuple[Any, ...]:
    """The ``_DOC_COLS`` row of a doc (what :func:`_doc` reads back)."""
    values: tuple[Any, ...] = _doc_fields(d)
    return values


def _doc(row: Sequence[Any]) -> Doc:
    """A :class:`Doc` from a ``_DOC_COLS`` row.

    Fills the instance dict directly: a frozen dataclass's ``__init__`` sets each
    field through ``object.__setattr__``, 2.5x slower, and a search builds ~80 docs.
    """
    d: Doc = object.__new__(Doc)
    d.__dict__.update(
        id=row[0],
        scope=row[1],
        path=row[2],
        line=int(row[3]),
        category=row[4],
        text=row[5],
        text_hash=row[6],
        created_at=float(row[7]),
        updated_at=float(row[8]),
        importance=float(row[9]),
    )
    return d


__all__ = [
    "Doc",
    "Entry",
    "FileStamp",
    "Previous",
    "Vector",
    "blob_vector",
    "text_hash",
    "vector_blob",
]

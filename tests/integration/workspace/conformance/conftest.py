"""Fixtures of the engine conformance suite.

Every test here talks to the engines only through
:mod:`langmem_ext.workspace.protocols` and runs once per engine set named in
``ENGINES``. An engine set is opened by
:func:`~langmem_ext.workspace.engines.engines_from_url` from the URL its
``<name>_engine_url`` fixture returns, on a fresh workspace folder per test.

Adding a second engine set is one entry in ``ENGINES`` and one fixture::

    ENGINES = ["embedded", "postgresql"]

    @pytest.fixture
    def postgresql_engine_url(tmp_path):
        server = ...  # start (or reach) a server; pytest.skip(reason) when none starts
        return server.url_of_a_fresh_database()

The engine's package must have registered its scheme
(:func:`~langmem_ext.workspace.engines.register_engine`) when imported; each
test must get empty storage (a fresh database, or a fresh schema).
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from langmem_ext.workspace.engines import Engines, engines_from_url
from langmem_ext.workspace.protocols import (
    DocumentStore,
    KeywordIndex,
    Ledger,
    VectorIndex,
    WorkspaceLock,
)

ENGINES = ["embedded", "postgresql"]
"""The engine sets every conformance test runs on (one ``<name>_engine_url`` fixture each)."""

VECTOR_ENGINES = [*ENGINES, "postgresql_chroma"]
"""The engine sets the vector index's tests run on: the PostgreSQL set with its vectors
on a Chroma server too (its other engines are the PostgreSQL set's, tested above)."""

MODEL = "conformance-embedder"
"""The embedder name the engines are opened with (vector partitions are per embedder)."""


@pytest.fixture
def embedded_engine_url() -> str | None:
    """The embedded engines: no URL (SQLite, files, FTS5, embedded Chroma, file lock)."""
    return None


@pytest.fixture
def postgresql_engine_url(pg_vector_url: str) -> str:
    """The PostgreSQL engines: a fresh database with pgvector on the session's server
    (``tests/_postgres.py``; skipped, saying why, when no server starts)."""
    return pg_vector_url


@pytest.fixture
def postgresql_chroma_engine_url(pg_vector_url: str) -> str:
    """The PostgreSQL engines with the vectors on a Chroma server (see
    ``postgresql_chroma_engine_options``)."""
    return pg_vector_url


@pytest.fixture
def postgresql_chroma_engine_options(chroma_server_url: str) -> dict[str, Any]:
    """The session's ``chroma run`` server (``tests/_chroma.py``), with a collection
    prefix of the test's own (empty storage)."""
    return {"chroma_url": chroma_server_url, "collection_prefix": f"t{uuid.uuid4().hex[:12]}"}


def url_of(request: pytest.FixtureRequest) -> str | None:
    """The URL of the engine set named by ``request.param`` (its ``<name>_engine_url``)."""
    url: str | None = request.getfixturevalue(f"{request.param}_engine_url")
    return url


@pytest.fixture(params=ENGINES)
def engine_url(request: pytest.FixtureRequest) -> str | None:
    """The URL of the engine set under test."""
    return url_of(request)


@pytest.fixture
def engine_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Options of :func:`~langmem_ext.workspace.engines.engines_from_url` the engine set
    under test needs (its ``<name>_engine_options`` fixture, when it has one)."""
    callspec = getattr(request.node, "callspec", None)
    name = callspec.params.get("engine_url") if callspec is not None else None
    try:
        options: dict[str, Any] = request.getfixturevalue(f"{name}_engine_options")
    except pytest.FixtureLookupError:
        return {}
    return options


@pytest.fixture
def workspace_root(tmp_path: Path) -> Path:
    """The workspace folder the engines are opened for."""
    return tmp_path / "ws"


@pytest.fixture
def open_engines(
    engine_url: str | None, engine_options: dict[str, Any], workspace_root: Path
) -> Iterator[Callable[..., Engines]]:
    """Opens the engine set under test on the test's storage (again, when called again:
    a reopen sees what an earlier open wrote), with options of
    :func:`~langmem_ext.workspace.engines.engines_from_url` (``lock_timeout=0.2``).
    Everything opened is closed after."""
    opened: list[Engines] = []

    def open_(**options: Any) -> Engines:
        engines = engines_from_url(
            engine_url, root=workspace_root, model_name=MODEL, **{**engine_options, **options}
        )
        opened.append(engines)
        return engines

    yield open_
    for engines in reversed(opened):
        with contextlib.suppress(Exception):
            engines.close()


@pytest.fixture
def engines(open_engines: Callable[..., Engines]) -> Engines:
    """The engine set under test, opened on empty storage."""
    return open_engines()


@pytest.fixture
def ledger(engines: Engines) -> Ledger:
    """The ledger under test."""
    return engines.ledger


@pytest.fixture
def documents(engines: Engines) -> DocumentStore:
    """The document store under test."""
    return engines.documents


@pytest.fixture
def keyword(engines: Engines) -> Iterator[KeywordIndex]:
    """The keyword index under test (opened; closed after)."""
    index = engines.open_keyword()
    yield index
    index.close()


@pytest.fixture
def vectors(engines: Engines) -> VectorIndex:
    """The vector index under test."""
    return engines.vectors


@pytest.fixture
def lock(engines: Engines) -> WorkspaceLock:
    """The workspace lock under test."""
    return engines.lock


def unit_vector(key: str, dim: int = 16) -> NDArray[np.float32]:
    """A deterministic unit vector derived from ``key`` (same text, same vector)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    raw = np.frombuffer((digest * (dim // len(digest) + 1))[:dim], dtype=np.uint8)
    v = raw.astype(np.float32) - 127.5
    return (v / np.linalg.norm(v)).astype(np.float32)

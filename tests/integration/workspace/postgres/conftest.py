"""Fixtures of the PostgreSQL workspace tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.keyword_index import PgKeywordIndex
from langmem_ext.workspace.sqlite.keyword_index import KeywordIndex


@pytest.fixture
def both(tmp_path: Path, pg_url: str) -> Iterator[tuple[KeywordIndex, PgKeywordIndex]]:
    """A SQLite keyword index and a PostgreSQL one, to be given the same writes."""
    db = PgConnections(pg_url)
    lite, pg = KeywordIndex(tmp_path / "index.db"), PgKeywordIndex(db)
    yield lite, pg
    lite.close()
    db.close()

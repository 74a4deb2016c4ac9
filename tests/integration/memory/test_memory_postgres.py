"""``Memory`` on a real PostgreSQL server: every write, read and search goes through
the PostgreSQL engines, and a second ``Memory`` on the same URL (another replica)
sees what the first one wrote."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from langmem_ext import Memory, Settings


def _settings(root: Path, url: str) -> Settings:
    return Settings(workspace=root, database_url=url)


@pytest.fixture
def replicas(tmp_path: Path, pg_vector_url: str) -> Iterator[tuple[Memory, Memory]]:
    a = Memory(settings=_settings(tmp_path / "a", pg_vector_url))
    b = Memory(settings=_settings(tmp_path / "b", pg_vector_url))
    yield a, b
    a.close()
    b.close()


def _local_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_memory_on_postgres_writes_reads_and_searches_across_replicas(
    tmp_path: Path, replicas: tuple[Memory, Memory]
) -> None:
    a, b = replicas
    tea = a.add("User likes green tea in the morning")
    beijing = a.add("用户下个月要去北京出差", category="fact")
    pending = a.save("User is allergic to peanuts", importance=0.9)
    confirmed = a.confirm(pending.id)
    assert getattr(confirmed, "text", None) == "User is allergic to peanuts"

    new_id = a.update(tea, "User likes oolong tea in the morning").id
    chain = a.history(new_id)
    assert [row["new_text"] for row in chain][-1] == "User likes oolong tea in the morning"
    assert {tea, new_id} <= {row["id"] for row in chain}

    gone = a.add("User owns a red bicycle")
    a.delete(gone)

    hits = [h.text for h in a.search("peanut allergy")]
    assert hits and hits[0] == "User is allergic to peanuts"
    assert a.search("北京出差")[0].id == beijing
    texts = {h.text for h in a.search("tea", k=10)}
    assert "User likes oolong tea in the morning" in texts
    assert "User owns a red bicycle" not in {h.text for h in a.search("bicycle", k=10)}

    a.upsert_facts({"name": "小明", "allergies": ["花生"]})
    profile = a.profile()
    assert profile.flat()["name"] == "小明"

    # The other replica sees the confirm, the update and the profile.
    assert b.search("peanut allergy")[0].text == "User is allergic to peanuts"
    assert "User likes oolong tea in the morning" in {h.text for h in b.search("tea", k=10)}
    assert b.profile().flat()["name"] == "小明"
    assert "User is allergic to peanuts" in b.long_term_text()

    # Nothing (Markdown, ledger, index, embedding cache) is written to the local folders.
    for root in (tmp_path / "a", tmp_path / "b"):
        assert _local_files(root) == set()

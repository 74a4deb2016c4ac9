"""Two ``langmem-ext serve`` processes with ``LANGMEM_DATABASE_URL`` on one real
PostgreSQL server: what one replica stores (REST and the agent) the other finds."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from _serve_helpers import served

from langmem_ext.client import MemoryClient

pytestmark = pytest.mark.slow


def _agent(url: str, text: str) -> dict[str, object]:
    body = {
        "input": {"messages": [text]},
        "config": {"configurable": {"thread_id": "t1", "user_id": "alice"}},
    }
    r = httpx.post(f"{url}/agent/invoke", json=body, timeout=120)
    assert r.status_code == 200, r.text
    out: dict[str, object] = r.json()["output"]
    return out


def test_two_replicas_on_one_database_share_memories_and_threads(
    tmp_path: Path, pg_vector_url: str
) -> None:
    env = {"LANGMEM_DATABASE_URL": pg_vector_url}
    with (
        served(tmp_path / "a", tmp_path / "a.log", **env) as a,
        served(tmp_path / "b", tmp_path / "b.log", **env) as b,
    ):
        with MemoryClient(a, user_id="cora") as mem_a:
            mem_a.add("Cora lives in Porto")
            pending = mem_a.save("Cora is allergic to penicillin")
            mem_a.confirm(pending.id)
        with MemoryClient(b, user_id="cora") as mem_b:
            assert mem_b.search("where does Cora live")[0].text == "Cora lives in Porto"
            assert mem_b.search("penicillin allergy")[0].text == "Cora is allergic to penicillin"

        out = _agent(a, "我喜欢吃拉面，请记住")
        assert len(out["pending_ids"]) == 1  # type: ignore[arg-type]
        _agent(b, "好的")  # the thread goes on on the other replica: it confirms there
        with MemoryClient(a, user_id="alice") as mem_a:
            assert [e.text for e in mem_a.list()] == ["我喜欢吃拉面"]
    for root in (tmp_path / "a", tmp_path / "b"):  # nothing is kept in the local folders
        assert {p for p in root.rglob("*") if p.is_file()} == set()

"""``langmem-ext serve`` is warm once ``/healthz`` answers: the embedding model is
loaded and the indexes opened before the first request, which would otherwise pay
for it (holding the workspace lock through a write)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from _serve_helpers import served

pytestmark = pytest.mark.slow


def test_the_embedder_is_loaded_before_the_server_reports_healthy(tmp_path: Path) -> None:
    with served(tmp_path / "ws", tmp_path / "serve.log") as url:
        health = httpx.get(f"{url}/healthz", timeout=30).json()
        assert health["status"] == "ok"
        assert health["embedder_loaded"] is True  # no request has embedded anything yet
        r = httpx.post(
            f"{url}/v1/search", json={"query": "tea"}, headers={"X-User-Id": "mo"}, timeout=60
        )
        assert r.status_code == 200 and r.json()["hits"] == []

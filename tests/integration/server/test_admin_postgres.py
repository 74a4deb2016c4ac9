"""``/admin`` on a PostgreSQL-backed memory: an edit in the admin and a hand edit of the
stored Markdown (``langmem-ext import``) go through the same documents and sync, so
each sees the other's change, with history."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from test_admin_http import MODEL, login, token

from langmem_ext import Memory, Settings
from langmem_ext.server.app import create_app
from langmem_ext.workspace.tree import read_tree, store_tree, stored_tree, write_tree


def test_admin_edits_and_file_edits_meet_on_postgresql(tmp_path: Path, pg_vector_url: str) -> None:
    settings = Settings(workspace=tmp_path / "local", database_url=pg_vector_url)
    settings.embeddings.provider = "fake"
    with Memory(settings=settings) as memory:
        app = create_app(memory, MODEL)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            login(client, "alice")
            csrf = token(client)
            client.post("/admin/memories/add", data={"csrf": csrf, "text": "Likes tea"})
            [entry] = memory.list(scope="user_alice")
            r = client.post(
                f"/admin/memories/{entry.id}/edit",
                data={"csrf": csrf, "text": "Likes oolong tea", "category": "fact"},
            )
            assert r.status_code == 200
            docs = memory.workspace.documents
            rel = "memory/scopes/user_alice/LONG_TERM.md"
            assert "Likes oolong tea" in docs.read("user_alice", rel)  # a stored row, no file
            assert not (tmp_path / "local" / rel).exists()

            # the stored Markdown edited by hand and imported: the admin shows the change
            out = tmp_path / "tree"
            write_tree(stored_tree(docs), out)
            path = out / rel
            path.write_text(path.read_text("utf-8").replace("oolong", "jasmine"), "utf-8")
            ws = memory.workspace
            assert [f.rel for f in store_tree(ws.documents, ws.lock, read_tree(out))] == [rel]
            memory.sync()
            [current] = memory.list(scope="user_alice")
            assert current.text == "Likes jasmine tea"
            page = client.get(f"/admin/memories/{current.id}").text
            assert "Likes jasmine tea" in page and "Likes oolong tea" in page  # with history

"""The ledger's versioned schema: an old workspace opens and is migrated once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from langmem_ext import Memory, SchemaVersionError, Settings
from langmem_ext.memory.sessions.manager import SessionManager
from langmem_ext.store.chroma import ChromaMemoryStore
from langmem_ext.workspace.sqlite.schema import (
    LEDGER_MIGRATIONS,
    LEDGER_VERSION,
    migrate,
    schema_version,
)


def _version(root: Path) -> int:
    with sqlite3.connect(root / "state.db") as conn:
        return schema_version(conn)


def _settings(root: Path) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    return s


def test_v0_workspace_opens_migrated_with_everything_kept(v0_workspace: Path) -> None:
    root = v0_workspace
    assert _version(root) == 0
    mem = Memory(settings=_settings(root))
    try:
        assert _version(root) == LEDGER_VERSION
        main = {e.text for e in mem.list(scope="main")}
        assert main == {"I live in Hamburg", "林伟对花生过敏"}
        assert {e.text for e in mem.list(scope="alice")} == {
            "Alice prefers tea",
            "My cat is called Mochi",
        }
        hamburg = next(e for e in mem.list(scope="main") if e.text == "I live in Hamburg")
        ops = [h["op"] for h in mem.history(hamburg.id, scope="main")]
        assert ops[-1] == "update"
        assert [p.text for p in mem.list_pending(scope="main")] == ["I like cherries"]
        assert mem.search("Hamburg", scope="main")[0].text == "I live in Hamburg"
        info = SessionManager(mem).session_info("main", "t1")
        assert info is not None and info.message_count >= 4
        store = ChromaMemoryStore(mem)
        item = store.get(("prefs", "u1"), "k2")
        assert item is not None and item.value == {"text": "dislikes coffee"}
    finally:
        mem.close()


def test_migration_runs_once(v0_workspace: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = v0_workspace
    with caplog.at_level("INFO", logger="langmem_ext.workspace.sqlite.schema"):
        Memory(settings=_settings(root)).close()
        first = [r for r in caplog.records if "migrated" in r.getMessage()]
        caplog.clear()
        Memory(settings=_settings(root)).close()
        second = [r for r in caplog.records if "migrated" in r.getMessage()]
    assert len(first) == len(LEDGER_MIGRATIONS) and second == []
    with sqlite3.connect(root / "state.db") as conn:
        assert migrate(conn) == []


def test_newer_schema_is_refused_with_a_typed_error(v0_workspace: Path) -> None:
    root = v0_workspace
    with sqlite3.connect(root / "state.db") as conn:
        conn.execute(f"PRAGMA user_version = {LEDGER_VERSION + 1}")
    with pytest.raises(SchemaVersionError, match="upgrade langmem-ext"):
        Memory(settings=_settings(root))


def test_fresh_workspace_is_created_at_the_newest_version(tmp_path: Path) -> None:
    mem = Memory(settings=_settings(tmp_path / "new"))
    mem.close()
    assert _version(tmp_path / "new") == LEDGER_VERSION


def test_a_v7_ledger_gains_the_pending_thread_and_keeps_its_pending_saves(tmp_path: Path) -> None:
    """Migration 9 adds ``pending.thread_id``; a save pending before it comes from no
    conversation (``None``), so no reply in a conversation can confirm it."""
    import time

    from langmem_ext.workspace.sqlite.schema import LEDGER_MIGRATIONS

    root = tmp_path / "ws"
    root.mkdir()
    now = time.time()
    with sqlite3.connect(root / "state.db", isolation_level=None) as conn:
        assert migrate(conn, LEDGER_MIGRATIONS[:7]) == [1, 2, 3, 4, 5, 6, 7]
        conn.execute(
            "INSERT INTO pending VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            ("p-00000000aa", "main", "I like cherries", "long_term", "fact", 1.0, "agent",
             now, now + 3600, "pending", "m-00000000aa", None, now, None),
        )  # fmt: skip
    mem = Memory(settings=_settings(root))
    try:
        assert _version(root) == LEDGER_VERSION >= 9
        [item] = mem.list_pending(scope="main")
        assert (item.id, item.text, item.thread_id) == ("p-00000000aa", "I like cherries", None)
        assert mem.list_pending(scope="main", thread_id="t1") == []
        new = mem.save("I like plums", scope="main", thread_id="t1")
        assert [p.id for p in mem.list_pending(scope="main", thread_id="t1")] == [new.id]
        assert mem.confirm(item.id, scope="main").text == "I like cherries"
    finally:
        mem.close()

"""The ledger's versioned schema: an old workspace opens and is migrated once."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from langmem_ext import Memory, SchemaVersionError, Settings
from langmem_ext.memory.session import SessionManager
from langmem_ext.store import ChromaMemoryStore
from langmem_ext.workspace.sqlite.schema import (
    LEDGER_MIGRATIONS,
    LEDGER_VERSION,
    migrate,
    schema_version,
)

V0 = Path(__file__).parent / "data" / "workspace_v0"
"""A workspace written by commit 50780a6, before schema versions (tests/data/make_workspace_v0.py)."""


def _copy_v0(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(V0, root)
    return root


def _version(root: Path) -> int:
    with sqlite3.connect(root / "state.db") as conn:
        return schema_version(conn)


def _settings(root: Path) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    return s


def test_v0_workspace_opens_migrated_with_everything_kept(tmp_path: Path) -> None:
    root = _copy_v0(tmp_path)
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


def test_migration_runs_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = _copy_v0(tmp_path)
    with caplog.at_level("INFO", logger="langmem_ext.workspace.sqlite.schema"):
        Memory(settings=_settings(root)).close()
        first = [r for r in caplog.records if "migrated" in r.getMessage()]
        caplog.clear()
        Memory(settings=_settings(root)).close()
        second = [r for r in caplog.records if "migrated" in r.getMessage()]
    assert len(first) == len(LEDGER_MIGRATIONS) and second == []
    with sqlite3.connect(root / "state.db") as conn:
        assert migrate(conn) == []


def test_newer_schema_is_refused_with_a_typed_error(tmp_path: Path) -> None:
    root = _copy_v0(tmp_path)
    with sqlite3.connect(root / "state.db") as conn:
        conn.execute(f"PRAGMA user_version = {LEDGER_VERSION + 1}")
    with pytest.raises(SchemaVersionError, match="upgrade langmem-ext"):
        Memory(settings=_settings(root))


def test_fresh_workspace_is_created_at_the_newest_version(tmp_path: Path) -> None:
    mem = Memory(settings=_settings(tmp_path / "new"))
    mem.close()
    assert _version(tmp_path / "new") == LEDGER_VERSION

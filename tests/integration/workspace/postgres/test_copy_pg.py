"""An embedded workspace moved into PostgreSQL reads the same on both engines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmem_ext import Memory
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.copy import copy_documents, copy_ledger
from langmem_ext.workspace.postgres.documents import PgDocuments
from langmem_ext.workspace.postgres.ledger import PgLedger
from langmem_ext.workspace.records import (
    CheckpointRow,
    EventFilter,
    ExtractedEntry,
    ItemText,
    ItemWrite,
    NewEventRow,
    NewTriple,
    ProfileChangeRow,
    SafetyLinkRow,
)
from langmem_ext.workspace.sqlite.ledger import Ledger
from langmem_ext.workspace.tree import stored_tree, write_tree


def _fill(led: Ledger, memory: Memory) -> None:
    """Rows in every table, the entries through the memory itself."""
    ids = [memory.add(t) for t in ("I like green tea", "My sister lives in Oslo")]
    updated = memory.update(ids[0], "I like black tea")
    memory.add("我对花生过敏")
    texts = ["I'm allergic to peanuts", "我对花生过敏", "the red bicycle"]
    with led.transaction():
        led.events.add([
            NewEventRow("main", "t1", "user", t, 10.0 + i, "s.jsonl", i + 1,
                        tuple(dict.fromkeys(index_tokens(t))))
            for i, t in enumerate(texts)
        ])  # fmt: skip
        led.store.write(
            [ItemWrite("prefs.a", "k1", json.dumps({"t": "green tea"}),
                       (ItemText("$", "v1", "green tea", "h1"),))],
            1000.0,
        )  # fmt: skip
    led.conversations.append("main", "t1", [("m1", "{}"), ("m2", "{}")], 5.0)
    led.sessions.record_turn("main", "t1", 6.0, 2)
    led.conversations.add_checkpoint(
        CheckpointRow("main", "t1", "checkpoint", "sum", 2, 2, False, 0, 9.0, 6.0)
    )
    led.profile.record([ProfileChangeRow("main", "name", None, '"Ann"', "app", 1.0)])
    led.triples.record(
        "main",
        [ExtractedEntry(ids[1], led.entries.get(ids[1]).text_hash,  # type: ignore[union-attr]
                        (NewTriple("sister", "sister", "lives_in", None, "oslo", "Oslo", False,
                                   None),))],
        extractor="rules", at=7.0,
    )  # fmt: skip
    led.safety.add([
        SafetyLinkRow(updated.id, "main", led.entries.get(updated.id).text_hash,  # type: ignore[union-attr]
                      "allergies", "user", "tea", False, 8.0)
    ])  # fmt: skip
    led.boosts.record(ids[1], 0.2, 9.0, "used")


def _reads(led: object) -> dict[str, object]:
    """What services read, on either engine."""
    lg: object = led
    entries = lg.entries  # type: ignore[attr-defined]
    states = entries.of_scope("main")
    where = EventFilter("main", since=0.0)
    return {
        "entries": states,
        "history": [entries.history(s.id, "main") for s in states],
        "closed": entries.closed_of_scope("main"),
        "pending": lg.pending.of_scope("main", "confirmed"),  # type: ignore[attr-defined]
        "events": lg.events.recent(where),  # type: ignore[attr-defined]
        "matching": [
            (m.event.id, round(m.bm25, 9))
            for m in lg.events.matching(where, query_tokens("peanuts 花生"), 10)  # type: ignore[attr-defined]
        ],
        "store": lg.store.page("", None, 1001.0, 10),  # type: ignore[attr-defined]
        "keyword": lg.store.keyword_search("", "tea", None, 1001.0, 5),  # type: ignore[attr-defined]
        "messages": lg.conversations.messages("main", "t1"),  # type: ignore[attr-defined]
        "checkpoint": lg.conversations.latest_checkpoint("main", "t1"),  # type: ignore[attr-defined]
        "session": lg.sessions.get("main", "t1"),  # type: ignore[attr-defined]
        "profile": lg.profile.latest("main"),  # type: ignore[attr-defined]
        "triples": sorted(lg.triples.current("main"), key=lambda t: t.id),  # type: ignore[attr-defined]
        "safety": lg.safety.of_scope("main"),  # type: ignore[attr-defined]
        "boost": [lg.boosts.times(s.id) for s in states],  # type: ignore[attr-defined]
    }


def test_a_workspace_moved_into_postgresql_reads_the_same(
    tmp_path: Path, fake_memory: Memory, pg_url: str
) -> None:
    memory = fake_memory
    root = memory.workspace.layout.root
    led = memory.workspace.ledger
    _fill(led, memory)
    target = PgLedger(pg_url)
    docs_db = PgConnections(pg_url)
    try:
        copied = copy_ledger(led, target)
        assert copied["entries"] == 4 and copied["session_events_fts"] == 3
        before = _reads(led)
        assert before["matching"] and before["triples"] and before["safety"]
        assert _reads(target) == before
        # ids keep counting after the copied ones
        target.boosts.record("x", 1.0, 10.0, None)
        assert (
            target.conversations.add_checkpoint(
                CheckpointRow("main", "t1", "final", "s", 2, 0, False, 0, 10.0, 6.0)
            )
            == 2
        )
        with pytest.raises(InvalidInputError, match="already holds"):
            copy_ledger(led, target)
        documents = PgDocuments(docs_db)
        assert copy_documents(root, documents) == {"long_term": 1}
        assert documents.read("main", "MEMORY.md") == (root / "MEMORY.md").read_text("utf-8")
        with pytest.raises(InvalidInputError):
            copy_documents(root, documents)
        documents.write("u1", "memory/scopes/u1/2026-01-02.md", "- 去了北京\n")
        out = tmp_path / "exported"
        assert write_tree(stored_tree(documents), out) == {"long_term": 1, "daily": 1}
        assert (out / "MEMORY.md").read_bytes() == (root / "MEMORY.md").read_bytes()
        assert (out / "memory/scopes/u1/2026-01-02.md").read_text("utf-8") == "- 去了北京\n"
        (out / "MEMORY.md").write_text("edited by hand\n", "utf-8")
        with pytest.raises(InvalidInputError, match="exists"):
            write_tree(stored_tree(documents), out)
    finally:
        target.close()
        docs_db.close()


def test_a_failed_migration_leaves_the_database_as_it_was(
    tmp_path: Path, fake_memory: Memory, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    from langmem_ext.core.errors import MemoryFileError, TargetNotEmptyError
    from langmem_ext.workspace.postgres import copy as copy_module
    from langmem_ext.workspace.postgres.checkpoints import PgCheckpoints

    memory = fake_memory
    root = memory.workspace.layout.root
    memory.add("I like green tea")
    saver = memory.workspace.engines.checkpoints.saver()
    saver.put(
        {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {}
    )
    db = PgConnections(pg_url)
    ledger = PgLedger(db, own=True)
    documents = PgDocuments(db)
    checkpoints = PgCheckpoints(pg_url, closed_with=db)
    try:

        def empty() -> None:
            assert ledger.entries.of_scope("main") == [] and documents.tree() == []
            assert list(checkpoints.saver().list(None)) == []

        # a file that is not UTF-8, met after the ledger rows were copied
        (root / "memory").mkdir(exist_ok=True)
        (root / "memory" / "2026-01-02.md").write_bytes(b"- caf\xe9\n")
        with pytest.raises(MemoryFileError, match=r"2026-01-02\.md"):
            copy_module.migrate_workspace(root, ledger, documents, checkpoints)
        empty()
        (root / "memory" / "2026-01-02.md").write_text("- café\n", "utf-8")

        # a failure while the checkpoints are copied, the last step
        def broken(source: object, target: object) -> dict[str, int]:
            raise RuntimeError("connection lost")

        with monkeypatch.context() as m:
            m.setattr(copy_module, "copy_checkpoints", broken)
            with pytest.raises(RuntimeError, match="connection lost"):
                copy_module.migrate_workspace(root, ledger, documents, checkpoints)
        empty()

        copied = copy_module.migrate_workspace(root, ledger, documents, checkpoints)
        assert copied["entries"] == 1 and copied["files.daily"] == 1
        assert copied["threads"] == 1 and copied["checkpoints"] == 1
        with pytest.raises(TargetNotEmptyError):
            copy_module.migrate_workspace(root, ledger, documents, checkpoints)
        assert copy_module.migrate_workspace(root, ledger, documents, checkpoints, force=True) == (
            copied
        )
        assert len(ledger.entries.of_scope("main")) == 1
    finally:
        ledger.close()

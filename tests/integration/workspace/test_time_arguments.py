"""Every time argument is a time: finite, in range, with a typed error that names
milliseconds; a workspace that already holds such a value opens repaired."""

from __future__ import annotations

import math
import sqlite3
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from langmem_ext import InvalidTimeError, Memory, Settings
from langmem_ext.memory._utils import to_epoch
from langmem_ext.workspace.sqlite.schema import LEDGER_MIGRATIONS, migrate


def _settings(root: Path) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    return s


@pytest.mark.parametrize(
    "bad",
    [
        time.time() * 1000,
        math.nan,
        math.inf,
        -math.inf,
        "yesterday",
        "",
        {"at": 1},
        True,
        1e20,
        -1e13,
    ],
)
def test_every_time_argument_refuses_what_is_no_time(tmp_path: Path, bad: object) -> None:
    with Memory(settings=_settings(tmp_path / "ws")) as mem:
        entry = mem.add("I live in Porto")
        calls = [
            lambda: mem.add("I like figs", created_at=bad),  # type: ignore[arg-type]
            lambda: mem.add_many(["I like plums"], created_at=bad),  # type: ignore[arg-type]
            lambda: mem.update(entry, "I live in Lisbon", at=bad),  # type: ignore[arg-type]
            lambda: mem.search("Porto", as_of=bad),  # type: ignore[arg-type]
            lambda: mem.maintain(now=bad),  # type: ignore[arg-type]
            lambda: mem.save("I like kiwis", created_at=bad),  # type: ignore[arg-type]
        ]
        for call in calls:
            with pytest.raises(InvalidTimeError):
                call()
        assert [e.text for e in mem.list()] == ["I live in Porto"]  # nothing partial
        assert mem.list_pending() == []
        assert mem.export()


def test_milliseconds_are_named_as_such() -> None:
    with pytest.raises(InvalidTimeError, match="milliseconds"):
        to_epoch(1_795_560_215_928, 0.0)


def test_what_is_a_time_is_taken() -> None:
    when = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    assert to_epoch(when, 0.0) == when.timestamp()
    assert to_epoch("2026-03-01T09:30:00+00:00", 0.0) == when.timestamp()
    assert to_epoch(when.timestamp(), 0.0) == when.timestamp()
    assert to_epoch(date(2026, 3, 1), 0.0) == datetime(2026, 3, 1, 12).timestamp()
    assert to_epoch(None, 5.0) == 5.0


def test_a_workspace_holding_milliseconds_opens_repaired(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    ten_days_ago = datetime.now(UTC) - timedelta(days=10)
    with Memory(settings=_settings(root)) as mem:
        mem.add("I live in Porto", created_at=ten_days_ago)
        mem.add("I like figs")
    db = root / "state.db"
    with sqlite3.connect(db) as conn:  # what an older version let through
        conn.execute("UPDATE entries SET created_at = created_at * 1000 WHERE rowid = 1")
        conn.execute("UPDATE entries SET last_access = 1e300")
        conn.execute("ALTER TABLE pending DROP COLUMN thread_id")  # a later migration's
        [repair] = [m for m in LEDGER_MIGRATIONS if m.description.startswith("times out of")]
        conn.execute(f"PRAGMA user_version = {repair.version - 1}")  # before the repair
    with Memory(settings=_settings(root)) as mem:
        entries = {e.text: e for e in mem.list()}
        assert abs(entries["I live in Porto"].created_at - ten_days_ago) < timedelta(seconds=1)
        assert mem.export() and mem.maintain() is not None
    with sqlite3.connect(db) as conn:
        assert (
            conn.execute("SELECT count(*) FROM entries WHERE last_access IS NOT NULL").fetchone()[0]
            == 0
        )
        assert migrate(conn) == []

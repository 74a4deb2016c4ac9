"""Crash safety and concurrent writers, with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from langmem_ext import Memory, Settings
from langmem_ext.workspace.markdown import parse_entries

CHILD_ENV = {**os.environ, "LANGMEM_EMBEDDINGS__PROVIDER": "fake", "PYTHONUNBUFFERED": "1"}


def _settings(ws: Path) -> Settings:
    s = Settings(workspace=ws)
    s.embeddings.provider = "fake"
    return s


def test_sigkill_while_confirming_loses_nothing_reported(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with Memory(settings=_settings(ws)) as mem:
        pending = [mem.save(f"fact {i}: 第{i}条记忆") for i in range(300)]
    child = textwrap.dedent(
        f"""
        from langmem_ext import Memory
        mem = Memory({str(ws)!r})
        for p in mem.list_pending():
            e = mem.confirm(p.id)
            print("CONFIRMED", p.id, e.id, flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", child], stdout=subprocess.PIPE, env=CHILD_ENV, text=True
    )
    reported: dict[str, str] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        _, pid, eid = line.split()
        reported[pid] = eid
        if len(reported) >= 40:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert len(reported) >= 40

    with Memory(settings=_settings(ws)) as mem:
        entries = {e.id: e for e in mem.list()}
        for pid, eid in reported.items():
            assert eid in entries, f"confirmed {pid} lost"
        ids = [e.id for e in parse_entries((ws / "MEMORY.md").read_text())]
        assert len(ids) == len(set(ids))  # nothing written twice
        # Everything left can still be confirmed, exactly once.
        for p in mem.list_pending():
            mem.confirm(p.id)
        assert len(mem.list()) == len(pending) == 300
        ids = [e.id for e in parse_entries((ws / "MEMORY.md").read_text())]
        assert len(ids) == len(set(ids)) == 300


def test_two_processes_writing_one_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    Memory(settings=_settings(ws)).close()
    child = textwrap.dedent(
        """
        import sys
        from langmem_ext import Memory
        mem = Memory(sys.argv[1])
        tag = sys.argv[2]
        for i in range(40):
            mem.add(f"writer {tag} memory {i}")
            if i % 10 == 0:
                mem.search(f"writer {tag}", k=3)
        print("DONE", flush=True)
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", child, str(ws), tag],
            env=CHILD_ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("A", "B")
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "DONE" in out
    entries = parse_entries((ws / "MEMORY.md").read_text())
    texts = sorted(e.text for e in entries)
    assert texts == sorted(f"writer {t} memory {i}" for t in "AB" for i in range(40))
    assert len({e.id for e in entries}) == 80
    with Memory(settings=_settings(ws)) as mem:
        assert len(mem.list()) == 80
        mem.sync()
        assert mem.stats()["vectors_waiting"] == 0
        for t in "AB":
            hits = mem.search(f"writer {t} memory 7", k=1, mode="vector")
            assert hits and hits[0].text == f"writer {t} memory 7"


def test_crash_between_markdown_and_ledger_is_repaired(tmp_path: Path) -> None:
    """A confirm killed after the Markdown write: the next open finishes it, once."""
    ws = tmp_path / "ws"
    with Memory(settings=_settings(ws)) as mem:
        p = mem.save("half-confirmed fact")
        # Simulate the crash: the bullet reached Markdown, the ledger never heard of it.
        (ws / "MEMORY.md").write_text(
            f"# Long-term memory\n\n## Facts\n- half-confirmed fact ^{p.entry_id}\n"
        )
    time.sleep(0.01)
    with Memory(settings=_settings(ws)) as mem:
        mem.sync()
        assert mem.list_pending() == []  # recognised as confirmed
        [e] = mem.list()
        assert e.id == p.entry_id and e.source == "agent"

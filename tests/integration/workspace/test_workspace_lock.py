"""WorkspaceLock: re-entrant per thread, exclusive across threads and processes, typed timeout."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from langmem_ext.core.errors import WorkspaceLockTimeout
from langmem_ext.workspace.files import WorkspaceLock

_HOLDER = """
import sys, time
from pathlib import Path
from langmem_ext.workspace.files import WorkspaceLock
with WorkspaceLock(Path(sys.argv[1])).hold():
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_reentrant_in_one_thread_and_exclusive_across_threads(tmp_path: Path) -> None:
    lock = WorkspaceLock(tmp_path / "ws" / ".lock", timeout=0.2)
    seen: list[bool | str] = []

    def other_thread() -> None:
        seen.append(_try(lock))
        try:
            with lock.hold():
                seen.append("held")
        except WorkspaceLockTimeout as e:
            seen.append(str(e))

    with lock.hold(), lock.hold():  # nested holds do not deadlock
        with lock.try_hold() as again:
            assert again
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    assert seen[0] is False
    assert str(seen[1]).startswith("Another thread held the workspace lock")
    assert _try(lock)
    assert (tmp_path / "ws" / ".lock").exists()  # kept on release: a writer ran here


def _try(lock: WorkspaceLock) -> bool:
    with lock.try_hold() as held:
        return held


def test_another_process_holding_it_times_out_with_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        lock = WorkspaceLock(path, timeout=0.2)
        assert not _try(lock)
        with (
            pytest.raises(WorkspaceLockTimeout, match="Another process held the workspace lock"),
            lock.hold(),
        ):
            pass
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=30)
    with lock.hold():  # free again once the other process let go
        assert _try(lock)

"""The workspace lock's contract, through
:class:`~langmem_ext.workspace.protocols.WorkspaceLock` only."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from _lock_helpers import held_elsewhere

from langmem_ext.core.errors import WorkspaceLockTimeout
from langmem_ext.workspace.engines import Engines
from langmem_ext.workspace.protocols import WorkspaceLock


def _count_overlap(locks: list[WorkspaceLock]) -> int:
    """Run 4 threads per lock through a held section; the most ever inside at once."""
    inside = 0
    most = 0
    guard = threading.Lock()

    def work(lock: WorkspaceLock) -> None:
        nonlocal inside, most
        for _ in range(5):
            with lock.hold():
                with guard:
                    inside += 1
                    most = max(most, inside)
                time.sleep(0.002)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=work, args=(lk,)) for lk in locks for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return most


def test_threads_take_turns(lock: WorkspaceLock) -> None:
    assert _count_overlap([lock]) == 1


def test_two_openings_of_one_workspace_exclude_each_other(
    open_engines: Callable[..., Engines],
) -> None:
    """Two engine sets on one workspace (as two processes would open it) serialise."""
    assert _count_overlap([open_engines().lock, open_engines().lock]) == 1


def test_the_lock_is_reentrant(lock: WorkspaceLock) -> None:
    with lock.hold():
        with lock.hold():
            pass
        with lock.try_hold() as held:
            assert held


def test_a_busy_lock_times_out_with_a_typed_error(open_engines: Callable[..., Engines]) -> None:
    lock = open_engines(lock_timeout=0.2).lock
    assert lock.timeout == pytest.approx(0.2)
    with held_elsewhere(lock.hold):
        start = time.monotonic()
        with pytest.raises(WorkspaceLockTimeout), lock.hold():
            pass
        assert 0.15 <= time.monotonic() - start < 5
    with lock.hold():  # free again once released
        pass


def test_a_busy_lock_times_out_across_openings(open_engines: Callable[..., Engines]) -> None:
    holder = open_engines().lock
    waiter = open_engines(lock_timeout=0.2).lock
    with held_elsewhere(holder.hold), pytest.raises(WorkspaceLockTimeout), waiter.hold():
        pass
    with waiter.hold():
        pass


def test_try_hold_does_not_wait(lock: WorkspaceLock) -> None:
    with lock.try_hold() as held:
        assert held
    with held_elsewhere(lock.hold):
        start = time.monotonic()
        with lock.try_hold() as held:
            assert not held
        assert time.monotonic() - start < 1


def _times_out(hold: Callable[[], AbstractContextManager[None]]) -> bool:
    try:
        with hold():
            return False
    except WorkspaceLockTimeout:
        return True


@pytest.mark.parametrize("across", [False, True], ids=["threads", "openings"])
def test_one_scopes_writes_take_turns_and_a_whole_workspace_hold_excludes_them(
    open_engines: Callable[..., Engines], across: bool
) -> None:
    first = open_engines(lock_timeout=0.2).lock
    second = open_engines(lock_timeout=0.2).lock if across else first
    with held_elsewhere(lambda: first.hold_scope("u1")):
        assert _times_out(lambda: second.hold_scope("u1"))  # the same scope waits
        assert _times_out(second.hold)  # the whole workspace waits for every scope
    with held_elsewhere(first.hold):
        assert _times_out(lambda: second.hold_scope("u1"))
        assert _times_out(lambda: second.hold_scope("u2"))  # and keeps them all out
    with second.hold_scope("u1"), second.hold_scope("u2"), second.hold():
        pass  # free again; nested holds are part of the outer one


def test_a_scope_hold_nested_in_a_whole_workspace_hold_is_part_of_it(lock: WorkspaceLock) -> None:
    with lock.hold(), lock.hold_scope("u1"), lock.try_hold() as held:
        assert held


@pytest.mark.parametrize("across", [False, True], ids=["threads", "openings"])
def test_try_hold_scope_takes_a_free_scope_and_never_waits_for_a_held_one(
    open_engines: Callable[..., Engines], across: bool
) -> None:
    first = open_engines(lock_timeout=5).lock
    second = open_engines(lock_timeout=5).lock if across else first
    with second.try_hold_scope("u1") as held:
        assert held
    with second.hold_scope("u1"), second.try_hold_scope("u1") as again:
        assert again  # nested in this thread's hold: part of it
    for hold in (lambda: first.hold_scope("u1"), first.hold):
        with held_elsewhere(hold):
            start = time.monotonic()
            with second.try_hold_scope("u1") as held:
                assert not held
            assert time.monotonic() - start < 2  # not the lock's 5 s
    with second.try_hold_scope("u1") as held:
        assert held

"""A lock held by another thread for a test's block (a writer busy elsewhere)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager


@contextmanager
def held_elsewhere(hold: Callable[[], AbstractContextManager[object]]) -> Iterator[threading.Event]:
    """Run ``hold()`` in another thread for the block; yield the event that lets it
    go early (it goes when the block ends at the latest, and the thread is joined)."""
    holding, release = threading.Event(), threading.Event()

    def run() -> None:
        with hold():
            holding.set()
            release.wait(30)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert holding.wait(10), "the other thread never got the lock"
        yield release
    finally:
        release.set()
        thread.join()

"""What the workspace locks of every engine share: ``hold`` and ``try_hold`` over
one engine-specific step, taking the lock within a timeout."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager

from langmem_ext.core.errors import WorkspaceLockTimeout


class HeldLock(ABC):
    """:class:`~langmem_ext.workspace.protocols.WorkspaceLock` over :meth:`_held`.

    Args:
        timeout: Seconds :meth:`hold` waits before :class:`WorkspaceLockTimeout`.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout

    @abstractmethod
    def _held(self, timeout: float, quiet: bool = False) -> AbstractContextManager[str | None]:
        """Hold the lock for the block if it frees within ``timeout`` seconds (0: free
        now). Yields ``None`` when held, else who holds it: ``"thread"`` or ``"process"``.
        ``quiet``: a wait that times out is expected (an engine that logs what the
        holder does leaves it out)."""

    @abstractmethod
    def _shown(self) -> str:
        """The lock as an error message names it."""

    def _held_scope(
        self, scope: str, timeout: float, quiet: bool = False
    ) -> AbstractContextManager[str | None]:
        """:meth:`_held` for the writes of one scope. This default holds the whole
        workspace (an engine whose storage takes one writer at a time gains nothing
        from a lock per scope)."""
        return self._held(timeout, quiet)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock for the body of a ``with`` block.

        Raises:
            WorkspaceLockTimeout: another thread or process held it for over
                ``timeout`` seconds.
        """
        with self._held(self.timeout) as holder:
            self._check(holder)
            yield

    @contextlib.contextmanager
    def hold_scope(self, scope: str) -> Iterator[None]:
        """Hold the lock of one scope's writes for the body of a ``with`` block: it
        excludes the writes of that scope and the holds of the whole workspace
        (:meth:`hold`); an engine may let other scopes' writes run beside it.

        Raises:
            WorkspaceLockTimeout: another thread or process held it for over
                ``timeout`` seconds.
        """
        with self._held_scope(scope, self.timeout) as holder:
            self._check(holder)
            yield

    def _check(self, holder: str | None) -> None:
        if holder is not None:
            msg = (
                f"Another {holder} held the workspace lock {self._shown()} for over "
                f"{self.timeout:.0f}s; retry, or raise Settings.lock_timeout_s."
            )
            raise WorkspaceLockTimeout(msg)

    @contextlib.contextmanager
    def try_hold(self, timeout: float = 0.0) -> Iterator[bool]:
        """Hold the whole workspace for a ``with`` block if it frees within ``timeout``
        seconds (0: only if it is free now); no error when it does not.

        Yields:
            Whether it is held.
        """
        with self._held(timeout, True) as holder:
            yield holder is None

    @contextlib.contextmanager
    def try_hold_scope(self, scope: str, timeout: float = 0.0) -> Iterator[bool]:
        """Hold the lock of one scope's writes for a ``with`` block if it frees within
        ``timeout`` seconds (0: only if it is free now): a reader that can do without
        the lock does not wait for a long write.

        Yields:
            Whether it is held.
        """
        with self._held_scope(scope, timeout, True) as holder:
            yield holder is None


__all__ = ["HeldLock"]

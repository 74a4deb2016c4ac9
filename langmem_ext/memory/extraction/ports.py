"""What extraction and the unconfirmed notes call on a memory service, named once.

The service calls these modules, so they name protocols of what they use instead of
importing the service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from langmem_ext.memory.types import PendingItem

R_co = TypeVar("R_co", covariant=True)


class SaveCall(Protocol[R_co]):
    """The signature of :meth:`Memory.save <langmem_ext.Memory.save>` and of
    :meth:`Memory.save_found <langmem_ext.Memory.save_found>` (their results differ)."""

    def __call__(
        self,
        text: str,
        *,
        scope: str | None = ...,
        category: str = ...,
        source: str = ...,
        created_at: float | None = ...,
        supersedes: str | None = ...,
        thread_id: str | None = ...,
    ) -> R_co: ...


class PendingSaves(Protocol):
    """A service that proposes pending saves."""

    @property
    def save(self) -> SaveCall[PendingItem]: ...


__all__ = ["PendingSaves", "SaveCall"]

"""Versions of a memory: the chain an update builds (``supersedes`` links)."""

from __future__ import annotations

from langmem_ext.workspace.records import EntryRepository

MAX_CHAIN = 1000
"""Longest chain followed (a guard against a cycle written by hand into the ledger)."""


def version_chain(entries: EntryRepository, entry_id: str) -> list[str]:
    """Every version of the memory ``entry_id`` belongs to, oldest first.

    Args:
        entries: The ledger's entries (live and deleted versions are followed).
        entry_id: Any version's id.

    Returns:
        The ids from the first version to the newest; ``[entry_id]`` alone when it
        has no other version (or is unknown).
    """
    older: list[str] = []
    seen = {entry_id}
    st = entries.get(entry_id, include_deleted=True)
    while st is not None and st.supersedes and st.supersedes not in seen and len(seen) < MAX_CHAIN:
        older.append(st.supersedes)
        seen.add(st.supersedes)
        st = entries.get(st.supersedes, include_deleted=True)
    newer: list[str] = []
    nxt = entries.successor(entry_id)
    while nxt is not None and nxt.id not in seen and len(seen) < MAX_CHAIN:
        newer.append(nxt.id)
        seen.add(nxt.id)
        nxt = entries.successor(nxt.id)
    return [*reversed(older), entry_id, *newer]


__all__ = ["version_chain"]

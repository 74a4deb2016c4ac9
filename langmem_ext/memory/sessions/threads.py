"""A conversation's thread state in a LangGraph checkpointer: the one session store.

The memory graph (:func:`~langmem_ext.graph.build_memory_graph`) keeps each
conversation as a LangGraph thread (``messages``, running ``summary``, mode, ...).
The Session API (:class:`~langmem_ext.memory.sessions.manager.SessionManager`) reads and
writes the same thread through :class:`ThreadStore`, so a turn written by either is
seen by the other. A write is what ``graph.update_state`` does, without the graph:
the latest checkpoint is copied, the given channels replaced and their versions
bumped, and the result put as a new checkpoint (metadata ``source="update"``, with
the writing ``scope``). Channels the write does not name keep their values.

By default both use the checkpointer the memory's storage engines supply, one per
:class:`~langmem_ext.Memory` (:func:`default_saver`; embedded: a
:class:`~langgraph.checkpoint.sqlite.SqliteSaver` on ``checkpoints.db`` in the
workspace); the server opens the async one (:func:`open_async_saver`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    CheckpointMetadata,
    copy_checkpoint,
    create_checkpoint,
    empty_checkpoint,
)

from langmem_ext.core.errors import InvalidScopeError
from langmem_ext.memory.scoping import scope_from_config
from langmem_ext.memory.service import Memory
from langmem_ext.workspace.sqlite.checkpoints import SqliteCheckpoints

_savers: weakref.WeakKeyDictionary[Memory, BaseCheckpointSaver[Any]] = weakref.WeakKeyDictionary()
_savers_lock = threading.Lock()


def sqlite_saver(path: str | Path) -> BaseCheckpointSaver[Any]:
    """``SqliteSaver`` on ``path`` in WAL mode with ``synchronous=NORMAL`` (sync use).

    A step's checkpoint survives a killed process as soon as it is written; only an
    OS crash or power loss can lose the last steps, because commits do not wait for
    the disk (with SQLite's default journal every step would be an fsynced commit).
    What the user was told was saved lives in the ledger and Markdown, which sync
    fully.

    Args:
        path: The database file (created private to the user).

    Returns:
        The checkpointer.
    """
    return SqliteCheckpoints(Path(path)).saver()


def default_saver(memory: Memory) -> BaseCheckpointSaver[Any]:
    """The checkpointer of ``memory``'s conversations, from its storage engines
    (embedded: a ``SqliteSaver`` on ``checkpoints.db`` in the workspace, WAL,
    ``synchronous=NORMAL``), created on first use, one per memory, and shared by
    the memory graph and the Session API."""
    with _savers_lock:
        saver = _savers.get(memory)
        if saver is None:
            saver = memory.workspace.engines.checkpoints.saver()
            _savers[memory] = saver
        return saver


def open_async_saver(memory: Memory) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
    """An async-capable checkpointer of ``memory``'s conversations from its storage
    engines, open for the body of an ``async with`` (embedded: ``AsyncSqliteSaver``
    on ``checkpoints.db``; ``InMemorySaver``, logged, without aiosqlite).

    Args:
        memory: The memory.

    Returns:
        The context manager yielding the checkpointer.
    """
    return memory.workspace.engines.checkpoints.open_async()


class ThreadConflict(Exception):
    """The thread got a new checkpoint since it was read (another writer came first)."""


@dataclass(frozen=True)
class ThreadState:
    """One thread's latest checkpoint, as read.

    Attributes:
        thread_id: The thread.
        checkpoint_id: Its latest checkpoint (``None``: the thread does not exist).
        values: Its channel values (``messages``, ``summary``, ...).
        owner: The scope its latest checkpoint was written for (resolved from the
            run's config like the graph does,
            :func:`~langmem_ext.memory.scoping.scope_from_config`), or ``None`` when
            the run named none.
        step: The step of its latest checkpoint.
        at: When its latest checkpoint was written (epoch seconds), or ``None``.
    """

    thread_id: str
    checkpoint_id: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    owner: str | None = None
    step: int = -1
    at: float | None = None

    @property
    def messages(self) -> list[BaseMessage]:
        """The thread's messages, oldest first."""
        return list(self.values.get("messages") or [])

    @property
    def summary(self) -> str | None:
        """The running summary, or ``None``."""
        summary = self.values.get("summary")
        return str(summary) if summary else None


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


class ThreadStore:
    """Read and write conversation threads of a LangGraph checkpointer.

    Args:
        saver: The checkpointer (the one the memory graph is compiled with).
    """

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver

    def read(self, thread_id: str) -> ThreadState:
        """The thread's latest checkpoint (an empty state when it has none)."""
        saved = self.saver.get_tuple(_config(thread_id))
        if saved is None:
            return ThreadState(thread_id)
        meta = saved.metadata or {}
        try:  # the run's config keys are in its checkpoints' metadata
            owner = scope_from_config({"configurable": meta}, "") or None
        except InvalidScopeError:
            owner = None
        return ThreadState(
            thread_id,
            saved.checkpoint["id"],
            dict(saved.checkpoint["channel_values"]),
            owner,
            int(meta.get("step", -1)),
            datetime.fromisoformat(saved.checkpoint["ts"]).timestamp(),
        )

    def write(self, state: ThreadState, values: Mapping[str, Any], *, scope: str) -> ThreadState:
        """Replace ``values`` in the thread (a new checkpoint after ``state``'s).

        Args:
            state: The thread as read; the write is refused when the thread got a
                newer checkpoint since.
            values: Channel values to set (whole values: ``messages`` is the full
                list, no reducer runs).
            scope: The scope writing (recorded in the checkpoint's metadata).

        Returns:
            The thread after the write.

        Raises:
            ThreadConflict: The thread's latest checkpoint is not ``state``'s.
        """
        saved = self.saver.get_tuple(_config(state.thread_id))
        if (saved.checkpoint["id"] if saved else None) != state.checkpoint_id:
            raise ThreadConflict(state.thread_id)
        base = copy_checkpoint(saved.checkpoint) if saved else empty_checkpoint()
        new_versions: dict[str, str | int | float] = {}
        for key, value in values.items():
            base["channel_values"][key] = value
            version = self.saver.get_next_version(base["channel_versions"].get(key), None)
            base["channel_versions"][key] = version
            new_versions[key] = version
        step = state.step + 1
        checkpoint = create_checkpoint(base, None, step)
        metadata = cast(
            CheckpointMetadata, {"source": "update", "step": step, "parents": {}, "scope": scope}
        )
        config = saved.config if saved else _config(state.thread_id)
        self.saver.put(config, checkpoint, metadata, new_versions)
        return ThreadState(
            state.thread_id,
            checkpoint["id"],
            dict(checkpoint["channel_values"]),
            scope,
            step,
            datetime.fromisoformat(checkpoint["ts"]).timestamp(),
        )


__all__ = [
    "ThreadConflict",
    "ThreadState",
    "ThreadStore",
    "default_saver",
    "open_async_saver",
    "sqlite_saver",
]

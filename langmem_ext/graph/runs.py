"""One turn at a time per conversation thread: the memory graph's entry points.

:func:`~langmem_ext.graph.build_memory_graph` returns a :class:`SerializedGraph`, a
``CompiledStateGraph`` whose ``stream`` / ``astream`` (and so ``invoke``,
``ainvoke``, ``batch``, ``stream_events``, LangServe's routes) run a thread's turns
one after the other. Without it, two requests on one thread both start from the
same checkpoint and the one that finishes last hides the other's turn.

What is guaranteed, for runs of one thread (``thread_id`` at the root namespace,
with a checkpointer):

* **In one process** runs wait for each other, first come first served: a sync
  ``invoke`` and the server's ``ainvoke`` queue on one lock per checkpointer and
  ``thread_id`` (in the server the thread id is ``<scope>/<thread>``, so the lock is
  per scope and thread). Runs of other threads never wait for it. Every turn is in
  the thread's history exactly once, in the order the runs got the lock.
* **Across replicas on one database** (engines with run locks, PostgreSQL) runs of
  one thread also wait for each other: each holds the database's lock of its
  thread id (``<scope>/<thread>`` in the server) from its start to its end, so a
  run never starts from a checkpoint another replica is about to replace. That lock
  covers the run's commit too: no other lock is taken for it.
* **Across processes** (or two checkpointer objects on one file) a run commits
  only on top of the checkpoint it started from: at its commit, with a short
  inter-process lock held (``.thread-commits.lock`` in the workspace), the
  thread's latest checkpoint is read and compared with the one the run extends.
  When another writer came first (another process, the Session API), nothing is
  written and the run starts again from the new latest checkpoint, up to
  :data:`RUN_ATTEMPTS` times, then :class:`~langmem_ext.ThreadConflictError`.
  A run commits once, at its end: its default durability is ``"exit"`` (one
  checkpoint per turn), so other processes never start from a half-done turn.
  Every turn is then in the thread's history exactly once.

What is not: an attempt that had to start again has already run its nodes — its
model and tool calls (a ``memory_save`` it made stays pending), its session-log
lines and boosts happened and are not undone — and a ``stream`` caller
receives the retry's chunks after the abandoned attempt's; ``invoke`` returns the
retry's result. With ``durability="async"`` / ``"sync"`` each step's checkpoint is
visible to other processes as it is written, so a run of another process may start
from the middle of this one: use those only where one process serves a thread.
Runs addressed at a ``checkpoint_id`` (time travel, forks) take the lock but not
the check: they branch off on purpose. A run nested in another graph (its own
namespace) and ``update_state`` take neither.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
    suppress,
)
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeAlias, cast

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.graph.state import CompiledStateGraph

from langmem_ext.core.errors import ThreadConflictError, WorkspaceLockTimeout
from langmem_ext.graph.thread_lock import ThreadLocks
from langmem_ext.workspace.files import WorkspaceLock
from langmem_ext.workspace.protocols import WorkspaceLock as CommitLock

logger = logging.getLogger(__name__)

RUN_ATTEMPTS = 8
"""How many times a run starts again on a thread other writers keep advancing."""

COMMIT_LOCK_FILE = ".thread-commits.lock"
"""The inter-process lock of thread commits, in the workspace folder."""

_LOCKS = ThreadLocks()  # one per process: every graph on one checkpointer shares it
_commit_locks: dict[Path, WorkspaceLock] = {}
_commit_locks_guard = threading.Lock()


def commit_lock(path: Path, *, timeout: float = 30.0) -> WorkspaceLock:
    """The inter-process lock of thread commits on ``path`` (one object per path).

    Args:
        path: The lock file.
        timeout: Seconds a commit waits for another process's commit.

    Returns:
        The process's lock object for ``path``.
    """
    with _commit_locks_guard:
        lock = _commit_locks.get(path)
        if lock is None:
            lock = _commit_locks[path] = WorkspaceLock(path, timeout=timeout)
        return lock


class RunLocks(Protocol):
    """Locks by name held across processes for a whole run (see :class:`SerializedGraph`)."""

    def hold(self, name: str) -> AbstractContextManager[None]:
        """Hold ``name``'s lock for the ``with`` block."""
        ...

    def ahold(self, name: str) -> AbstractAsyncContextManager[None]:
        """Hold ``name``'s lock for the ``async with`` block."""
        ...


class _HeadMoved(Exception):
    """The thread's latest checkpoint is not the one a run's commit extends."""


_Write: TypeAlias = tuple[Checkpoint, CheckpointMetadata, ChannelVersions]
"""What a saver's ``put`` / ``aput`` writes after the config: the checkpoint, its
metadata and the new channel versions (LangGraph passes them by position)."""


def _latest(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


class _HeadCheck:
    """The commit step of one run: the thread must still end where the run began.

    Its ``put`` / ``aput`` replace the saver's own on a shallow copy of it (the copy
    shares the connection and storage, as LangGraph's ``with_allowlist`` copies do).
    """

    def __init__(
        self, saver: BaseCheckpointSaver[Any], thread_id: str, lock: CommitLock | None
    ) -> None:
        self.saver = saver
        self.thread_id = thread_id
        self.lock = lock

    def checked(self) -> BaseCheckpointSaver[Any]:
        clone = copy.copy(self.saver)
        vars(clone).update(put=self.put, aput=self.aput)
        return clone

    def _ours(self, config: RunnableConfig) -> bool:
        conf = config.get("configurable") or {}
        return not conf.get("checkpoint_ns") and str(conf.get("thread_id")) == self.thread_id

    def _verify(self, config: RunnableConfig, latest: CheckpointTuple | None) -> None:
        parent = (config.get("configurable") or {}).get("checkpoint_id")
        found = latest.checkpoint["id"] if latest is not None else None
        if found != parent:
            raise _HeadMoved(f"thread {self.thread_id!r} is at {found}, the run extends {parent}")

    def put(self, config: RunnableConfig, *write: *_Write) -> RunnableConfig:
        if not self._ours(config):
            return self.saver.put(config, *write)
        with self.lock.hold() if self.lock is not None else _nothing():
            self._verify(config, self.saver.get_tuple(_latest(self.thread_id)))
            return self.saver.put(config, *write)

    async def aput(self, config: RunnableConfig, *write: *_Write) -> RunnableConfig:
        if not self._ours(config):
            return await self.saver.aput(config, *write)
        async with _ahold(self.lock):
            self._verify(config, await self.saver.aget_tuple(_latest(self.thread_id)))
            return await self.saver.aput(config, *write)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


@asynccontextmanager
async def _ahold(lock: CommitLock | None) -> AsyncIterator[None]:
    """Hold ``lock`` from a coroutine: tried without blocking, the loop runs between tries."""
    if lock is None:
        yield
        return
    deadline = time.monotonic() + lock.timeout
    while True:
        with lock.try_hold() as held:
            if held:
                yield
                return
        if time.monotonic() > deadline:
            msg = (
                f"Another process held the thread-commit lock {getattr(lock, 'path', '')} for over "
                f"{lock.timeout:.0f}s; retry, or raise Settings.lock_timeout_s."
            )
            raise WorkspaceLockTimeout(msg)
        await asyncio.sleep(0.005)


@dataclass(frozen=True)
class _Run:
    """How one root run of a thread is serialised."""

    key: tuple[int, str]
    check: _HeadCheck | None  # None: addressed at a checkpoint_id, committed as asked
    kwargs: dict[str, Any]

    def config(self, config: RunnableConfig | None) -> RunnableConfig | None:
        """The attempt's config: the checked saver lent to the run."""
        if self.check is None:
            return config
        base = RunnableConfig(**(config or {}))
        base["configurable"] = {
            **(base.get("configurable") or {}),
            CONFIG_KEY_CHECKPOINTER: self.check.checked(),
        }
        return base

    def again(self, attempt: int, moved: _HeadMoved) -> None:
        """Log a retry, or raise when the attempts are used up."""
        thread = self.key[1]
        if attempt >= RUN_ATTEMPTS:
            raise ThreadConflictError(
                f"Thread {thread!r} got newer checkpoints from another writer during "
                f"each of {attempt} attempts of this run; nothing of it was committed. "
                "Send the message again."
            ) from moved
        logger.info("thread %r advanced during a run (%s): starting again", thread, moved)


class SerializedGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled ``StateGraph`` whose runs of one conversation thread never overlap.

    ``stream`` and ``astream`` — which ``invoke``, ``ainvoke``, ``batch`` and
    ``stream_events`` run through — hold the thread's lock for the run and commit it
    only on top of the checkpoint it started from (see :mod:`langmem_ext.graph.runs`
    for what is guaranteed). Everything else is LangGraph's ``CompiledStateGraph``:
    ``copy`` / ``with_config`` keep the class, so ``langgraph dev`` and LangServe
    serve it as they would the plain graph.

    Args:
        commit_lock: The inter-process lock held while a run's commit is checked
            (:func:`commit_lock`); ``None``: the check runs without it (one process).
        run_locks: Locks by thread id that every process sharing the checkpoints
            holds for a whole run (the engines' ``run_locks``); ``None``: runs of
            other processes are only checked at their commit.
        **kwargs: What ``CompiledStateGraph`` takes.
    """

    def __init__(
        self,
        *,
        commit_lock: CommitLock | None = None,
        run_locks: RunLocks | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.commit_lock = commit_lock
        self.run_locks = run_locks

    @classmethod
    def of(
        cls,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        commit_lock: CommitLock | None,
        run_locks: RunLocks | None = None,
    ) -> SerializedGraph:
        """``graph`` (as ``StateGraph.compile`` returned it) with serialised runs.

        Args:
            graph: The compiled graph; it is not changed.
            commit_lock: See the class.
            run_locks: See the class.

        Returns:
            A graph with the same nodes, channels, checkpointer and store.
        """
        serial = cls.__new__(cls)
        vars(serial).update(vars(graph))  # what ``copy`` hands to ``__init__``, kept whole
        serial.commit_lock = commit_lock
        serial.run_locks = run_locks
        return serial

    def _across(self, run: _Run) -> AbstractContextManager[None]:
        """The run's lock across processes (nothing without run locks)."""
        return self.run_locks.hold(run.key[1]) if self.run_locks is not None else nullcontext()

    def _aacross(self, run: _Run) -> AbstractAsyncContextManager[None]:
        """:meth:`_across` for a coroutine."""
        return self.run_locks.ahold(run.key[1]) if self.run_locks is not None else nullcontext()

    def _run(self, config: RunnableConfig | None, kwargs: dict[str, Any]) -> _Run | None:
        """How this run is serialised; ``None``: it is not a root run of a thread."""
        if self.checkpointer is False:
            return None
        conf = merge_configs(self.config, config).get("configurable") or {}
        saver = conf.get(CONFIG_KEY_CHECKPOINTER, self.checkpointer)
        thread = conf.get("thread_id")
        if conf.get("checkpoint_ns") or thread is None:
            return None
        if not isinstance(saver, BaseCheckpointSaver):
            return None
        run_kwargs = dict(kwargs)
        if run_kwargs.get("durability") is None and "checkpoint_during" not in run_kwargs:
            run_kwargs["durability"] = "exit"  # one commit per run (see the module)
        addressed = conf.get("checkpoint_id") is not None
        check = None if addressed else _HeadCheck(saver, str(thread), self.commit_lock)
        return _Run((id(saver), str(thread)), check, run_kwargs)

    def stream(  # type: ignore[override]
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """LangGraph's ``stream``, one run of a thread at a time (see the class)."""
        run = self._run(config, kwargs)
        if run is None:
            yield from super().stream(input, config, **kwargs)
            return
        with _LOCKS.hold(run.key, repr(run.key[1])), self._across(run):
            for attempt in range(1, RUN_ATTEMPTS + 1):
                chunks = cast(
                    Generator[Any, None, None],
                    super().stream(input, run.config(config), **run.kwargs),
                )
                try:
                    for chunk in chunks:
                        try:
                            yield chunk
                        except GeneratorExit:  # the caller stopped reading: no retry
                            with suppress(_HeadMoved):
                                chunks.close()
                            raise
                    return
                except _HeadMoved as moved:  # from the run, never from our caller
                    run.again(attempt, moved)

    async def astream(  # type: ignore[override]
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """LangGraph's ``astream``, one run of a thread at a time (see the class)."""
        run = self._run(config, kwargs)
        if run is None:
            async for chunk in super().astream(input, config, **kwargs):
                yield chunk
            return
        async with _LOCKS.ahold(run.key), self._aacross(run):
            for attempt in range(1, RUN_ATTEMPTS + 1):
                chunks = cast(
                    AsyncGenerator[Any, None],
                    super().astream(input, run.config(config), **run.kwargs),
                )
                try:
                    async for chunk in chunks:
                        try:
                            yield chunk
                        except GeneratorExit:
                            with suppress(_HeadMoved):
                                await chunks.aclose()
                            raise
                    return
                except _HeadMoved as moved:
                    run.again(attempt, moved)


__all__ = ["COMMIT_LOCK_FILE", "RUN_ATTEMPTS", "RunLocks", "SerializedGraph", "commit_lock"]

"""Turn bookkeeping off the answer path: one ordered background writer per memory.

After the answer, a turn still has writes to make that the reply does not wait
for: its user / assistant messages go to the session hot log (a transcript line
fsynced, a ledger row) and the recalled memories the answer used are BOOSTed
(a durable ledger write). :func:`build_memory_graph` hands them to a
:class:`TurnWriter`, one worker thread per :class:`~langmem_ext.Memory`, which runs
them in submission order.

Guarantees:

- order: a memory's jobs run one at a time, in the order they were submitted;
- read-your-writes for the next turn: ``preflight_recall`` waits for the pending
  jobs of its scope before it searches, so a turn's recall always sees the previous
  turns' log events and boosts (in the same process);
- nothing is dropped on a clean shutdown: :meth:`Memory.close
  <langmem_ext.Memory.close>` and interpreter exit wait for the queue;
- a failing job is logged and skipped; it never reaches the conversation.

A process killed between the reply and the job loses that turn's log lines and
boosts (the conversation itself is in the checkpoint). Code that reads the hot log
or importances right after ``invoke`` from elsewhere (tests, an admin view) calls
:func:`flush_turn_writes` first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langmem_ext.memory.background import TurnWriter

if TYPE_CHECKING:
    from langmem_ext.memory import Memory


def turn_writer(memory: Memory) -> TurnWriter:
    """The background writer of ``memory`` (:attr:`Memory.background <langmem_ext.Memory.background>`).

    It is drained when the memory closes and when the interpreter exits.
    """
    return memory.background


def flush_turn_writes(
    memory: Memory, *, scope: str | None = None, timeout: float | None = None
) -> bool:
    """Wait until the background writes of ``memory`` (one scope, or all) are done.

    Returns:
        ``False`` when ``timeout`` seconds passed first.
    """
    return memory.background.wait(scope, timeout)


__all__ = ["TurnWriter", "flush_turn_writes", "turn_writer"]

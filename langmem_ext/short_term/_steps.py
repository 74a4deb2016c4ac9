"""Run a step generator with sync or async calls: one body for ``x`` and ``ax``.

A routine that calls a model (or anything else) in a loop is written once, as a
generator without I/O: it *yields* each request and *receives* the answer (or has
the call's exception thrown in at the ``yield``, where it may catch it), and
*returns* its result. :func:`run_steps` answers with a plain call,
:func:`arun_steps` with an awaited one; nothing else differs between the sync and
the async version.

Example:
    >>> def double_all(xs):
    ...     out = []
    ...     for x in xs:
    ...         out.append((yield x))
    ...     return out
    >>> run_steps(double_all([1, 2]), lambda x: 2 * x)
    [2, 4]
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterator
from typing import Any, Generic, TypeVar

Request = TypeVar("Request")
Reply = TypeVar("Reply")
Result = TypeVar("Result")


class _Run(Generic[Request, Reply, Result]):
    """One pass through a step generator; the drivers only make the calls."""

    def __init__(self, steps: Generator[Request, Reply, Result]) -> None:
        self._steps = steps
        self._resume: Callable[[Any], Request] = steps.send
        self._value: Any = None

    def requests(self) -> Iterator[Request]:
        """The generator's requests, each after the previous one was answered;
        :attr:`result` is set when it returns."""
        while True:
            try:
                request = self._resume(self._value)
            except StopIteration as done:
                self.result: Result = done.value
                return
            yield request

    def answer(self, value: Reply) -> None:
        self._resume, self._value = self._steps.send, value

    def fail(self, error: Exception) -> None:
        self._resume, self._value = self._steps.throw, error


def run_steps(steps: Generator[Request, Reply, Result], call: Callable[[Request], Reply]) -> Result:
    """Run ``steps`` to its return value, answering each request with ``call``.

    An exception of ``call`` is thrown into ``steps`` at its ``yield``.
    """
    run = _Run(steps)
    for request in run.requests():
        try:
            run.answer(call(request))
        except Exception as error:
            run.fail(error)
    return run.result


async def arun_steps(
    steps: Generator[Request, Reply, Result], call: Callable[[Request], Awaitable[Reply]]
) -> Result:
    """Async :func:`run_steps`: each request is answered with ``await call(request)``."""
    run = _Run(steps)
    for request in run.requests():
        try:
            run.answer(await call(request))
        except Exception as error:
            run.fail(error)
    return run.result

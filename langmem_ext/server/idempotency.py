"""``Idempotency-Key`` on the ``/v1`` writes: a request sent again does nothing twice.

A client that lost the connection of a write cannot tell whether it ran. Sent with
an ``Idempotency-Key`` header (any string of 1 to 255 letters, digits and
``-_.:~+/=``; a UUID is the usual choice), the write is safe to send again with
the same key:

* the first request with a key runs, and its status and JSON body are stored under
  the key, the caller and the scope (another caller's or another scope's key is
  another key);
* a request with a key already stored and the same method, path, query and body
  does nothing: the stored answer is sent again, with ``Idempotent-Replayed: true``;
* the same key with another request is refused (``422``,
  :class:`~langmem_ext.core.errors.IdempotencyKeyReusedError`), as is a malformed
  key (``422``, :class:`~langmem_ext.core.errors.InvalidIdempotencyKeyError`);
* a request whose key is in use by a request still running (on this process or
  another replica) waits for it, then answers what it stored: the write holds the
  scope's write lock from the look-up of the key to the commit of its answer. It waits
  at most ``lock_timeout_s`` (then ``503``, and nothing ran: send it again);
* a request that failed (any error status) stores nothing: sent again, it runs again.

Keys are kept ``server.idempotency_key_hours`` (24 h by default); the daily jobs
delete older ones (:class:`~langmem_ext.memory.lifecycle.jobs.DailyJobs`).

What is guaranteed depends on the engine. On PostgreSQL the write and its key's
row are one transaction (:meth:`Workspace.one_commit
<langmem_ext.workspace.store.Workspace.one_commit>`): a replica killed mid-write
leaves both or neither, so a request sent again after any failure runs exactly
once. The key's row is written last and its primary key admits one commit per key:
a request that finds the key taken when it stores its answer (a first request's
commit that landed after the look-up, its process killed while the commit was on
the way) rolls its own write back and answers the stored response. The embedded engine's write goes file, ledger, index and cannot join a
transaction: its key's row commits right after the write, under the same lock, so
repeated and concurrent requests run once, except when the process dies between
the write and the key's commit (a request sent again after that runs again).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, TypeVar

from fastapi import Header, Request, Response
from fastapi.encoders import jsonable_encoder

from langmem_ext.core.errors import IdempotencyKeyReusedError, InvalidIdempotencyKeyError
from langmem_ext.server.callers import IDEMPOTENCY_HEADER
from langmem_ext.workspace.records import IdempotencyRow

if TYPE_CHECKING:
    from langmem_ext.memory import Memory
    from langmem_ext.server.callers import Caller

REPLAYED_HEADER = "Idempotent-Replayed"
"""The response header of an answer sent again from the store (``true``)."""
MAX_KEY_CHARS = 255
_KEY = re.compile(r"[A-Za-z0-9\-_.:~+/=]+")

T = TypeVar("T")


@dataclass(frozen=True)
class Idempotency:
    """The key of one request and what identifies the request.

    Attributes:
        key: The header's value.
        fingerprint: A hash of the method, the path, the query and the body (JSON
            compared by value: the order of keys and the spacing do not count).
    """

    key: str
    fingerprint: str


def check_key(raw: str) -> str:
    """``raw`` when it is a valid idempotency key.

    Raises:
        InvalidIdempotencyKeyError: Empty, longer than 255 characters, or with a
            character other than letters, digits and ``-_.:~+/=``.
    """
    if not raw:
        raise InvalidIdempotencyKeyError(f"The {IDEMPOTENCY_HEADER} header is empty.")
    if len(raw) > MAX_KEY_CHARS:
        raise InvalidIdempotencyKeyError(
            f"The {IDEMPOTENCY_HEADER} header has {len(raw)} characters; at most "
            f"{MAX_KEY_CHARS} are accepted (a UUID is enough)."
        )
    if not _KEY.fullmatch(raw):
        raise InvalidIdempotencyKeyError(
            f"The {IDEMPOTENCY_HEADER} header may hold only ASCII letters, digits and "
            "'-_.:~+/=' (a UUID is the usual choice)."
        )
    return raw


def fingerprint(method: str, path: str, query: str, body: bytes) -> str:
    """A hash identifying a request: its method, path, query (order kept) and body
    (a JSON body by value)."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"))
        shown = canonical.encode()
    except ValueError:
        shown = body
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode(), query.encode(), shown):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


async def request_idempotency(
    request: Request,
    key: Annotated[
        str | None,
        Header(
            alias=IDEMPOTENCY_HEADER,
            description="Makes the write safe to send again: a second request with "
            "the same key and the same request does nothing and gets the first answer.",
        ),
    ] = None,
) -> Idempotency | None:
    """The request's idempotency key (a FastAPI dependency); ``None`` without one.

    Raises:
        InvalidIdempotencyKeyError: A malformed key.
    """
    if key is None:
        return None
    body = await request.body()
    return Idempotency(
        check_key(key),
        fingerprint(request.method, request.url.path, request.url.query, body),
    )


def answer_once(
    memory: Memory,
    idem: Idempotency | None,
    who: Caller,
    status: int,
    run: Callable[[], T],
) -> T | Response:
    """Run a write once per idempotency key (see the module docstring).

    Must be called in the thread that runs the route (its transaction is the
    thread's).

    Args:
        memory: The app's memory.
        idem: The request's key, or ``None`` (``run`` is called as it is).
        who: The caller: the key is the caller's own, in its scope.
        status: The route's success status.
        run: The write; its result is the answer's body.

    Returns:
        ``run``'s result without a key; with one, the answer as sent (the stored
        one when the key was used before).

    Raises:
        IdempotencyKeyReusedError: The key came with another request before.
    """
    if idem is None:
        return run()
    ws = memory.workspace
    keys = ws.ledger.idempotency
    ws.keyword  # noqa: B018 - opened (its tables made) outside the write's transaction
    try:
        with ws.lock.hold_scope(who.scope), ws.one_commit():
            stored = keys.get(who.scope, who.owner, idem.key)
            if stored is not None:
                return _replay(stored, idem)
            body = json.dumps(jsonable_encoder(run()), separators=(",", ":"))
            row = IdempotencyRow(
                who.scope, who.owner, idem.key, idem.fingerprint, status, body, time.time()
            )
            if not keys.put(row):
                raise _KeyTaken
    except _KeyTaken:
        # another request's commit of the key landed after the look-up (its process
        # died holding the lock, its commit still on the way): this write rolled back
        stored = keys.get(who.scope, who.owner, idem.key)
        if stored is None:  # pragma: no cover - the row that was in the way is committed
            raise
        return _replay(stored, idem)
    return _response(status, body, replayed=False)


class _KeyTaken(Exception):
    """The key's row was committed by another request during this one."""


def _replay(stored: IdempotencyRow, idem: Idempotency) -> Response:
    if stored.fingerprint != idem.fingerprint:
        raise IdempotencyKeyReusedError(
            f"The {IDEMPOTENCY_HEADER} {idem.key!r} was sent with another request "
            "(method, path or body) before; nothing was done. Use a new key for a new "
            "request."
        )
    return _response(stored.status, stored.body, replayed=True)


def _response(status: int, body: str, *, replayed: bool) -> Response:
    headers = {REPLAYED_HEADER: "true"} if replayed else {}
    return Response(body, status_code=status, media_type="application/json", headers=headers)


__all__ = [
    "IDEMPOTENCY_HEADER",
    "REPLAYED_HEADER",
    "Idempotency",
    "answer_once",
    "check_key",
    "fingerprint",
    "request_idempotency",
]

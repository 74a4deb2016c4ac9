"""Typed errors of ``langmem_ext``.

Every error the package raises on bad input or an unavailable backend is a
subclass of :class:`LangmemError`, so callers can catch one type. The tree::

    LangmemError
    ├── InvalidInputError (also ValueError)
    │   ├── EmptyTextError
    │   ├── TextTooLongError
    │   ├── InvalidScopeError
    │   ├── InvalidCategoryError
    │   ├── NoiseTextError          (greetings, refusals, ... proposed as memories)
    │   ├── InvalidMessagesError    (not a conversation LangChain can read)
    │   ├── InvalidMessageListError (a list a strict chat provider would refuse)
    │   ├── InvalidPathError        (``..``, absolute, symlink out, other scope)
    │   ├── InvalidTimeError        (not finite, out of range, milliseconds)
    │   ├── LineBreakError          (a line break inside a one-line value)
    │   ├── TargetNotEmptyError     (a migration's target database already holds data)
    │   ├── InvalidIdempotencyKeyError (a malformed ``Idempotency-Key`` header)
    │   └── IdempotencyKeyReusedError  (a key sent again with another request)
    ├── NotFoundError (also LookupError)
    │   ├── PendingNotFoundError    (unknown id, or an id of another scope)
    │   └── EntryNotFoundError
    ├── EntrySupersededError        (an old version was named where the current one is needed)
    ├── PendingStateError
    │   ├── PendingExpiredError
    │   └── PendingAlreadyResolvedError
    ├── MemoryFileError             (a memory file is not UTF-8 or cannot be read)
    ├── WorkspaceLockTimeout
    ├── ThreadConflictError         (a conversation thread kept changing under a run)
    ├── SchemaVersionError          (the workspace was written by a newer version)
    ├── EmbeddingError
    ├── IndexUnavailableError       (Chroma server down, index unusable)
    ├── EngineUnavailableError      (no storage engine for the database URL)
    ├── MigrationError              (a copy did not read back whole; nothing was kept)
    ├── ModelUnavailableError       (no chat model can be reached)
    ├── InvalidReviewError          (a reviewer model's answer is not one decision)
    └── ServiceError                (a memory server refused a request or is unreachable)

Messages say what to do next. Nothing here shadows Python's built-in
``MemoryError``.
"""

from __future__ import annotations


class LangmemError(Exception):
    """Base class of every error raised by ``langmem_ext``."""


class InvalidInputError(LangmemError, ValueError):
    """The caller passed a value that cannot be used."""


class EmptyTextError(InvalidInputError):
    """A memory text or query is empty or only whitespace."""


class TextTooLongError(InvalidInputError):
    """A memory text is longer than ``settings.max_text_chars``."""


class InvalidScopeError(InvalidInputError):
    """A scope name is not a safe identifier."""


class InvalidCategoryError(InvalidInputError):
    """A category is not one of system, core, fact, episode."""


class NoiseTextError(InvalidInputError):
    """A proposed memory is noise (a greeting, a refusal, a question about memory)."""


class InvalidMessagesError(InvalidInputError):
    """Messages are not in a form LangChain reads (``convert_to_messages``): message
    objects, ``(role, text)`` tuples, ``{"role", "content"}`` dicts or strings."""


class InvalidPathError(InvalidInputError):
    """A path escapes the workspace or the caller's scope, or does not exist."""


class InvalidTimeError(InvalidInputError):
    """A time argument is not a time, not finite, or out of range (e.g. milliseconds
    where epoch seconds are expected)."""


class InvalidMessageListError(InvalidInputError):
    """A message list would be rejected by a strict chat provider.

    Raised for tool calls without their results, tool results without a call,
    duplicated tool results or message ids, ``RemoveMessage`` markers in a list to
    send, system messages after the conversation started, and non-messages.
    """


class LineBreakError(InvalidInputError):
    """A value that is written inside one line (a profile field, a list item) holds
    a line break of some kind (``\\n``, ``\\u2028``, ``\\x85`` ...)."""


class TargetNotEmptyError(InvalidInputError):
    """The database a workspace is moved into already holds memory data.

    Nothing was copied: move into an empty database, or replace what it holds
    (``langmem-ext migrate --force``).
    """


class InvalidIdempotencyKeyError(InvalidInputError):
    """An ``Idempotency-Key`` header that is empty, too long or holds characters
    other than letters, digits and ``-_.:~+/=``."""


class IdempotencyKeyReusedError(InvalidInputError):
    """An idempotency key sent again with another request (method, path, query or
    body) than the one it first came with: nothing was done. Use a new key for a
    new request."""


class NotFoundError(LangmemError, LookupError):
    """Something the caller named does not exist (in the caller's scope)."""

    def __str__(self) -> str:  # LookupError/KeyError would add quotes otherwise
        return str(self.args[0]) if self.args else ""


class PendingNotFoundError(NotFoundError):
    """No pending item with that id exists in the caller's scope."""


class EntryNotFoundError(NotFoundError):
    """No memory entry with that id exists in the caller's scope."""


class EntrySupersededError(LangmemError):
    """The memory is a superseded version: update its current version instead."""


class PendingStateError(LangmemError):
    """A pending item can no longer be confirmed or rejected."""


class PendingExpiredError(PendingStateError):
    """The pending item outlived its TTL and was expired."""


class PendingAlreadyResolvedError(PendingStateError):
    """The pending item was already confirmed or rejected."""


class MemoryFileError(LangmemError):
    """A memory file of the workspace cannot be read or written as Markdown.

    The message names the file (workspace-relative) and what to do, e.g. a file
    that is not valid UTF-8: fix or re-save it as UTF-8. Sync skips such a file
    (and reports it) so the rest of the scope stays searchable.
    """


class WorkspaceLockTimeout(LangmemError):
    """Another process held the workspace lock for too long."""


class ThreadConflictError(LangmemError):
    """A run of the memory graph could not be committed to its conversation thread.

    Another writer (another process, the Session API) kept adding newer checkpoints
    to the thread while the run was answering, or the thread's previous run is still
    open in the calling OS thread. Nothing of the run was committed: send the
    message again.
    """


class SchemaVersionError(LangmemError):
    """The workspace's ledger was written by a newer version of the package."""


class EmbeddingError(LangmemError):
    """The embedder failed to load or to embed."""


class IndexUnavailableError(LangmemError):
    """The vector index (for example a Chroma server) cannot be reached.

    Writes are still durable in Markdown and the ledger when this is raised by a
    search; the index catches up on the next sync.
    """


class EngineUnavailableError(LangmemError):
    """No storage engine can open the configured database URL.

    Raised when ``Settings.database_url`` names a scheme no installed engine
    handles (``postgresql://`` before a PostgreSQL engine is installed), or a URL
    the chosen engine cannot use. Nothing is opened or written.
    """


class MigrationError(LangmemError):
    """A workspace copied into another engine did not read back whole (a count of
    rows, files or checkpoints differs); the copy was rolled back."""


class ModelUnavailableError(LangmemError):
    """No chat model can be reached; memory-only commands still work."""


class InvalidReviewError(LangmemError):
    """The reviewer model's answer was not one valid decision."""


class ServiceError(LangmemError):
    """A memory server (``langmem-ext serve``) refused a request of
    :class:`~langmem_ext.client.MemoryClient`, or could not be reached.

    Errors the server names (an unknown id, an invalid text …) are raised as their
    own class instead; this one is for the rest: not authenticated (``401``), not
    allowed (``403``), a server error (``5xx``), no connection (``status`` 0).

    Attributes:
        status: The HTTP status (``0``: no answer).
    """

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


__all__ = [
    "EmbeddingError",
    "EmptyTextError",
    "EngineUnavailableError",
    "EntryNotFoundError",
    "EntrySupersededError",
    "IdempotencyKeyReusedError",
    "IndexUnavailableError",
    "InvalidCategoryError",
    "InvalidIdempotencyKeyError",
    "InvalidInputError",
    "InvalidMessageListError",
    "InvalidMessagesError",
    "InvalidPathError",
    "InvalidReviewError",
    "InvalidScopeError",
    "InvalidTimeError",
    "LangmemError",
    "LineBreakError",
    "MemoryFileError",
    "MigrationError",
    "ModelUnavailableError",
    "NoiseTextError",
    "NotFoundError",
    "PendingAlreadyResolvedError",
    "PendingExpiredError",
    "PendingNotFoundError",
    "PendingStateError",
    "SchemaVersionError",
    "ServiceError",
    "TargetNotEmptyError",
    "TextTooLongError",
    "ThreadConflictError",
    "WorkspaceLockTimeout",
]

"""Result types of the memory service (pydantic models, JSON-friendly)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, computed_field

if TYPE_CHECKING:
    from langmem_ext.retrieval.explain import Step
    from langmem_ext.workspace.records import PendingRow

Target = Literal["long_term", "daily"]
UNCONFIRMED_MARK = "[unconfirmed]"
"""What opens the text of a note the user has not confirmed."""


def to_dt(ts: float | None) -> datetime | None:
    """Epoch seconds to an aware UTC datetime."""
    return None if ts is None else datetime.fromtimestamp(ts, tz=UTC)


class _Cited(BaseModel):
    """How a memory is cited: what :class:`MemoryEntry` and :class:`SearchHit` share."""

    if TYPE_CHECKING:  # fields of the subclasses, declared there in their own order
        id: str
        text: str
        path: str
        line: int

    @property
    def unconfirmed(self) -> bool:
        """A note of a fact the user has not confirmed (its text opens with
        ``[unconfirmed]``): found by the flush or the extractor, or left by a pending
        save that expired (see :mod:`langmem_ext.memory.extraction.unconfirmed`)."""
        return self.text.startswith(UNCONFIRMED_MARK)

    @property
    def citation(self) -> str:
        """``path:line`` for ``memory_get`` (shifts when lines are added above)."""
        return f"{self.path}:{self.line}"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def anchor(self) -> str:
        """``path#^block-id``: a citation that stays valid when lines move.

        ``Memory.get`` / ``memory_get`` accept it and return the entry's lines.
        """
        return f"{self.path}#^{self.id}"


class MemoryEntry(_Cited):
    """One stored memory."""

    id: str
    """Block id, e.g. ``m-3f9a1c02d4``."""
    text: str
    scope: str
    category: str
    """system, core, fact or episode."""
    path: str
    """Workspace-relative Markdown file."""
    line: int
    """1-based line of the bullet."""
    importance: float
    created_at: datetime
    updated_at: datetime
    last_access: datetime | None = None
    source: str = "user"
    verified: bool = False
    valid_to: datetime | None = None
    """When a newer version replaced this one (``None``: it is current). It was valid
    from ``created_at``."""
    supersedes: str | None = None
    """The id of the version this one replaced."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def current(self) -> bool:
        """Whether this is the current version (not superseded)."""
        return self.valid_to is None


PAGE_SORTS = (
    "file",
    "text",
    "category",
    "importance",
    "verified",
    "source",
    "created_at",
    "last_access",
    "valid_to",
)
"""The orders :meth:`Memory.list_page <langmem_ext.Memory.list_page>` sorts by
(``file``: file order, as :meth:`~langmem_ext.Memory.list`)."""


class MemoryPage(BaseModel):
    """One page of a scope's memories (:meth:`Memory.list_page <langmem_ext.Memory.list_page>`)."""

    entries: list[MemoryEntry]
    total: int
    """How many memories pass the filter (on every page)."""
    offset: int
    limit: int


class PendingItem(BaseModel):
    """A save waiting for the user's confirmation."""

    id: str
    """Pending id, e.g. ``p-1a2b3c4d5e``."""
    text: str
    scope: str
    target: Target | Literal["profile"]
    """Where it goes once confirmed (``profile``: a change of the user profile)."""
    category: str
    status: Literal["pending", "confirmed", "rejected", "expired"]
    created_at: datetime
    expires_at: datetime
    entry_id: str
    """The entry id the memory gets once confirmed (``""`` for a profile change)."""
    supersedes: str | None = None
    """The memory it replaces once confirmed, as that memory's new version (an update
    proposed by the extractor in ``pending`` mode); ``None``: a new memory."""
    thread_id: str | None = None
    """The conversation (``thread_id``) that proposed it; only a reply there may confirm
    it. ``None``: proposed outside a conversation (CLI, admin UI, API)."""

    @classmethod
    def from_row(cls, row: PendingRow) -> PendingItem:
        """The public form of a ledger row."""
        return cls(
            id=row.id,
            text=row.text,
            scope=row.scope,
            target=row.target if row.target in ("daily", "profile") else "long_term",  # type: ignore[arg-type]
            category=row.category,
            status=row.status,  # type: ignore[arg-type]
            created_at=to_dt(row.created_at),  # type: ignore[arg-type]
            expires_at=to_dt(row.expires_at),  # type: ignore[arg-type]
            entry_id=row.entry_id,
            supersedes=row.supersedes,
            thread_id=row.thread_id,
        )


class SearchHit(_Cited):
    """One search result."""

    id: str
    text: str
    score: float
    path: str
    line: int
    category: str
    created_at: datetime
    updated_at: datetime
    importance: float
    scope: str
    source: Literal["memory", "session", "note"] = "memory"
    """``memory`` for entries, ``session`` for session-log events, ``note`` for a
    chunk of a memory file's prose (a paragraph or list item typed around the entries;
    see :mod:`langmem_ext.memory.recall.notes`)."""
    heading: str | None = None
    """The headings above a note, outermost first (``Trip to Japan › Food``)."""
    valid_to: datetime | None = None
    """When a newer version replaced this memory (only in searches with ``as_of`` or
    ``include_superseded``; ``None``: current)."""
    debug: dict[str, float] = Field(default_factory=dict)
    """How the score was built, stage by stage (the numbers behind :meth:`reasons`)."""

    def reasons(self, query: str | None = None) -> list[Step]:
        """Why this hit ranked where it did: one named step per stage that acted, with
        a one-line reason (see :func:`langmem_ext.retrieval.explain.explain`).

        Args:
            query: The question searched (names the words it matched).

        Returns:
            The steps, first to last; the last is the score on the scale 0..1.
        """
        from langmem_ext.retrieval.explain import explain  # the ranking layer, on first use

        return explain(
            self.debug,
            text=self.text,
            query=query,
            importance=self.importance,
            category=self.category,
            superseded=self.valid_to is not None,
        )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def anchor(self) -> str:
        """A stable citation for ``memory_get``: ``path#^block-id`` for memories,
        ``path#^p-…`` (the chunk's anchor) for notes.

        It stays valid when lines are added above the entry (or the note) and when
        the rest of the file is edited. Session events have no block id; theirs is
        ``path:line`` (transcripts only grow at the end).
        """
        return self.citation if self.source == "session" else super().anchor


def cite(item: MemoryEntry | SearchHit) -> str:
    """How a memory is cited to the model: its stable anchor, then its current line.

    ``MEMORY.md#^m-3f9a1c02d4 (line 4)``: the anchor is what to pass to
    ``memory_get`` (it stays valid when lines are added above); the line is where
    the entry is now. A session event has no block id and is cited as ``path:line``.

    Args:
        item: An entry or a search hit.

    Returns:
        The citation text.

    Example:
        >>> from datetime import UTC, datetime
        >>> now = datetime(2026, 1, 1, tzinfo=UTC)
        >>> cite(SearchHit(id="m-3f9a1c02d4", text="t", score=1.0, path="MEMORY.md",
        ...     line=4, category="fact", created_at=now, updated_at=now, importance=1.0,
        ...     scope="main"))
        'MEMORY.md#^m-3f9a1c02d4 (line 4)'
    """
    if item.anchor == item.citation:
        return item.citation
    return f"{item.anchor} (line {item.line})"


class GetResult(BaseModel):
    """Lines read from a memory file."""

    path: str
    from_line: int
    """1-based first line returned."""
    lines: list[str]
    total_lines: int
    truncated: bool
    """True when the file goes on past the returned lines."""
    next_from: int | None = None
    """Line to pass as ``from_line`` for the next page."""

    @property
    def text(self) -> str:
        """The returned lines joined, each prefixed by its number."""
        return "\n".join(f"{self.from_line + i}: {ln}" for i, ln in enumerate(self.lines))


def dump(obj: BaseModel | list[Any]) -> Any:
    """JSON-ready form of a model or a list of models."""
    if isinstance(obj, list):
        return [o.model_dump(mode="json") if isinstance(o, BaseModel) else o for o in obj]
    return obj.model_dump(mode="json")


__all__ = [
    "PAGE_SORTS",
    "UNCONFIRMED_MARK",
    "GetResult",
    "MemoryEntry",
    "MemoryPage",
    "PendingItem",
    "SearchHit",
    "Target",
    "cite",
    "dump",
    "to_dt",
]

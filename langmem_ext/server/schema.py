"""The request and response bodies of the ``/v1`` REST API (pydantic models).

Shared by the server (:mod:`langmem_ext.server.rest`) and the client
(:mod:`langmem_ext.client`); importing it loads neither FastAPI nor httpx.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langmem_ext.memory.types import PAGE_SORTS, SearchHit

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

Category = Literal["system", "core", "fact", "episode"]
SearchMode = Literal["hybrid", "vector", "fts", "keyword"]
PageSort = Literal[PAGE_SORTS]  # type: ignore[valid-type]
TEXT_MAX = 100_000
"""Upper bound of a text field (the memory's own ``max_text_chars`` is checked too)."""


class _Body(BaseModel):
    """A request body: unknown fields are refused (``422``), not ignored."""

    model_config = ConfigDict(extra="forbid")


# -- requests --------------------------------------------------------------------------


class AddRequest(_Body):
    """``POST /v1/memories``: write a memory directly (the caller is trusted)."""

    text: str = Field(min_length=1, max_length=TEXT_MAX, description="The fact.")
    category: Category = "fact"
    target: Literal["long_term", "daily"] = "long_term"
    importance: float | None = Field(default=None, ge=0.0, le=1.0)
    created_at: datetime | None = Field(
        default=None, description="When it was said (an import of older facts); default now."
    )
    slot: str | None = Field(
        default=None, min_length=1, max_length=200, description="e.g. 'user|lives_in'."
    )


class UpdateRequest(_Body):
    """``PATCH /v1/memories/{id}``: a new version of a memory."""

    text: str = Field(min_length=1, max_length=TEXT_MAX, description="The new text.")
    supersede: bool = Field(
        default=True, description="False edits the text in place (a typo fix: no new version)."
    )


class SaveRequest(_Body):
    """``POST /v1/pending``: propose a memory; stored once confirmed."""

    text: str = Field(min_length=1, max_length=TEXT_MAX, description="The fact.")
    target: Literal["long_term", "daily"] = "long_term"
    category: Category = "fact"
    importance: float | None = Field(default=None, ge=0.0, le=1.0)
    supersedes: str | None = Field(
        default=None, min_length=1, max_length=64, description="A memory this one replaces."
    )


class SearchRequest(_Body):
    """``POST /v1/search``."""

    query: str = Field(min_length=1, max_length=TEXT_MAX, description="What to look for.")
    k: int | None = Field(default=None, ge=1, le=100, description="Hits wanted.")
    mode: SearchMode | None = None
    category: Category | None = None
    as_of: datetime | None = Field(
        default=None, description="Search the memory as it was then (versions valid then)."
    )
    include_superseded: bool = False
    explain: bool = Field(default=False, description="Give each hit's score stages (``debug``).")


class FactsRequest(_Body):
    """``POST /v1/profile/facts``: typed profile fields (written at once)."""

    facts: dict[
        Annotated[str, Field(min_length=1, max_length=100)],
        list[Annotated[str, Field(max_length=1000)]]
        | Annotated[str, Field(max_length=1000)]
        | None,
    ] = Field(min_length=1, max_length=50, description="e.g. {'allergies': ['peanuts']}.")
    replace: bool = Field(default=False, description="Replace list fields instead of adding.")


class PreferencesRequest(_Body):
    """``POST /v1/profile/preferences``: free preferences (``null`` removes one)."""

    preferences: dict[
        Annotated[str, Field(min_length=1, max_length=200)],
        Annotated[str, Field(max_length=1000)] | None,
    ] = Field(min_length=1, max_length=50)


class MaintainRequest(_Body):
    """``POST /v1/maintain``."""

    now: datetime | None = Field(default=None, description="The time to run for; default now.")


class _Conversation(_Body):
    thread_id: str = Field(
        min_length=1,
        max_length=150,
        pattern=r"^\S(.*\S)?$",
        description="The conversation (the caller's own), e.g. 't1'.",
    )


class ContextRequest(_Conversation):
    """``POST /v1/sessions/context`` (``QueryMemoryContext``)."""

    system_tokens: int = Field(
        default=0, ge=0, le=10_000_000, description="Tokens sent besides the history."
    )


class TurnRequest(_Conversation):
    """``POST /v1/sessions/turns`` (``WriteTurn``)."""

    human: str = Field(min_length=1, max_length=TEXT_MAX, description="The user's message.")
    ai: str = Field(max_length=TEXT_MAX, description="The assistant's answer.")
    tool_messages: list[dict[str, Any]] = Field(
        default_factory=list,
        max_length=200,
        description=(
            "The turn's tool calls and results, in order, as LangChain reads them: "
            "{'role': 'assistant', 'content': '', 'tool_calls': [...]}, "
            "{'role': 'tool', 'content': '...', 'tool_call_id': '...'}."
        ),
    )
    at: datetime | None = Field(default=None, description="When the turn happened; default now.")


class CheckpointRequest(_Conversation):
    """``POST /v1/sessions/checkpoint`` (``CheckpointShortMemory``)."""

    summary: str | None = Field(
        default=None,
        min_length=1,
        max_length=TEXT_MAX,
        description="The summary, written by the caller; omit it for the server's.",
    )
    keep_last_turns: int | None = Field(
        default=None, ge=1, le=1000, description="Latest turns kept in the history."
    )
    force: bool = Field(default=False, description="Checkpoint even under the threshold.")
    system_tokens: int = Field(default=0, ge=0, le=10_000_000)


class FinalizeRequest(_Conversation):
    """``POST /v1/sessions/finalize`` (``FinalizeSessionMemory``)."""

    summary: str | None = Field(
        default=None,
        min_length=1,
        max_length=TEXT_MAX,
        description="The summary of the whole conversation; omit it for the server's.",
    )


# -- responses -------------------------------------------------------------------------


class Deleted(BaseModel):
    """A memory forgotten."""

    id: str
    deleted: bool = True


class HistoryRow(BaseModel):
    """One row of a memory's history."""

    id: str
    op: str
    old_text: str | None
    new_text: str | None
    at: datetime | None


class SearchResponse(BaseModel):
    """The hits of a search, best first."""

    query: str
    hits: list[SearchHit]


class Files(BaseModel):
    """The caller's memory files, as ``GET /v1/files/read`` takes them."""

    files: list[str]


class TripleOut(BaseModel):
    """One subject–predicate–object triple with its supporting memories."""

    id: str
    text: str
    subject: str
    predicate: str
    object: str
    subject_key: str
    object_key: str
    negated: bool
    frequency: str | None
    condition: str | None
    support: list[str]
    valid_to: float | None


class ContextResponse(BaseModel):
    """What to send to the model for one conversation. Messages are LangChain's
    message dicts (``messages_from_dict`` reads them)."""

    thread_id: str
    history: list[dict[str, Any]]
    full_history: list[dict[str, Any]]
    mode: str
    estimated_tokens: int
    ratio: float
    should_checkpoint: bool
    summary: str | None
    budget_tokens: int

    def messages(self) -> list[BaseMessage]:
        """``history`` as LangChain messages, ready for the model."""
        from langchain_core.messages import messages_from_dict

        return messages_from_dict(self.history)


class TurnResponse(BaseModel):
    """What a turn's write stored."""

    thread_id: str
    mode: str
    updated_at: datetime
    stored: bool
    first_seq: int
    last_seq: int


class CheckpointResponse(BaseModel):
    """What a checkpoint did (``made`` false: ``reason`` says why)."""

    thread_id: str
    made: bool
    reason: str
    summary: str | None
    compacted: int
    cut_seq: int
    episode_id: str | None
    flushed: list[str] = Field(description="Pending saves the flush proposed first.")
    summary_used_fallback: bool
    error: str | None


class FinalizeResponse(BaseModel):
    """The conversation's episode (``episode_id`` null: nothing new to summarise)."""

    thread_id: str
    summary: str | None = None
    episode_id: str | None = None
    compacted: int = 0
    used_fallback: bool = False


__all__ = [
    "TEXT_MAX",
    "AddRequest",
    "Category",
    "CheckpointRequest",
    "CheckpointResponse",
    "ContextRequest",
    "ContextResponse",
    "Deleted",
    "FactsRequest",
    "Files",
    "FinalizeRequest",
    "FinalizeResponse",
    "HistoryRow",
    "MaintainRequest",
    "PageSort",
    "PreferencesRequest",
    "SaveRequest",
    "SearchMode",
    "SearchRequest",
    "SearchResponse",
    "TripleOut",
    "TurnRequest",
    "TurnResponse",
    "UpdateRequest",
]

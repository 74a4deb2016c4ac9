"""Short-term memory: token budgets, valid cuts, summaries, window, checkpoints, flush.

Everything here is pure: it takes LangChain messages and returns messages, plans
and text, and never touches a file or a database. The graph and the memory service
store what these functions decide.

- :mod:`.accounting` — tokens of a message list, share of the context window.
- :mod:`.validity` — strict-provider validity, cuts that keep tool calls with
  their results and the latest human message.
- :mod:`.summarizer` — Goal / Decision / Todo / Facts summaries, model or
  extractive fallback.
- :mod:`.window` — the 15-message hybrid window (10 condensed, 5 verbatim).
- :mod:`.checkpoint` — FULL_HISTORY / SUMMARY_N, summary + last 8 turns past
  0.75 × the window.
- :mod:`.flush` — the silent pre-compaction turn that ends in ``NO_REPLY``.
"""

from __future__ import annotations

from langmem_ext.short_term.accounting import context_ratio, count_message_tokens, message_tokens
from langmem_ext.short_term.checkpoint import (
    Checkpoint,
    ContextPlan,
    MemoryMode,
    afinalize_session,
    amake_checkpoint,
    finalize_session,
    make_checkpoint,
    plan_context,
    summary_message,
    with_summary,
)
from langmem_ext.short_term.flush_prompt import (
    FLUSH_PROMPT,
    NO_REPLY,
    extract_candidate_facts,
    flush_message,
    is_flush_message,
    is_no_reply,
    should_flush,
)
from langmem_ext.short_term.summarizer import (
    Summarizer,
    SummaryResult,
    asummarize_message,
    needs_message_summary,
    summarize_message,
)
from langmem_ext.short_term.validity import (
    InvalidMessageListError,
    atomic_spans,
    is_safe_cut,
    latest_human_index,
    safe_cut_index,
    validate_messages,
)
from langmem_ext.short_term.window import build_hybrid_window

__all__ = [
    "FLUSH_PROMPT",
    "NO_REPLY",
    "Checkpoint",
    "ContextPlan",
    "InvalidMessageListError",
    "MemoryMode",
    "Summarizer",
    "SummaryResult",
    "afinalize_session",
    "amake_checkpoint",
    "asummarize_message",
    "atomic_spans",
    "build_hybrid_window",
    "context_ratio",
    "count_message_tokens",
    "extract_candidate_facts",
    "finalize_session",
    "flush_message",
    "is_flush_message",
    "is_no_reply",
    "is_safe_cut",
    "latest_human_index",
    "make_checkpoint",
    "message_tokens",
    "needs_message_summary",
    "plan_context",
    "safe_cut_index",
    "should_flush",
    "summarize_message",
    "summary_message",
    "validate_messages",
    "with_summary",
]

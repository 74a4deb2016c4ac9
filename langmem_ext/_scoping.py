"""Which memory scope a run may touch: the surfaces' import path of
:mod:`langmem_ext.memory.scoping` (the rules live there, below the surfaces, so the
session engine reads a thread's scope the way the graph resolved it)."""

from __future__ import annotations

from langmem_ext.memory.scoping import (
    MAIN_SCOPE,
    check_scope,
    scope_for_user,
    scope_from_config,
    thread_from_config,
)

__all__ = ["MAIN_SCOPE", "check_scope", "scope_for_user", "scope_from_config", "thread_from_config"]

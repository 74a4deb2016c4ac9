"""Markdown files (the truth), the SQLite ledger (state) and the derived index.

Its names load their module on first use (:mod:`langmem_ext.core.lazy`).
"""

from typing import TYPE_CHECKING

from langmem_ext.core.lazy import lazy_getattr

if TYPE_CHECKING:
    from langmem_ext.workspace.layout import MAIN_SCOPE, Layout, check_scope
    from langmem_ext.workspace.store import SyncReport, Workspace

__getattr__ = lazy_getattr(
    __name__,
    {
        "MAIN_SCOPE": "langmem_ext.workspace.layout",
        "Layout": "langmem_ext.workspace.layout",
        "check_scope": "langmem_ext.workspace.layout",
        "SyncReport": "langmem_ext.workspace.store",
        "Workspace": "langmem_ext.workspace.store",
    },
)

__all__ = ["MAIN_SCOPE", "Layout", "SyncReport", "Workspace", "check_scope"]

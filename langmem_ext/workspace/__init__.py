"""Markdown files (the truth), the ledger (state) and the derived index, on the
storage engines :mod:`langmem_ext.workspace.engines` opens.

Its names load their module on first use (:mod:`langmem_ext.core.lazy`).
"""

from typing import TYPE_CHECKING

from langmem_ext.core.lazy import lazy_getattr

if TYPE_CHECKING:
    from langmem_ext.workspace.engines import (
        Engines,
        engines_from_url,
        open_engines,
        register_engine,
    )
    from langmem_ext.workspace.layout import MAIN_SCOPE, Layout, check_scope
    from langmem_ext.workspace.store import SyncReport, Workspace

__getattr__ = lazy_getattr(
    __name__,
    {
        "Engines": "langmem_ext.workspace.engines",
        "engines_from_url": "langmem_ext.workspace.engines",
        "open_engines": "langmem_ext.workspace.engines",
        "register_engine": "langmem_ext.workspace.engines",
        "MAIN_SCOPE": "langmem_ext.workspace.layout",
        "Layout": "langmem_ext.workspace.layout",
        "check_scope": "langmem_ext.workspace.layout",
        "SyncReport": "langmem_ext.workspace.store",
        "Workspace": "langmem_ext.workspace.store",
    },
)

__all__ = [
    "MAIN_SCOPE",
    "Engines",
    "Layout",
    "SyncReport",
    "Workspace",
    "check_scope",
    "engines_from_url",
    "open_engines",
    "register_engine",
]

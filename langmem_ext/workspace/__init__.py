"""Markdown files (the truth), the SQLite ledger (state) and the derived index."""

from langmem_ext.workspace.layout import MAIN_SCOPE, Layout, check_scope
from langmem_ext.workspace.store import SyncReport, Workspace

__all__ = ["MAIN_SCOPE", "Layout", "SyncReport", "Workspace", "check_scope"]

"""The memory service and its result types."""

from langmem_ext.memory.models import GetResult, MemoryEntry, PendingItem, SearchHit
from langmem_ext.memory.service import Memory

__all__ = ["GetResult", "Memory", "MemoryEntry", "PendingItem", "SearchHit"]

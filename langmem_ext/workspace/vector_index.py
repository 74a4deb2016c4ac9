"""The Chroma side of the derived index.

One collection per (embedder, scope): a query never needs a ``where`` filter on
scope (a filtered HNSW query over 10k vectors costs ~10x an unfiltered one), and
scopes are isolated by construction. Embedded ``PersistentClient`` under
``.index/chroma`` by default, ``HttpClient`` when a Chroma URL is configured
(``index.chroma_url``: a ``chroma run`` server, for the embedded engines or beside
the PostgreSQL ones).

Chroma's embedded client is not built for several processes: every write bumps a
generation counter in the keyword index, and a process that sees a newer
generation than its own reopens its client before reading or writing.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from langmem_ext.core.errors import IndexUnavailableError
from langmem_ext.workspace.files import private_dir
from langmem_ext.workspace.vector_base import Matrix, Metadatas, VectorHit, VectorIndexBase

logger = logging.getLogger(__name__)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60] or "model"


class VectorIndex(VectorIndexBase):
    """Chroma collections of one workspace.

    Args:
        path: Folder of the embedded client (ignored with ``url``).
        url: Chroma server URL (``http://127.0.0.1:8000``) or ``None``.
        model_name: The embedder's name (part of each collection name).
        prefix: Collection name prefix.
    """

    def __init__(self, path: Path, url: str | None, model_name: str, prefix: str = "langmem"):
        self.path = path
        self.url = url
        self.model_name = model_name
        self.prefix = _slug(prefix)
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.RLock()

    def collection_name(self, scope: str) -> str:
        """Chroma collection of a scope.

        Chroma names allow ASCII only: a scope with other letters (``用户``) is
        named by a hash of its UTF-8 form, with the suffix ``.u1`` (an ASCII scope
        has no ``.``, so the two kinds of names never collide).
        """
        if scope.isascii():
            return f"{self.prefix}.{_slug(self.model_name)}.{scope}.v1"
        digest = hashlib.sha256(scope.encode("utf-8")).hexdigest()[:24]
        return f"{self.prefix}.{_slug(self.model_name)}.{digest}.u1"

    def _connect(self) -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False, allow_reset=True)
        if self.url:
            parsed = urlparse(self.url)
            try:
                client = chromadb.HttpClient(
                    host=parsed.hostname or "127.0.0.1",
                    port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                    ssl=parsed.scheme == "https",
                    settings=settings,
                )
                client.heartbeat()
            except Exception as e:
                raise self._down(e) from e
            return client
        private_dir(self.path)
        return chromadb.PersistentClient(path=str(self.path), settings=settings)

    def _down(self, e: Exception) -> IndexUnavailableError:
        where = self.url or str(self.path)
        return IndexUnavailableError(
            f"The Chroma vector index at {where} is unavailable ({type(e).__name__}: {e}). "
            "Memories are still saved in Markdown and the ledger; start the server "
            "(`chroma run --host 127.0.0.1 --port 8000`) or unset LANGMEM_INDEX__CHROMA_URL, "
            "then run `langmem-ext reindex` or any search to catch up."
        )

    def reset_client(self) -> None:
        """Close the client; the next call reconnects (and re-reads the index files)."""
        with self._lock:
            client, self._client = self._client, None
            self._collections.clear()
            self._counts.clear()
            if client is not None:
                try:
                    client.close()  # releases Chroma's per-path shared system
                except Exception:  # pragma: no cover - best effort
                    logger.debug("closing the Chroma client failed", exc_info=True)

    close = reset_client

    def _collection(self, scope: str, *, create: bool) -> Any | None:
        with self._lock:
            col = self._collections.get(scope)
            if col is not None:
                return col
            try:
                if self._client is None:
                    self._client = self._connect()
                name = self.collection_name(scope)
                if create:
                    col = self._client.get_or_create_collection(
                        name, embedding_function=None, metadata={"hnsw:space": "cosine"}
                    )
                else:
                    try:
                        col = self._client.get_collection(name, embedding_function=None)
                    except Exception:  # not found: nothing indexed yet
                        return None
            except IndexUnavailableError:
                raise
            except Exception as e:
                self._client = None
                raise self._down(e) from e
            self._collections[scope] = col
            return col

    def _upsert(self, scope: str, ids: list[str], matrix: Matrix, metadatas: Metadatas) -> None:
        """Upsert into the scope's collection, 4000 vectors a call."""
        col = self._collection(scope, create=True)
        self._counts.pop(scope, None)
        try:
            step = 4000
            for i in range(0, len(ids), step):
                col.upsert(  # type: ignore[union-attr]
                    ids=ids[i : i + step],
                    embeddings=matrix[i : i + step],
                    metadatas=list(metadatas[i : i + step]),
                )
        except Exception as e:
            self.reset_client()
            raise self._down(e) from e

    def _delete(self, scope: str, ids: list[str]) -> None:
        col = self._collection(scope, create=False)
        if col is None:
            return
        self._counts.pop(scope, None)
        try:
            col.delete(ids=ids)
        except Exception as e:
            self.reset_client()
            raise self._down(e) from e

    def _query(
        self, scope: str, vec: Matrix, n: int, with_embeddings: bool, ids: list[str] | None
    ) -> list[VectorHit]:
        """Without embeddings the hits carry none: Chroma then skips converting 512
        floats per hit to Python and back (~1.5 ms for 40 hits); search reads the
        copies kept in the keyword index instead. With ``ids``, each must be in the
        collection."""
        col = self._collection(scope, create=False)
        if col is None:
            return []
        include = ["distances", "embeddings"] if with_embeddings else ["distances"]
        try:
            count = self._counts.get(scope)
            if count is None:  # cached: Chroma's count() costs as much as a query
                count = self._counts[scope] = int(col.count())
            if count == 0:
                return []
            res = col.query(
                query_embeddings=vec.reshape(1, -1),
                n_results=min(n, count if ids is None else len(ids)),
                include=include,
                **({} if ids is None else {"ids": ids}),
            )
        except Exception as e:
            self.reset_client()
            raise self._down(e) from e
        found = res["ids"][0]
        dists = res["distances"][0]
        embs = res.get("embeddings")
        vecs = embs[0] if embs is not None and len(embs) else [None] * len(found)
        return [
            # Embeddings stay numpy arrays (MMR works on them); converting each of
            # 512 floats to Python costed ~2 ms a query.
            VectorHit(i, 1.0 - float(d), None if v is None else np.asarray(v, dtype=np.float32))
            for i, d, v in zip(found, dists, vecs, strict=True)
        ]

    def _embeddings(self, scope: str, ids: list[str]) -> dict[str, Any]:
        col = self._collection(scope, create=False)
        if col is None:
            return {}
        out: dict[str, Any] = {}
        try:
            for i in range(0, len(ids), 1000):
                res = col.get(ids=ids[i : i + 1000], include=["embeddings"])
                for entry_id, v in zip(res["ids"], res["embeddings"], strict=True):
                    out[entry_id] = np.asarray(v, dtype=np.float32)
        except Exception as e:
            self.reset_client()
            raise self._down(e) from e
        return out

    def count(self, scope: str) -> int:
        """Vectors stored for a scope."""
        col = self._collection(scope, create=False)
        return 0 if col is None else int(col.count())

    def drop_owned(self) -> None:
        """Delete every collection of this prefix and embedder, whatever its scope (the
        start of a rebuild of the index on a Chroma server, whose collections outlive
        the workspace's files)."""
        head = f"{self.prefix}.{_slug(self.model_name)}."
        with self._lock:
            try:
                if self._client is None:
                    self._client = self._connect()
                listed = self._client.list_collections()
                names = [c if isinstance(c, str) else c.name for c in listed]
                for name in names:
                    if name.startswith(head):
                        self._client.delete_collection(name)
            except IndexUnavailableError:
                raise
            except Exception as e:
                self._client = None
                raise self._down(e) from e
            finally:
                self._collections.clear()
                self._counts.clear()

    def drop_all(self, scopes: Sequence[str]) -> None:
        """Delete the collections of the given scopes (for ``reindex``)."""
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            for scope in scopes:
                with contextlib.suppress(Exception):
                    self._client.delete_collection(self.collection_name(scope))
            self._collections.clear()
            self._counts.clear()


__all__ = ["VectorHit", "VectorIndex"]

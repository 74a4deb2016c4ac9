"""The workspace: Markdown truth, ledger state, derived index, kept in step.

Every write goes: Markdown (atomic, fsynced) → ledger (committed) → keyword index
→ vector index. The first two make a write durable; the last two are derived and
are repaired by :meth:`Workspace.sync` whenever they lag (a crash, a Chroma
server that was down, a hand edit of a file, a deleted ``.index/``). When the
documents live in the ledger's database (PostgreSQL), a write's documents, ledger
and index rows are one commit instead (:meth:`Workspace.one_commit`): a process
killed mid-write leaves all of it or none, so another replica never reads half.

All writes hold the workspace lock (:class:`~langmem_ext.workspace.protocols.WorkspaceLock`;
embedded: :class:`~langmem_ext.workspace.files.WorkspaceLock`), so two processes
writing one workspace serialise. The engines are reached through
:mod:`langmem_ext.workspace.protocols`.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat as stat_mode
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings
from numpy.typing import NDArray

from langmem_ext.core.errors import (
    EmbeddingError,
    IndexUnavailableError,
    InvalidPathError,
    LangmemError,
    MemoryFileError,
)
from langmem_ext.core.runtime import embed_matrix
from langmem_ext.workspace.docs import Doc, FileStamp, text_hash
from langmem_ext.workspace.documents import FileDocuments
from langmem_ext.workspace.engines import Engines, engines_from_url
from langmem_ext.workspace.files import AppendJournal, private_dir, remove_stale_temp_files
from langmem_ext.workspace.kv import KvSpace
from langmem_ext.workspace.layout import Layout
from langmem_ext.workspace.markdown import (
    Insertion,
    Outline,
    ParsedEntry,
    append_entries,
    assign_missing_ids,
    entry_at,
    insert_entries_tracked,
    move_entry,
    outline,
    parse_entries,
    render_bullet,
    replace_entry,
    replacing_lines,
    supersede_entry,
    superseding_lines,
)
from langmem_ext.workspace.prose import joins_prose, parse_prose
from langmem_ext.workspace.protocols import (
    DocumentStore,
    KeywordIndex,
    Leases,
    Ledger,
    LineDocuments,
    VectorIndex,
    WorkspaceLock,
)
from langmem_ext.workspace.records import EntryState, HistoryRow, PendingRow
from langmem_ext.workspace.sqlite.passage_rows import (
    KINDS,
    Kind,
    Passage,
    ProseFile,
    partition,
)

if TYPE_CHECKING:
    from langmem_ext.workspace.vector_search import VectorSearch

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""``progress(done, total)`` callback for long work."""

_UNREADABLE = "!unreadable"
"""File-stamp hash of a file sync skipped (not UTF-8): no content ever hashes to it."""


def _file_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def _version_id(version: int, size: int) -> str:
    """The file-stamp hash of a stored document's ``version`` of ``size`` bytes (a
    document store versions every write: the version names the text, no hash of the
    whole text is needed). Never a sha256 hex digest nor :data:`_UNREADABLE`."""
    return f"v:{version}:{size}"


_TAIL_BYTES = 4096
"""Bytes at the end of a known file compared before appending to it (see :class:`_KnownFile`)."""

_KNOWN_FILES_MAX = 256
"""Files a workspace keeps a :class:`_KnownFile` of (the most recently written; ~5 KB each)."""

StatKey = tuple[int, int, int, int, int]


def _stat_key(s: os.stat_result) -> StatKey:
    """``(device, inode, size, mtime_ns, ctime_ns)``: any write changes one of them, except
    a same-size write within one timestamp tick (the tail check covers the file's end)."""
    return (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)


def _read_tail(path: Path, size: int, n: int) -> bytes:
    """The last ``n`` bytes of a file of ``size`` bytes (``b""`` when unreadable)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(size - n, 0))
            return fh.read(n)
    except OSError:
        return b""


@dataclass(frozen=True)
class _KnownFile:
    """A memory file as this process last wrote or read it: what an append needs, no text.

    Attributes:
        key: :func:`_stat_key` of the file then.
        digest: sha256 state over its text (extended by an append, so the index's
            file hash needs no re-read).
        outline: Lines, headings and ending (:func:`~langmem_ext.workspace.markdown.outline`).
        tail: Its last bytes (up to ``_TAIL_BYTES``), compared with the file before use.
    """

    key: StatKey
    digest: Any
    outline: Outline
    tail: bytes

    @classmethod
    def of(cls, key: StatKey, content: str) -> _KnownFile:
        """The record of a file whose text is ``content`` and whose stat key is ``key``."""
        data = content.encode("utf-8")
        return cls(key, hashlib.sha256(data), outline(content), data[-_TAIL_BYTES:])


_SUPERSEDE_INTENT = "supersede-intent:"
"""Ledger ``meta`` key prefix: ``supersede-intent:<new id>`` = the id it replaces, while
a new version is written to Markdown (see :meth:`Workspace.supersede`)."""


@dataclass(frozen=True)
class NewEntry:
    """An entry to write: its id, text, category and ledger state fields."""

    id: str
    text: str
    category: str
    importance: float
    created_at: float
    source: str
    verified: bool = False
    supersedes: str | None = None
    """The version this entry replaces (see :meth:`Workspace.supersede`)."""
    slot: str | None = None
    """What a later statement of the same fact replaces."""


def _reconciled_op(st: EntryState, new_hash: str, struck: bool) -> str:
    """The history op of an entry a person changed in its file."""
    if st.text_hash != new_hash:
        return "hand-edit"
    if struck != (st.valid_to is not None):
        return "hand-supersede" if struck else "hand-reopen"
    return "move"


def _doc(
    scope: str,
    rel: str,
    parsed: ParsedEntry,
    state: NewEntry | EntryState,
    updated_at: float,
) -> Doc:
    """The index row of an entry: position and text as parsed from the file; dates
    and importance from the entry just written or the ledger's state."""
    assert parsed.id is not None
    if isinstance(state, NewEntry):
        updated_at = _first_written(state, updated_at)
    return Doc(
        id=parsed.id,
        scope=scope,
        path=rel,
        line=parsed.line,
        category=parsed.category,
        text=parsed.text,
        text_hash=text_hash(parsed.text),
        created_at=state.created_at,
        updated_at=updated_at,
        importance=state.importance,
    )


def _first_written(e: NewEntry, now: float) -> float:
    """``updated_at`` of a new entry: when it was said (``created_at``), never later than
    ``now``. An import of an old conversation keeps its age: its idle clock (decay)
    starts when it was said, not when it was imported."""
    return min(e.created_at, now)


def _new_state(scope: str, rel: str, e: NewEntry, now: float) -> EntryState:
    """The ledger state of an entry just written to ``rel``."""
    return EntryState(
        id=e.id,
        scope=scope,
        path=rel,
        category=e.category,
        text_hash=text_hash(e.text),
        importance=e.importance,
        created_at=e.created_at,
        updated_at=_first_written(e, now),
        last_access=None,
        access_count=0,
        source=e.source,
        verified=e.verified,
        deleted_at=None,
        supersedes=e.supersedes,
        slot=e.slot,
    )


@dataclass
class _Placed:
    """What the Markdown step wrote, as the doc table's changes (see
    :meth:`DocTable.apply <langmem_ext.workspace.sqlite.doc_table.DocTable.apply>`)."""

    upserts: list[Doc]
    files: list[FileStamp]
    shifts: list[tuple[str, int, int]] = field(default_factory=list)
    lines: list[tuple[int, str]] = field(default_factory=list)
    prose: list[ProseFile] = field(default_factory=list)


@dataclass
class SyncReport:
    """What a sync or reindex did."""

    files_scanned: int = 0
    files_changed: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    ids_assigned: int = 0
    embedded: int = 0
    vector_error: str | None = None
    scopes: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """Files left out, workspace-relative path → why (not UTF-8, a symlink, ...)."""
    deferred: bool = False
    """Another writer held the lock longer than the sync was asked to wait: nothing
    was read (a later sync picks the changes up)."""


class Workspace:
    """One workspace folder with its ledger and derived index.

    The data lives in the engines it is given (:mod:`langmem_ext.workspace.engines`),
    each reached through its protocol (:mod:`langmem_ext.workspace.protocols`); the
    workspace keeps them in step.

    Args:
        root: The workspace folder (created if missing).
        embeddings: The embedder used for the vector index.
        model_name: Name of the embedder (cache key, collection name).
        engines: The storage engines (:func:`~langmem_ext.workspace.engines.open_engines`);
            ``None``: the embedded engines in ``root`` with default options.
        batch_size: Texts embedded per call.
    """

    def __init__(
        self,
        root: Path,
        embeddings: Embeddings,
        *,
        model_name: str,
        engines: Engines | None = None,
        batch_size: int = 256,
    ) -> None:
        self.layout = Layout(root)
        private_dir(root)
        if engines is None:
            engines = engines_from_url(None, root=root, model_name=model_name)
        self.engines = engines
        """The storage engines (see :mod:`~langmem_ext.workspace.engines`)."""
        self.lock: WorkspaceLock = engines.lock
        self.ledger: Ledger = engines.ledger
        self.documents: DocumentStore = engines.documents
        """The Markdown text of the memory files."""
        self.files = isinstance(engines.documents, FileDocuments)
        """Whether the documents are the workspace folder's files (the embedded engine):
        then appends go to the file in place and files are listed from the folder;
        otherwise every read, write and stamp goes through :attr:`documents`."""
        self.vectors: VectorIndex = engines.vectors
        self.leases: Leases = engines.leases
        """Which process runs a background job of a scope, until when."""
        self.embeddings = embeddings
        self.model_name = model_name
        self.batch_size = batch_size
        self._kw: KeywordIndex | None = None
        self._generation = -1
        self.journal = AppendJournal(root)
        self._known: dict[Path, _KnownFile] = {}
        self.append_writes = True
        """Write new entries by appending when their section ends the file; ``False``
        rewrites the whole file on every write, the way the benchmarks compare against."""
        self._recover()

    def _recover(self) -> None:
        """Finish what a killed writer left: its temp files and interrupted confirms.

        Temp files are removed only while no other writer holds the workspace lock
        (every atomic write happens under it); when the lock is busy the next open
        does it. Without a lock file no writer ever ran here: nothing to clean (and
        opening a workspace to read creates nothing but the ledger).
        """
        self.remove_stale_temp_files()
        confirmed = self.ledger.pending.confirm_written()
        if confirmed:
            logger.info(
                "marked %d pending item(s) confirmed: their entries were already written (%s)",
                len(confirmed),
                ", ".join(confirmed),
            )

    def remove_stale_temp_files(self) -> list[Path]:
        """Remove the temp files a killed atomic write left (and repair a torn append).

        Done only while no other writer holds the workspace lock (every atomic write
        happens under it); when the lock is busy nothing is done now and the next
        call does it. Without a lock file no writer ever ran here: nothing to clean.

        Returns:
            The temp files removed.
        """
        removed: list[Path] = []
        with contextlib.ExitStack() as stack:
            if self.layout.lock_file.exists() and stack.enter_context(self.lock.try_hold()):
                self.journal.repair()
                removed = remove_stale_temp_files(self.layout.memory_folders())
                if removed:
                    logger.info(
                        "removed %d temp file(s) left by an interrupted write: %s",
                        len(removed),
                        ", ".join(self.layout.rel(p) for p in removed),
                    )
        return removed

    # -- index lifecycle ---------------------------------------------------

    @property
    def keyword(self) -> KeywordIndex:
        """The keyword index, opened (and rebuilt if unreadable) on first use."""
        if self._kw is None:
            self._kw = self.engines.open_keyword()
        return self._kw

    @property
    def vector_search(self) -> VectorSearch:
        """Vector search over the scope's kept vectors or Chroma (it chooses; see
        :mod:`~langmem_ext.workspace.vector_search`)."""
        from langmem_ext.workspace.vector_search import VectorSearch

        return VectorSearch(self.keyword, self.vectors)

    @property
    def kv(self) -> KvSpace:
        """The LangGraph store's items and vector partitions (see :mod:`~langmem_ext.workspace.kv`)."""
        return KvSpace(self)

    def _discard_index(self) -> None:
        if self._kw is not None:
            self._kw.close()
            self._kw = None
        self.engines.discard_index()

    def bump_generation(self) -> None:
        """Record that the index changed (other processes reopen their Chroma client)."""
        self._generation = self.keyword.bump_generation()

    def refresh_if_stale(self) -> None:
        """Reopen the Chroma client when another process wrote the index."""
        gen = int(self.keyword.get_meta("generation") or 0)
        if gen != self._generation:
            if self._generation != -1:
                self.vectors.reset_client()
            self._generation = gen

    def close(self) -> None:
        """Close the engines (databases, the vector client)."""
        if self._kw is not None:
            self._kw.close()
            self._kw = None
        self.engines.close()

    # -- writes ------------------------------------------------------------

    @contextlib.contextmanager
    def one_commit(self) -> Iterator[None]:
        """The writes of the block as one commit, when the documents live in the
        ledger's database (PostgreSQL: the documents, the ledger, the keyword index
        and the vectors share its transaction). On the embedded engine nothing is
        done: its Markdown files cannot join a transaction, and its crash order
        (file, then ledger, then index) is repaired by :meth:`sync`.

        Nested, it is a savepoint of the enclosing one. A document store that writes
        to files (it has no ``transaction()`` of its own) cannot join one.
        """
        if self.files or not callable(getattr(self.documents, "transaction", None)):
            yield
            return
        with self.ledger.transaction():
            yield

    def write_entries(
        self,
        scope: str,
        path: Path,
        entries: Sequence[NewEntry],
        *,
        title: str,
        vectors: NDArray[np.float32] | None = None,
    ) -> None:
        """Append entries to one file under their sections, durably.

        Must be called with the lock held. Ids already present in the file are
        skipped (a retried confirm after a crash writes nothing twice).

        One "store these entries" step per engine, each entered once, in write order:
        the Markdown file (:meth:`_append_entries`, an fsynced append, or else
        :meth:`_insert_entries`, an atomic rewrite; either returns the doc rows of what
        it wrote), the ledger (``ledger.entries.add``: states and history in one
        transaction), the vector index (``vectors.upsert``, when ``vectors`` holds
        the entries' embeddings, one row each, made outside the lock with
        :func:`~langmem_ext.core.runtime.embed_matrix`), the keyword/doc table (``keyword.apply``: docs, FTS rows, the file
        stamp, the generation and the vectors' marks in one transaction). Without
        ``vectors``, or when the vector index is down, the doc table's outbox holds
        the entries until :meth:`flush_vectors`.
        """
        with self.one_commit():
            self.refresh_if_stale()
            self._sync_paths(scope, [path])
            now = time.time()
            placed = self._append_entries(scope, path, entries, now) or self._insert_entries(
                scope, path, entries, title, now
            )
            rel = self.layout.rel(path)
            self.ledger.entries.add(
                [_new_state(scope, rel, e, now) for e in entries],
                [HistoryRow(e.id, scope, "add", None, e.text, now) for e in entries],
            )
            embedded = [(e.id, text_hash(e.text)) for e in entries] if vectors is not None else []
            if vectors is not None:
                try:
                    with self.one_commit():  # a failure leaves the write's other rows
                        self.vectors.upsert(
                            scope,
                            [e.id for e in entries],
                            vectors,
                            [{"category": e.category, "created_at": e.created_at} for e in entries],
                        )
                except IndexUnavailableError as e:
                    logger.warning("vector index not updated (%s); it will catch up on a flush", e)
                    embedded = []
            gen = self.keyword.apply(
                upserts=placed.upserts,
                files=placed.files,
                shifts=placed.shifts,
                lines=placed.lines,
                prose=placed.prose,
                generation=True,
                model=self.vectors.model_name if embedded else None,
                embedded=embedded,
                vectors=vectors if embedded and vectors is not None else (),
            )
            self._generation = gen if gen is not None else self._generation

    def _insert_entries(
        self, scope: str, path: Path, entries: Sequence[NewEntry], title: str, now: float
    ) -> _Placed:
        """Write entries by rewriting the file (a middle section grows, or the file is
        not known in step with the index); returns the doc rows to store."""
        lines = self._plain_lines(scope, path)  # a stored document's: nothing split
        content = self._read_own(scope, path) if lines is None else ""
        indexed = self._indexed(scope, path, content if lines is None else None)
        # Block ids are parsed, never substring-matched: a text may quote any id. When
        # the index holds exactly this text, its rows are the parse (no O(file) parse).
        present = (
            set(self._present(self.layout.rel(path), entries))
            if indexed
            else {
                p.id
                for p in parse_entries(content if lines is None else "\n".join(lines))
                if p.id is not None
            }
        )
        todo = [e for e in entries if e.id not in present]
        insertion: Insertion | None = None
        if todo:
            insertion = insert_entries_tracked(
                content, [(e.id, e.text, e.category) for e in todo], title=title, lines=lines
            )
            content = insertion.content
            written = {p.id for p in insertion.entries}
            lost = [e.id for e in todo if e.id not in written]
            self._write_checked(
                scope, path, content, f"entries {', '.join(lost)}" if lost else None
            )
        if indexed and insertion is not None and len(todo) == len(entries):
            return self._insertion_docs(scope, path, insertion, entries, now)
        if insertion is None and lines is not None:
            content = self._read_own(scope, path)
        return self._reconciled_docs(scope, path, content, entries, now)

    def _append_entries(
        self, scope: str, path: Path, entries: Sequence[NewEntry], now: float
    ) -> _Placed | None:
        """Write entries by appending them, in O(new entries), when that is possible.

        Possible when the index is in step with the file (its stamp's hash is that of
        the file this process knows, and the file is unchanged since: stat key and last
        bytes) and every entry's section ends the file or is new (the append is then
        byte for byte what a rewrite would write, see
        :func:`~langmem_ext.workspace.markdown.append_entries`). Nothing is read,
        parsed or hashed but the new text: ids already in the file are found in the
        index, the file hash is extended, the new lines' numbers follow the known line
        count. Returns the doc rows to store, or ``None`` (nothing done) when a rewrite
        is needed.
        """
        if not self.append_writes or not self.files:
            return None
        rel = self.layout.rel(path)
        stamp = self.keyword.file_stamps(scope).get(rel)
        if stamp is None or stamp.hash == _UNREADABLE:
            return None
        known = self._known_file(scope, path, stamp)
        if known is None:
            return None
        present = self._present(rel, entries)
        todo = [e for e in entries if e.id not in present]
        appended = (
            append_entries(known.outline, [(e.id, e.text, e.category) for e in todo])
            if todo
            else None
        )
        if todo and (appended is None or {p.id for p in appended.entries} != {e.id for e in todo}):
            return None  # a middle section grows (or a bullet would not read back)
        files: list[FileStamp] = []
        if appended is not None:
            data = appended.text.encode("utf-8")
            s = self.journal.append(path, appended.text)
            digest = known.digest.copy()
            digest.update(data)
            self._keep(
                path,
                _KnownFile(
                    _stat_key(s), digest, appended.outline, (known.tail + data)[-_TAIL_BYTES:]
                ),
            )
            files.append(FileStamp(rel, scope, digest.hexdigest(), s.st_mtime_ns, s.st_size))
        new = {e.id: e for e in entries}
        upserts = [
            _doc(scope, rel, p, new[p.id], now)
            for p in (appended.entries if appended is not None else [])
            if p.id is not None
        ]
        upserts += [
            replace(
                d,
                created_at=new[i].created_at,
                updated_at=_first_written(new[i], now),
                importance=new[i].importance,
            )
            for i, d in present.items()
        ]
        return _Placed(upserts, files)

    def _present(self, rel: str, entries: Sequence[NewEntry]) -> dict[str, Doc]:
        """The index rows of ``rel`` among ``entries`` (call when the index is in step
        with the file: they are then exactly the entries the file holds)."""
        return {
            i: d for i, d in self.keyword.docs([e.id for e in entries]).items() if d.path == rel
        }

    def _known_file(self, scope: str, path: Path, stamp: FileStamp) -> _KnownFile | None:
        """What this process knows of ``path`` if the index holds exactly that file.

        A record from this process's own write or read is used when the file's stat key
        and last bytes are unchanged; otherwise the file is read once (O(file), then
        appends are O(1) again). ``None`` when the index is not in step with the file.
        """
        try:
            s = os.lstat(path)
        except OSError:
            return None
        if not stat_mode.S_ISREG(s.st_mode):
            return None
        key = _stat_key(s)
        known = self._known.get(path)
        if (
            known is None
            or known.key != key
            or _read_tail(path, s.st_size, len(known.tail)) != known.tail
        ):
            content = self._read_own(scope, path)
            try:
                if _stat_key(os.lstat(path)) != key:
                    return None  # changed while read
            except OSError:
                return None
            known = _KnownFile.of(key, content)
            self._keep(path, known)
        if (
            stamp.hash != known.digest.hexdigest()
            or stamp.mtime_ns != s.st_mtime_ns
            or stamp.size != s.st_size
        ):
            return None
        return known

    def _stamp(self, scope: str, path: Path) -> tuple[int, int]:
        """``(mtime_ns, size)`` (or the stored row's ``(version, size)``) of a file just
        written.

        Raises:
            FileNotFoundError: it is not there.
        """
        if self.files:
            s = path.stat()
            return s.st_mtime_ns, s.st_size
        found = self.documents.stamp(scope, self.layout.rel(path))
        if found is None:
            raise FileNotFoundError(self.layout.rel(path))
        return found

    def memory_files(self, scope: str, refused: dict[str, str] | None = None) -> list[Path]:
        """The scope's memory files: long-term file, then daily notes by day.

        Args:
            scope: Whose files.
            refused: Filled with the files left out (symlinks) and why (folder only).

        Returns:
            Their paths under the workspace folder (on another document store no
            such file needs to exist: the path names the stored document).
        """
        if self.files:
            return self.layout.memory_files(scope, refused)
        return [self.layout.root / rel for rel in self.documents.list(scope)]

    def scopes(self) -> list[str]:
        """The scopes that have memory files."""
        return self.layout.scopes() if self.files else self.documents.scopes()

    def read_text(self, scope: str, path: Path) -> str:
        """The text of a file of ``scope`` (``""`` when missing), the way a reader
        takes it: links and non-UTF-8 text refused.

        Raises:
            InvalidPathError: the file is a link or not the scope's.
            MemoryFileError: it is not UTF-8 or cannot be read.
        """
        if self.files:
            return self.layout.read(path, scope)
        return self.documents.read(scope, self._rel_of(path))

    def has_file(self, scope: str, path: Path) -> bool:
        """Whether a file of ``scope`` exists (a link to it does not count)."""
        if self.files:
            return path.is_file() and self.layout.link_problem(path) is None
        return self.documents.stamp(scope, self._rel_of(path)) is not None

    def _content_id(self, content: str | Callable[[], str], stamp: tuple[int, int]) -> str:
        """The file-stamp hash naming ``content`` (or the text ``content()`` gives, asked
        for only when needed) of a file whose stamp is ``stamp``: the sha256 of a
        file's text (a person may edit the file by hand), the version of a stored
        document (:func:`_version_id`: every write makes a new one)."""
        if not self.files:
            return _version_id(*stamp)
        return _file_hash(content if isinstance(content, str) else content())

    def _hash_of(self, path: Path, content: str | Callable[[], str], stamp: tuple[int, int]) -> str:
        """:meth:`_content_id` of ``content`` just written to ``path`` with ``stamp``
        (a file's from its record if kept)."""
        known = self._known.get(path)  # kept for files only
        return known.digest.hexdigest() if known is not None else self._content_id(content, stamp)

    def _current_id(self, scope: str, path: Path, content: str | None) -> str | None:
        """:meth:`_content_id` of ``content``, just read from ``path``, as the file is
        now: a file's hash, or the stored document's version read after ``content``
        under the lock (``None``: the document is gone)."""
        if self.files:
            return None if content is None else _file_hash(content)
        now = self.documents.stamp(scope, self.layout.rel(path))
        return None if now is None else _version_id(*now)

    def _write_file(self, scope: str, path: Path, content: str) -> None:
        """Rewrite a memory file of ``scope`` atomically (through the document store)
        and remember it for later appends."""
        self._known.pop(path, None)
        self.documents.write(scope, self._rel_of(path), content)
        if not self.files:
            return
        with contextlib.suppress(OSError):
            self._keep(path, _KnownFile.of(_stat_key(os.lstat(path)), content))

    def _write_checked(self, scope: str, path: Path, content: str, lost: str | None) -> None:
        """Rewrite a memory file, unless ``lost`` names what would not read back from
        ``content`` as written: then nothing is stored (never reached: a guard against
        a rendering bug losing an entry)."""
        if lost:
            raise MemoryFileError(
                f"{self.layout.rel(path)}: {lost} would not read back "
                "from the Markdown as written; nothing was stored."
            )
        self._write_file(scope, path, content)

    def _keep(self, path: Path, known: _KnownFile) -> None:
        """Remember ``known`` for ``path``, forgetting the least recently written beyond
        ``_KNOWN_FILES_MAX`` (daily notes add a file a day per scope)."""
        self._known.pop(path, None)
        self._known[path] = known
        while len(self._known) > _KNOWN_FILES_MAX:
            del self._known[next(iter(self._known))]

    def _read_own(self, scope: str, path: Path) -> str:
        """Read a file of ``scope`` to write it, through the document store (which
        refuses symlinks, other scopes' files and non-UTF-8 text)."""
        return self.documents.read(scope, self._rel_of(path))

    def _rel_of(self, path: Path) -> str:
        """The workspace-relative path of a memory file.

        Raises:
            InvalidPathError: ``path`` is outside the workspace.
        """
        try:
            return self.layout.rel(path)
        except ValueError:
            raise InvalidPathError(f"{path} is outside the workspace; refused.") from None

    def sync_files(self, scope: str, paths: Sequence[Path]) -> None:
        """Bring the ledger and index in step with some files of a scope (lock held).

        Cheap when they did not change (one ``stat`` each). Symlinked or unreadable
        files are skipped with a logged warning.
        """
        self._sync_paths(scope, paths)

    def _indexed(self, scope: str, path: Path, content: str | None) -> bool:
        """Whether the index holds exactly ``content`` for ``path`` (its hash matches;
        a stored document's version, read after ``content`` under the lock, no hash:
        ``None`` asks of the stored document as it is)."""
        stamp = self.keyword.file_stamps(scope).get(self.layout.rel(path))
        return stamp is not None and stamp.hash == self._current_id(scope, path, content)

    def _insertion_docs(
        self, scope: str, path: Path, insertion: Insertion, entries: Sequence[NewEntry], now: float
    ) -> _Placed:
        """The doc rows of an insertion into a file the index was in step with, in
        O(new entries).

        The new entries come parsed from :func:`insert_entries_tracked` and the lines
        below each insertion point move down in SQL: nothing else of the file is parsed
        or compared (a confirm into a 10k-entry file cost ~0.3 s of parsing).
        """
        rel = self.layout.rel(path)
        new = {e.id: e for e in entries}
        upserts = [
            _doc(scope, rel, p, new[p.id], now)
            for p in insertion.entries
            if p.id is not None and p.id in new
        ]
        mtime_ns, size = self._stamp(scope, path)
        digest = self._hash_of(path, insertion.content, (mtime_ns, size))
        return _Placed(
            upserts,
            [FileStamp(rel, scope, digest, mtime_ns, size)],
            shifts=[(rel, after, count) for after, count in insertion.shifts],
        )

    def _reconciled_docs(
        self, scope: str, path: Path, content: str, entries: Sequence[NewEntry], now: float
    ) -> _Placed:
        """The doc rows after a rewrite: the new entries, and the lines that shifted.

        The texts of the other entries did not change, so unlike :meth:`_reconcile`
        nothing else is hashed, compared or read from the ledger: a confirm into a
        10k-entry file stays cheap.
        """
        rel = self.layout.rel(path)
        new = {e.id: e for e in entries}
        old_lines = self.keyword.lines_of_path(rel)
        upserts: list[Doc] = []
        moved: list[tuple[int, str]] = []
        for p in parse_entries(content):
            if p.id is None:
                continue
            if p.id in new:
                upserts.append(_doc(scope, rel, p, new[p.id], now))
            elif old_lines.get(p.id, p.line) != p.line:
                moved.append((p.line, p.id))
        mtime_ns, size = self._stamp(scope, path)
        digest = self._content_id(content, (mtime_ns, size))
        return _Placed(
            upserts,
            [FileStamp(rel, scope, digest, mtime_ns, size)],
            lines=moved,
            prose=[self._prose_file(scope, path, content, digest, now)],
        )

    def rewrite_entry(self, scope: str, path: Path, entry_id: str, new_text: str | None) -> str:
        """Replace (or remove, with ``None``) one entry's bullet and record it: the
        entry's state and an ``update`` (or ``delete``) history row in one ledger
        transaction, then the index. Returns the old text.

        Must be called with the lock held. The Markdown is written (fsynced) first, as
        in :meth:`supersede`.

        Raises:
            KeyError: The entry is not in the file.
        """
        with self.one_commit():
            new_content: str | None = None
            located = self._entry_lines(
                scope, path, entry_id, lambda e: replacing_lines(e, new_text)
            )
            lines: list[str] | None
            if located is not None:
                old, lines, repl = located
                self._splice(scope, path, old, lines, repl)
            else:
                content, old, lines = self._entry_in(scope, path, entry_id)
                new_content, _found = replace_entry(
                    content, entry_id, new_text, at=old, lines=lines
                )
                self._write_file(scope, path, new_content)
            now = time.time()
            if new_text is None:
                self._record_edit(scope, entry_id, "delete", old.text, None, now, deleted_at=now)
            else:
                changes = {"text_hash": text_hash(new_text), "updated_at": now}
                self._record_edit(scope, entry_id, "update", old.text, new_text, now, **changes)
            known = old if lines is not None else None
            now_there = [] if new_text is None else [entry_id]
            gone = entry_id if new_text is None else None
            self._after_edit(scope, path, new_content, known, now_there, deleted=gone, lines=lines)
            return old.text

    def _record_edit(
        self,
        scope: str,
        entry_id: str,
        op: str,
        before: str,
        after: str | None,
        at: float,
        **changes: Any,
    ) -> None:
        """The ledger side of an edit of one entry's bullet, in one transaction: its
        state with ``changes`` and an ``op`` history row (``before`` → ``after``)."""
        entries = self.ledger.entries
        with self.ledger.transaction():
            st = entries.get(entry_id)
            if st is not None:
                entries.upsert(replace(st, **changes))
            entries.record_history(HistoryRow(entry_id, scope, op, before, after, at))

    def _line_documents(self) -> LineDocuments | None:
        """The document store when it edits lines in place (:class:`LineDocuments`)."""
        docs = self.documents
        return docs if not self.files and isinstance(docs, LineDocuments) else None

    def _plain_lines(self, scope: str, path: Path) -> list[str] | None:
        """The file's lines as :meth:`str.splitlines` reads them, from a document store
        that keeps them (:class:`LineDocuments`; no split of the text), else ``None``."""
        docs = self._line_documents()
        if docs is None:
            return None
        lines = docs.lines(scope, self.layout.rel(path))
        if lines and not lines[-1]:
            lines.pop()  # the text's last line break ends a line, as splitlines reads it
        return lines

    def _entry_lines(
        self, scope: str, path: Path, entry_id: str, lines_for: Callable[[ParsedEntry], list[str]]
    ) -> tuple[ParsedEntry, list[str], list[str]] | None:
        """The bullet ``entry_id``, the file's lines and the lines that are to replace
        the bullet (``lines_for(bullet)``), read in O(the edit) from a document store
        that edits lines (:class:`LineDocuments`) while the index holds the file as it
        is: the bullet is read at its index row's line, and the whole text is never
        split, joined or compared (:meth:`_splice` writes the edit).

        Returns:
            ``None`` when the edit must go through the whole text: another store, an
            index not in step, or line breaks around the bullet that only
            :meth:`str.splitlines` reads (the parser would count those lines otherwise).
        """
        docs = self._line_documents()
        if docs is None:
            return None
        self._sync_paths(scope, [path])
        rel = self.layout.rel(path)
        if not self._indexed(scope, path, None):
            return None
        doc = self.keyword.docs([entry_id]).get(entry_id)
        lines = docs.lines(scope, rel) if doc is not None and doc.path == rel else None
        if doc is None or lines is None:
            return None
        old = entry_at(lines, doc.line, doc.category)
        if old is None or old.id != entry_id:
            return None
        repl = lines_for(old)
        around = lines[max(old.line - 2, 0) : old.end_line + 1]
        if not all(t.splitlines() == [t] for t in (*around, *repl) if t):
            return None
        return old, lines, repl

    def _splice(
        self, scope: str, path: Path, old: ParsedEntry, lines: list[str], repl: list[str]
    ) -> None:
        """Write ``repl`` over the bullet ``old`` (from :meth:`_entry_lines`), in the
        document store and in ``lines``."""
        docs = self._line_documents()
        if docs is None:
            raise TypeError("this document store does not edit lines in place")
        at, removed = old.line - 1, old.end_line - old.line + 1
        docs.splice(scope, self.layout.rel(path), at, removed, repl)
        lines[at : at + removed] = repl

    def _entry_in(
        self, scope: str, path: Path, entry_id: str
    ) -> tuple[str, ParsedEntry, list[str] | None]:
        """The file's text (synced first), the entry ``entry_id`` as parsed in it, and
        the text's lines when the index holds exactly that text (else ``None``).

        When it does, the entry is read at the line its index row gives (the file is
        not parsed, only split once: the edit and :meth:`_after_edit` use those lines),
        and :meth:`_after_edit` can follow an edit of it in O(the edit).

        Raises:
            KeyError: The entry is not in the file.
        """
        self._sync_paths(scope, [path])
        content = self._read_own(scope, path)
        if self._indexed(scope, path, content):
            doc = self.keyword.docs([entry_id]).get(entry_id)
            if doc is not None and doc.path == self.layout.rel(path):
                lines = content.splitlines()
                found = entry_at(lines, doc.line, doc.category)
                if found is not None and found.id == entry_id:
                    return content, found, lines
        entry = next((e for e in parse_entries(content) if e.id == entry_id), None)
        if entry is None:
            raise KeyError(entry_id)
        return content, entry, None

    def _after_edit(
        self,
        scope: str,
        path: Path,
        content: str | None,
        old: ParsedEntry | None,
        now_there: Sequence[str],
        *,
        deleted: str | None = None,
        lines: list[str] | None = None,
    ) -> None:
        """Bring the index in step with ``content``, just written over one bullet.

        ``old`` is that bullet as the index knew it (``None`` when the index was not in
        step with the file before the edit: the file is then reconciled whole), and
        ``now_there`` the ids of the bullets the edit put in its place, in order
        (``deleted`` names the entry it removed). Their docs, the lines below them
        moved, the file's stamp and the generation are written in one transaction, in
        O(the edit): an update in a 100k-entry file used to parse it four times and
        read its whole ledger and index (4 s). ``lines`` are ``content``'s when the
        edit made them (a list joined into ``content``, trailing blank lines included);
        ``content`` is ``None`` when the edit wrote only lines (:meth:`_splice`):
        the text is joined from ``lines`` if it is needed.
        """
        pieces = lines
        if content is None and pieces is None:
            raise ValueError("an edit's text or lines are needed")

        def text() -> str:
            return content if content is not None else "\n".join(pieces or [])

        if old is None:
            self._reconcile(scope, path, text())
            return
        text_lines = text().splitlines() if pieces is None else pieces[:]
        while text_lines and not text_lines[-1]:  # as ``content.splitlines()`` reads them
            text_lines.pop()
        placed: list[ParsedEntry] = []
        line = old.line
        for entry_id in now_there:
            found = entry_at(text_lines, line, old.category)
            if found is None or found.id != entry_id:
                break  # never (the edit rendered these bullets): reconcile instead
            placed.append(found)
            line = found.end_line + 1
        if len(placed) != len(now_there):
            self._reconcile(scope, path, text())
            return
        moved = (line - old.line) - (old.end_line - old.line + 1)
        shifts = [(old.end_line, moved)] if moved else []
        at = old.line - 1  # the first line after the removed bullet now
        rejoined = not placed and joins_prose(
            text_lines[at - 1] if at >= 1 else None,
            text_lines[at] if at < len(text_lines) else None,
        )
        self._index_edit(scope, path, text, placed, shifts, deleted=deleted, prose=rejoined)

    def _index_edit(
        self,
        scope: str,
        path: Path,
        text: Callable[[], str],
        placed: Sequence[ParsedEntry],
        shifts: Sequence[tuple[int, int]],
        *,
        deleted: str | None = None,
        prose: bool = False,
    ) -> None:
        """One doc-table transaction after an edit of a file the index was in step
        with: the lines that moved (``(after, count)``, in order), the docs of the
        ``placed`` bullets (dates and importance from the ledger), the ``deleted``
        entry, the file's stamp and the generation. The file's prose moves with its
        lines; with ``prose`` (a bullet between two paragraphs went: they may read
        as one now) it is read again from the file's ``text()`` (asked for only when
        needed: a stored document's stamp names it by its version)."""
        rel = self.layout.rel(path)
        states = self.ledger.entries.many([str(p.id) for p in placed])
        upserts = [
            _doc(scope, rel, p, st, st.updated_at)
            for p in placed
            if (st := states.get(str(p.id))) is not None
        ]
        mtime_ns, size = self._stamp(scope, path)
        stamp = (mtime_ns, size)
        digest = self._hash_of(path, text, stamp)
        gen = self.keyword.apply(
            upserts=upserts,
            deletes=[(deleted, scope)] if deleted is not None else [],
            files=[FileStamp(rel, scope, digest, mtime_ns, size)],
            shifts=[(rel, after, count) for after, count in shifts],
            generation=True,
            prose=[self._prose_file(scope, path, text(), digest, time.time())] if prose else [],
        )
        self._generation = gen if gen is not None else self._generation

    def supersede(self, scope: str, path: Path, old_id: str, new: NewEntry) -> str:
        """Replace a version by a new one: ``old_id`` is struck through in the file and
        ``new`` written right below it; the ledger closes the old version at
        ``new.created_at`` and opens ``new`` (``supersedes`` set) in one transaction.

        Must be called with the lock held. The intent (``new`` replaces ``old_id``) is
        committed to the ledger first, then the Markdown is written (fsynced): a
        process killed before the ledger commit leaves a struck bullet and a new one,
        which the next sync records as this new version of ``old_id`` (the intent
        says which), so nothing is lost, the link included.

        Returns:
            The old version's text.
        """
        with self.one_commit():
            new_content: str | None = None
            located = self._entry_lines(
                scope, path, old_id, lambda e: superseding_lines(e, new.id, new.text)
            )
            lines: list[str] | None
            if located is not None:
                old, lines, repl = located
                # the new bullet ends where the old one did (the next bullet, blank
                # line or heading): it parses the same from its lines and the next one
                struck = len(render_bullet(old.text, old_id, superseded=True))
                ahead = repl + lines[old.end_line : old.end_line + 1]
                parsed = entry_at(ahead, struck + 1, old.category)
            else:
                content, old, lines = self._entry_in(scope, path, old_id)
                new_content, parsed = supersede_entry(
                    content, old_id, new.id, new.text, at=old, lines=lines
                )
            intact = parsed is not None and parsed.text == new.text and not parsed.superseded
            self.ledger.meta.set(_SUPERSEDE_INTENT + new.id, old_id)
            if located is not None and intact:
                self._splice(scope, path, old, located[1], located[2])
            else:
                self._write_checked(
                    scope,
                    path,
                    new_content if new_content is not None else "",
                    None if intact else f"the new version of {old_id}",
                )
            rel = self.layout.rel(path)
            now = time.time()
            with self.ledger.transaction():
                self.ledger.meta.delete(_SUPERSEDE_INTENT + new.id)
                self.ledger.entries.set_valid_to(old_id, new.created_at)
                self.ledger.entries.record_history(
                    HistoryRow(old_id, scope, "superseded", old.text, new.text, now)
                )
                self.ledger.entries.add(
                    [_new_state(scope, rel, new, now)],
                    [HistoryRow(new.id, scope, "add", None, new.text, now)],
                )
            known = old if lines is not None else None
            self._after_edit(scope, path, new_content, known, [old_id, new.id], lines=lines)
            return old.text

    def move_entry(
        self, scope: str, path: Path, entry_id: str, category: str, *, op: str, importance: float
    ) -> str:
        """Move one entry's bullet to its ``category``'s section of the same file and
        record it: the entry's category and ``importance`` and an ``op`` history row
        (text unchanged) in one ledger transaction, then the index (O(the move) when
        the index was in step with the file, as in :meth:`rewrite_entry`).

        Must be called with the lock held.

        Returns:
            The entry's text.

        Raises:
            KeyError: The entry is not in the file.
        """
        with self.one_commit():
            content, entry, lines = self._entry_in(scope, path, entry_id)
            moved = move_entry(content, entry_id, category, at=entry)
            if moved is None:
                raise KeyError(entry_id)
            self._write_file(scope, path, moved.content)
            self._record_edit(
                scope, entry_id, op, entry.text, entry.text, time.time(),
                category=category, importance=importance,
            )  # fmt: skip
            if lines is not None and [p.id for p in moved.entries] == [entry_id]:
                rejoined = joins_prose(
                    lines[entry.line - 2] if entry.line >= 2 else None,
                    lines[entry.end_line] if entry.end_line < len(lines) else None,
                )
                self._index_edit(
                    scope, path, lambda: moved.content, moved.entries, moved.shifts, prose=rejoined
                )
            else:
                self._reconcile(scope, path, moved.content)
            return entry.text

    # -- sync --------------------------------------------------------------

    def sync(
        self,
        scopes: Iterable[str] | None = None,
        *,
        progress: Progress | None = None,
        wait: float | None = None,
    ) -> SyncReport:
        """Pick up changed files of the given scopes (all when ``None``).

        Files are compared by mtime and size, then by hash; changed files are
        re-parsed (new bullets get ids, edits re-embed, removed bullets are
        deleted), and the vector outbox is flushed.

        Args:
            scopes: The scopes (``None``: every scope).
            progress: Called as the vectors are written.
            wait: Seconds to wait for the workspace lock; past them, do nothing and
                say so (``report.deferred``): a read goes on with the index as it
                is rather than wait for a long write. ``None``: up to the lock's
                timeout, then :class:`~langmem_ext.core.errors.WorkspaceLockTimeout`.

        Returns:
            What the sync did.
        """
        report = SyncReport()
        with contextlib.ExitStack() as stack:
            if wait is None:
                stack.enter_context(self.lock.hold())
            elif not stack.enter_context(self.lock.try_hold(wait)):
                report.deferred = True
                return report
            self.refresh_if_stale()
            scope_list = list(scopes) if scopes is not None else self._known_scopes()
            report.scopes = scope_list
            for scope in scope_list:
                refused: dict[str, str] = {}
                files = self.memory_files(scope, refused)
                for rel, why in refused.items():
                    logger.warning("sync skips %s: it is %s", rel, why)
                    report.skipped[rel] = f"{rel} is {why}; it is not read."
                report.files_scanned += len(files)
                self._sync_paths(scope, files, report=report, drop_missing=True, trusted=True)
                self.ledger.pending.confirm_written(scope)
        self.flush_vectors(progress=progress, report=report)
        return report

    def _known_scopes(self) -> list[str]:
        found = set(self.scopes())
        found.update(s.scope for s in self.keyword.file_stamps().values())
        return sorted(found)

    def scope_needs_sync(self, scope: str) -> bool:
        """Cheap check (stat only) whether a scope's files changed since indexing."""
        stamps = self.keyword.file_stamps(scope)
        files = self.memory_files(scope)
        if len(files) != len(stamps) or self.keyword.prose_lagging(scope):
            return True
        for p in files:
            st = stamps.get(self.layout.rel(p))
            if st is None:
                return True
            try:
                mtime_ns, size = self._stamp(scope, p)
            except FileNotFoundError:
                return True
            if mtime_ns != st.mtime_ns or size != st.size:
                return True
        return False

    def _sync_paths(
        self,
        scope: str,
        paths: Sequence[Path],
        *,
        report: SyncReport | None = None,
        drop_missing: bool = False,
        trusted: bool = False,
    ) -> None:
        """Sync ``paths`` of a scope; ``trusted``: they come from :meth:`Layout.memory_files`."""
        self.journal.repair()
        stamps = self.keyword.file_stamps(scope)
        lagging = set(self.keyword.prose_lagging(scope))
        seen: set[str] = set()
        for path in paths:
            rel = self.layout.rel(path)
            if not trusted:
                try:
                    self.layout.check_own(path, scope)
                except InvalidPathError as e:
                    if report is not None:
                        report.skipped[rel] = str(e)
                    continue  # a full sync drops what the index held of it
            seen.add(rel)
            try:
                mtime_ns, size = self._stamp(scope, path)
            except FileNotFoundError:
                if rel in stamps:
                    self._reconcile(scope, path, "")
                continue
            st = stamps.get(rel)
            if (
                st is not None
                and st.mtime_ns == mtime_ns
                and st.size == size
                and (st.hash != _UNREADABLE or report is None)
            ):
                if rel in lagging:
                    self._index_prose(scope, path, st)
                continue
            try:
                content = self._read_own(scope, path)
            except LangmemError as e:
                logger.warning("sync skips %s: %s", rel, e)
                if report is not None:
                    report.skipped[rel] = str(e)
                # Its last good rows stay searchable; the stamp stops re-reading it
                # on every search until the file changes.
                self.keyword.apply(files=[FileStamp(rel, scope, _UNREADABLE, mtime_ns, size)])
                continue
            if st is not None and st.hash == self._content_id(content, (mtime_ns, size)):
                self.keyword.apply(
                    files=[FileStamp(rel, scope, st.hash, mtime_ns, size)],
                    prose=(
                        [self._prose_file(scope, path, content, st.hash, time.time())]
                        if rel in lagging
                        else []
                    ),
                )
                continue
            if report is not None:
                report.files_changed += 1
            taken = self._ids_elsewhere(path)
            new_content, _entries = assign_missing_ids(content, taken)
            if new_content != content:
                if report is not None:
                    report.ids_assigned += sum(1 for e in parse_entries(content) if e.id is None)
                self._write_file(scope, path, new_content)
                content = new_content
            self._reconcile(scope, path, content, report=report)
        if drop_missing:
            for rel in set(stamps) - seen:
                self._reconcile(scope, self.layout.root / rel, "", report=report)

    def _ids_elsewhere(self, path: Path) -> set[str]:
        return self.ledger.entries.live_ids_outside(self.layout.rel(path))

    def _reconcile(
        self, scope: str, path: Path, content: str, *, report: SyncReport | None = None
    ) -> None:
        """Make ledger + keyword index agree with ``content`` of one file."""
        rel = self.layout.rel(path)
        parsed = [e for e in parse_entries(content) if e.id is not None]
        old_docs = self.keyword.docs_of_path(rel)
        states = self.ledger.entries.many([e.id for e in parsed if e.id])
        pending = self.ledger.pending.by_entry(
            [e.id for e in parsed if e.id and e.id not in states]
        )
        now = time.time()
        file_day = _day_of(path)
        upserts: list[Doc] = []
        new_ledger: list[tuple[EntryState, str, str | None, str]] = []
        for e in parsed:
            assert e.id is not None
            h = text_hash(e.text)
            st = states.get(e.id)
            if st is None:
                p = pending.get(e.id)
                created = p.said_at if p else (file_day or now)
                replaced = (p.supersedes if p else None) or self.ledger.meta.get(
                    _SUPERSEDE_INTENT + e.id
                )
                st = EntryState(
                    id=e.id,
                    scope=scope,
                    path=rel,
                    category=e.category,
                    text_hash=h,
                    importance=p.importance if p else 1.0,
                    created_at=created,
                    updated_at=now,
                    last_access=None,
                    access_count=0,
                    source=p.source if p else "hand-edit",
                    verified=bool(p),
                    deleted_at=None,
                    valid_to=now if e.superseded else None,
                    supersedes=replaced,
                    slot=self._slot_of(replaced),
                )
                op = "update" if replaced else "add" if p else "hand-add"
                new_ledger.append((st, op, None, e.text))
            elif (
                st.text_hash != h
                or st.category != e.category
                or st.path != rel
                or e.superseded != (st.valid_to is not None)
            ):
                old_text = old_docs[e.id].text if e.id in old_docs else None
                op = _reconciled_op(st, h, e.superseded)
                st = replace(
                    st,
                    scope=scope,
                    path=rel,
                    category=e.category,
                    text_hash=h,
                    updated_at=now if st.text_hash != h else st.updated_at,
                    deleted_at=None,
                    valid_to=(st.valid_to or now) if e.superseded else None,
                )
                new_ledger.append((st, op, old_text, e.text))
            doc = _doc(scope, rel, e, st, st.updated_at)
            old = old_docs.get(e.id)
            if old != doc:
                upserts.append(doc)
                if report is not None:
                    if old is None:
                        report.added += 1
                    elif old.text_hash != h:
                        report.updated += 1
        present = {e.id for e in parsed}
        removed = [i for i in old_docs if i not in present]
        # Entries the ledger places in this file but the file no longer has.
        removed_ledger = [i for i in self.ledger.entries.live_ids_of_path(rel) if i not in present]
        if new_ledger or removed_ledger:
            self._record_reconciled(scope, rel, new_ledger, removed_ledger, pending, now)
        if report is not None:
            report.removed += len(removed)
        stamp: list[FileStamp] = []
        drop: list[str] = []
        prose: list[ProseFile] = []
        marked = self._present_stamp(scope, path)
        if marked is not None:
            digest = self._content_id(content, marked)
            stamp.append(FileStamp(rel, scope, digest, *marked))
            prose.append(self._prose_file(scope, path, content, digest, now))
        else:
            drop.append(rel)
        self.keyword.apply(
            upserts=upserts,
            deletes=[(i, scope) for i in removed],
            files=stamp,
            drop_files=drop,
            prose=prose,
        )
        self.bump_generation()

    def _present_stamp(self, scope: str, path: Path) -> tuple[int, int] | None:
        """The stamp of a file that is there and readable as the scope's (``None``:
        gone, or a link)."""
        if self.files and (not path.exists() or self.layout.link_problem(path) is not None):
            return None
        try:
            return self._stamp(scope, path)
        except FileNotFoundError:
            return None

    def _prose_file(
        self, scope: str, path: Path, content: str, digest: str, now: float
    ) -> ProseFile:
        """The prose chunks of a file's ``content`` (whose hash is ``digest``), to store;
        a chunk seen for the first time is dated to its daily note's day, else ``now``."""
        rel = self.layout.rel(path)
        return ProseFile(rel, scope, digest, parse_prose(content, rel), _day_of(path) or now)

    def _index_prose(self, scope: str, path: Path, stamp: FileStamp) -> None:
        """Read the prose of a file whose entries are indexed but whose prose lags
        (see :meth:`~langmem_ext.workspace.sqlite.passages.PassageTable.prose_lagging`)."""
        try:
            content = self._read_own(scope, path)
        except LangmemError as e:
            logger.warning("prose of %s not indexed: %s", stamp.path, e)
            return
        digest = self._current_id(scope, path, content)
        # another digest (or none): it changed meanwhile, and the next sync reads it
        if digest is not None and digest == stamp.hash:
            self.keyword.apply(prose=[self._prose_file(scope, path, content, digest, time.time())])

    def _slot_of(self, entry_id: str | None) -> str | None:
        """The slot of ``entry_id`` (a new version keeps the slot of the one it replaces)."""
        st = self.ledger.entries.get(entry_id, include_deleted=True) if entry_id else None
        return st.slot if st is not None else None

    def _record_reconciled(
        self,
        scope: str,
        rel: str,
        changed: Sequence[tuple[EntryState, str, str | None, str]],
        removed: Sequence[str],
        pending: dict[str, PendingRow],
        now: float,
    ) -> None:
        """Commit, in one transaction, what :meth:`_reconcile` found in ``rel``: the
        ``changed`` entries (state, op, old text, new text), the ``removed`` ones (unless
        they moved to another file meanwhile) and the confirmed ``pending`` items."""
        entries = self.ledger.entries
        with self.ledger.transaction():
            for st, op, old_text, new_text in changed:
                entries.upsert(st)
                entries.record_history(HistoryRow(st.id, scope, op, old_text, new_text, now))
            for st, _op, _old, _new in changed:
                self.ledger.meta.delete(_SUPERSEDE_INTENT + st.id)
            for entry_id in removed:
                moved = entries.get(entry_id, include_deleted=True)
                if moved is not None and moved.path != rel:
                    continue
                entries.mark_deleted(entry_id, now)
                entries.record_history(HistoryRow(entry_id, scope, "removed", None, None, now))
            self.ledger.pending.confirm_entries(pending, now)

    # -- vectors -----------------------------------------------------------

    def flush_vectors(
        self, *, progress: Progress | None = None, report: SyncReport | None = None
    ) -> int:
        """Embed docs and prose chunks whose text is not in Chroma yet and apply
        queued deletions.

        Embedding runs outside the lock; Chroma writes hold it. Failures are logged
        and left in the outbox for the next flush (the Markdown write is durable).

        Returns:
            Number of vectors written.
        """
        kw = self.keyword
        todo = kw.vector_todo()
        prose = kw.passage_todo("prose")
        deletes = kw.vector_deletes()
        total = len(todo) + len(prose)
        done_n = 0
        try:
            self._backfill_vectors()
            if deletes:
                with self.lock.hold():
                    by_scope: dict[str, list[str]] = {}
                    for i, s in deletes:
                        by_scope.setdefault(s, []).append(i)
                    for s, ids in by_scope.items():
                        self.vectors.delete(s, ids)
                    kw.mark_vectors([], [i for i, _ in deletes])
            if progress:
                progress(0, total)
            with self.vectors.bulk(total):  # one build of an index after a large load
                for start in range(0, total, self.batch_size * 4):
                    batch = todo[start : start + self.batch_size * 4]
                    matrix = embed_matrix(self.embeddings, [d.text for d in batch], self.batch_size)
                    with self.lock.hold():
                        self.refresh_if_stale()
                        by_scope_docs: dict[str, list[tuple[Doc, int]]] = {}
                        for row, d in enumerate(batch):
                            by_scope_docs.setdefault(d.scope, []).append((d, row))
                        for s, pairs in by_scope_docs.items():
                            self.vectors.upsert(
                                s,
                                [d.id for d, _ in pairs],
                                matrix[[row for _, row in pairs]],
                                [
                                    {"category": d.category, "created_at": d.created_at}
                                    for d, _ in pairs
                                ],
                            )
                        kw.mark_vectors(
                            [(d.id, d.text_hash) for d in batch],
                            model=self.vectors.model_name,
                            vectors=matrix,
                        )
                        self.bump_generation()
                    done_n += len(batch)
                    if progress:
                        progress(done_n, total)
                step = self.batch_size * 4
                for start in range(0, len(prose), step):
                    chunk = [p for _rowid, p in prose[start : start + step]]
                    matrix = embed_matrix(
                        self.embeddings, [p.indexed_text for p in chunk], self.batch_size
                    )
                    self.store_passage_vectors("prose", prose[start : start + step], matrix)
                    done_n += len(chunk)
                    if progress:
                        progress(done_n, total)
        except (IndexUnavailableError, EmbeddingError) as e:
            logger.warning("vector index not updated (%s); it will catch up on the next sync", e)
            if report is not None:
                report.vector_error = str(e)
        if report is not None:
            report.embedded += done_n
        return done_n

    def store_passage_vectors(
        self,
        kind: Kind,
        items: Sequence[tuple[int | None, Passage]],
        matrix: NDArray[np.float32],
    ) -> None:
        """Write the vectors of passages (one row of ``matrix`` each, embedding their
        :attr:`~langmem_ext.workspace.sqlite.passage_rows.Passage.indexed_text`) to the
        vector index's partition of their kind and scope, and keep copies: a prose
        chunk's in its row (``items`` give its rowid), an event as a new passage.

        Takes the lock; call without it (the embedding was made outside it).

        Raises:
            IndexUnavailableError: The vector index is down (nothing is kept then).
        """
        model = self.vectors.model_name
        with self.lock.hold():
            self.refresh_if_stale()
            by_part: dict[str, list[int]] = {}
            for row, (_rowid, p) in enumerate(items):
                by_part.setdefault(partition(kind, p.scope), []).append(row)
            for part, rows in by_part.items():
                self.vectors.upsert(
                    part,
                    [items[r][1].vector_id for r in rows],
                    matrix[rows],
                    [
                        {"path": p.path, "line": p.line, "created_at": p.created_at}
                        for p in (items[r][1] for r in rows)
                    ],
                )
            if kind == "prose":
                done = [(int(rowid or 0), text_hash(p.indexed_text)) for rowid, p in items]
                self.keyword.mark_passages(done, model, matrix)
            else:
                self.keyword.add_events([p for _rowid, p in items], model, matrix)
            self.bump_generation()

    def _backfill_vectors(self) -> None:
        """Keep copies of the vectors Chroma already holds, once per embedder.

        Indexes written before copies were kept (see
        :meth:`KeywordIndex.docs_with_vectors`) get them here; until then their
        searches ask Chroma for embeddings.
        """
        kw = self.keyword
        model = self.vectors.model_name
        key = f"kept_vectors:{model}"
        if kw.get_meta(key):
            return
        with self.lock.hold():
            missing = kw.missing_vectors(model)
            hashes = {entry_id: h for entry_id, _scope, h in missing}
            by_scope: dict[str, list[str]] = {}
            for entry_id, scope, _h in missing:
                by_scope.setdefault(scope, []).append(entry_id)
            for scope, ids in by_scope.items():
                kw.keep_vectors(model, self.vectors.embeddings(scope, ids), hashes)
            kw.set_meta(key, "1")

    def rebuild(self, *, progress: Progress | None = None) -> SyncReport:
        """Drop the derived index and rebuild it from Markdown + ledger."""
        with self.lock.hold():
            scopes = self._known_scopes()
            try:
                self.vectors.drop_all([*scopes, *(partition(k, s) for k in KINDS for s in scopes)])
            except IndexUnavailableError as e:
                logger.warning("could not drop Chroma collections: %s", e)
            self._discard_index()
        return self.sync(progress=progress)


def _day_of(path: Path) -> float | None:
    """Noon (local time) of a daily note's date, or ``None`` for other files."""
    try:
        day = datetime.strptime(path.stem, "%Y-%m-%d")
    except ValueError:
        return None
    return day.replace(hour=12).timestamp()


__all__ = ["NewEntry", "Progress", "SyncReport", "Workspace", "text_hash"]
